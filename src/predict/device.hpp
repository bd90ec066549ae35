#pragma once
// The device a command runs its network on, as `--device` names it: "cpu" (the CPU engine,
// the default), "cuda" or "cuda:N" (the CUDA backend on GPU N, where this build has it).
// One parser for every command so that the names and the refusals read the same everywhere:
// a build without the CUDA backend refuses "cuda" saying how to get one, instead of running
// on the CPU behind the caller's back.
#include <string>

#include "engine/backend.hpp"

namespace ttlpred {

struct DeviceChoice {
  const engine::BackendKind* backend = nullptr;  // null: the CPU engine (PredictorOptions::backend)
  int device = 0;                                // the GPU's index for CUDA
};

// Whether this build has the CUDA backend compiled in (-DTTLPRED_CUDA=ON).
bool build_has_cuda_backend();

// Throws Error naming `option` for a name that is not cpu, cuda or cuda:N, and for cuda in a
// build without the CUDA backend. Whether a GPU is there is the backend's check, when a
// model is compiled for it (an Error naming the CUDA problem).
DeviceChoice device_named(const std::string& name, const char* option = "--device");

}  // namespace ttlpred
