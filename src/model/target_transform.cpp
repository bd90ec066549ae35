#include "model/target_transform.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace ttlpred {

double TargetTransform::to_t(double hours) const {
  hours = std::max(hours, 0.0);
  switch (kind) {
    case TargetKind::Hours: return hours;
    case TargetKind::Log1p: return std::log1p(hours);
    case TargetKind::Power: return (std::pow(1.0 + hours, lambda) - 1.0) / lambda;
  }
  return hours;
}

double TargetTransform::from_t(double t) const {
  double h = 0.0;
  switch (kind) {
    case TargetKind::Hours: h = t; break;
    // Clamp the exponent: an untrained or extrapolating network must not overflow to inf.
    case TargetKind::Log1p: h = std::expm1(std::min(t, 30.0)); break;
    case TargetKind::Power: {
      const double base = 1.0 + lambda * t;
      h = base <= 0.0 ? 0.0 : std::pow(base, 1.0 / lambda) - 1.0;
      h = std::min(h, 1e13);
      break;
    }
  }
  return std::max(h, 0.0);
}

float TargetTransform::offset_z(const float* dense, const std::uint32_t* cats) const {
  if (residual.empty()) return 0.0f;
  const double h = residual.base_hours(dense, cats);
  if (std::isnan(h)) return 0.0f;
  return static_cast<float>((to_t(h) - mean) / stddev);
}

double TargetTransform::decode_median_seconds(float z) const {
  return from_t(static_cast<double>(z) * stddev + mean) * 3600.0;
}

void TargetTransform::decode_quantile_seconds(const float* raw, float offset, double* q_s) const {
  float q[kMaxQuantileHeads];
  decode_quantile_heads(raw, quantiles.size(), offset, q);
  for (std::size_t j = 0; j < quantiles.size(); ++j) q_s[j] = std::max(0.0, decode_median_seconds(q[j]));
}

double TargetTransform::decode_quantile_head(const float* raw, float offset, std::size_t h) const {
  float q = raw[0] + offset;
  for (std::size_t j = 1; j <= h; ++j) q += softplus(raw[j]);
  return std::max(0.0, decode_median_seconds(q));
}

double TargetTransform::decode_seconds(float z) const {
  const double t = static_cast<double>(z) * stddev + mean;
  if (smear.empty()) return from_t(t) * 3600.0;
  double sum = 0.0;
  for (float r : smear) sum += from_t(t + r);
  return sum / static_cast<double>(smear.size()) * 3600.0;
}

void TargetTransform::fit_smearing(std::span<const float> wall_s, std::span<const float> pred_z, std::size_t points) {
  smear.clear();
  if (wall_s.empty() || points == 0) return;
  std::vector<double> res(wall_s.size());
  for (std::size_t i = 0; i < wall_s.size(); ++i)
    res[i] = to_t(wall_s[i] / 3600.0) - (static_cast<double>(pred_z[i]) * stddev + mean);
  std::sort(res.begin(), res.end());
  const std::size_t n = res.size();
  points = std::min(points, n);
  smear.resize(points);
  // Mid-quantiles (k + 0.5) / points: each stands for an equal share of the residuals.
  for (std::size_t k = 0; k < points; ++k) {
    const double pos = (static_cast<double>(k) + 0.5) / static_cast<double>(points) * static_cast<double>(n) - 0.5;
    const std::size_t lo = static_cast<std::size_t>(std::clamp(std::floor(pos), 0.0, static_cast<double>(n - 1)));
    const std::size_t hi = std::min(lo + 1, n - 1);
    const double frac = std::clamp(pos - static_cast<double>(lo), 0.0, 1.0);
    smear[k] = static_cast<float>(res[lo] * (1.0 - frac) + res[hi] * frac);
  }
}

void TargetTransform::write(BinaryWriter& w) const {
  w.put<std::uint8_t>(static_cast<std::uint8_t>(kind));
  w.put<double>(lambda);
  w.put<double>(mean);
  w.put<double>(stddev);
  w.put_vector(smear);
}

TargetTransform TargetTransform::read(BinaryReader& r) {
  TargetTransform t;
  const auto k = r.get<std::uint8_t>();
  if (k > static_cast<std::uint8_t>(TargetKind::Power)) r.fail("unknown target transform kind " + std::to_string(k));
  t.kind = static_cast<TargetKind>(k);
  t.lambda = r.get<double>();
  t.mean = r.get<double>();
  t.stddev = r.get<double>();
  t.smear = r.get_vector<float>(1u << 20);
  if (!std::isfinite(t.mean) || !std::isfinite(t.stddev) || !(t.stddev > 0.0))
    r.fail("target transform has a non-finite mean or a non-positive standard deviation");
  if (t.kind == TargetKind::Power && !(t.lambda > 0.0 && t.lambda <= 1.0))
    r.fail("power target transform needs 0 < lambda <= 1, got " + std::to_string(t.lambda));
  for (float v : t.smear)
    if (!std::isfinite(v)) r.fail("target transform smearing residual is not finite");
  return t;
}

void add_offsets(const TargetTransform& t, const EncodedBatch& x, std::size_t first_row, std::span<float> z) {
  if (t.residual.empty()) return;
  for (std::size_t i = 0; i < z.size(); ++i) {
    const std::size_t r = first_row + i;
    z[i] += t.offset_z(x.dense_row(r), x.cat_width ? x.cat_row(r) : nullptr);
  }
}

const char* target_kind_name(TargetKind k) {
  switch (k) {
    case TargetKind::Hours: return "hours";
    case TargetKind::Log1p: return "log1p";
    case TargetKind::Power: return "power";
  }
  return "?";
}

TargetKind parse_target_kind(const std::string& name) {
  if (name == "hours") return TargetKind::Hours;
  if (name == "log1p") return TargetKind::Log1p;
  if (name == "power") return TargetKind::Power;
  throw Error("unknown target transform '" + name + "' (expected hours, log1p or power)");
}

}  // namespace ttlpred
