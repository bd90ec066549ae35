// LtFloatNetwork: fp32 and fp16 on cuBLASLt, one matmul per hidden layer with the bias and
// ReLU in its epilogue (fp32: fp32 compute, no TF32; fp16: fp16 storage, fp32 accumulate on
// tensor cores), the last layer by the warp-dot kernel.
#include <algorithm>

#include "engine/cuda/lt_layer_network.hpp"

namespace ttlpred::cuda::detail {

namespace {

class LtFloatNetwork final : public LtLayerNetwork {
 public:
  LtFloatNetwork(const MlpModel& model, engine::Variant variant, const std::vector<PackedLayer>& layers,
                 const PackedEmbeddings& emb)
      : LtLayerNetwork(model, variant, layers, emb, /*int8=*/false) {
    const bool fp16 = variant == engine::Variant::Fp16;
    act_type_ = final_in_type_ = fp16 ? ElemType::F16 : ElemType::F32;
    for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
      const PackedLayer& src = layers[l];
      GemmLayer g = gemm_layer(src.in_pad, src);
      g.weight = fp16 ? DeviceBuffer::from(src.weight_f16) : DeviceBuffer::from(src.weight_f32);
      g.bias = fp16 ? DeviceBuffer::from(src.bias_f16) : DeviceBuffer::from(src.bias_f32);
      hidden_.push_back(std::move(g));
    }
    shape_.act_bytes_per_row = widest_activation(layers) * (fp16 ? 2 : 4);
  }
  std::string form() const override { return std::string(engine::variant_name(variant_)); }
};

}  // namespace

std::unique_ptr<CudaNetwork> make_lt_float_network(const PackedModel& m, engine::Variant variant) {
  return std::make_unique<LtFloatNetwork>(*m.model, variant, m.layers, m.emb);
}

}  // namespace ttlpred::cuda::detail
