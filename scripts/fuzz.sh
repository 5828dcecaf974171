#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, TOYLLM_FUZZ=ON) into build-fuzz/ and runs each for
# FUZZ_SECONDS (default 60) on its corpus: the committed tests/fuzz/corpus/<name>/ plus
# the seeds make_seeds (and, for PyTorch, tools/testdata/make_pt_checkpoint.py) generate,
# copied to a scratch folder so that the committed corpus is never modified. Prints each
# harness's executions; fails if any harness crashed, leaked, timed out (-timeout=10) or
# ran out of memory (-rss_limit_mb=2048). Crashing inputs are kept in
# build-fuzz/fuzz-run/<name>/artifacts/. FUZZ_HARNESSES="gguf npy" runs only those.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-60}"
scripts/install-deps.sh
# -O1 -g1 as in sanitize.sh: half the build time, crash reports still name file:line.
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTOYLLM_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target fuzzers

bin=build-fuzz/tests/fuzz
seeds=build-fuzz/seeds
run=build-fuzz/fuzz-run
rm -rf "$seeds" "$run"
"$bin/make_seeds" "$seeds"
cp models/article.gguf "$seeds/gguf/"
# Real torch.save files of the tiny model, and their pickles alone, when PyTorch is there.
if /usr/bin/python3 tools/testdata/make_pt_checkpoint.py "$seeds/llama2c/legacy_untied.bin" \
     "$seeds/torch" >/dev/null 2>&1; then
  mkdir -p "$seeds/pytorch" "$seeds/pickle"
  find "$seeds/torch" -name '*.pt*' -exec sh -c 'cp "$1" "$2/$(basename "$1")"' _ {} "$seeds/pytorch" \;
  /usr/bin/python3 - "$seeds/pytorch" "$seeds/pickle" <<'PY'
import os, sys, zipfile
for name in os.listdir(sys.argv[1]):
    with zipfile.ZipFile(os.path.join(sys.argv[1], name)) as z:
        pkl = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
        open(os.path.join(sys.argv[2], name + ".pkl"), "wb").write(z.read(pkl))
PY
else
  echo "warning: no PyTorch seeds (make_pt_checkpoint.py failed); the committed corpus only" >&2
fi

# Leaks fail a run like crashes; tests/lsan.supp names the third-party libraries excused.
export ASAN_OPTIONS="detect_leaks=1:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

fuzz_one() {
  local name=$1 dir="$run/$1"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  cp tests/fuzz/corpus/"$name"/* "$dir/corpus/"
  if [ -d "$seeds/$name" ]; then cp "$seeds/$name"/* "$dir/corpus/"; fi
  "$bin/${name}_fuzzer" "$dir/corpus" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$dir/artifacts/" >"$dir/log" 2>&1
}

# The harnesses run side by side, one per core, each for its own FUZZ_SECONDS.
mapfile -t names <"$bin/fuzzers.txt"
if [ -n "${FUZZ_HARNESSES:-}" ]; then read -r -a names <<<"$FUZZ_HARNESSES"; fi
echo "fuzzing ${#names[@]} harnesses for ${seconds} s each, $(nproc) at a time" >&2
declare -A status
for name in "${names[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
  (fuzz_one "$name" && echo 0 >"$run/$name.rc" || echo $? >"$run/$name.rc") &
done
wait

failed=0
printf '%-12s %14s  %s\n' harness executions result
for name in "${names[@]}"; do
  rc=$(cat "$run/$name.rc")
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$run/$name/log" | tail -1)
  if [ "$rc" = 0 ]; then result=ok; else result="FAILED (exit $rc)"; failed=1; fi
  printf '%-12s %14s  %s\n' "$name" "${execs:-?}" "$result"
done
for name in "${names[@]}"; do
  [ "$(cat "$run/$name.rc")" = 0 ] && continue
  echo "=== $name: $run/$name/log (artifacts in $run/$name/artifacts/)" >&2
  grep -E -A40 '^==[0-9]+==ERROR|^SUMMARY|runtime error|deadly signal|out-of-memory|timeout' \
    "$run/$name/log" | head -80 >&2 || tail -40 "$run/$name/log" >&2
done
exit "$failed"
