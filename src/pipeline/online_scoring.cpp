#include "pipeline/online_scoring.hpp"

#include <cmath>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "util/error.hpp"

namespace ttlpred {

std::vector<std::uint32_t> key_codes(const JobTable& jobs, std::span<const std::size_t> rows, const std::string& column) {
  std::vector<std::uint32_t> out(rows.size(), 0);
  if (column.empty()) return out;
  const auto f = field_by_name(column);
  if (!f || info(*f).kind != FieldKind::Category)
    throw Error("calibration key '" + column + "' is not a categorical job field (user, queue, job_type ...)");
  if (!jobs.has_values(*f)) return out;
  const auto codes = jobs.codes(*f);
  for (std::size_t i = 0; i < rows.size(); ++i) out[i] = codes[rows[i]];
  return out;
}

std::vector<std::uint32_t> batch_keys(const JobTable& jobs, std::span<const std::size_t> rows) {
  std::vector<std::uint32_t> out(rows.size(), 0);
  if (!jobs.has_values(Field::User)) return out;
  const auto codes = jobs.codes(Field::User);
  std::unordered_map<std::uint32_t, std::uint32_t> by_code;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::uint32_t code = codes[rows[i]];
    auto [it, fresh] = by_code.try_emplace(code, 0);
    if (fresh) it->second = TtlPolicy::text_key(jobs.text(Field::User, rows[i]));
    out[i] = it->second;
  }
  return out;
}

std::vector<double> score_online(const JobTable& jobs, std::span<const std::size_t> rows,
                                 std::span<const Prediction> preds, std::span<const std::uint32_t> groups,
                                 std::span<const std::uint32_t> keys, TtlPolicy& policy,
                                 std::span<const double> history_q99, std::span<const CalibrationSwap> swaps) {
  if (preds.size() != rows.size() || groups.size() != rows.size() || keys.size() != rows.size() ||
      (!history_q99.empty() && history_q99.size() != rows.size()))
    throw Error("score_online: rows, predictions, groups, keys and history quantiles differ in length");
  const auto submit = jobs.num(Field::SubmitTime), wait = jobs.num(Field::WaitTime), wall = jobs.num(Field::WallTime);
  const auto req = jobs.num(Field::RequestedTtl);
  const bool has_req = jobs.has_values(Field::RequestedTtl);
  // Pending outcomes: (time known, submit time, index into rows), earliest first.
  using Pending = std::tuple<double, double, std::size_t>;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
  std::vector<OnlineDecision> decisions(rows.size());
  std::vector<double> ttl(rows.size());
  const auto batch = batch_keys(jobs, rows);
  double last_submit = -INFINITY;
  std::size_t next_swap = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (; next_swap < swaps.size() && swaps[next_swap].first <= i; ++next_swap)
      policy.rebase(*swaps[next_swap].calibration);
    const std::size_t r = rows[i];
    const double s = submit[r];
    if (!(s >= last_submit)) throw Error("score_online: rows are not in submit order");
    last_submit = s;
    while (!pending.empty() && std::get<0>(pending.top()) <= s && std::get<1>(pending.top()) < s) {
      const std::size_t j = std::get<2>(pending.top());
      pending.pop();
      policy.observe(decisions[j], wall[rows[j]]);
    }
    OnlineJob job = TtlPolicy::job_of(preds[i], has_req ? req[r] : 0.0, keys[i],
                                      history_q99.empty() ? kMissingNumber : history_q99[i]);
    job.group = groups[i];
    job.batch = batch[i];
    decisions[i] = policy.decide(job);
    policy.answered(decisions[i]);
    ttl[i] = decisions[i].ttl_s;
    const double w = std::isnan(wait[r]) || wait[r] < 0 ? 0.0 : wait[r];
    const double ran = killed_by(wall[r], ttl[i], job.requested_s) ? ttl[i] : wall[r];
    pending.emplace(s + w + ran, s, i);
  }
  // What finished after the last submit is observed too: the policy ends the run knowing
  // every outcome (a service carries it on), which no TTL above depended on.
  while (!pending.empty()) {
    const std::size_t j = std::get<2>(pending.top());
    pending.pop();
    policy.observe(decisions[j], wall[rows[j]]);
  }
  return ttl;
}

}  // namespace ttlpred
