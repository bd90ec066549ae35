// History features for a whole table: replay the trace in order of prediction time (submit,
// or start at match time), feeding the state each job at its finish time, exactly as a
// service receiving outcomes (and, at match time, start events) would have seen it.
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <span>
#include <tuple>
#include <utility>

#include "features/history.hpp"
#include "features/key_hash.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// job_keys() for table rows without building records: each dictionary value is hashed once,
// rows then combine cached hashes. Must agree with job_keys() exactly (tested through
// IncrementalStateMatchesBatch, which compares the two paths bit for bit).
class TableKeys {
 public:
  explicit TableKeys(const JobTable& t) : t_(t) {
    for (std::size_t k = 0; k < kSingles.size(); ++k) hash_dictionary(kSingles[k].second, single_[k]);
    hash_dictionary(Field::JobType, type_);
    hash_dictionary(Field::Package, package_);
    hash_dictionary(Field::InteractionType, system_);
  }

  JobKeys operator()(std::size_t row) const {
    JobKeys out;
    set(out, HistoryKey::All, 0);
    for (std::size_t k = 0; k < kSingles.size(); ++k) {
      const auto code = t_.codes(kSingles[k].second)[row];
      if (code != kMissingCode) set(out, kSingles[k].first, single_[k][code]);
    }
    const double master = t_.num(Field::MasterJobId)[row];
    if (!std::isnan(master)) set(out, HistoryKey::MasterJob, keyhash::of_number(master));
    const auto type = t_.codes(Field::JobType)[row], package = t_.codes(Field::Package)[row];
    if (type != kMissingCode || package != kMissingCode)
      set(out, HistoryKey::JobTypePackage, type == kMissingCode ? empty_ : type_[type],
          package == kMissingCode ? empty_ : package_[package]);
    if (type != kMissingCode) out.type = type_[type];
    if (const auto system = t_.codes(Field::InteractionType)[row]; system != kMissingCode)
      set(out, HistoryKey::JobTypeSystem, type == kMissingCode ? empty_ : type_[type], system_[system]);
    const auto user = t_.codes(Field::User)[row];
    const double request = t_.num(Field::RequestedTtl)[row];
    if (user != kMissingCode && request > 0)
      set(out, HistoryKey::UserRequest, single_[kUserSingle][user], keyhash::of_number(request));
    return out;
  }

 private:
  static constexpr std::array<std::pair<HistoryKey, Field>, 6> kSingles = {{
      {HistoryKey::User, Field::User},
      {HistoryKey::Group, Field::Group},
      {HistoryKey::Queue, Field::Queue},
      {HistoryKey::Partition, Field::Partition},
      {HistoryKey::Executable, Field::Executable},
      {HistoryKey::ProductionTag, Field::ProductionTag},
  }};
  // The user's cached value hashes, which the (user, request) key reuses.
  static constexpr std::size_t kUserSingle = 0;
  static_assert(kSingles[kUserSingle].second == Field::User);

  void hash_dictionary(Field f, std::vector<std::uint64_t>& out) const {
    const auto& values = t_.dict(f).values();
    out.resize(values.size());
    for (std::size_t c = 0; c < values.size(); ++c) out[c] = keyhash::of_string(values[c]);
  }
  static void set(JobKeys& out, HistoryKey k, std::uint64_t a, std::uint64_t b = 0) {
    const auto i = static_cast<std::size_t>(k);
    out.present[i] = true;
    out.hash[i] = keyhash::combine(static_cast<std::uint8_t>(i), a, b);
  }

  const JobTable& t_;
  std::array<std::vector<std::uint64_t>, kSingles.size()> single_;
  std::vector<std::uint64_t> type_, package_, system_;
  std::uint64_t empty_ = keyhash::of_string("");
};

// (finish time, prediction time, row): the heap pops the earliest finish first; ties are
// broken by prediction time (the submit time, or the start at match time) then row, so the
// feed order does not depend on anything later in the trace.
using Pending = std::tuple<double, double, std::size_t>;

}  // namespace

HistoryMatrix compute_history(const JobTable& t, HistoryState& state) { return compute_history(t, state, state.config().at); }

HistoryMatrix compute_history(const JobTable& t, HistoryState& state, PredictionTime at) {
  const HistoryConfig& cfg = state.config();
  if (cfg.running_stats() && at != PredictionTime::Match)
    throw Error("history: features made for match time (running-job statistics) cannot be computed at submit time");
  if (state.running() > 0) throw Error("history: a walk over a table must start from a state without running jobs");
  HistoryMatrix m;
  m.rows = t.rows();
  m.width = state.width();
  m.values.assign(m.rows * m.width, std::numeric_limits<float>::quiet_NaN());

  const auto submit = t.num(Field::SubmitTime);
  const auto wait = t.num(Field::WaitTime);
  const auto wall = t.num(Field::WallTime);
  const auto requested = t.num(Field::RequestedTtl);
  std::array<std::span<const double>, kMaxWorkFields> work_col;
  for (std::size_t w = 0; w < cfg.work_fields.size(); ++w) work_col[w] = t.num(cfg.work_fields[w]);
  const auto speed = t.num(Field::HostSpeed);
  // HistoryConfig::amounts_of() for a table row; must agree with it exactly.
  auto amounts = [&](std::size_t row) {
    JobAmounts a;
    a.requested_ttl_s = requested[row];
    const double s = cfg.work_per_speed ? speed[row] : 1.0;
    for (std::size_t w = 0; w < cfg.work_fields.size(); ++w) a.work[w] = work_col[w][row] / s;
    return a;
  };
  auto wait_or_0 = [&](std::size_t row) { return std::isnan(wait[row]) || wait[row] < 0 ? 0.0 : wait[row]; };
  // Each job's prediction time (HistoryConfig::prediction_time_of for a row).
  const bool at_match = at == PredictionTime::Match;
  std::vector<double> match_time;
  if (at_match) {
    match_time.resize(t.rows());
    for (std::size_t row = 0; row < t.rows(); ++row) match_time[row] = submit[row] + wait_or_0(row);
  }
  const std::span<const double> time = at_match ? std::span<const double>(match_time) : submit;

  const TableKeys keys(t);
  const bool track_running = cfg.running_stats();

  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> pending;
  auto feed = [&](std::size_t row) {
    if (track_running) state.stop_running(row);
    state.observe(keys(row), wall[row], amounts(row));
  };
  auto enqueue = [&](std::size_t row) {
    if (!(wall[row] >= 0.0) || !std::isfinite(wall[row])) {
      // Never finishes as far as we know; at match time it runs until the running
      // statistics stop counting it (observe() ignores the unknown run time then).
      if (!track_running) return;
      state.start_running(row, keys(row), time[row], amounts(row));
      pending.emplace(time[row] + kMaxHistoryWallS, time[row], row);
      return;
    }
    if (track_running) state.start_running(row, keys(row), time[row], amounts(row));
    pending.emplace(submit[row] + wait_or_0(row) + wall[row], time[row], row);
  };

  std::vector<std::size_t> order = t.submit_order();
  if (at_match)
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const bool na = std::isnan(time[a]), nb = std::isnan(time[b]);
      if (na || nb) return !na && nb;
      return time[a] < time[b];
    });
  std::size_t g = 0;
  while (g < order.size() && !std::isnan(time[order[g]])) {
    // One group of equal prediction times: they see the same history and not each other.
    const double now = time[order[g]];
    std::size_t end = g;
    while (end < order.size() && time[order[end]] == now) ++end;
    while (!pending.empty() && std::get<0>(pending.top()) <= now) {
      feed(std::get<2>(pending.top()));
      pending.pop();
    }
    for (std::size_t i = g; i < end; ++i) {
      const std::size_t row = order[i];
      state.features(keys(row), amounts(row), m.values.data() + row * m.width, now);
    }
    for (std::size_t i = g; i < end; ++i) enqueue(order[i]);
    g = end;
  }
  // Everything still running has finished by now: a service would know it.
  while (!pending.empty()) {
    feed(std::get<2>(pending.top()));
    pending.pop();
  }
  // Jobs without a submit time are predicted as of now (the rule in history.hpp): the state
  // after every timed job, which is what HistoryState::features gives the service for the
  // same job. They cannot be placed in time, so they are never fed.
  for (; g < order.size(); ++g) {
    const std::size_t row = order[g];
    state.features(keys(row), amounts(row), m.values.data() + row * m.width);
  }
  return m;
}

HistoryMatrix compute_history(const JobTable& t, const HistoryConfig& cfg) {
  HistoryState state(cfg);
  return compute_history(t, state);
}

HistoryMatrix compute_history(const JobTable& t, const HistoryConfig& cfg, PredictionTime at) {
  HistoryState state(cfg);
  return compute_history(t, state, at);
}

}  // namespace ttlpred
