#!/usr/bin/env bash
# Optional tools for the checks that skip without them (nothing else needs them): Python ones
#   onnxruntime  - tests/interop: runs `ttlpred export`'s graphs (fp32 and int8) and compares
#                  with ttlpred; scripts/runtime-bench.py times them
#   openvino     - the same for OpenVINO's CPU plugin
#   schemathesis - scripts/check-openapi.sh: checks the running service against docs/openapi.json
#                  (hypothesis pinned below 6.130: later ones removed an API hypothesis-jsonschema
#                  0.23 calls, and generation fails with "'many' object has no attribute 'more'")
# From PyPI into the `python3` on PATH (user site when it is not a virtual environment).
set -euo pipefail
python=${PYTHON:-python3}
extra=()
"$python" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)' 2>/dev/null || extra=(--user)
[ -w "$("$python" -c 'import site,sys; print(sys.prefix)')" ] && extra=()
"$python" -m pip install --quiet "${extra[@]}" "onnxruntime>=1.16" "openvino>=2024.0" "schemathesis>=3.19,<4" "hypothesis<6.130"
# A dev tool, not a product dependency: llvm-mca (Debian llvm-14) for scripts/mca-loop.py, the
# static throughput estimates of the kernels' inner loops in docs/PERFORMANCE.md. CI, which
# runs no estimate, skips it (TTLPRED_DEV_TOOLS=0).
if [ "${TTLPRED_DEV_TOOLS:-1}" != 0 ] && ! command -v llvm-mca-14 > /dev/null && ! command -v llvm-mca > /dev/null; then
  sudo=()
  [ "$(id -u)" -eq 0 ] || sudo=(sudo)
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends llvm-14
fi
