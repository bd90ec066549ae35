#!/usr/bin/env bash
# Checks that the release binary does not depend on the CPU it was built on: it runs the
# main workflow (generate, train, eval, predict, bench) on emulated older CPUs with
# qemu-user, where any instruction the CPU lacks stops the program (SIGILL):
#   Nehalem  x86-64-v2, no AVX at all: the engine must pick its scalar kernels
#   Haswell  AVX2 + FMA: the engine must pick its AVX2 kernels
# and on the host itself, where it must pick the best set the host has. OpenBLAS and
# oneDNN choose their own kernels from the same CPUID the emulator reports.
#
# Usage: scripts/portable-check.sh [BINARY]   (default build/ttlpred; build it first)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-build/ttlpred}")
[ -x "$bin" ] || { echo "portable-check: no $bin (build the release preset first)" >&2; exit 2; }
if ! command -v qemu-x86_64 > /dev/null; then
  echo "== portable-check: installing qemu-user"
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends qemu-user > /dev/null
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# One CPU: the workflow on a small trace; the engine's ISA must be `want`.
check() {
  local name=$1 want=$2
  shift 2
  local run=("$@" "$bin") f=${name%% *}
  echo "== portable-check: $name"
  "${run[@]}" generate --jobs 3000 --seed 3 --out "t-$f.csv" > /dev/null
  "${run[@]}" train --data "t-$f.csv" --out "m-$f.model" --hidden 32,32 --epochs 2 --quiet > /dev/null
  "${run[@]}" eval --model "m-$f.model" --data "t-$f.csv" --split 0.8 > /dev/null
  "${run[@]}" predict --model "m-$f.model" --data "t-$f.csv" > "p-$f.csv"
  [ "$(wc -l < "p-$f.csv")" -gt 3000 ] || { echo "portable-check: $name: predict wrote too few rows" >&2; exit 1; }
  local isa
  isa=$("${run[@]}" bench --variants fp32-fused --batch 1 --seconds 0.02 --shape 16,32,1 2>/dev/null |
        awk '$1 == "fp32-fused" {print $2}')
  echo "   engine ISA: $isa"
  [ "$isa" = "$want" ] || { echo "portable-check: $name: engine chose '$isa', expected '$want'" >&2; exit 1; }
}

# The emulated CPUs run without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE: some hosts set them
# (an older OpenBLAS misjudges their processor), and a core type forced to the host's kind
# would make OpenBLAS run that kind's kernels on the emulated CPU, which lacks them (seen: a
# SIGILL on Nehalem with OPENBLAS_CORETYPE=Haswell). The emulated runs must show what OpenBLAS
# picks from the CPUID the emulator reports; the host run keeps the host's settings.
emulated=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE qemu-x86_64)
check "Nehalem (no AVX)" scalar "${emulated[@]}" -cpu Nehalem
check "Haswell (AVX2)" avx2 "${emulated[@]}" -cpu Haswell
best=$("$bin" bench --variants fp32-fused --batch 1 --seconds 0.02 --shape 16,32,1 2>/dev/null |
       awk '$1 == "fp32-fused" {print $2}')
check "host (native)" "$best"
echo "== portable-check: passed"
