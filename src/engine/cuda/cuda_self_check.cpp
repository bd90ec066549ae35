#include "engine/cuda/cuda_self_check.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <random>
#include <sstream>
#include <thread>

#include "engine/cuda/cuda_pack.hpp"
#include "model/reference_forward.hpp"
#include "quant/activation_ranges.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda {

MlpModel make_random_model(const RandomModelSpec& spec, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  MlpModel m;
  m.dense_inputs = spec.dense_inputs;
  for (auto [card, dim] : spec.embeddings) {
    Embedding e;
    e.cardinality = card;
    e.dim = dim;
    e.table.resize(static_cast<std::size_t>(card) * dim);
    for (float& v : e.table) v = unit(rng);
    m.embeddings.push_back(std::move(e));
  }
  std::uint32_t in = m.first_layer_inputs();
  for (std::size_t l = 0; l < spec.layer_outs.size(); ++l) {
    DenseLayer d;
    d.in = in;
    d.out = spec.layer_outs[l];
    d.act = l + 1 == spec.layer_outs.size() ? Activation::None : spec.hidden_act;
    const float a = std::sqrt(3.0f / static_cast<float>(in));
    d.weight.resize(static_cast<std::size_t>(d.in) * d.out);
    for (float& w : d.weight) w = a * unit(rng);
    d.bias.resize(d.out);
    for (float& b : d.bias) b = 0.1f * unit(rng);
    m.layers.push_back(std::move(d));
    in = spec.layer_outs[l];
  }
  return m;
}

MlpModel make_bench_model(const std::vector<std::uint32_t>& shape, std::uint64_t seed) {
  if (shape.size() < 2 || std::find(shape.begin(), shape.end(), 0u) != shape.end())
    throw Error("model shape needs at least two widths, all > 0 (e.g. 96,256,256,256,1)");
  RandomModelSpec spec;
  spec.dense_inputs = shape[0];
  if (shape[0] > 32) {
    spec.dense_inputs = shape[0] - 16;
    spec.embeddings = {{64, 8}, {64, 8}};
  }
  spec.layer_outs.assign(shape.begin() + 1, shape.end());
  return make_random_model(spec, seed);
}

EncodedBatch make_random_batch(const MlpModel& model, std::size_t rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> feat(-2.0f, 2.0f);
  EncodedBatch b;
  b.rows = rows;
  b.dense_width = model.dense_inputs;
  b.cat_width = model.embeddings.size();
  b.dense.resize(rows * b.dense_width);
  for (float& v : b.dense) v = feat(rng);
  for (const Embedding& e : model.embeddings) b.cat_cardinality.push_back(e.cardinality);
  b.cats.resize(rows * b.cat_width);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < b.cat_width; ++j) {
      std::uniform_int_distribution<std::uint32_t> pick(0, b.cat_cardinality[j] - 1);
      b.cats[r * b.cat_width + j] = pick(rng);
    }
  return b;
}

double variant_tolerance(engine::Variant variant) {
  switch (variant) {
    case engine::Variant::Fp32: return 1e-4;        // fp32 throughout, only summation order differs
    case engine::Variant::Int8Static: return 1e-1;  // static per-layer grids, 8 bits per layer
    default: return 2e-2;                           // fp16 inputs/weights/activations, fp32 accumulate
  }
}

std::vector<CudaForm> cuda_forms() {
  std::vector<CudaForm> forms;
  for (engine::Variant v : cuda_variants()) {
    forms.push_back({std::string(engine::variant_name(v)), v});
    if (v == engine::Variant::Int8Static) forms.push_back({"int8-static/requant", v, true, false});
    if (v == engine::Variant::Fp16) forms.push_back({"fused", v, false, true});
  }
  return forms;
}

CudaForm cuda_form(const std::string& name) {
  std::string known;
  for (const CudaForm& f : cuda_forms()) {
    if (f.name == name) return f;
    known += (known.empty() ? "" : ", ") + f.name;
  }
  throw Error("unknown CUDA variant '" + name + "' (" + known + ")");
}

namespace {

struct Case {
  std::string name;
  RandomModelSpec spec;
  std::size_t max_batch = 4096;
};

void check_batch(CudaPlan& plan, const EncodedBatch& data, const std::vector<double>& ref, std::size_t first,
                 std::size_t batch, const std::string& label, double tol, std::vector<CheckResult>& results,
                 std::ostream& log) {
  CheckResult r;
  r.what = label + " batch=" + std::to_string(batch) + " rows=[" + std::to_string(first) + "," +
           std::to_string(first + batch) + ")";
  const std::size_t n_out = plan.outputs();
  try {
    std::vector<float> out(batch * n_out, std::nanf(""));
    plan.predict(data.dense.data() + first * data.dense_width,
                 data.cat_width ? data.cats.data() + first * data.cat_width : nullptr, batch, out.data());
    double ref_max = 0.0;
    for (std::size_t i = 0; i < batch * n_out; ++i) ref_max = std::max(ref_max, std::fabs(ref[first * n_out + i]));
    r.bound = tol * std::max(1.0, ref_max);
    for (std::size_t i = 0; i < batch * n_out; ++i) {
      const double e = std::fabs(static_cast<double>(out[i]) - ref[first * n_out + i]);
      r.max_abs_error = std::isnan(e) ? HUGE_VAL : std::max(r.max_abs_error, e);
    }
    r.passed = r.max_abs_error <= r.bound;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  log << (r.passed ? "PASS " : "FAIL ") << r.what << std::scientific << std::setprecision(3)
      << " max_abs_err=" << r.max_abs_error << " bound=" << r.bound << std::defaultfloat
      << (r.error.empty() ? "" : " error: " + r.error) << "\n";
  results.push_back(std::move(r));
}

// A step before any batch (compiling, making a lane) that threw.
void record_failure(std::string what, const std::exception& e, std::vector<CheckResult>& results, std::ostream& log) {
  CheckResult r;
  r.what = std::move(what);
  r.error = e.what();
  log << "FAIL " << r.what << " error: " << r.error << "\n";
  results.push_back(std::move(r));
}

// A second lane on the plan's network (another_lane) and the plan itself, each on a thread
// of its own at the same time, a few passes each on different rows: both answer as one alone.
void check_two_lanes(CudaPlan& plan, const EncodedBatch& data, const std::vector<double>& ref,
                     const std::string& label, double tol, std::vector<CheckResult>& results, std::ostream& log) {
  std::vector<CheckResult> first, second;
  std::ostringstream first_log, second_log;
  const std::size_t rows = data.rows, b = std::min<std::size_t>(1000, plan.max_batch());
  try {
    CudaPlan other = plan.another_lane();
    std::thread t([&] {
      for (int i = 0; i < 4; ++i)
        check_batch(other, data, ref, rows - b, b, label + " lane 2 of 2", tol, second, second_log);
    });
    for (int i = 0; i < 4; ++i) check_batch(plan, data, ref, 0, b, label + " lane 1 of 2", tol, first, first_log);
    t.join();
  } catch (const std::exception& e) {
    record_failure(label + " another_lane", e, first, first_log);
  }
  log << first_log.str() << second_log.str();
  for (auto* part : {&first, &second})
    for (CheckResult& r : *part) results.push_back(std::move(r));
}

}  // namespace

std::vector<std::string> self_check_forms() {
  std::vector<std::string> names;
  for (const CudaForm& f : cuda_forms()) names.push_back(f.name);
  return names;
}

std::vector<CheckResult> run_self_check(std::ostream& log, int device, const std::vector<std::string>& only) {
  std::vector<CudaForm> forms;
  for (const std::string& name : only) forms.push_back(cuda_form(name));  // refuses an unknown name
  if (only.empty()) forms = cuda_forms();
  std::vector<Case> cases;
  {
    Case c{"bench-shape", {}, 4096};
    c.spec.dense_inputs = 80;
    c.spec.embeddings = {{50, 8}, {50, 8}};
    c.spec.layer_outs = {256, 256, 256, 1};
    cases.push_back(c);
  }
  {
    Case c{"odd-widths", {}, 4096};
    c.spec.dense_inputs = 13;
    c.spec.embeddings = {{7, 3}, {100, 5}};
    c.spec.layer_outs = {37, 19, 1};
    cases.push_back(c);
  }
  {
    Case c{"leaky-3out-chunked", {}, 1000};  // 4096 rows go through in 1000-row chunks
    c.spec.dense_inputs = 33;
    c.spec.layer_outs = {64, 50, 3};
    c.spec.hidden_act = Activation::LeakyRelu;
    cases.push_back(c);
  }
  {
    Case c{"single-layer", {}, 4096};
    c.spec.dense_inputs = 10;
    c.spec.layer_outs = {1};
    cases.push_back(c);
  }
  const std::size_t rows = 4096;
  const std::vector<std::size_t> batches = {1, 7, 16, 33, 1000, 4096};
  std::vector<CheckResult> results;
  std::uint64_t seed = 1;
  for (const Case& c : cases) {
    const MlpModel model = make_random_model(c.spec, seed++);
    const EncodedBatch data = make_random_batch(model, rows, seed++);
    const quant::ActivationRanges calib = quant::measure_activation_ranges(model, make_random_batch(model, 2048, seed++));
    std::vector<double> ref(rows * model.layers.back().out);
    reference_forward(model, data.dense.data(), data.cats.data(), rows, ref.data());
    for (const CudaForm& f : forms) {
      const std::string label = f.name + " " + c.name;
      CudaOptions opt;
      opt.device = device;
      opt.max_batch = c.max_batch;
      opt.calibration = &calib;
      opt.int8_requant_kernel = f.int8_requant_kernel;
      opt.fp16_fused_kernel = f.fp16_fused_kernel;
      if (f.variant == engine::Variant::Int8Static && model.layers.size() < 2) continue;  // refused by design
      CudaPlan plan;
      try {
        plan = compile_cuda(model, f.variant, opt);
        log << "plan " << label << ": " << plan.describe() << "\n";
      } catch (const std::exception& e) {
        record_failure(label + " compile", e, results, log);
        continue;
      }
      const double tol = variant_tolerance(f.variant);
      for (std::size_t b : batches) {
        check_batch(plan, data, ref, 0, b, label, tol, results, log);
        check_batch(plan, data, ref, rows - b, b, label, tol, results, log);  // same graph, new rows
      }
      check_two_lanes(plan, data, ref, label, tol, results, log);
    }
  }
  return results;
}

}  // namespace ttlpred::cuda
