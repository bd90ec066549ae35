#pragma once
// The CUDA backend behind the backend interface (engine/backend.hpp), for a Predictor: a
// CudaPlan compiled from a model file (the static int8 variant on the file's own activation
// ranges, the grid the CPU engine runs), and a lane of its own (another_lane(): a stream and
// buffers on the same weights) for each caller running at once, so that the predictor's
// threads never wait on one another's passes. It runs cuda_variants().
#include "engine/backend.hpp"

namespace ttlpred::cuda {

const engine::BackendKind& cuda_backend();

}  // namespace ttlpred::cuda
