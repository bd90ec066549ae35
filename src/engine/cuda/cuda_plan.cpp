// CudaPlan: checks and packs the model, has the network of its form built on the device
// (cuda_network.hpp: one class per implementation), and on its own lane captures per batch
// size two CUDA graphs (the full host-to-host pass, and the kernels alone for device timing)
// and replays them.
#include "engine/cuda/cuda_plan.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <utility>

#include "engine/cuda/cuda_check.hpp"
#include "engine/cuda/cuda_network.hpp"
#include "engine/cuda/cuda_pack.hpp"
#include "model/model_input.hpp"
#include "model/reference_forward.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda {

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

using detail::BatchSetup;
using detail::CudaNetwork;
using detail::Lane;

// One batch size on the plan's lane: the network's setup and two graphs.
struct BatchEntry {
  std::unique_ptr<BatchSetup> setup;
  cudaGraphExec_t full = nullptr;     // H2D, kernels, D2H
  cudaGraphExec_t kernels = nullptr;  // kernels only
  BatchEntry() = default;
  BatchEntry(const BatchEntry&) = delete;
  BatchEntry& operator=(const BatchEntry&) = delete;
  ~BatchEntry() {
    if (full) (void)cudaGraphExecDestroy(full);
    if (kernels) (void)cudaGraphExecDestroy(kernels);
  }
};

constexpr std::size_t kMaxCachedBatchSizes = 64;

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

// A network (shared, read-only) and one lane of its own (stream, buffers, graphs).
struct CudaPlan::Impl {
  std::shared_ptr<const CudaNetwork> net;
  CudaOptions options;  // calibration cleared: only compile_cuda reads it
  std::unique_ptr<Lane> lane;
  std::map<std::size_t, std::unique_ptr<BatchEntry>> batches;
  std::string note;  // why the plan is not in its preferred form, for describe()

  Impl(std::shared_ptr<const CudaNetwork> n, const CudaOptions& o) : net(std::move(n)), options(o) {
    options.calibration = nullptr;
    lane = std::make_unique<Lane>(net->shape(), options.device, options.max_batch);
  }
  ~Impl() { batches.clear(); }  // graphs before the lane's stream

  void enqueue_full(std::size_t batch, const BatchEntry& e) const {
    const detail::NetworkShape& s = net->shape();
    const cudaStream_t stream = lane->stream;
    if (s.dense_inputs)
      TTLPRED_CUDA_CHECK(cudaMemcpyAsync(lane->d_dense.get(), lane->h_dense.as<float>(),
                                         batch * s.dense_inputs * sizeof(float), cudaMemcpyHostToDevice, stream));
    if (s.n_cat)
      TTLPRED_CUDA_CHECK(cudaMemcpyAsync(lane->d_cats.get(), lane->h_cats.as<std::uint32_t>(),
                                         batch * s.n_cat * sizeof(std::uint32_t), cudaMemcpyHostToDevice, stream));
    net->enqueue(*lane, *e.setup, batch, stream);
    TTLPRED_CUDA_CHECK(cudaMemcpyAsync(lane->h_out.as<float>(), lane->d_out.get(), batch * s.n_out * sizeof(float),
                                       cudaMemcpyDeviceToHost, stream));
  }

  BatchEntry& entry(std::size_t batch) {
    auto it = batches.find(batch);
    if (it != batches.end()) return *it->second;
    if (batches.size() >= kMaxCachedBatchSizes) batches.clear();  // many distinct sizes: start over
    auto e = std::make_unique<BatchEntry>();
    e->setup = net->setup(*lane, batch);
    // One pass outside any capture first: kernels (ours and cuBLASLt's) load lazily on first
    // use, and a failing launch reports here with a plain error rather than as a broken capture.
    net->enqueue(*lane, *e->setup, batch, lane->stream);
    TTLPRED_CUDA_CHECK(cudaStreamSynchronize(lane->stream));
    e->kernels = capture(lane->stream, [&] { net->enqueue(*lane, *e->setup, batch, lane->stream); });
    e->full = capture(lane->stream, [&] { enqueue_full(batch, *e); });
    return *batches.emplace(batch, std::move(e)).first->second;
  }
};

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
  const detail::NetworkShape& s = p.net->shape();
  if (s.n_cat) check_category_indices(s.cardinality.data(), s.n_cat, p.lane->h_cats.as<std::uint32_t>(), batch, "CUDA predict");
  TTLPRED_CUDA_CHECK(cudaSetDevice(p.options.device));
  BatchEntry& e = p.entry(batch);
  TTLPRED_CUDA_CHECK(cudaGraphLaunch(e.full, p.lane->stream));
  TTLPRED_CUDA_CHECK(cudaStreamSynchronize(p.lane->stream));
}

void CudaPlan::predict(const float* host_dense, const std::uint32_t* host_cats, std::size_t batch, float* host_out) {
  Impl& p = need(impl_);
  if (batch == 0) return;
  const detail::NetworkShape& s = p.net->shape();
  if ((s.dense_inputs && !host_dense) || (s.n_cat && !host_cats) || !host_out)
    throw Error("CUDA predict: null input or output pointer");
  if (s.n_cat) check_category_indices(s.cardinality.data(), s.n_cat, host_cats, batch, "CUDA predict");
  for (std::size_t done = 0; done < batch;) {
    const std::size_t n = std::min(batch - done, p.options.max_batch);
    if (s.dense_inputs)
      std::memcpy(p.lane->h_dense.as<float>(), host_dense + done * s.dense_inputs, n * s.dense_inputs * sizeof(float));
    if (s.n_cat)
      std::memcpy(p.lane->h_cats.as<std::uint32_t>(), host_cats + done * s.n_cat, n * s.n_cat * sizeof(std::uint32_t));
    predict_staged(n);
    std::memcpy(host_out + done * s.n_out, p.lane->h_out.as<float>(), n * s.n_out * sizeof(float));
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
  const cudaStream_t stream = p.lane->stream;
  TTLPRED_CUDA_CHECK(cudaGraphLaunch(e.kernels, stream));  // warm-up
  cudaEvent_t start = nullptr, stop = nullptr;
  TTLPRED_CUDA_CHECK(cudaEventCreate(&start));
  cudaError_t err = cudaEventCreate(&stop);
  float ms = 0.0f;
  if (err == cudaSuccess) err = cudaEventRecord(start, stream);
  for (int i = 0; i < iterations && err == cudaSuccess; ++i) err = cudaGraphLaunch(e.kernels, stream);
  if (err == cudaSuccess) err = cudaEventRecord(stop, stream);
  if (err == cudaSuccess) err = cudaEventSynchronize(stop);
  if (err == cudaSuccess) err = cudaEventElapsedTime(&ms, start, stop);
  (void)cudaEventDestroy(start);
  if (stop) (void)cudaEventDestroy(stop);
  TTLPRED_CUDA_CHECK(err);
  return static_cast<double>(ms) * 1000.0 / iterations;
}

CudaPlan CudaPlan::another_lane() const {
  const Impl& p = need(impl_);
  TTLPRED_CUDA_CHECK(cudaSetDevice(p.options.device));
  auto impl = std::make_unique<Impl>(p.net, p.options);
  impl->note = p.note;
  return CudaPlan(std::move(impl));
}

float* CudaPlan::staging_dense() { return need(impl_).lane->h_dense.as<float>(); }
std::uint32_t* CudaPlan::staging_cats() { return need(impl_).lane->h_cats.as<std::uint32_t>(); }
const float* CudaPlan::staging_out() const { return need(impl_).lane->h_out.as<float>(); }
engine::Variant CudaPlan::variant() const { return need(impl_).net->variant(); }
std::string CudaPlan::form() const { return need(impl_).net->form(); }
std::size_t CudaPlan::max_batch() const { return need(impl_).options.max_batch; }
std::size_t CudaPlan::dense_inputs() const { return need(impl_).net->shape().dense_inputs; }
std::size_t CudaPlan::cat_inputs() const { return need(impl_).net->shape().n_cat; }
std::size_t CudaPlan::outputs() const { return need(impl_).net->shape().n_out; }

std::string CudaPlan::describe() const {
  const Impl& p = need(impl_);
  return std::string(engine::variant_name(p.net->variant())) + ": " + p.note + p.net->describe() + "; " +
         std::to_string(p.batches.size()) + " batch sizes captured as CUDA graphs";
}

namespace {

// Up to 64 rows on the calibrated range of the dense inputs (categories cycling through each
// table) through `plan`, against the FP64 reference.
bool agrees_with_reference(CudaPlan& plan, const MlpModel& model, const quant::ActivationRanges& table) {
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

// Everything compile_cuda can refuse without the GPU, and the model packed for it.
detail::PackedModel check_and_pack(const MlpModel& model, engine::Variant variant, const CudaOptions& options) {
  if (!cuda_runs(variant))
    throw Error("the CUDA backend does not run variant '" + std::string(engine::variant_name(variant)) +
                "' (it runs: " + variant_list() + ")");
  if (options.max_batch == 0) throw Error("CUDA options: max_batch must be > 0");
  if (options.fused_rows_per_block != 0 && options.fused_rows_per_block != 16 && options.fused_rows_per_block != 32 &&
      options.fused_rows_per_block != 64)
    throw Error("CUDA options: fused_rows_per_block must be 0, 16, 32 or 64, not " +
                std::to_string(options.fused_rows_per_block));
  detail::PackedModel m;
  m.model = &model;
  m.layers = pack_layers(model);  // checks the model
  m.emb = pack_embeddings(model);
  if (variant == engine::Variant::Int8Static) {
    if (!options.calibration)
      throw Error("CUDA variant int8-static needs activation ranges (CudaOptions::calibration: the model file's "
                  "int8 calibration)");
    m.grids = int8_grids(*options.calibration, m.layers.size());
    if (m.layers.size() < 2)
      throw Error("CUDA variant int8-static needs at least one hidden layer (the last layer runs in float)");
  }
  return m;
}

}  // namespace

CudaPlan compile_cuda(const MlpModel& model, engine::Variant variant, const CudaOptions& options) {
  const detail::PackedModel packed = check_and_pack(model, variant, options);
  if (const std::string problem = cuda_device_problem(options.device); !problem.empty())
    throw Error("CUDA: " + problem);
  TTLPRED_CUDA_CHECK(cudaSetDevice(options.device));
  std::shared_ptr<const CudaNetwork> net;
  if (variant == engine::Variant::Int8Static)
    net = detail::make_lt_int8_network(packed, options);
  else if (variant == engine::Variant::Fp16 && options.fp16_fused_kernel)
    net = detail::make_fused_fp16_network(packed, options);
  else
    net = detail::make_lt_float_network(packed, variant);
  CudaPlan plan(std::make_unique<CudaPlan::Impl>(net, options));
  if (net->wants_self_test() && !agrees_with_reference(plan, model, *options.calibration)) {
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
