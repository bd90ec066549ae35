#include "pipeline/simple_rule.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "util/error.hpp"

namespace ttlpred {

double interpolated_quantile(std::vector<double> values, double q) {
  if (values.empty()) throw Error("quantile of no values");
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

std::vector<double> simple_rule_q99(const ChronologicalSplit& split, std::size_t begin, std::size_t end) {
  const JobTable& jobs = split.jobs;
  if (begin > end || end > jobs.rows()) throw Error("simple rule: rows out of range");
  const auto submit = jobs.num(Field::SubmitTime), wait = jobs.num(Field::WaitTime), wall = jobs.num(Field::WallTime);
  const bool has_user = jobs.has_values(Field::User);
  const auto user = has_user ? jobs.codes(Field::User) : std::span<const std::uint32_t>{};
  using Pending = std::tuple<double, std::size_t>;  // (finish time, row): row order breaks ties
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
  std::unordered_map<std::uint32_t, std::deque<double>> past;
  std::vector<double> out(end - begin, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t i = 0; i < end; ++i) {
    const double t = submit[i];
    while (!pending.empty() && std::get<0>(pending.top()) <= t) {
      const std::size_t j = std::get<1>(pending.top());
      pending.pop();
      auto& h = past[has_user ? user[j] : 0];
      h.push_back(wall[j]);
      if (h.size() > kSimpleRuleHistory) h.pop_front();
    }
    if (i >= begin) {
      const auto it = past.find(has_user ? user[i] : 0);
      if (it != past.end() && it->second.size() >= kSimpleRuleMinJobs)
        out[i - begin] = interpolated_quantile(std::vector<double>(it->second.begin(), it->second.end()), 0.99);
    }
    const double w = std::isnan(wait[i]) || wait[i] < 0 ? 0.0 : wait[i];
    pending.emplace(t + w + wall[i], i);
  }
  return out;
}

double simple_rule_ttl(double q99, double margin, double requested_s) {
  if (std::isnan(q99)) return requested_s;
  const double t = margin * q99;
  return requested_s > 0 ? std::min(requested_s, t) : t;
}

SimpleRuleOutcome simple_rule_outcome(std::span<const double> q99, std::span<const float> wall_s,
                                      std::span<const float> requested_s, double margin) {
  if (wall_s.size() != q99.size() || requested_s.size() != q99.size())
    throw Error("simple_rule_outcome: q99, run times and requests differ in length");
  SimpleRuleOutcome out;
  if (q99.empty()) return out;
  std::size_t killed = 0;
  double ttl_sum = 0;
  for (std::size_t i = 0; i < q99.size(); ++i) {
    const double t = margin > 0 ? simple_rule_ttl(q99[i], margin, requested_s[i]) : requested_s[i];
    killed += static_cast<std::size_t>(killed_by(wall_s[i], t, requested_s[i]));
    ttl_sum += t;
  }
  const auto n = static_cast<double>(q99.size());
  out.kill_rate = static_cast<double>(killed) / n;
  out.mean_ttl_s = ttl_sum / n;
  return out;
}

double tightest_margin_within(std::span<const double> q99, std::span<const float> wall_s,
                              std::span<const float> requested_s, std::span<const double> margins, double limit) {
  double best = 0;
  for (double m : margins)
    if (m > 0 && (best == 0 || m < best) && simple_rule_outcome(q99, wall_s, requested_s, m).kill_rate <= limit)
      best = m;
  return best;
}

ResidualQuantiles simple_rule_residuals(const ChronologicalSplit& split, std::size_t begin, std::size_t end,
                                        double floor_s) {
  const auto q99 = simple_rule_q99(split, begin, end);
  const auto wall = split.jobs.num(Field::WallTime), req = split.jobs.num(Field::RequestedTtl);
  const bool has_req = split.jobs.has_values(Field::RequestedTtl);
  std::vector<float> residuals;
  for (std::size_t i = begin; i < end; ++i) {
    const double q = q99[i - begin];
    if (std::isnan(q) || (has_req && req[i] > 0 && wall[i] > req[i])) continue;
    residuals.push_back(static_cast<float>(std::log(std::max(wall[i], floor_s)) - std::log(std::max(q, floor_s))));
  }
  return ResidualQuantiles::from_residuals(std::move(residuals), SafeTtlOptions{}.max_stored_global);
}

}  // namespace ttlpred
