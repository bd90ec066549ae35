#pragma once
// The trainer's matrix products run on OpenBLAS (through Eigen's EIGEN_USE_BLAS). The
// trainer already spreads shards over its own thread pool and sums their gradients in a
// fixed order; a BLAS that also spawned threads would oversubscribe the cores and make the
// timing depend on what else runs. So every product runs on the thread that asks for it.
namespace ttlpred {

// Pins OpenBLAS to one thread per call. Idempotent and thread-safe; cheap after the first.
void use_single_threaded_blas();

}  // namespace ttlpred
