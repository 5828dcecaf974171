#!/usr/bin/env bash
# Rebuilds models/coref.gguf, the project's own model and the default of `toyllm generate`,
# end to end with fixed seeds: the synthetic corpus of the article's sentence, its
# SentencePiece tokenizer, a few minutes of training on one CPU core with Debian's PyTorch,
# and toyllm's own converter. Also rewrites models/coref_heldout.tsv, the held-out sentences
# the tests read. Intermediate files go to a temporary folder (KEEP=DIR keeps them there).
set -euo pipefail
cd "$(dirname "$0")/.."
python=/usr/bin/python3  # Debian's, with python3-torch and python3-sentencepiece
work="${KEEP:-$(mktemp -d)}"
mkdir -p "$work"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

scripts/build.sh >/dev/null
"$python" tools/coref/make_corpus.py "$work"
"$python" tools/coref/train_tokenizer.py "$work"
"$python" tools/coref/train_model.py "$work" "$work/coref.pt"
build/toyllm convert "$work/coref.pt" --tokenizer "$work/tok.model" -o models/coref.gguf
cp "$work/heldout.tsv" models/coref_heldout.tsv
echo "wrote models/coref.gguf and models/coref_heldout.tsv" >&2
