#include "serve/drift_alarm.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"

namespace ttlpred::serve {

const char* drift_scope_name(DriftScope s) { return s == DriftScope::All ? "all" : "group"; }

DriftScope drift_scope_from_name(const std::string& name) {
  if (name == "all") return DriftScope::All;
  if (name == "group") return DriftScope::Group;
  throw Error("--drift-scope: expected all or group, got '" + name + "'");
}

const char* drift_direction_name(DriftDirection d) { return d == DriftDirection::Longer ? "longer" : "both"; }

DriftDirection drift_direction_from_name(const std::string& name) {
  if (name == "longer") return DriftDirection::Longer;
  if (name == "both") return DriftDirection::Both;
  throw Error("--drift-direction: expected longer or both, got '" + name + "'");
}

PageHinkley::PageHinkley(DriftOptions options) : options_(options) {
  if (!(options_.delta >= 0) || !std::isfinite(options_.delta)) throw Error("--drift-delta must be a finite number >= 0");
  if (!(options_.threshold > 0) || !std::isfinite(options_.threshold))
    throw Error("--drift-threshold must be a finite number > 0");
}

void PageHinkley::reset() {
  n_ = 0;
  mean_ = up_ = down_ = 0;
}

bool PageHinkley::add(double r) {
  if (!std::isfinite(r)) return false;
  ++n_;
  mean_ += (r - mean_) / static_cast<double>(n_);
  up_ = std::max(0.0, up_ + r - mean_ - options_.delta);
  down_ = std::max(0.0, down_ + mean_ - r - options_.delta);
  const bool past = up_ > options_.threshold || (options_.direction == DriftDirection::Both && down_ > options_.threshold);
  if (n_ < options_.min_outcomes || !past) return false;
  last_alarm_ = {up_, down_, mean_, n_};
  reset();
  return true;
}

void PageHinkley::write_state(BinaryWriter& w) const {
  w.put<std::uint64_t>(n_);
  w.put<double>(mean_);
  w.put<double>(up_);
  w.put<double>(down_);
}

void PageHinkley::read_state(BinaryReader& r) {
  const auto n = r.get<std::uint64_t>();
  const double mean = r.get<double>(), up = r.get<double>(), down = r.get<double>();
  if (!std::isfinite(mean) || !(up >= 0) || !(down >= 0) || !std::isfinite(up) || !std::isfinite(down))
    r.fail("drift test state is not finite");
  n_ = n;
  mean_ = mean;
  up_ = up;
  down_ = down;
}

}  // namespace ttlpred::serve
