#!/usr/bin/env bash
# Builds toyllm and runs every test suite. Tests find the shared models through
# TOYLLM_MODELS (default ../shared/models); they skip loudly without them unless
# TOYLLM_REQUIRE_MODELS=1, which .ci/run sets.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
