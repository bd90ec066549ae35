// The cuBLASLt layer-by-layer pass shared by the fp32, fp16 and int8-static networks.
#include "engine/cuda/lt_layer_network.hpp"

#include <sstream>

#include "util/error.hpp"

namespace ttlpred::cuda::detail {

namespace {

struct LtBatchSetup final : BatchSetup {
  std::vector<std::unique_ptr<LtMatmul>> matmuls;  // one per hidden layer
};

}  // namespace

LtMatmul::~LtMatmul() {
  if (d) (void)cublasLtMatrixLayoutDestroy(d);
  if (b) (void)cublasLtMatrixLayoutDestroy(b);
  if (a) (void)cublasLtMatrixLayoutDestroy(a);
  if (desc) (void)cublasLtMatmulDescDestroy(desc);
}

LtLayerNetwork::LtLayerNetwork(const MlpModel& model, engine::Variant variant, const std::vector<PackedLayer>& layers,
                               const PackedEmbeddings& emb, bool int8)
    : variant_(variant), emb_(emb, int8), final_(layers.back(), int8) {
  shape_ = io_shape(model, emb);
  // int8: layer 0 reads only the dense inputs; the embeddings arrive folded.
  gather_ = int8 ? emb_.gather(shape_, model.dense_inputs, layers.front().q_in_pad)
                 : emb_.gather(shape_, layers.front().in, layers.front().in_pad);
}

std::unique_ptr<LtMatmul> LtLayerNetwork::make_matmul(cublasLtHandle_t lt, std::size_t l, std::size_t batch) const {
  const GemmLayer& g = hidden_[l];
  auto m = std::make_unique<LtMatmul>();
  cudaDataType_t ab_type = CUDA_R_32F, d_type = CUDA_R_32F, scale_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (variant_ == engine::Variant::Fp16) {
    ab_type = d_type = CUDA_R_16F;
  } else if (variant_ == engine::Variant::Int8Static) {
    ab_type = CUDA_R_8I;
    compute = CUBLAS_COMPUTE_32I;
    if (g.mode == GemmMode::Int8Epilog) {
      d_type = CUDA_R_8I;
    } else {
      d_type = CUDA_R_32I;
      scale_type = CUDA_R_32I;
    }
  }
  TTLPRED_CUBLAS_CHECK(cublasLtMatmulDescCreate(&m->desc, compute, scale_type));
  // Y^T (out x batch, column-major) = W (out x in) * X^T: W row-major is A = in x out
  // column-major, transposed ("TN", the layout int8 tensor cores need).
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  TTLPRED_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof(op_t)));
  TTLPRED_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof(op_n)));
  if (g.mode != GemmMode::Int8ToI32) {
    const cublasLtEpilogue_t epi = g.act == Activation::Relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    TTLPRED_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
    const void* bias = g.bias.get();
    TTLPRED_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)));
  }
  if (g.mode == GemmMode::Int8Epilog) {
    const std::int32_t mode = CUBLASLT_POINTER_MODE_ALPHA_DEVICE_VECTOR_BETA_ZERO;
    TTLPRED_CUBLAS_CHECK(
        cublasLtMatmulDescSetAttribute(m->desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, &mode, sizeof(mode)));
  }
  const auto n = static_cast<std::uint64_t>(batch);
  TTLPRED_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&m->a, ab_type, g.in_pad, g.out_pad, g.in_pad));
  TTLPRED_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&m->b, ab_type, g.in_pad, n, g.in_pad));
  TTLPRED_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&m->d, d_type, g.out_pad, n, g.out_pad));

  cublasLtMatmulPreference_t pref = nullptr;
  TTLPRED_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t ws = kLtWorkspaceBytes;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(lt, m->desc, m->a, m->b, m->d, m->d, pref, 1, &result, &found);
  (void)cublasLtMatmulPreferenceDestroy(pref);
  TTLPRED_CUBLAS_CHECK(st);
  if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS)
    throw Error("cuBLASLt: no matmul algorithm for variant " + std::string(engine::variant_name(variant_)) +
                ", layer " + std::to_string(l) + " (" + std::to_string(g.in_pad) + " -> " + std::to_string(g.out_pad) +
                "), batch " + std::to_string(batch));
  m->algo = result.algo;
  return m;
}

std::unique_ptr<BatchSetup> LtLayerNetwork::setup(const Lane& lane, std::size_t batch) const {
  auto s = std::make_unique<LtBatchSetup>();
  for (std::size_t l = 0; l < hidden_.size(); ++l) s->matmuls.push_back(make_matmul(lane.lt, l, batch));
  return s;
}

void LtLayerNetwork::enqueue(const Lane& lane, const BatchSetup& setup, std::size_t batch, cudaStream_t stream) const {
  const auto& matmuls = static_cast<const LtBatchSetup&>(setup).matmuls;
  const ElemType first_type = hidden_.empty() ? final_in_type_ : act_type_;
  launch_gather(on_lane(gather_, lane), batch, first_type, first_q_, lane.act[0].get(), stream);
  int cur = 0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const std::int32_t one_i = 1, zero_i = 0;
  for (std::size_t l = 0; l < hidden_.size(); ++l) {
    const GemmLayer& g = hidden_[l];
    const LtMatmul& m = *matmuls[l];
    void* x = lane.act[cur].get();
    void* y = lane.act[1 - cur].get();
    if (g.mode == GemmMode::Int8ToI32) {
      void* acc = lane.acc_i32.get();
      TTLPRED_CUBLAS_CHECK(cublasLtMatmul(lane.lt, m.desc, &one_i, g.weight.get(), m.a, x, m.b, &zero_i, acc, m.d, acc,
                                          m.d, &m.algo, lane.workspace.get(), kLtWorkspaceBytes, stream));
      FoldedArgs folded;
      if (g.folds_embeddings) {
        folded.folded = emb_.folded.as<float>();
        folded.offset = emb_.folded_offset.as<std::uint64_t>();
        folded.cats = lane.d_cats.as<std::uint32_t>();
        folded.n_cat = static_cast<std::uint32_t>(shape_.n_cat);
      }
      launch_requant(lane.acc_i32.as<std::int32_t>(), batch, g.out_pad, g.in_scale, g.w_scale.as<float>(),
                     g.bias.as<float>(), folded, g.act, ElemType::I8, g.out_q, y, stream);
    } else {
      const void* alpha = g.mode == GemmMode::Int8Epilog ? g.alpha.get() : static_cast<const void*>(&one_f);
      TTLPRED_CUBLAS_CHECK(cublasLtMatmul(lane.lt, m.desc, alpha, g.weight.get(), m.a, x, m.b, &zero_f, y, m.d, y, m.d,
                                          &m.algo, lane.workspace.get(), kLtWorkspaceBytes, stream));
      if (g.act == Activation::LeakyRelu) launch_leaky_relu_inplace(y, act_type_, batch * g.out_pad, stream);
    }
    cur = 1 - cur;
  }
  launch_final_layer(lane.act[cur].get(), final_in_type_, final_in_scale_, batch, final_.in_pad, final_.w.as<float>(),
                     final_.b.as<float>(), final_.out, final_.act, lane.d_out.as<float>(), stream);
}

std::string LtLayerNetwork::describe() const {
  std::ostringstream s;
  s << " gather -> [";
  for (std::size_t l = 0; l < hidden_.size(); ++l) s << (l ? ", " : "") << hidden_[l].in_pad << "x" << hidden_[l].out_pad;
  s << "] cuBLASLt";
  for (const GemmLayer& g : hidden_)
    s << (g.mode == GemmMode::Float        ? " bias/ReLU epilogue"
          : g.mode == GemmMode::Int8Epilog ? " int8-out alpha+bias/ReLU epilogue"
                                           : (g.folds_embeddings ? " int32-out + requant (+ folded embeddings)"
                                                                 : " int32-out + requant"))
      << ",";
  s << "; last layer " << final_.in_pad << "->" << final_.out << " warp dot product";
  return s.str();
}

}  // namespace ttlpred::cuda::detail
