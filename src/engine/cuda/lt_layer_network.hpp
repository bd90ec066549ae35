#pragma once
// The layer-by-layer pass that LtFloatNetwork and LtInt8Network share: gather into the first
// activation buffer, one cuBLASLt matmul per hidden layer (bias and activation in its
// epilogue, or int32 out and our requantization), the last layer by the warp-dot kernel.
// The subclasses pack the hidden layers for their data type; this class runs them.
#include <memory>
#include <string>
#include <vector>

#include "engine/cuda/cuda_network.hpp"

namespace ttlpred::cuda::detail {

// How a hidden layer's matmul runs.
enum class GemmMode : std::uint8_t {
  Float,       // fp32 or fp16 in/out, bias (+ReLU) epilogue
  Int8Epilog,  // int8 in/out: per-channel alpha vector, bias + ReLU epilogue, saturating int8 output
  Int8ToI32,   // int8 in, int32 out, then launch_requant
};

struct GemmLayer {
  std::uint32_t in_pad = 0, out_pad = 0;
  Activation act = Activation::Relu;
  GemmMode mode = GemmMode::Float;
  DeviceBuffer weight;    // out_pad x in_pad, f32 / f16 / i8
  DeviceBuffer bias;      // epilogue bias: f32 (fp32, int8 modes) or f16 (fp16)
  DeviceBuffer w_scale;   // Int8ToI32: per-channel weight scale
  DeviceBuffer alpha;     // Int8Epilog: in_scale * w_scale[n] / out_scale
  float in_scale = 1.0f;  // int8: scale of this layer's input
  Int8Out out_q;          // int8: how the next layer's input is stored (its grid)
  bool folds_embeddings = false;  // int8 layer 0: adds the folded embedding rows (requant)
};

// One matmul's cuBLASLt descriptors and chosen algorithm, for one batch size.
struct LtMatmul {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  LtMatmul() = default;
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  ~LtMatmul();
};

class LtLayerNetwork : public CudaNetwork {
 public:
  engine::Variant variant() const override { return variant_; }
  std::string describe() const override;
  std::unique_ptr<BatchSetup> setup(const Lane& lane, std::size_t batch) const override;
  void enqueue(const Lane& lane, const BatchSetup& setup, std::size_t batch, cudaStream_t stream) const override;

  // Layer `l`'s matmul for `batch` rows on handle `lt`; throws ttlpred::Error naming the layer
  // when cuBLASLt has no algorithm for it.
  std::unique_ptr<LtMatmul> make_matmul(cublasLtHandle_t lt, std::size_t l, std::size_t batch) const;

 protected:
  // Shape, embeddings (`int8`: folded through layer 0, which then reads the dense columns
  // only) and the last layer; the subclass packs the hidden layers and sets the scratch.
  LtLayerNetwork(const MlpModel& model, engine::Variant variant, const std::vector<PackedLayer>& layers,
                 const PackedEmbeddings& emb, bool int8);

  // A hidden layer reading `in_pad` columns, with `src`'s output width and activation; the
  // subclass adds its weights.
  static GemmLayer gemm_layer(std::uint32_t in_pad, const PackedLayer& src) {
    GemmLayer g;
    g.in_pad = in_pad;
    g.out_pad = src.out_pad;
    g.act = src.act;
    return g;
  }

  engine::Variant variant_;
  DeviceEmbeddings emb_;
  GatherArgs gather_;
  DeviceFinalLayer final_;
  std::vector<GemmLayer> hidden_;          // all layers but the last
  ElemType act_type_ = ElemType::F32;       // hidden activations' element type
  ElemType final_in_type_ = ElemType::F32;  // the last layer's input type
  float final_in_scale_ = 1.0f;             // int8: the last layer's input scale
  Int8Out first_q_;                         // int8: layer 0's input grid
};

}  // namespace ttlpred::cuda::detail
