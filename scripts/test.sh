#!/usr/bin/env bash
# Builds ttlpred and runs the whole test suite twice: release, then under ASan+UBSan.
# This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

scripts/setup.sh
for preset in release asan; do
  echo "== $preset: configure and build"
  cmake --preset "$preset" > /dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== $preset: tests"
  ctest --preset "$preset" -j "$jobs"
done
