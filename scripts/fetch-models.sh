#!/usr/bin/env bash
# Puts the stories260K checkpoint and its tokenizer under models/external/stories260K/
# (ignored by git): linked from ../shared/models when that exists, otherwise downloaded
# from its public home (karpathy/tinyllamas) and checked against its sha256.
set -euo pipefail
cd "$(dirname "$0")/.."

shared="${TOYLLM_MODELS:-../shared/models}"
dest=models/external/stories260K
url=https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K
declare -A sha256=(
  [stories260K.bin]=b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696
  [tok512.model]=822b28dcdee7b4f2de3332e0066a3f33688e08afb26e9e7808a58aa6426bd55b
)

mkdir -p "$dest"
for f in "${!sha256[@]}"; do
  if [ -f "$shared/stories260K/$f" ]; then
    ln -sfn "$(readlink -f "$shared/stories260K/$f")" "$dest/$f"
  elif ! echo "${sha256[$f]}  $dest/$f" | sha256sum -c --quiet 2>/dev/null; then
    echo "downloading $f" >&2
    curl -fsSL "$url/$f" -o "$dest/$f.part"
    echo "${sha256[$f]}  $dest/$f.part" | sha256sum -c --quiet
    mv "$dest/$f.part" "$dest/$f"
  fi
done
echo "models in $dest" >&2
