// LtInt8Network: int8-static on cuBLASLt, int8 x int8 -> int32 on tensor cores, on the model
// file's affine activation grid (cuda_pack.hpp's Int8Grid, the CPU engine's and QAT's) with
// the CPU's per-channel s8 weights; embeddings folded through layer 0 in float. A hidden
// layer runs in one of two forms:
//   epilogue  int8 out from cuBLASLt's own epilogue: sat(round(alpha[n] * acc + bias[n] /
//             out_scale)) and ReLU, which is the next layer's grid exactly when that grid is
//             [0, 127] (zero point 0: a ReLU output's range);
//   requant   int32 out, then our kernel (per-channel scale, bias, folded embeddings, any
//             activation, any grid): where the epilogue does not apply (layer 0 with
//             embeddings, LeakyReLU, another grid), when CudaOptions::int8_requant_kernel asks
//             for it, or when cuBLASLt has no algorithm for the epilogue.
#include <algorithm>

#include "engine/cuda/lt_layer_network.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda::detail {

namespace {

Int8Out int8_out(const Int8Grid& g) { return {g.inv_scale, g.lo, g.hi}; }

class LtInt8Network final : public LtLayerNetwork {
 public:
  LtInt8Network(const MlpModel& model, const std::vector<PackedLayer>& layers, const PackedEmbeddings& emb,
                const std::vector<Int8Grid>& grids, bool requant_kernel, std::size_t max_batch)
      : LtLayerNetwork(model, engine::Variant::Int8Static, layers, emb, /*int8=*/true), requant_kernel_(requant_kernel) {
    act_type_ = final_in_type_ = ElemType::I8;
    first_q_ = int8_out(grids.front());
    final_in_scale_ = grids.back().scale;
    for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
      const PackedLayer& src = layers[l];
      GemmLayer g = gemm_layer(src.q_in_pad, src);
      g.weight = DeviceBuffer::from(src.weight_i8);
      g.in_scale = grids[l].scale;
      g.out_q = int8_out(grids[l + 1]);
      g.w_scale = DeviceBuffer::from(src.weight_scale);
      g.bias = DeviceBuffer::from(src.bias_f32);
      g.mode = GemmMode::Int8ToI32;
      g.folds_embeddings = l == 0 && shape_.n_cat > 0;
      hidden_.push_back(std::move(g));
    }
    if (!requant_kernel && use_epilogue(layers, grids) && !epilogue_available(max_batch))
      back_to_requant(layers);
    const std::uint32_t widest = widest_activation(layers);
    shape_.act_bytes_per_row = widest;  // int8 activations
    const bool any_i32 = std::any_of(hidden_.begin(), hidden_.end(),
                                     [](const GemmLayer& g) { return g.mode == GemmMode::Int8ToI32; });
    shape_.acc_bytes_per_row = any_i32 ? widest * sizeof(std::int32_t) : 0;
  }

  std::string form() const override { return requant_kernel_ ? "int8-static/requant" : "int8-static"; }

  bool wants_self_test() const override {
    return std::any_of(hidden_.begin(), hidden_.end(), [](const GemmLayer& g) { return g.mode == GemmMode::Int8Epilog; });
  }

 private:
  // Every layer whose form allows it gets the epilogue: its alpha vector and its bias on the
  // output grid. True when any did.
  bool use_epilogue(const std::vector<PackedLayer>& layers, const std::vector<Int8Grid>& grids) {
    bool any = false;
    for (std::size_t l = 0; l < hidden_.size(); ++l) {
      GemmLayer& g = hidden_[l];
      const Int8Grid& next = grids[l + 1];
      if (g.act != Activation::Relu || g.folds_embeddings || next.lo != 0.0f || next.hi != 127.0f) continue;
      std::vector<float> alpha(g.out_pad), bias(layers[l].bias_f32);
      for (std::uint32_t n = 0; n < g.out_pad; ++n) {
        alpha[n] = g.in_scale * layers[l].weight_scale[n] * next.inv_scale;
        bias[n] *= next.inv_scale;
      }
      g.alpha = DeviceBuffer::from(alpha);
      g.bias = DeviceBuffer::from(bias);
      g.mode = GemmMode::Int8Epilog;
      any = true;
    }
    return any;
  }

  // Whether cuBLASLt has an algorithm for every layer's matmul in its form at a few batch sizes.
  bool epilogue_available(std::size_t max_batch) const {
    cublasLtHandle_t lt = nullptr;
    TTLPRED_CUBLAS_CHECK(cublasLtCreate(&lt));
    bool ok = true;
    for (std::size_t batch : {std::size_t{1}, std::size_t{16}, std::size_t{256}, max_batch})
      for (std::size_t l = 0; ok && l < hidden_.size(); ++l) {
        try {
          (void)make_matmul(lt, l, batch);
        } catch (const Error&) {
          ok = false;
        }
      }
    (void)cublasLtDestroy(lt);
    return ok;
  }

  // Every epilogue layer back to int32 out and the unscaled bias of the requant kernel.
  void back_to_requant(const std::vector<PackedLayer>& layers) {
    for (std::size_t l = 0; l < hidden_.size(); ++l)
      if (hidden_[l].mode == GemmMode::Int8Epilog) {
        hidden_[l].mode = GemmMode::Int8ToI32;
        hidden_[l].bias = DeviceBuffer::from(layers[l].bias_f32);
      }
  }

  bool requant_kernel_;
};

}  // namespace

std::unique_ptr<CudaNetwork> make_lt_int8_network(const PackedModel& m, const CudaOptions& options) {
  return std::make_unique<LtInt8Network>(*m.model, m.layers, m.emb, m.grids, options.int8_requant_kernel,
                                         options.max_batch);
}

}  // namespace ttlpred::cuda::detail
