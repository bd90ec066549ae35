// FusedFp16Network: fp16, the whole MLP in one kernel (fused_mlp_kernel.cu: fp16 WMMA, fp32
// accumulate, the activations never leave shared memory), the last layer as the warp-dot
// kernel computes it. Rows per block: CudaOptions::fused_rows_per_block, or by batch size.
#include <algorithm>
#include <sstream>

#include "engine/cuda/cuda_network.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda::detail {

namespace {

class FusedFp16Network final : public CudaNetwork {
 public:
  FusedFp16Network(const PackedModel& m, const CudaOptions& options)
      : emb_(m.emb, /*with_folded=*/false), final_(m.layers.back(), /*int8=*/false),
        rows_per_block_(options.fused_rows_per_block) {
    const std::vector<PackedLayer>& layers = m.layers;
    shape_ = io_shape(*m.model, m.emb);
    if (layers.size() - 1 > static_cast<std::size_t>(kFusedMaxHidden))
      throw Error("CUDA fused kernel: at most " + std::to_string(kFusedMaxHidden) + " hidden layers, model has " +
                  std::to_string(layers.size() - 1));
    const std::uint32_t widest = widest_activation(layers);
    int optin = 0;
    TTLPRED_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, options.device));
    int tiles = 4;
    while (tiles >= 1 && fused_smem_bytes(widest, tiles) > static_cast<std::size_t>(optin)) tiles /= 2;
    if (tiles < 1)
      throw Error("CUDA fused kernel: width " + std::to_string(widest) + " needs " +
                  std::to_string(fused_smem_bytes(widest, 1)) + " bytes of shared memory per block, device has " +
                  std::to_string(optin));
    max_tiles_ = tiles;
    args_.gather = emb_.gather(shape_, layers.front().in, layers.front().in_pad);
    args_.hidden = static_cast<int>(layers.size() - 1);
    for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
      weights_.push_back(DeviceBuffer::from(layers[l].weight_f16));
      biases_.push_back(DeviceBuffer::from(layers[l].bias_f32));
      args_.layers[l] = {weights_.back().get(), biases_.back().as<float>(), layers[l].in_pad, layers[l].out_pad,
                         layers[l].act};
    }
    args_.final_w = final_.w.as<float>();
    args_.final_bias = final_.b.as<float>();
    args_.final_in_pad = final_.in_pad;
    args_.final_out = final_.out;
    args_.final_act = final_.act;
    args_.max_width_pad = widest;
    width_ = fused_uniform_width(args_);
    for (int t = 1; t <= tiles; t *= 2) fused_prepare(t, width_, fused_smem_bytes(widest, t));
  }

  engine::Variant variant() const override { return engine::Variant::Fp16; }
  std::string form() const override { return "fp16/fused"; }

  std::string describe() const override {
    std::ostringstream s;
    s << " one fused kernel (fp16 WMMA), " << args_.hidden << " hidden layers up to width " << args_.max_width_pad
      << ", up to " << 16 * max_tiles_ << " rows per block, "
      << (width_ ? "width " + std::to_string(width_) + " specialization;" : "general widths;") << " last layer "
      << final_.in_pad << "->" << final_.out << " warp dot product";
    return s.str();
  }

  std::unique_ptr<BatchSetup> setup(const Lane&, std::size_t) const override { return std::make_unique<BatchSetup>(); }

  void enqueue(const Lane& lane, const BatchSetup&, std::size_t batch, cudaStream_t stream) const override {
    FusedArgs a = args_;
    a.gather = on_lane(a.gather, lane);
    a.out = lane.d_out.as<float>();
    launch_fused(a, batch, tiles(batch), width_, stream);
  }

 private:
  int tiles(std::size_t batch) const {
    int t = rows_per_block_ / 16;
    if (t == 0) t = batch <= 512 ? 1 : batch <= 4096 ? 2 : 4;  // enough blocks to fill the SMs first
    return std::min(t, max_tiles_);
  }

  DeviceEmbeddings emb_;
  DeviceFinalLayer final_;
  std::vector<DeviceBuffer> weights_, biases_;
  FusedArgs args_{};  // lane inputs and output null: enqueue fills them in
  int rows_per_block_ = 0;
  int max_tiles_ = 4;
  std::uint32_t width_ = 0;  // compile-time-width kernel in use (0: general)
};

}  // namespace

std::unique_ptr<CudaNetwork> make_fused_fp16_network(const PackedModel& m, const CudaOptions& options) {
  return std::make_unique<FusedFp16Network>(m, options);
}

}  // namespace ttlpred::cuda::detail
