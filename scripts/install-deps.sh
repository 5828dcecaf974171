#!/usr/bin/env bash
# Installs toyllm's build and test dependencies from Debian's packages; a no-op when they
# are all present. Needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libopenblas-dev        # BLAS GEMM/GEMV for the matmuls
  libsentencepiece-dev   # the tokenizer
  libpcre2-dev           # byte-level BPE's pre-tokenizer regexes (\p{L}, lookahead, JIT)
  libicu-dev             # tokenizer.json's NFC/NFKC normalizers
  libabsl-dev            # Status/StatusOr, strings
  nlohmann-json3-dev     # safetensors headers, config.json
  zlib1g-dev             # PNG pictures of attention
  libgtest-dev libgmock-dev
  python3-torch          # tests: makes .pt checkpoints; trains models/coref.gguf
  python3-sentencepiece  # tools/coref: the tokenizer of models/coref.gguf
  chromium               # tests: renders the attention page headless
  chromium-driver python3-selenium  # tests/python/attention_page_browser_test.py and
                         # scripts/time-attention-page.py drive the page like a user
  pybind11-dev python3-pybind11 python3-dev  # the Python module (python/); skipped when absent
  python3-numpy          # the Python module's arrays and its test
  libcpp-httplib-dev     # toyllm serve: the HTTP server
  python3-requests       # tests: the HTTP client driving toyllm serve (tests/server_api_test.py)
  python3-jinja2         # tests: the reference renderer of the chat templates
  curl ca-certificates   # fetch-models.sh, only where ../shared is absent
  clang libclang-rt-14-dev  # fuzz.sh: libFuzzer, and ASan/UBSan for clang
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
