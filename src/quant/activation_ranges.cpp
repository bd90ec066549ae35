#include "quant/activation_ranges.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/reference_forward.hpp"
#include "util/error.hpp"

namespace ttlpred::quant {

namespace {

// Values one layer sees on its input: exact extremes over everything, plus an evenly strided
// sample for the methods that need a distribution.
struct Observer {
  float lo = 0.0f, hi = 0.0f;
  std::vector<float> sample;
  std::size_t stride = 1, seen = 0;
  void add(float v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    if (seen++ % stride == 0) sample.push_back(v);
  }
};

ActivationRange percentile_range(std::vector<float> s, double pct) {
  if (s.empty()) return {};
  auto at = [&](double p) {
    const std::size_t i = static_cast<std::size_t>(std::clamp(p / 100.0, 0.0, 1.0) * static_cast<double>(s.size() - 1));
    std::nth_element(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(i), s.end());
    return s[i];
  };
  const float hi = at(pct), lo = at(100.0 - pct);
  return {std::min(lo, 0.0f), std::max(hi, 0.0f)};
}

double quantization_mse(const std::vector<float>& s, ActivationRange r, float levels) {
  const QuantParams q = quant_params(r, levels);
  double err = 0.0;
  for (float v : s) {
    const float qv = std::clamp(std::nearbyint(v / q.scale) + q.zero_point, 0.0f, levels);
    const double d = static_cast<double>(q.scale) * (qv - q.zero_point) - v;
    err += d * d;
  }
  return err;
}

ActivationRange mse_range(const Observer& o, float levels) {
  ActivationRange best{o.lo, o.hi};
  if (o.sample.empty() || o.hi <= o.lo) return best;
  double best_err = quantization_mse(o.sample, best, levels);
  // Shrink the full range in small steps: clipping a few outliers usually buys resolution.
  for (int step = 1; step < 100; ++step) {
    const float f = 1.0f - 0.0095f * static_cast<float>(step);
    const ActivationRange r{o.lo * f, o.hi * f};
    const double err = quantization_mse(o.sample, r, levels);
    if (err < best_err) {
      best_err = err;
      best = r;
    }
  }
  return best;
}

}  // namespace

std::string_view range_method_name(RangeMethod m) {
  switch (m) {
    case RangeMethod::MinMax: return "minmax";
    case RangeMethod::Percentile: return "percentile";
    case RangeMethod::Mse: return "mse";
  }
  return "?";
}

RangeMethod range_method_from_name(std::string_view name) {
  for (RangeMethod m : {RangeMethod::MinMax, RangeMethod::Percentile, RangeMethod::Mse})
    if (range_method_name(m) == name) return m;
  throw Error("unknown calibration method '" + std::string(name) + "' (known: minmax, percentile, mse)");
}

QuantParams quant_params(ActivationRange range, float qmax) {
  const float lo = std::min(range.lo, 0.0f), hi = std::max(range.hi, 0.0f);
  if (!(hi > lo)) return {1.0f, 0.0f};
  QuantParams q;
  q.scale = (hi - lo) / qmax;
  q.zero_point = std::clamp(std::nearbyint(-lo / q.scale), 0.0f, qmax);
  return q;
}

ActivationRanges measure_activation_ranges(const MlpModel& model, const float* dense, const std::uint32_t* cats, std::size_t rows,
                           const ActivationRangeOptions& options) {
  if (rows == 0) throw Error("calibration: needs at least one input row");
  if (model.layers.empty()) throw Error("calibration: model has no layers");
  if (options.percentile <= 50.0 || options.percentile > 100.0)
    throw Error("calibration: percentile must be in (50, 100]");
  std::vector<Observer> obs(model.layers.size());
  for (std::size_t i = 0; i < obs.size(); ++i) {
    const std::size_t width = i == 0 ? model.dense_inputs : model.layers[i - 1].out;
    const std::size_t total = width * rows;
    obs[i].stride = std::max<std::size_t>(1, (total + options.max_samples - 1) / std::max<std::size_t>(1, options.max_samples));
  }
  // The ranges come from the FP64 reference forward. Layer 0 quantizes only the dense
  // inputs: plans fold the embedding columns in float (model/folded_embeddings.hpp).
  const LayerInputObserver observe = [&](std::size_t layer, std::span<const double> x) {
    const std::size_t n = layer == 0 ? model.dense_inputs : x.size();
    for (std::size_t k = 0; k < n; ++k) obs[layer].add(static_cast<float>(x[k]));
  };
  std::vector<double> out(rows * model.layers.back().out);
  try {
    reference_forward(model, dense, cats, rows, out.data(), observe);
  } catch (const Error& e) {
    throw Error(std::string("calibration: ") + e.what());
  }
  ActivationRanges table;
  table.method = options.method;
  for (const Observer& o : obs) {
    switch (options.method) {
      case RangeMethod::MinMax: table.layer_inputs.push_back({o.lo, o.hi}); break;
      case RangeMethod::Percentile: table.layer_inputs.push_back(percentile_range(o.sample, options.percentile)); break;
      case RangeMethod::Mse: table.layer_inputs.push_back(mse_range(o, options.levels)); break;
    }
  }
  return table;
}

ActivationRanges measure_activation_ranges(const MlpModel& model, const EncodedBatch& batch, const ActivationRangeOptions& options) {
  if (batch.dense_width != model.dense_inputs || batch.cat_width != model.embeddings.size())
    throw Error("calibration: batch has " + std::to_string(batch.dense_width) + " dense and " +
                std::to_string(batch.cat_width) + " categorical columns, model expects " +
                std::to_string(model.dense_inputs) + " and " + std::to_string(model.embeddings.size()));
  return measure_activation_ranges(model, batch.dense.data(), batch.cats.empty() ? nullptr : batch.cats.data(), batch.rows, options);
}

}  // namespace ttlpred::quant
