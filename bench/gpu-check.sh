#!/usr/bin/env bash
# One-shot check of the CUDA backend on a GPU machine: builds the backend alone
# (standalone CMake project in src/engine/cuda: needs CUDA, CMake and ninja, none of the
# Debian -dev packages), runs every variant against the FP64 host reference, then the
# benchmark (batch 1..65536, host-to-host and device-only), and the roofline fraction.
#
#   bench/gpu-check.sh [REPORT]     REPORT defaults to $OUT/gpu-check.txt, else ./gpu-check.txt
#
# Environment: TTLPRED_CUDA_ARCHS (default "80;90"), TTLPRED_GPU_BUILD (build folder),
# TTLPRED_BENCH_ARGS (extra ttlpred_gpu_bench options, e.g. "--variants fp16,fused").
# Warnings do not fail this build (another compiler may warn where g++ 12 does not); CI's
# build with -DTTLPRED_CUDA=ON keeps -Werror.
# Exit: 0 all checks passed (or no GPU visible: says so and skips), 1 a check failed,
# 2 the build failed.
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -ge 1 ]]; then
  report=$1
elif [[ -n "${OUT:-}" ]]; then
  report=$OUT/gpu-check.txt
else
  report=$PWD/gpu-check.txt
fi
mkdir -p "$(dirname "$report")"

main() {
  build=${TTLPRED_GPU_BUILD:-${TMPDIR:-/tmp}/ttlpred-gpu-check-build}
  archs=${TTLPRED_CUDA_ARCHS:-80;90}
  start=$(date +%s)
  section() { echo; echo "== $* ($(($(date +%s) - start)) s)"; }

  section "gpu-check: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname)"
  nvcc=$(command -v nvcc || true)
  for guess in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do
    [[ -z "$nvcc" && -x "$guess" ]] && nvcc=$guess
  done
  if [[ -z "$nvcc" ]]; then
    echo "gpu-check: FAILED: nvcc not found (put the CUDA toolkit's bin/ on PATH)"
    exit 2
  fi
  echo "nvcc: $nvcc ($("$nvcc" --version | tail -1))"
  echo "cmake: $(cmake --version | head -1)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || true
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)

  section "configure + build (archs $archs, $(nproc) cores) in $build"
  if ! cmake -S "$repo/src/engine/cuda" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DTTLPRED_WERROR=OFF \
        -DCMAKE_CUDA_COMPILER="$nvcc" "-DCMAKE_CUDA_ARCHITECTURES=$archs" >"$build.configure.log" 2>&1; then
    tail -40 "$build.configure.log"
    echo "gpu-check: FAILED: configure (log: $build.configure.log)"
    exit 2
  fi
  grep -i "cusparselt" "$build.configure.log" || true
  if ! cmake --build "$build" -j "$(nproc)"; then
    echo "gpu-check: FAILED: build"
    exit 2
  fi

  # Each variant runs in a process of its own: a kernel fault leaves the CUDA context
  # unusable, and must not take the other variants' results with it. Each step gets a
  # timeout within an overall budget of 470 s after the build started.
  budget_left() { echo $((470 - ($(date +%s) - start))); }
  step_timeout() { local t; t=$(budget_left); ((t > $1)) && t=$1; ((t < 5)) && t=5; echo "$t"; }
  mapfile -t forms < <("$build/ttlpred_gpu_check" --list)
  echo "variants: ${forms[*]}"

  section "correctness: every variant against the FP64 host reference"
  check_rc=0
  failed=()
  for form in "${forms[@]}"; do
    echo "-- $form"
    timeout "$(step_timeout 90)" "$build/ttlpred_gpu_check" --variants "$form" >"$build/check-${form//\//_}.log" 2>&1
    rc=$?
    # Plans, failures and the count line, plus the errors measured on the bench shape.
    grep -Ev '^PASS ' "$build/check-${form//\//_}.log"
    grep -E '^PASS .*bench-shape batch=(1|4096) rows=\[0,' "$build/check-${form//\//_}.log"
    if [[ $rc -eq 3 ]]; then
      echo "gpu-check: NO GPU VISIBLE: the build is fine; correctness checks and benchmark skipped"
      exit 0
    fi
    if [[ $rc -ne 0 ]]; then
      check_rc=1
      failed+=("$form(exit $rc)")
    fi
  done
  ((check_rc == 0)) || echo "gpu-check: correctness FAILED for: ${failed[*]} (benchmark runs anyway, for the record)"

  section "benchmark: shape 96,256,256,256,1, batch 1..65536"
  bench_rc=0
  for form in "${forms[@]}"; do
    if (($(budget_left) < 20)); then
      echo "-- $form: skipped, time budget spent"
      bench_rc=1
      continue
    fi
    # shellcheck disable=SC2086  # TTLPRED_BENCH_ARGS is a list of options
    timeout "$(step_timeout 100)" "$build/ttlpred_gpu_bench" --variants "$form" \
      --json "$build/bench-${form//\//_}.jsonl" ${TTLPRED_BENCH_ARGS:-} || bench_rc=1
  done

  section "done"
  if [[ $check_rc -ne 0 || $bench_rc -ne 0 ]]; then
    echo "gpu-check: FAILED (checks exit $check_rc, benchmark exit $bench_rc); report: $report"
    exit 1
  fi
  echo "gpu-check: PASSED; report: $report"
}

main 2>&1 | tee "$report"
exit "${PIPESTATUS[0]}"
