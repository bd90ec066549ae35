#!/usr/bin/env bash
# Builds ttlpred and runs the whole test suite: release, then under ASan+UBSan, then the
# whole tree compiled with AVX-512 flags (-march=x86-64-v4 + VNNI + BF16): it must build
# warning-free on any host, and its tests run where the CPU has those instructions.
# This is the README's test command and what CI runs. TTLPRED_TEST_PRESETS picks a subset
# (default "release asan avx512").
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

scripts/setup.sh
# The CUDA backend is compiled and linked wherever the toolkit is (its tests skip without a GPU).
cuda=()
if command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
  cuda=(-DTTLPRED_CUDA=ON "-DCMAKE_CUDA_COMPILER=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)")
fi
# The avx512 preset's flags: every one of these in /proc/cpuinfo, or its tests are skipped.
avx512_runs=1
for flag in avx512f avx512bw avx512vl avx512dq avx512cd avx512_vnni avx512_bf16; do
  grep -qw "$flag" /proc/cpuinfo || avx512_runs=0
done
for preset in ${TTLPRED_TEST_PRESETS:-release asan avx512}; do
  echo "== $preset: configure and build"
  extra=()
  [ "$preset" = release ] && extra=("${cuda[@]}")
  cmake --preset "$preset" "${extra[@]}" > /dev/null
  t=$(date +%s)
  cmake --build --preset "$preset" -j "$jobs"
  echo "== $preset: built in $(( $(date +%s) - t )) s"
  if [ "$preset" = avx512 ] && [ "$avx512_runs" -eq 0 ]; then
    echo "== $preset: built warning-free; tests skipped (this CPU lacks AVX-512 F/BW/VL/DQ/CD/VNNI/BF16)"
    continue
  fi
  echo "== $preset: tests"
  # ctest hands the tests its own standard input: from a terminal or a CI runner's open pipe,
  # a test (or a program it starts) that reads it would wait for ever.
  t=$(date +%s)
  status=0
  ctest --preset "$preset" -j "$jobs" < /dev/null || status=$?
  echo "== $preset: tests took $(( $(date +%s) - t )) s"
  # ctest says only "Skipped": each skipped test with its reason (a test that stops running
  # on some host must be seen, not taken for a pass).
  dir=build; [ "$preset" = release ] || dir="build-$preset"
  scripts/skipped-tests.sh "$dir" || true
  [ "$status" -eq 0 ] || exit "$status"
done
