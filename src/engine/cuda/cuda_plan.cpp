// CudaPlan: packs the model onto the device, builds per batch size the cuBLASLt matmuls and
// two CUDA graphs (the full host-to-host pass, and the kernels alone for device timing), and
// replays them.
#include "engine/cuda/cuda_plan.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <utility>

#include "engine/cuda/cuda_check.hpp"
#include "engine/cuda/cuda_pack.hpp"
#include "engine/cuda/kernels.hpp"
#include "model/model_input.hpp"
#include "model/reference_forward.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda {

using detail::ElemType;

std::vector<engine::Variant> cuda_variants() {
  // fp16-2:4 joins this list once a cuSPARSELt path exists (cuSPARSELt is not installed here).
  return {engine::Variant::Fp32, engine::Variant::Fp16, engine::Variant::Int8Static};
}

bool cuda_runs(engine::Variant v) {
  for (engine::Variant c : cuda_variants())
    if (c == v) return true;
  return false;
}

int cuda_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  return n;
}

std::string cuda_device_problem(int device) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no usable GPU: cudaGetDeviceCount: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  }
  if (device < 0 || device >= n)
    return "GPU " + std::to_string(device) + " is not there (" + std::to_string(n) + " visible)";
  return "";
}

std::string cuda_device_description(int device) {
  cudaDeviceProp p{};
  const cudaError_t e = cudaGetDeviceProperties(&p, device);
  if (e != cudaSuccess) return std::string("no device ") + std::to_string(device) + ": " + cudaGetErrorString(e);
  std::ostringstream s;
  s << p.name << " (sm_" << p.major << p.minor << ", " << p.multiProcessorCount << " SMs, "
    << (p.totalGlobalMem >> 30) << " GiB)";
  return s.str();
}

namespace {

// Owned device memory.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes) TTLPRED_CUDA_CHECK(cudaMalloc(&p_, bytes));
    if (bytes) TTLPRED_CUDA_CHECK(cudaMemset(p_, 0, bytes));
  }
  template <class T>
  static DeviceBuffer from(const std::vector<T>& v) {
    DeviceBuffer b(v.size() * sizeof(T));
    if (!v.empty()) TTLPRED_CUDA_CHECK(cudaMemcpy(b.p_, v.data(), b.bytes_, cudaMemcpyHostToDevice));
    return b;
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  ~DeviceBuffer() {
    if (p_) (void)cudaFree(p_);
  }
  void* get() const { return p_; }
  template <class T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// Owned page-locked host memory (the graphs' copies read and write only these).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(std::size_t bytes) {
    if (bytes) TTLPRED_CUDA_CHECK(cudaMallocHost(&p_, bytes));
    if (bytes) std::memset(p_, 0, bytes);
  }
  PinnedBuffer(PinnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    return *this;
  }
  ~PinnedBuffer() {
    if (p_) (void)cudaFreeHost(p_);
  }
  template <class T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  void* p_ = nullptr;
};

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
  detail::Int8Out out_q;  // int8: how the next layer's input is stored (its grid)
  bool folds_embeddings = false;  // int8 layer 0: adds the folded embedding rows (requant)
};

// Every int8 layer's output grid as the kernels take it.
detail::Int8Out int8_out(const Int8Grid& g) { return {g.inv_scale, g.lo, g.hi}; }

// One matmul's cuBLASLt descriptors and chosen algorithm, for one batch size.
struct LtMatmul {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  LtMatmul() = default;
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;
  ~LtMatmul() {
    if (d) (void)cublasLtMatrixLayoutDestroy(d);
    if (b) (void)cublasLtMatrixLayoutDestroy(b);
    if (a) (void)cublasLtMatrixLayoutDestroy(a);
    if (desc) (void)cublasLtMatmulDescDestroy(desc);
  }
};

struct BatchEntry {
  std::vector<std::unique_ptr<LtMatmul>> matmuls;  // one per hidden layer (GEMM variants)
  cudaGraphExec_t full = nullptr;                  // H2D, kernels, D2H
  cudaGraphExec_t kernels = nullptr;               // kernels only
  BatchEntry() = default;
  BatchEntry(const BatchEntry&) = delete;
  BatchEntry& operator=(const BatchEntry&) = delete;
  ~BatchEntry() {
    if (full) (void)cudaGraphExecDestroy(full);
    if (kernels) (void)cudaGraphExecDestroy(kernels);
  }
};

constexpr std::size_t kWorkspaceBytes = 32u << 20;
constexpr std::size_t kMaxCachedBatchSizes = 64;

std::size_t elem_bytes(ElemType t) { return t == ElemType::F32 ? 4 : t == ElemType::F16 ? 2 : 1; }

}  // namespace

struct CudaPlan::Impl {
  engine::Variant variant = engine::Variant::Fp32;
  CudaOptions options;
  bool fused_kernel = false;  // fp16 as one fused kernel
  std::size_t dense_inputs = 0, n_cat = 0, n_out = 0;
  cudaStream_t stream = nullptr;
  cublasLtHandle_t lt = nullptr;
  DeviceBuffer workspace;

  // Inputs and output, device and pinned host.
  DeviceBuffer d_dense, d_cats, d_out;
  PinnedBuffer h_dense, h_cats, h_out;

  // Embeddings: gathered into the first layer's input (float paths) or folded through it
  // (int8: rows added by layer 0's requantization).
  std::vector<std::uint32_t> cardinality;  // per embedding, for the host-side index check
  DeviceBuffer emb_tables, emb_offset, emb_dim, emb_card, emb_col_table, emb_col_comp;
  DeviceBuffer emb_folded, emb_folded_offset;
  detail::GatherArgs gather;

  std::vector<GemmLayer> hidden;  // all layers but the last
  DeviceBuffer final_w, final_b;  // last layer, fp32 (padded in) for the warp-dot kernel
  std::uint32_t final_in_pad = 0, final_out = 0;
  Activation final_act = Activation::None;
  ElemType act_type = ElemType::F32;  // hidden activations' element type
  ElemType final_in_type = ElemType::F32;
  float final_in_scale = 1.0f;
  detail::Int8Out first_q;  // int8: layer 0's input grid
  DeviceBuffer act[2];   // ping-pong activations, max_batch x widest
  DeviceBuffer acc_i32;  // Int8ToI32 accumulators

  // Fused variant.
  std::vector<DeviceBuffer> fused_w, fused_b;
  detail::FusedArgs fused{};
  int fused_max_tiles = 4;
  std::uint32_t fused_width = 0;  // compile-time-width kernel in use (0: general)

  std::map<std::size_t, std::unique_ptr<BatchEntry>> batches;
  bool int8_epilogue_self_test = false;
  std::string note;  // why the plan is not in its preferred form, for describe()

  ~Impl() {
    batches.clear();
    if (stream) (void)cudaStreamSynchronize(stream);
    if (lt) (void)cublasLtDestroy(lt);
    if (stream) (void)cudaStreamDestroy(stream);
  }

  std::unique_ptr<LtMatmul> make_matmul(std::size_t l, std::size_t batch) const;
  void enqueue_kernels(std::size_t batch, const BatchEntry& e);
  void enqueue_full(std::size_t batch, const BatchEntry& e);
  BatchEntry& entry(std::size_t batch);
  int fused_tiles(std::size_t batch) const;
};

std::unique_ptr<LtMatmul> CudaPlan::Impl::make_matmul(std::size_t l, std::size_t batch) const {
  const GemmLayer& g = hidden[l];
  auto m = std::make_unique<LtMatmul>();
  cudaDataType_t ab_type = CUDA_R_32F, d_type = CUDA_R_32F, scale_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (variant == engine::Variant::Fp16) {
    ab_type = d_type = CUDA_R_16F;
  } else if (variant == engine::Variant::Int8Static) {
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
  const std::uint64_t ws = kWorkspaceBytes;
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(lt, m->desc, m->a, m->b, m->d, m->d, pref, 1, &result, &found);
  (void)cublasLtMatmulPreferenceDestroy(pref);
  TTLPRED_CUBLAS_CHECK(st);
  if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS)
    throw Error("cuBLASLt: no matmul algorithm for variant " + std::string(engine::variant_name(variant)) + ", layer " +
                std::to_string(l) + " (" + std::to_string(g.in_pad) + " -> " + std::to_string(g.out_pad) +
                "), batch " + std::to_string(batch));
  m->algo = result.algo;
  return m;
}

int CudaPlan::Impl::fused_tiles(std::size_t batch) const {
  int t = options.fused_rows_per_block / 16;
  if (t == 0) t = batch <= 512 ? 1 : batch <= 4096 ? 2 : 4;  // enough blocks to fill the SMs first
  return std::min(t, fused_max_tiles);
}

void CudaPlan::Impl::enqueue_kernels(std::size_t batch, const BatchEntry& e) {
  if (fused_kernel) {
    detail::launch_fused(fused, batch, fused_tiles(batch), fused_width, stream);
    return;
  }
  const ElemType first_type = hidden.empty() ? final_in_type : act_type;
  detail::launch_gather(gather, batch, first_type, first_q, act[0].get(), stream);
  int cur = 0;
  const float one_f = 1.0f, zero_f = 0.0f;
  const std::int32_t one_i = 1, zero_i = 0;
  for (std::size_t l = 0; l < hidden.size(); ++l) {
    const GemmLayer& g = hidden[l];
    const LtMatmul& m = *e.matmuls[l];
    void* x = act[cur].get();
    void* y = act[1 - cur].get();
    if (g.mode == GemmMode::Int8ToI32) {
      TTLPRED_CUBLAS_CHECK(cublasLtMatmul(lt, m.desc, &one_i, g.weight.get(), m.a, x, m.b, &zero_i, acc_i32.get(), m.d,
                                          acc_i32.get(), m.d, &m.algo, workspace.get(), kWorkspaceBytes, stream));
      detail::FoldedArgs folded;
      if (g.folds_embeddings) {
        folded.folded = emb_folded.as<float>();
        folded.offset = emb_folded_offset.as<std::uint64_t>();
        folded.cats = d_cats.as<std::uint32_t>();
        folded.n_cat = static_cast<std::uint32_t>(n_cat);
      }
      detail::launch_requant(acc_i32.as<std::int32_t>(), batch, g.out_pad, g.in_scale, g.w_scale.as<float>(),
                             g.bias.as<float>(), folded, g.act, ElemType::I8, g.out_q, y, stream);
    } else {
      const void* alpha = g.mode == GemmMode::Int8Epilog ? g.alpha.get() : static_cast<const void*>(&one_f);
      TTLPRED_CUBLAS_CHECK(cublasLtMatmul(lt, m.desc, alpha, g.weight.get(), m.a, x, m.b, &zero_f, y, m.d, y, m.d,
                                          &m.algo, workspace.get(), kWorkspaceBytes, stream));
      if (g.act == Activation::LeakyRelu) detail::launch_leaky_relu_inplace(y, act_type, batch * g.out_pad, stream);
    }
    cur = 1 - cur;
  }
  detail::launch_final_layer(act[cur].get(), final_in_type, final_in_scale, batch, final_in_pad, final_w.as<float>(),
                             final_b.as<float>(), final_out, final_act, d_out.as<float>(), stream);
}

void CudaPlan::Impl::enqueue_full(std::size_t batch, const BatchEntry& e) {
  if (dense_inputs)
    TTLPRED_CUDA_CHECK(cudaMemcpyAsync(d_dense.get(), h_dense.as<float>(), batch * dense_inputs * sizeof(float),
                                       cudaMemcpyHostToDevice, stream));
  if (n_cat)
    TTLPRED_CUDA_CHECK(cudaMemcpyAsync(d_cats.get(), h_cats.as<std::uint32_t>(), batch * n_cat * sizeof(std::uint32_t),
                                       cudaMemcpyHostToDevice, stream));
  enqueue_kernels(batch, e);
  TTLPRED_CUDA_CHECK(cudaMemcpyAsync(h_out.as<float>(), d_out.get(), batch * n_out * sizeof(float),
                                     cudaMemcpyDeviceToHost, stream));
}

namespace {

// Records what `enqueue` puts on `stream` into an instantiated graph. A failure mid-capture
// ends the capture before rethrowing, so the stream stays usable.
template <class F>
cudaGraphExec_t capture(cudaStream_t stream, F&& enqueue) {
  TTLPRED_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  try {
    enqueue();
  } catch (...) {
    cudaGraph_t broken = nullptr;
    (void)cudaStreamEndCapture(stream, &broken);
    if (broken) (void)cudaGraphDestroy(broken);
    (void)cudaGetLastError();
    throw;
  }
  cudaGraph_t graph = nullptr;
  TTLPRED_CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  TTLPRED_CUDA_CHECK(e);
  return exec;
}

}  // namespace

BatchEntry& CudaPlan::Impl::entry(std::size_t batch) {
  auto it = batches.find(batch);
  if (it != batches.end()) return *it->second;
  if (batches.size() >= kMaxCachedBatchSizes) batches.clear();  // many distinct sizes: start over
  auto e = std::make_unique<BatchEntry>();
  if (!fused_kernel)
    for (std::size_t l = 0; l < hidden.size(); ++l) e->matmuls.push_back(make_matmul(l, batch));
  // One pass outside any capture first: kernels (ours and cuBLASLt's) load lazily on first
  // use, and a failing launch reports here with a plain error rather than as a broken capture.
  enqueue_kernels(batch, *e);
  TTLPRED_CUDA_CHECK(cudaStreamSynchronize(stream));
  e->kernels = capture(stream, [&] { enqueue_kernels(batch, *e); });
  e->full = capture(stream, [&] { enqueue_full(batch, *e); });
  return *batches.emplace(batch, std::move(e)).first->second;
}

CudaPlan::CudaPlan() = default;
CudaPlan::~CudaPlan() = default;
CudaPlan::CudaPlan(CudaPlan&&) noexcept = default;
CudaPlan& CudaPlan::operator=(CudaPlan&&) noexcept = default;
CudaPlan::CudaPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

namespace {
CudaPlan::Impl& need(const std::unique_ptr<CudaPlan::Impl>& p) {
  if (!p) throw Error("CUDA plan used before compile_cuda");
  return *p;
}
}  // namespace

void CudaPlan::predict_staged(std::size_t batch) {
  Impl& p = need(impl_);
  if (batch == 0) return;
  if (batch > p.options.max_batch)
    throw Error("CUDA predict_staged: batch " + std::to_string(batch) + " exceeds the plan's max_batch " +
                std::to_string(p.options.max_batch));
  if (p.n_cat) check_category_indices(p.cardinality.data(), p.n_cat, p.h_cats.as<std::uint32_t>(), batch, "CUDA predict");
  TTLPRED_CUDA_CHECK(cudaSetDevice(p.options.device));
  BatchEntry& e = p.entry(batch);
  TTLPRED_CUDA_CHECK(cudaGraphLaunch(e.full, p.stream));
  TTLPRED_CUDA_CHECK(cudaStreamSynchronize(p.stream));
}

void CudaPlan::predict(const float* host_dense, const std::uint32_t* host_cats, std::size_t batch, float* host_out) {
  Impl& p = need(impl_);
  if (batch == 0) return;
  if ((p.dense_inputs && !host_dense) || (p.n_cat && !host_cats) || !host_out)
    throw Error("CUDA predict: null input or output pointer");
  if (p.n_cat) check_category_indices(p.cardinality.data(), p.n_cat, host_cats, batch, "CUDA predict");
  for (std::size_t done = 0; done < batch;) {
    const std::size_t n = std::min(batch - done, p.options.max_batch);
    if (p.dense_inputs)
      std::memcpy(p.h_dense.as<float>(), host_dense + done * p.dense_inputs, n * p.dense_inputs * sizeof(float));
    if (p.n_cat)
      std::memcpy(p.h_cats.as<std::uint32_t>(), host_cats + done * p.n_cat, n * p.n_cat * sizeof(std::uint32_t));
    predict_staged(n);
    std::memcpy(host_out + done * p.n_out, p.h_out.as<float>(), n * p.n_out * sizeof(float));
    done += n;
  }
}

double CudaPlan::device_time_us(std::size_t batch, int iterations) {
  Impl& p = need(impl_);
  if (batch == 0 || batch > p.options.max_batch || iterations <= 0)
    throw Error("CUDA device_time_us: batch must be in 1.." + std::to_string(p.options.max_batch) +
                " and iterations > 0");
  TTLPRED_CUDA_CHECK(cudaSetDevice(p.options.device));
  BatchEntry& e = p.entry(batch);
  TTLPRED_CUDA_CHECK(cudaGraphLaunch(e.kernels, p.stream));  // warm-up
  cudaEvent_t start = nullptr, stop = nullptr;
  TTLPRED_CUDA_CHECK(cudaEventCreate(&start));
  cudaError_t err = cudaEventCreate(&stop);
  float ms = 0.0f;
  if (err == cudaSuccess) err = cudaEventRecord(start, p.stream);
  for (int i = 0; i < iterations && err == cudaSuccess; ++i) err = cudaGraphLaunch(e.kernels, p.stream);
  if (err == cudaSuccess) err = cudaEventRecord(stop, p.stream);
  if (err == cudaSuccess) err = cudaEventSynchronize(stop);
  if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, start, stop);
  (void)cudaEventDestroy(start);
  if (stop) (void)cudaEventDestroy(stop);
  TTLPRED_CUDA_CHECK(err);
  return static_cast<double>(ms) * 1000.0 / iterations;
}

float* CudaPlan::staging_dense() { return need(impl_).h_dense.as<float>(); }
std::uint32_t* CudaPlan::staging_cats() { return need(impl_).h_cats.as<std::uint32_t>(); }
const float* CudaPlan::staging_out() const { return need(impl_).h_out.as<float>(); }
engine::Variant CudaPlan::variant() const { return need(impl_).variant; }

std::string CudaPlan::form() const {
  const Impl& p = need(impl_);
  std::string f(engine::variant_name(p.variant));
  if (p.fused_kernel) f += "/fused";
  if (p.variant == engine::Variant::Int8Static && p.options.int8_requant_kernel) f += "/requant";
  return f;
}
std::size_t CudaPlan::max_batch() const { return need(impl_).options.max_batch; }
std::size_t CudaPlan::dense_inputs() const { return need(impl_).dense_inputs; }
std::size_t CudaPlan::cat_inputs() const { return need(impl_).n_cat; }
std::size_t CudaPlan::outputs() const { return need(impl_).n_out; }

std::string CudaPlan::describe() const {
  const Impl& p = need(impl_);
  std::ostringstream s;
  s << engine::variant_name(p.variant) << ": " << p.note;
  if (p.fused_kernel) {
    s << " one fused kernel (fp16 WMMA), " << p.fused.hidden << " hidden layers up to width " << p.fused.max_width_pad
      << ", up to " << 16 * p.fused_max_tiles << " rows per block, "
      << (p.fused_width ? "width " + std::to_string(p.fused_width) + " specialization;" : "general widths;");
  } else {
    s << " gather -> [";
    for (std::size_t l = 0; l < p.hidden.size(); ++l)
      s << (l ? ", " : "") << p.hidden[l].in_pad << "x" << p.hidden[l].out_pad;
    s << "] cuBLASLt";
    for (const GemmLayer& g : p.hidden)
      s << (g.mode == GemmMode::Float        ? " bias/ReLU epilogue"
            : g.mode == GemmMode::Int8Epilog ? " int8-out alpha+bias/ReLU epilogue"
                                             : (g.folds_embeddings ? " int32-out + requant (+ folded embeddings)"
                                                                   : " int32-out + requant"))
        << ",";
    s << ";";
  }
  s << " last layer " << p.final_in_pad << "->" << p.final_out << " warp dot product; " << p.batches.size()
    << " batch sizes captured as CUDA graphs";
  return s.str();
}

namespace {

detail::GatherArgs make_gather(const CudaPlan::Impl& p, std::uint32_t in, std::uint32_t in_pad) {
  detail::GatherArgs g;
  g.dense = p.d_dense.as<float>();
  g.cats = p.d_cats.as<std::uint32_t>();
  g.dense_inputs = static_cast<std::uint32_t>(p.dense_inputs);
  g.n_cat = static_cast<std::uint32_t>(p.n_cat);
  g.tables = p.emb_tables.as<float>();
  g.table_offset = p.emb_offset.as<std::uint32_t>();
  g.dim = p.emb_dim.as<std::uint32_t>();
  g.cardinality = p.emb_card.as<std::uint32_t>();
  g.column_table = p.emb_col_table.as<std::uint32_t>();
  g.column_component = p.emb_col_comp.as<std::uint32_t>();
  g.in = in;
  g.in_pad = in_pad;
  return g;
}

// True when cuBLASLt has an algorithm for every hidden layer's matmul in its chosen mode at a
// few batch sizes; otherwise the plan falls back to int32 output and its own requantization.
bool int8_epilogue_available(CudaPlan::Impl& p) {
  for (std::size_t batch : {std::size_t{1}, std::size_t{16}, std::size_t{256}, p.options.max_batch}) {
    for (std::size_t l = 0; l < p.hidden.size(); ++l) {
      try {
        (void)p.make_matmul(l, batch);
      } catch (const Error&) {
        return false;
      }
    }
  }
  return true;
}

// Up to 64 rows on the calibrated range of the dense inputs (categories cycling through each
// table) through `plan`, against the FP64 reference.
bool int8_epilogue_agrees(CudaPlan& plan, const MlpModel& model, const quant::ActivationRanges& table) {
  const std::size_t rows = std::min<std::size_t>(64, plan.max_batch());
  const quant::ActivationRange r = table.layer_inputs.front();
  std::vector<float> dense(rows * model.dense_inputs);
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  for (float& v : dense) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double u = static_cast<double>(state >> 11) * 0x1.0p-53;
    v = static_cast<float>(r.lo + u * (r.hi - r.lo));
  }
  std::vector<std::uint32_t> cats(rows * model.embeddings.size());
  for (std::size_t i = 0; i < cats.size(); ++i)
    cats[i] = static_cast<std::uint32_t>((i / model.embeddings.size()) % model.embeddings[i % model.embeddings.size()].cardinality);
  std::vector<double> ref(rows * plan.outputs());
  reference_forward(model, dense.data(), cats.data(), rows, ref.data());
  std::vector<float> out(rows * plan.outputs());
  plan.predict(dense.data(), cats.data(), rows, out.data());
  double ref_max = 0.0, err = 0.0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    ref_max = std::max(ref_max, std::fabs(ref[i]));
    const double e = std::fabs(static_cast<double>(out[i]) - ref[i]);
    err = std::isfinite(e) ? std::max(err, e) : HUGE_VAL;
  }
  return err <= 0.1 * std::max(1.0, ref_max);  // the int8 tolerance of the self-check
}

std::string variant_list() {
  std::string names;
  for (engine::Variant v : cuda_variants()) names += (names.empty() ? "" : ", ") + std::string(engine::variant_name(v));
  return names;
}

}  // namespace

CudaPlan compile_cuda(const MlpModel& model, engine::Variant variant, const CudaOptions& options) {
  using engine::Variant;
  if (!cuda_runs(variant))
    throw Error("the CUDA backend does not run variant '" + std::string(engine::variant_name(variant)) +
                "' (it runs: " + variant_list() + ")");
  if (options.max_batch == 0) throw Error("CUDA options: max_batch must be > 0");
  if (options.fused_rows_per_block != 0 && options.fused_rows_per_block != 16 && options.fused_rows_per_block != 32 &&
      options.fused_rows_per_block != 64)
    throw Error("CUDA options: fused_rows_per_block must be 0, 16, 32 or 64, not " +
                std::to_string(options.fused_rows_per_block));
  const std::vector<PackedLayer> layers = pack_layers(model);  // checks the model
  const PackedEmbeddings emb = pack_embeddings(model);
  const bool int8 = variant == Variant::Int8Static;
  std::vector<Int8Grid> grids;
  if (int8) {
    if (!options.calibration)
      throw Error("CUDA variant int8-static needs activation ranges (CudaOptions::calibration: the model file's "
                  "int8 calibration)");
    grids = int8_grids(*options.calibration, layers.size());
    if (layers.size() < 2)
      throw Error("CUDA variant int8-static needs at least one hidden layer (the last layer runs in float)");
  }
  if (const std::string problem = cuda_device_problem(options.device); !problem.empty())
    throw Error("CUDA: " + problem);
  TTLPRED_CUDA_CHECK(cudaSetDevice(options.device));

  auto p = std::make_unique<CudaPlan::Impl>();
  p->variant = variant;
  p->options = options;
  p->options.calibration = nullptr;  // not owned; only needed here
  p->fused_kernel = variant == Variant::Fp16 && options.fp16_fused_kernel;
  p->dense_inputs = model.dense_inputs;
  p->n_cat = model.embeddings.size();
  p->n_out = model.layers.back().out;
  p->cardinality = emb.cardinality;
  const std::size_t B = options.max_batch;
  TTLPRED_CUDA_CHECK(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
  TTLPRED_CUBLAS_CHECK(cublasLtCreate(&p->lt));
  p->workspace = DeviceBuffer(kWorkspaceBytes);

  p->d_dense = DeviceBuffer(B * p->dense_inputs * sizeof(float));
  p->d_cats = DeviceBuffer(B * p->n_cat * sizeof(std::uint32_t));
  p->d_out = DeviceBuffer(B * p->n_out * sizeof(float));
  p->h_dense = PinnedBuffer(B * p->dense_inputs * sizeof(float));
  p->h_cats = PinnedBuffer(B * p->n_cat * sizeof(std::uint32_t));
  p->h_out = PinnedBuffer(B * p->n_out * sizeof(float));
  p->emb_tables = DeviceBuffer::from(emb.tables);
  p->emb_offset = DeviceBuffer::from(emb.table_offset);
  p->emb_dim = DeviceBuffer::from(emb.dim);
  p->emb_card = DeviceBuffer::from(emb.cardinality);
  p->emb_col_table = DeviceBuffer::from(emb.column_table);
  p->emb_col_comp = DeviceBuffer::from(emb.column_component);
  // int8: layer 0 reads only the dense inputs; the embeddings arrive folded.
  p->gather = int8 ? make_gather(*p, model.dense_inputs, layers.front().q_in_pad)
                   : make_gather(*p, layers.front().in, layers.front().in_pad);
  if (int8 && p->n_cat) {
    p->emb_folded = DeviceBuffer::from(emb.folded);
    p->emb_folded_offset = DeviceBuffer::from(emb.folded_offset);
  }

  const PackedLayer& last = layers.back();
  p->final_in_pad = last.in_pad;
  p->final_out = last.out;
  p->final_act = last.act;
  {
    // int8: the last layer multiplies its int8 inputs by its s8 weights' values, in float.
    std::vector<float> w(static_cast<std::size_t>(last.out) * last.in_pad);
    if (int8)
      w = last.weight_dequant;
    else
      std::copy_n(last.weight_f32.begin(), w.size(), w.begin());  // the first `out` padded rows
    p->final_w = DeviceBuffer::from(w);
    p->final_b = DeviceBuffer::from(std::vector<float>(last.bias_f32.begin(), last.bias_f32.begin() + last.out));
  }
  std::uint32_t widest = std::max(layers.front().in_pad, layers.front().q_in_pad);
  for (const PackedLayer& l : layers) widest = std::max(widest, l.out_pad);

  if (p->fused_kernel) {
    if (layers.size() - 1 > static_cast<std::size_t>(detail::kFusedMaxHidden))
      throw Error("CUDA fused kernel: at most " + std::to_string(detail::kFusedMaxHidden) + " hidden layers, model has " +
                  std::to_string(layers.size() - 1));
    int optin = 0;
    TTLPRED_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, options.device));
    int tiles = 4;
    while (tiles >= 1 && detail::fused_smem_bytes(widest, tiles) > static_cast<std::size_t>(optin)) tiles /= 2;
    if (tiles < 1)
      throw Error("CUDA fused kernel: width " + std::to_string(widest) + " needs " +
                  std::to_string(detail::fused_smem_bytes(widest, 1)) + " bytes of shared memory per block, device has " +
                  std::to_string(optin));
    p->fused_max_tiles = tiles;
    detail::FusedArgs& a = p->fused;
    a.gather = p->gather;
    a.hidden = static_cast<int>(layers.size() - 1);
    for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
      p->fused_w.push_back(DeviceBuffer::from(layers[l].weight_f16));
      p->fused_b.push_back(DeviceBuffer::from(layers[l].bias_f32));
      a.layers[l] = {p->fused_w.back().get(), p->fused_b.back().as<float>(), layers[l].in_pad, layers[l].out_pad,
                     layers[l].act};
    }
    a.final_w = p->final_w.as<float>();
    a.final_bias = p->final_b.as<float>();
    a.final_in_pad = p->final_in_pad;
    a.final_out = p->final_out;
    a.final_act = p->final_act;
    a.out = p->d_out.as<float>();
    a.max_width_pad = widest;
    p->fused_width = detail::fused_uniform_width(a);
    for (int t = 1; t <= tiles; t *= 2) detail::fused_prepare(t, p->fused_width, detail::fused_smem_bytes(widest, t));
    return CudaPlan(std::move(p));
  }

  p->act_type = variant == Variant::Fp32 ? ElemType::F32 : variant == Variant::Fp16 ? ElemType::F16 : ElemType::I8;
  p->final_in_type = variant == Variant::Fp32 ? ElemType::F32 : int8 ? ElemType::I8 : ElemType::F16;
  for (std::size_t l = 0; l + 1 < layers.size(); ++l) {
    const PackedLayer& src = layers[l];
    GemmLayer g;
    g.in_pad = src.in_pad;
    g.out_pad = src.out_pad;
    g.act = src.act;
    if (variant == Variant::Fp32) {
      g.weight = DeviceBuffer::from(src.weight_f32);
      g.bias = DeviceBuffer::from(src.bias_f32);
    } else if (variant == Variant::Fp16) {
      g.weight = DeviceBuffer::from(src.weight_f16);
      g.bias = DeviceBuffer::from(src.bias_f16);
    } else {
      g.in_pad = src.q_in_pad;
      g.weight = DeviceBuffer::from(src.weight_i8);
      g.in_scale = grids[l].scale;
      g.out_q = int8_out(grids[l + 1]);
      g.w_scale = DeviceBuffer::from(src.weight_scale);
      g.bias = DeviceBuffer::from(src.bias_f32);
      g.mode = GemmMode::Int8ToI32;
      g.folds_embeddings = l == 0 && p->n_cat > 0;
    }
    p->hidden.push_back(std::move(g));
  }
  if (int8) {
    p->first_q = int8_out(grids.front());
    p->final_in_scale = grids.back().scale;
    bool any_epilogue = false;
    if (!options.int8_requant_kernel) {
      // Epilogue form where it computes the same grid: int8 out = sat(round(alpha[n] * acc +
      // bias[n] / out_scale)) and ReLU, which is the next layer's grid exactly when that grid
      // is [0, 127] (zero point 0: a ReLU output's range). Layer 0 with embeddings must add
      // the folded rows, which the epilogue cannot.
      for (std::size_t l = 0; l < p->hidden.size(); ++l) {
        GemmLayer& g = p->hidden[l];
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
        any_epilogue = true;
      }
      if (any_epilogue && !int8_epilogue_available(*p)) {
        any_epilogue = false;
        for (std::size_t l = 0; l < p->hidden.size(); ++l)  // back to unscaled bias for the requant kernel
          if (p->hidden[l].mode == GemmMode::Int8Epilog) {
            p->hidden[l].mode = GemmMode::Int8ToI32;
            p->hidden[l].bias = DeviceBuffer::from(layers[l].bias_f32);
          }
      }
    }
    p->int8_epilogue_self_test = any_epilogue;
    const bool any_i32 = std::any_of(p->hidden.begin(), p->hidden.end(),
                                     [](const GemmLayer& g) { return g.mode == GemmMode::Int8ToI32; });
    p->acc_i32 = DeviceBuffer(any_i32 ? B * widest * sizeof(std::int32_t) : 0);
  }
  const std::size_t act_bytes = B * widest * std::max(elem_bytes(p->act_type), elem_bytes(p->final_in_type));
  p->act[0] = DeviceBuffer(act_bytes);
  p->act[1] = DeviceBuffer(act_bytes);
  CudaPlan plan(std::move(p));
  if (plan.impl_->int8_epilogue_self_test && !int8_epilogue_agrees(plan, model, *options.calibration)) {
    // cuBLASLt accepted the int8-out epilogue but its numbers disagree with the reference:
    // use the int32 + requantization form, which is plain arithmetic.
    CudaOptions fallback = options;
    fallback.int8_requant_kernel = true;
    CudaPlan safe = compile_cuda(model, variant, fallback);
    safe.impl_->note = "int8 epilogue form failed its self-test; ";
    return safe;
  }
  return plan;
}

}  // namespace ttlpred::cuda
