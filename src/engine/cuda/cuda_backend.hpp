#pragma once
// The CUDA backend behind the backend interface (engine/backend.hpp), for a Predictor: a
// CudaPlan compiled from a model file (the static int8 variant on the file's own activation
// ranges, the grid the CPU engine runs), shared by the predictor's threads under a lock (a
// plan has one stream and one set of staging buffers). It runs cuda_variants().
#include "engine/backend.hpp"

namespace ttlpred::cuda {

const engine::BackendKind& cuda_backend();

}  // namespace ttlpred::cuda
