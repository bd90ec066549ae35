#!/usr/bin/env bash
# Installs every build and run dependency of ttlpred from Debian 12 packages.
# Idempotent and non-interactive; docs/dependencies.md says why each package is here.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config   # toolchain
  zlib1g-dev                                     # gzip-compressed traces
  libcli11-dev                                   # command-line parsing
  nlohmann-json3-dev                             # JSON reports, replies, service errors
  libsimdjson-dev                                # fast JSON parsing of /v1/predict and /v1/match
  libgtest-dev libgmock-dev                      # tests
  libbenchmark-dev                               # micro-benchmarks
  libeigen3-dev                                  # the trainer's array code
  libopenblas-dev                                # the trainer's matrix products (kernels chosen at run time)
  libdnnl-dev                                    # oneDNN: the inference peer in `ttlpred bench`
  ocl-icd-opencl-dev                             # OpenCL headers and loader: oneDNN's CMake config requires them
  libboost-dev                                   # Boost.Beast: HTTP/1.1 for `ttlpred serve`
  libcpp-httplib-dev                             # HTTP client of the service tests
  libonnx-dev libprotobuf-dev                    # ONNX export/import: the ONNX protobuf classes and checker
  python3-onnx python3-numpy                     # ONNX interop tests: graphs built with onnx's Python helper API
  libsystemd-dev                                 # `ttlpred serve` tells systemd it is ready (Type=notify unit)
  pybind11-dev python3-dev                       # the Python module ttlpred._core (python/)
  python3-pandas                                 # the Python package's DataFrames (numpy above)
  python3-pytest python3-venv                    # the Python tests; the venv install test
  python3-sklearn                                # TTLRegressor's tests: clone, cross_val_score, joblib (it runs without)
  python3-matplotlib                             # ttlpred.plot, the report's figures as matplotlib Displays
  chromium                                       # renders report.html in the browser test
)

source "$(dirname "$0")/lib/debian-packages.sh"
mapfile -t missing < <(missing_packages "${packages[@]}")
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi
install_packages setup "${missing[@]}"
