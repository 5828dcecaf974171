#!/usr/bin/env bash
# Rebuilds models/article.gguf, the article's worked example as a model file, from the
# numbers in tools/make_article_model.cc.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
build/make_article_model models/article.gguf
echo "wrote models/article.gguf" >&2
