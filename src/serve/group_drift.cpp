#include "serve/group_drift.hpp"

#include <algorithm>

namespace ttlpred::serve {

DriftTest::DriftTest(DriftOptions options) : options_(options), all_(options), groups_(PageHinkley(options)) {}

void DriftTest::reset() {
  all_ = PageHinkley(options_);
  groups_.clear();
}

bool DriftTest::add(const std::string& group, double residual) {
  const bool all_fired = all_.add(residual);
  if (options_.scope == DriftScope::All) {
    if (all_fired) last_alarm_ = {"", all_.last_alarm()};
    return all_fired;
  }
  PageHinkley& test = groups_.at(group);
  if (!test.add(residual)) return false;
  last_alarm_ = {group, test.last_alarm()};
  return true;
}

double DriftTest::up() const {
  if (options_.scope == DriftScope::All) return all_.up();
  double v = 0;
  for (const auto& [name, t] : groups_.entries()) v = std::max(v, t.up());
  return v;
}

double DriftTest::down() const {
  if (options_.scope == DriftScope::All) return all_.down();
  double v = 0;
  for (const auto& [name, t] : groups_.entries()) v = std::max(v, t.down());
  return v;
}

}  // namespace ttlpred::serve
