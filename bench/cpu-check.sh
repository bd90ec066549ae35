#!/usr/bin/env bash
# One-shot check of the CPU inference engine on whatever x86-64 host this runs on: builds
# the engine tests and the program, runs every variant on every ISA the host supports
# against the FP64 reference (and, on AVX-512 hosts, the native AVX-512 tiles against their
# emulation bit for bit), then `ttlpred bench` on the issue's shape for each ISA. Meant for hosts
# other than the development machines (an AVX-512 VNNI server, say), so it tolerates
# another compiler's warnings and can take its Debian -dev packages from a folder of
# unpacked .deb files (TTLPRED_SYSROOT) where they are not installed.
#
#   bench/cpu-check.sh [OUTDIR]      OUTDIR defaults to $OUT, else ./cpu-check
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-$PWD/cpu-check}}
mkdir -p "$out"
build=${TTLPRED_CPU_BUILD:-${TMPDIR:-/tmp}/ttlpred-cpu-check-build}
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DTTLPRED_WERROR=OFF)
if [[ -n "${TTLPRED_SYSROOT:-}" ]]; then
  cmake_args+=("-DCMAKE_PREFIX_PATH=$TTLPRED_SYSROOT/usr;$TTLPRED_SYSROOT/usr/lib/x86_64-linux-gnu/cmake;$TTLPRED_SYSROOT/usr/share/cmake"
               "-DCMAKE_CXX_FLAGS=-isystem $TTLPRED_SYSROOT/usr/include")
  export LD_LIBRARY_PATH="$TTLPRED_SYSROOT/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

{
  echo "== cpu-check $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname)"
  lscpu | grep -E 'Model name|^CPU\(s\)|Flags' | sed -E 's/(Flags:).*/\1 '"$(grep -o -w -E 'avx2|fma|f16c|avx512f|avx512bw|avx512vl|avx512_vnni|avx512_bf16|amx_int8' /proc/cpuinfo | sort -u | tr '\n' ' ')"'/'
  c++ --version | head -1
} | tee "$out/cpu-check.txt"

if ! cmake -S "$repo" -B "$build" "${generator[@]}" "${cmake_args[@]}" >"$out/configure.log" 2>&1; then
  tail -30 "$out/configure.log"; echo "cpu-check: FAILED: configure"; exit 2
fi
if ! cmake --build "$build" -j "$(nproc)" --target test_engine test_quant ttlpred >"$out/build.log" 2>&1; then
  grep -E 'error|Error' "$out/build.log" | head -30; echo "cpu-check: FAILED: build"; exit 2
fi
status=0
"$build/tests/test_engine" --gtest_brief=1 2>&1 | tail -40 | tee -a "$out/cpu-check.txt" || status=1
"$build/tests/test_quant" --gtest_brief=1 2>&1 | tail -10 | tee -a "$out/cpu-check.txt" || status=1
"$build/ttlpred" bench --variants all --batch 1,8,64,256,1024 --shape 96,256,256,256,1 --threads 1 --json \
  >"$out/bench.json" 2>"$out/bench.err" || status=1
"$build/ttlpred" bench --variants all --batch 1,1024 --shape 96,256,256,256,1 --threads 1 2>&1 | tee -a "$out/cpu-check.txt" || status=1
# Every other ISA the host runs, so that AVX2 and each AVX-512 set can be compared in one
# run (no peers: they do not change with --isa).
for isa in avx2 avx512 avx512-vnni; do
  "$build/ttlpred" bench --isa "$isa" --variants all --batch 1,256,1024 --shape 96,256,256,256,1 --no-peers \
    2>&1 | tail -n +2 | tee -a "$out/cpu-check.txt"
done
echo "cpu-check: exit $status" | tee -a "$out/cpu-check.txt"
exit $status
