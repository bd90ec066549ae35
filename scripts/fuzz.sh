#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang + ASan + UBSan: the `fuzz` preset) and runs each
# for a bounded time from its committed seed corpus (fuzz/corpus/<target>/). Fails on the
# first crash, leak, sanitizer report or broken contract, leaving the input that did it in
# build-fuzz/artifacts/. New inputs the fuzzer finds go to build-fuzz/corpus/ (never into
# the committed seeds). CI runs it; TTLPRED_FUZZ_SECONDS sets the time per target (60).
#
#   scripts/fuzz.sh                       # all five targets, 60 s each
#   TTLPRED_FUZZ_SECONDS=600 scripts/fuzz.sh fuzz_job_json
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${TTLPRED_FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_trace_readers fuzz_model_file fuzz_model_sections fuzz_job_json fuzz_http_request)

# The fuzzing toolchain, from Debian 12 (docs/dependencies.md): clang 14 and its runtime
# libraries (libFuzzer, ASan, UBSan). Only this script needs them.
scripts/setup.sh
packages=(clang-14 libclang-rt-14-dev)
source scripts/lib/debian-packages.sh
mapfile -t missing < <(missing_packages "${packages[@]}")
[ ${#missing[@]} -eq 0 ] || install_packages fuzz "${missing[@]}"

cmake --preset fuzz > /dev/null
cmake --build --preset fuzz -j "$(nproc)" --target "${targets[@]}"
mkdir -p build-fuzz/artifacts
status=0
for t in "${targets[@]}"; do
  seeds=fuzz/corpus/${t#fuzz_}
  found=build-fuzz/corpus/${t#fuzz_}
  mkdir -p "$found"
  echo "== fuzz: $t for $seconds s (seeds: $seeds)"
  # -rss_limit_mb: a parser that tries to allocate what a hostile length field claims fails
  # here, as a crash, instead of passing on a big machine.
  if ! ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "build-fuzz/fuzz/$t" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/artifacts/$t-" "$found" "$seeds" 2>&1 | tail -n 25; then
    echo "== fuzz: $t FAILED (input in build-fuzz/artifacts/)"
    status=1
  fi
done
exit $status
