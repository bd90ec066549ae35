#!/usr/bin/env bash
# Installs dependencies, builds the release program and runs the main job on the embedded
# default data (the synthetic ALICE trace). This is the README's first command.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake --preset release > /dev/null
cmake --build --preset release -j "$(nproc)"
exec build/ttlpred pipeline --out out "$@"
