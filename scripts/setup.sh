#!/usr/bin/env bash
# Everything a fresh Debian machine needs: dependencies, the build, and the model files.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
scripts/fetch-models.sh
