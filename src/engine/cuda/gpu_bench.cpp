#include "engine/cuda/gpu_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>

#include "engine/cuda/cuda_plan.hpp"
#include "engine/cuda/cuda_self_check.hpp"
#include "util/error.hpp"

namespace ttlpred::cuda {

std::vector<std::uint32_t> parse_shape(const std::string& text) {
  std::vector<std::uint32_t> shape;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    std::size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v == 0 || v > 65536)
      throw Error("--shape: '" + item + "' is not a width in 1..65536 (expected e.g. 96,256,256,256,1)");
    shape.push_back(static_cast<std::uint32_t>(v));
    pos = comma + 1;
  }
  if (shape.size() < 2) throw Error("--shape: needs at least an input and an output width, e.g. 96,1");
  return shape;
}

namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median = 0, p99 = 0;
};

template <class F>
Stats time_calls(F&& call, double budget_s) {
  for (int i = 0; i < 3; ++i) call();  // the first call captures the graph
  std::vector<double> us;
  const auto start = Clock::now();
  while (us.size() < 10 || (us.size() < 5000 && std::chrono::duration<double>(Clock::now() - start).count() < budget_s)) {
    const auto t0 = Clock::now();
    call();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  const auto at = [&](double q) { return us[std::min(us.size() - 1, static_cast<std::size_t>(q * (us.size() - 1) + 0.5))]; };
  return {at(0.5), at(0.99)};
}

double peak_for(engine::Variant v, const GpuBenchOptions& o) {
  if (v == engine::Variant::Int8Static) return o.peak_int8_tops;
  if (v == engine::Variant::Fp32) return o.peak_fp32_tflops;
  return o.peak_fp16_tflops;
}

}  // namespace

std::vector<GpuBenchRow> run_gpu_bench(const GpuBenchOptions& o, std::ostream& table, std::ostream& json) {
  if (cuda_device_count() <= o.device) throw Error("no CUDA GPU visible: nothing to benchmark");
  if (o.min_batch == 0 || o.max_batch < o.min_batch) throw Error("benchmark batches: need 1 <= min_batch <= max_batch");
  const std::vector<std::string> names = o.variants.empty() ? self_check_forms() : o.variants;
  const MlpModel model = make_bench_model(o.shape, 42);
  const EncodedBatch data = make_random_batch(model, o.max_batch, 43);
  const quant::ActivationRanges calib = quant::measure_activation_ranges(model, make_random_batch(model, 2048, 44));
  double flops_per_row = 0;
  for (const DenseLayer& d : model.layers) flops_per_row += 2.0 * d.in * d.out;

  const std::string device = cuda_device_description(o.device);
  std::string shape_text;
  for (std::uint32_t w : o.shape) {
    if (!shape_text.empty()) shape_text += ',';
    shape_text += std::to_string(w);
  }
  table << "GPU benchmark: " << device << ", shape " << shape_text << "\n";
  char line[256];
  std::snprintf(line, sizeof line, "%-20s %7s %12s %12s %14s %12s %14s\n", "variant", "batch", "median_us", "p99_us",
                "per_sample_us", "device_us", "staged_med_us");
  table << line;
  std::vector<GpuBenchRow> rows;
  std::vector<std::string> roofline;
  for (const std::string& name : names) {
    const CudaForm form = cuda_form(name);  // throws listing the names
    CudaOptions opt;
    opt.device = o.device;
    opt.max_batch = o.max_batch;
    opt.calibration = &calib;
    opt.int8_requant_kernel = form.int8_requant_kernel;
    opt.fp16_fused_kernel = form.fp16_fused_kernel;
    try {
      CudaPlan plan = compile_cuda(model, form.variant, opt);
      table << "# " << name << ": " << plan.describe() << "\n";
      std::vector<float> out(o.max_batch * plan.outputs());
      for (std::size_t b = o.min_batch; b <= o.max_batch; b *= 2) {
        GpuBenchRow r;
        r.variant = name;
        r.batch = b;
        const Stats h2h = time_calls([&] { plan.predict(data.dense.data(), data.cats.data(), b, out.data()); },
                                     o.seconds_per_point);
        std::copy_n(data.dense.data(), b * data.dense_width, plan.staging_dense());
        if (data.cat_width) std::copy_n(data.cats.data(), b * data.cat_width, plan.staging_cats());
        const Stats staged = time_calls([&] { plan.predict_staged(b); }, o.seconds_per_point / 2);
        const double est = plan.device_time_us(b, 3);
        const int iters = static_cast<int>(std::clamp(20000.0 / std::max(est, 1.0), 5.0, 2000.0));
        r.device_us = plan.device_time_us(b, iters);
        r.median_us = h2h.median;
        r.p99_us = h2h.p99;
        r.per_sample_us = h2h.median / static_cast<double>(b);
        r.staged_median_us = staged.median;
        std::snprintf(line, sizeof line, "%-20s %7zu %12.2f %12.2f %14.4f %12.2f %14.2f\n", name.c_str(), b,
                      r.median_us, r.p99_us, r.per_sample_us, r.device_us, r.staged_median_us);
        table << line << std::flush;
        std::snprintf(line, sizeof line,
                      "{\"variant\":\"%s\",\"isa\":\"cuda\",\"batch\":%zu,\"median_us\":%.3f,\"p99_us\":%.3f,"
                      "\"per_sample_us\":%.5f,\"device_us\":%.3f,\"staged_median_us\":%.3f}\n",
                      name.c_str(), b, r.median_us, r.p99_us, r.per_sample_us, r.device_us, r.staged_median_us);
        json << line;
        rows.push_back(r);
        if (b > o.max_batch / 2) break;  // b *= 2 would overflow past max_batch
      }
      const GpuBenchRow& big = rows.back();
      const double tops = flops_per_row * static_cast<double>(big.batch) / (big.device_us * 1e-6) / 1e12;
      const double peak = peak_for(form.variant, o);
      std::snprintf(line, sizeof line, "roofline %-20s batch %zu: %.1f T(FL)OPS/s device-only = %.1f%% of %.0f peak\n",
                    name.c_str(), big.batch, tops, 100.0 * tops / peak, peak);
      roofline.emplace_back(line);
      std::snprintf(line, sizeof line,
                    "{\"roofline\":\"%s\",\"isa\":\"cuda\",\"batch\":%zu,\"tops\":%.2f,\"peak_tops\":%.0f,"
                    "\"fraction\":%.4f}\n",
                    name.c_str(), big.batch, tops, peak, tops / peak);
      json << line;
    } catch (const std::exception& e) {
      table << "# " << name << ": FAILED: " << e.what() << "\n" << std::flush;
    }
  }
  for (const std::string& l : roofline) table << l;
  return rows;
}

}  // namespace ttlpred::cuda
