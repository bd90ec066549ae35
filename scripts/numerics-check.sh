#!/usr/bin/env bash
# Runs the tests whose numbers come from a trained model (train, engine, pipeline, cli) under
# four trainer numerics, each of which trains different weights from the same seed:
#   the portable trainer (release preset, build/) and the trainer built for this CPU
#   (-DTTLPRED_NATIVE_TRAIN=ON, build-native/), each with OpenBLAS's kernels for this CPU and
#   with its AVX2 (Haswell) kernels (OPENBLAS_CORETYPE=Haswell), which sum in another order.
# The engine tests run every kernel set the host has and the AVX-512 ones through their
# emulation in each of the four, so a bound that only held for one trained model fails here.
#
# Usage: scripts/numerics-check.sh   (builds what it needs; JOBS=N for the build, default nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-$(nproc)}
targets=(ttlpred test_train test_engine test_pipeline test_cli)
tests='^(train|engine|pipeline|cli)\.'

cmake --preset release > /dev/null
cmake -S . -B build-native -G Ninja -DCMAKE_BUILD_TYPE=Release -DTTLPRED_NATIVE_TRAIN=ON > /dev/null
for dir in build build-native; do
  echo "== numerics-check: build $dir"
  cmake --build "$dir" -j "$jobs" --target "${targets[@]}"
done
cores=(host)
grep -qw avx2 /proc/cpuinfo && cores+=(Haswell)  # OpenBLAS's AVX2 kernels need an AVX2 CPU
for dir in build build-native; do
  for core in "${cores[@]}"; do
    echo "== numerics-check: $dir, OpenBLAS kernels: $core"
    if [ "$core" = host ]; then
      ctest --test-dir "$dir" -R "$tests" -j "$jobs" --output-on-failure
    else
      OPENBLAS_CORETYPE=$core ctest --test-dir "$dir" -R "$tests" -j "$jobs" --output-on-failure
    fi
  done
done
echo "== numerics-check: passed"
