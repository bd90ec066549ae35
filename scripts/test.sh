#!/usr/bin/env bash
# Builds ttlpred and runs the whole test suite twice: release, then under ASan+UBSan.
# This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

scripts/setup.sh
# The CUDA backend is compiled and linked wherever the toolkit is (its tests skip without a GPU).
cuda=()
if command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda=(-DTTLPRED_CUDA=ON "-DCMAKE_CUDA_COMPILER=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
fi
for preset in release asan; do
  echo "== $preset: configure and build"
  extra=()
  [ "$preset" = release ] && extra=("${cuda[@]}")
  cmake --preset "$preset" "${extra[@]}" > /dev/null
  cmake --build --preset "$preset" -j "$jobs"
  echo "== $preset: tests"
  ctest --preset "$preset" -j "$jobs"
done
