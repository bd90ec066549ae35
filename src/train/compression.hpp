#pragma once
// Training for compressed inference (the int8 and 2:4 variants): quantization-aware training for the engine's
// int8-static plans and 2:4 sparsity-aware training, alone or together.
//
// QAT fine-tunes a float model while its forward pass computes what an int8-static plan
// computes (quant/fake_quant.hpp): weights rounded per output channel (layer 0 on its
// dense columns only: the engine folds the embedding columns in float), each layer's input
// rounded to the u8 grid of its calibrated range. Gradients pass the rounding unchanged
// (straight-through estimator) and stop where an activation is clipped. Ranges are measured
// again at the start of every epoch on the fake-quantized network; the best epoch's ranges
// are the model's int8 calibration.
//
// 2:4 sparsity keeps, in every group of four consecutive inputs of every output channel,
// the two weights of largest magnitude (quant/sparse24.hpp, the rule the engine packs by):
//   - FixedMask (the standard recipe): prune the starting model once, then fine-tune with
//     the mask fixed (pruned weights stay zero, their gradients are dropped);
//   - SrSte (Zhou et al., 2021): the mask is recomputed from the dense weights every step,
//     gradients reach all of them, and pruned weights are pulled towards zero by
//     srste_decay * w, so the mask settles during training.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/model_input.hpp"
#include "model/mlp.hpp"
#include "quant/activation_ranges.hpp"
#include "train/mlp_net.hpp"

namespace ttlpred {

enum class SparsityMethod : std::uint8_t { FixedMask, SrSte };

struct CompressionConfig {
  bool qat_int8 = false;
  bool sparse_2_4 = false;
  SparsityMethod sparsity_method = SparsityMethod::FixedMask;
  float srste_decay = 2e-4f;
  // How each epoch's activation ranges are chosen. Percentile clipping ruins post-training
  // int8 on the synthetic trace (docs/ACCURACY.md) but QAT learns around it; measured so.
  quant::ActivationRangeOptions act_calibration{quant::RangeMethod::Percentile, 99.99, 255.0f, std::size_t{1} << 16};
  std::size_t calibration_rows = 8192;  // training rows (evenly strided) the ranges come from
  // Activation grid: 127 levels is what every ISA runs (AVX2's u8 x s8 products need 7-bit
  // activations), so a QAT model computes the same on every host.
  float act_qmax = 127.0f;

  bool any() const { return qat_int8 || sparse_2_4; }
};

// "int8-qat", "2:4", "int8-qat+2:4" ("" when nothing is compressed); with the method for 2:4.
std::string compression_label(const CompressionConfig& c);
std::string compression_json(const CompressionConfig& c);
SparsityMethod sparsity_method_from_name(const std::string& name);  // "fixed-mask", "sr-ste"

ActQuantPlan act_quant_plan(const quant::ActivationRanges& table, float qmax);

// The weight side of compressed training, over the flat parameter array of mlp_net.hpp:
// latent (trained) weights -> the effective weights the forward pass uses.
class WeightCompressor {
 public:
  WeightCompressor(const NetShape& shape, const CompressionConfig& config);

  // FixedMask: takes the mask from `latent` and zeroes the pruned weights in it.
  void start(float* latent);
  // eff = latent with the 2:4 mask applied (SrSte: recomputed from latent) and the weights
  // fake-quantized (QAT). Embeddings and biases are copied unchanged.
  void effective(const float* latent, float* eff);
  // d loss / d eff -> the update direction for latent (straight-through; FixedMask drops
  // pruned entries, SrSte adds srste_decay * latent on them). Uses the mask of the last
  // effective() call.
  void latent_gradient(const float* latent, float* grad) const;
  // After an optimizer step. FixedMask: pruned weights back to exactly zero.
  void project(float* latent) const;
  // The weights to store: latent with the final mask applied (not fake-quantized: the
  // engine quantizes them by the same rule).
  std::vector<float> exported(const float* latent) const;

 private:
  // keep (one entry per parameter) <- the 2:4 mask of latent's weight blocks.
  void compute_mask(const float* latent, std::vector<std::uint8_t>& keep) const;

  NetShape shape_;
  NetLayout layout_;
  CompressionConfig config_;
  std::vector<std::uint8_t> keep_;  // per parameter; 1 outside the weight blocks
};

// The outputs (standardized target space) an int8-static plan compiled with `table` computes
// for `model`, simulated in float exactly as QAT trains: the reference a QAT model's plan is
// checked against. A table without its own grid (act_qmax 0, post-training calibration) is
// simulated on 255 levels, the scalar and VNNI kernels' grid. out_z.size() == x.rows.
void simulate_int8_static(const MlpModel& model, const quant::ActivationRanges& table, const EncodedBatch& x,
                          std::span<float> out_z);

}  // namespace ttlpred
