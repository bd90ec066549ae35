// The incremental history state: observe finished jobs, answer features for new ones.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "features/censored_mean.hpp"
#include "features/history.hpp"
#include "features/key_hash.hpp"
#include "features/log1p_float.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Mean of the newest min(n, k) values of a ring written cyclically over its first k slots.
// Once the ring is full every slot holds one of the newest k; before that slots 0..n-1 do.
double ring_mean(const std::array<float, kMaxLastK>& ring, std::uint64_t n, std::uint32_t k) {
  const auto used = static_cast<std::uint32_t>(std::min<std::uint64_t>(n, k));
  double sum = 0;
  for (std::uint32_t i = 0; i < used; ++i) sum += ring[i];
  return sum / used;
}

void push_ring(std::array<float, kMaxLastK>& ring, std::uint32_t& pos, std::uint32_t k, double v) {
  ring[pos] = static_cast<float>(v);
  pos = pos + 1 == k ? 0 : pos + 1;
}


}  // namespace

double robust_max(const KeyHistory& h) {
  return h.count >= kOutlierMinCount && h.max > kOutlierFactor * h.max2 ? h.max2 : h.max;
}

HistoryState::HistoryState(HistoryConfig cfg) : cfg_(std::move(cfg)) { cfg_.validate(); }

bool HistoryState::observe(const JobRecord& finished) {
  return observe(job_keys(finished), finished[Field::WallTime], cfg_.amounts_of(finished));
}

bool HistoryState::observe(const JobKeys& keys, double wall_s_in, const JobAmounts& amounts) {
  if (!(wall_s_in >= 0.0) || !std::isfinite(wall_s_in)) return false;
  // One absurd run time (1e30 s) would otherwise own every mean and the float ring (inf
  // above 3.4e38) for as long as it takes to decay: no job runs longer than this.
  const double wall_s = std::min(wall_s_in, kMaxHistoryWallS);
  const double requested_ttl_s = amounts.requested_ttl_s;
  const bool has_ratio = requested_ttl_s > 0.0 && std::isfinite(requested_ttl_s);
  const double ratio = has_ratio ? std::min(wall_s / requested_ttl_s, kMaxWallOverRequest) : 0.0;
  const double log_wall = std::log1p(wall_s);
  // log(wall / work) per work field; walls under a second count as one second.
  const std::size_t n_work = cfg_.work_fields.size();
  std::array<double, kMaxWorkFields> log_rate{};
  std::array<bool, kMaxWorkFields> has_work{};
  for (std::size_t w = 0; w < n_work; ++w) {
    has_work[w] = amounts.work[w] > 0.0 && std::isfinite(amounts.work[w]);
    if (has_work[w]) log_rate[w] = std::log(std::max(wall_s, 1.0)) - std::log(amounts.work[w]);
  }
  for (auto key : cfg_.keys) {
    const auto i = static_cast<std::size_t>(key);
    if (!keys.present[i]) continue;
    KeyHistory& h = keys_[keys.hash[i]];
    if (h.count == 0) {
      h.ewma = wall_s;
      h.max = wall_s;
    } else {
      h.ewma = cfg_.ewma_alpha * wall_s + (1.0 - cfg_.ewma_alpha) * h.ewma;
      if (wall_s > h.max) {
        h.max2 = h.max;
        h.max = wall_s;
      } else {
        h.max2 = std::max(h.max2, wall_s);
      }
    }
    h.last = wall_s;
    h.sum_log += log_wall;
    ++h.count;
    push_ring(h.recent, h.ring_pos, cfg_.last_k, wall_s);
    if (has_ratio) {
      ++h.ratio_count;
      push_ring(h.recent_ratio, h.ratio_pos, cfg_.last_k, ratio);
    }
    for (std::size_t w = 0; w < n_work; ++w) {
      if (!has_work[w]) continue;
      KeyHistory::Work& hw = h.work[w];
      // The spreads, which only the censored work rates read: Welford's update, and the pools.
      const bool spread = cfg_.censored_rates && hw.count > 0;
      const double mean_before = spread ? hw.sum_log_rate / static_cast<double>(hw.count) : 0.0;
      ++hw.count;
      hw.sum_log_rate += log_rate[w];
      if (spread) {
        const double mean_after = hw.sum_log_rate / static_cast<double>(hw.count);
        const double m2_step = (log_rate[w] - mean_before) * (log_rate[w] - mean_after);
        hw.m2 += m2_step;
        pool_spread(key, w, keys.type, m2_step);
      }
    }
    h.last_seen = observed_ + 1;
    derive(h);
  }
  ++observed_;
  if (capacity_ > 0 && keys_.size() > capacity_) evict_oldest();
  return true;
}

void HistoryState::set_capacity(std::size_t max_keys) {
  capacity_ = max_keys;
  if (capacity_ > 0 && keys_.size() > capacity_) evict_oldest();
}

void HistoryState::evict_oldest() {
  // Down to 90 % of the capacity (at least one below it), least recently updated first; ties
  // broken by key so that equal states evict alike.
  const std::size_t keep = std::min(capacity_ * 9 / 10, capacity_ - 1);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> order;  // (last_seen, key)
  order.reserve(keys_.size());
  for (const auto& [key, h] : keys_) order.emplace_back(h.last_seen, key);
  const std::size_t drop = keys_.size() - keep;
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(drop), order.end());
  for (std::size_t i = 0; i < drop; ++i) keys_.erase(order[i].second);
  evicted_ += drop;
}

void HistoryState::derive(KeyHistory& h) const {
  KeyHistory::Derived& d = h.derived;
  const double n = static_cast<double>(h.count);
  d.log_count = features_detail::log1p_float(n);
  d.log_mean_last_k = features_detail::log1p_float(ring_mean(h.recent, h.count, cfg_.last_k));
  d.log_ewma = features_detail::log1p_float(h.ewma);
  d.log_max = features_detail::log1p_float(robust_max(h));
  d.log_last = features_detail::log1p_float(h.last);
  d.mean_log = static_cast<float>(h.sum_log / n);
  d.ratio_mean_last_k = h.ratio_count > 0 ? ring_mean(h.recent_ratio, h.ratio_count, cfg_.last_k) : 0.0;
  for (std::size_t w = 0; w < cfg_.work_fields.size(); ++w) {
    const KeyHistory::Work& hw = h.work[w];
    d.rate[w] = hw.count > 0 ? std::exp(hw.sum_log_rate / static_cast<double>(hw.count)) : 0.0;
  }
}

void HistoryState::features(const JobRecord& job, float* out) const {
  features(job_keys(job), cfg_.amounts_of(job), out, cfg_.prediction_time_of(job));
}

void HistoryState::features(const JobRecord& job, double now_s, float* out) const {
  features(job_keys(job), cfg_.amounts_of(job), out, now_s);
}

void HistoryState::pool_spread(HistoryKey kind, std::size_t w, std::uint64_t type, double m2_step) {
  const auto k = static_cast<std::uint8_t>(kind);
  Spread& all = spreads_[keyhash::combine(k, w, 0)];
  all.m2 += m2_step;
  ++all.dof;
  if (type == 0) return;
  const std::uint64_t typed = keyhash::combine(k, w, type);
  auto it = spreads_.find(typed);
  if (it == spreads_.end()) {
    if (spreads_.size() >= kMaxSpreadPools) return;
    it = spreads_.emplace(typed, Spread{}).first;
  }
  it->second.m2 += m2_step;
  ++it->second.dof;
}

double HistoryState::pooled_spread(HistoryKey kind, std::size_t w, std::uint64_t type) const {
  const auto k = static_cast<std::uint8_t>(kind);
  for (std::uint64_t group : {type, std::uint64_t{0}}) {
    const auto it = spreads_.find(keyhash::combine(k, w, group));
    if (it != spreads_.end() && it->second.dof >= kMinSpreadDof)
      return it->second.m2 / static_cast<double>(it->second.dof);
    if (group == 0) break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

bool HistoryState::start_running(std::uint64_t job, const JobKeys& keys, double start_s, const JobAmounts& amounts) {
  // Only the censored work rates read a running job's work.
  std::array<float, kMaxWorkFields> log_work;
  log_work.fill(kNaN);
  for (std::size_t w = 0; cfg_.censored_rates && w < cfg_.work_fields.size(); ++w) {
    const double work = amounts.work[w];
    if (work > 0.0 && std::isfinite(work)) log_work[w] = static_cast<float>(std::log(work));
  }
  return start_running_logged(job, keys, start_s, log_work);
}

bool HistoryState::start_running_logged(std::uint64_t job, const JobKeys& keys, double start_s,
                                        const std::array<float, kMaxWorkFields>& log_work) {
  if (!std::isfinite(start_s)) return false;
  const auto [at, added] = running_.emplace(job, RunningJob{start_s, keys, log_work});
  if (!added) return false;
  running_by_start_.emplace(start_s, job);
  const RunningEntry entry{start_s, &at->second};
  for (auto key : cfg_.keys) {
    const auto i = static_cast<std::size_t>(key);
    if (!keys.present[i]) continue;
    auto& list = running_by_key_[keys.hash[i]];
    // Starts mostly come in time order: the insertion point is nearly always the end.
    const auto after = [](double s, const RunningEntry& e) { return s < e.start_s; };
    list.insert(std::upper_bound(list.begin(), list.end(), start_s, after), entry);
  }
  if (running_capacity_ > 0 && running_.size() > running_capacity_) {
    stop_running(running_by_start_.begin()->second);
    ++running_evicted_;
  }
  return true;
}

void HistoryState::set_running_limits(std::size_t max_jobs, double max_age_s) {
  if (!(max_age_s > 0) || !(max_age_s <= kMaxHistoryWallS))
    throw Error("history: the running jobs' age limit must be in (0, 1e7] s (kMaxHistoryWallS)");
  running_capacity_ = max_jobs;
  running_max_age_ = max_age_s;
  while (running_capacity_ > 0 && running_.size() > running_capacity_) {
    stop_running(running_by_start_.begin()->second);
    ++running_evicted_;
  }
}

std::size_t HistoryState::prune_running(double now_s) {
  // The same bound as running_stats: a start at or before it is not counted at now_s.
  const double oldest_counted = now_s - running_max_age_;
  std::size_t n = 0;
  while (!running_by_start_.empty() && running_by_start_.begin()->first <= oldest_counted) {
    stop_running(running_by_start_.begin()->second);
    ++n;
  }
  running_expired_ += n;
  return n;
}

bool HistoryState::stop_running(std::uint64_t job) {
  const auto it = running_.find(job);
  if (it == running_.end()) return false;
  const RunningJob& r = it->second;
  for (auto key : cfg_.keys) {
    const auto i = static_cast<std::size_t>(key);
    if (!r.keys.present[i]) continue;
    const auto s = running_by_key_.find(r.keys.hash[i]);
    if (s == running_by_key_.end()) continue;
    auto& list = s->second;
    const auto before = [](const RunningEntry& e, double v) { return e.start_s < v; };
    auto at = std::lower_bound(list.begin(), list.end(), r.start_s, before);
    while (at != list.end() && at->start_s == r.start_s && at->job != &r) ++at;
    if (at != list.end() && at->job == &r) list.erase(at);
    if (list.empty()) running_by_key_.erase(s);
  }
  running_by_start_.erase({r.start_s, job});
  running_.erase(it);
  return true;
}

void HistoryState::running_stats(std::uint64_t key_hash, double now_s, float* out) const {
  out[static_cast<int>(RunningStat::LogCount)] = 0.0f;
  out[static_cast<int>(RunningStat::LogMaxElapsed)] = kNaN;
  out[static_cast<int>(RunningStat::LogMedianElapsed)] = kNaN;
  const auto [first, last] = counted_running(key_hash, now_s);
  const auto n = static_cast<std::size_t>(last - first);
  if (n == 0) return;
  // Elapsed times descend as starts ascend: the oldest start is the longest-running job.
  const double median_start =
      n % 2 == 1 ? first[n / 2].start_s : 0.5 * (first[n / 2 - 1].start_s + first[n / 2].start_s);
  out[static_cast<int>(RunningStat::LogCount)] = features_detail::log1p_float(static_cast<double>(n));
  out[static_cast<int>(RunningStat::LogMaxElapsed)] = features_detail::log1p_float(now_s - first->start_s);
  out[static_cast<int>(RunningStat::LogMedianElapsed)] = features_detail::log1p_float(now_s - median_start);
}

std::pair<const HistoryState::RunningEntry*, const HistoryState::RunningEntry*> HistoryState::counted_running(
    std::uint64_t key_hash, double now_s) const {
  const auto it = running_by_key_.find(key_hash);
  if (it == running_by_key_.end() || !std::isfinite(now_s)) return {nullptr, nullptr};
  const std::vector<RunningEntry>& list = it->second;
  // Running jobs started strictly before now (same-second starts never see each other), and
  // running for less than the age limit (kMaxHistoryWallS unless set_running_limits says).
  const auto first = std::upper_bound(list.begin(), list.end(), now_s - running_max_age_,
                                      [](double v, const RunningEntry& e) { return v < e.start_s; });
  const auto last =
      std::lower_bound(first, list.end(), now_s, [](const RunningEntry& e, double v) { return e.start_s < v; });
  return {list.data() + (first - list.begin()), list.data() + (last - list.begin())};
}

double HistoryState::censored_estimate(HistoryKey kind, std::uint64_t key_hash, const KeyHistory& h, std::uint64_t type,
                                       std::size_t w, double work, double now_s) const {
  const KeyHistory::Work& hw = h.work[w];
  const double pooled = pooled_spread(kind, w, type);
  if (std::isnan(pooled)) return kMissingNumber;
  const double n = static_cast<double>(hw.count);
  const double var = (hw.m2 + kSpreadPriorWeight * pooled) / (n - 1.0 + kSpreadPriorWeight);
  const double mean = hw.sum_log_rate / n;
  double mu = mean;
  // A key whose log rates are all equal, in a pool of equal ones, has no spread: any censored
  // value above them would move mu without bound, so it keeps the plain mean.
  if (var > 0 && hw.count < kCensoredMaxFinished) {
    const auto [first, last] = counted_running(key_hash, now_s);
    // The longest-running ones are the most telling lower bounds: the earliest starts.
    const auto used = std::min<std::ptrdiff_t>(last - first, static_cast<std::ptrdiff_t>(kCensoredMaxRunning));
    std::array<double, kCensoredMaxRunning> bounds;
    std::size_t m = 0;
    for (const RunningEntry* e = first; e != first + used; ++e) {
      const float log_work = e->job->log_work[w];
      if (!std::isnan(log_work)) bounds[m++] = std::log(std::max(now_s - e->start_s, 1.0)) - log_work;
    }
    mu = censored_normal_mean(mean, hw.count, std::span<const double>(bounds.data(), m), std::sqrt(var));
  }
  return std::exp(mu + 0.5 * var) * work;
}

void HistoryState::features(const JobKeys& keys, const JobAmounts& amounts, float* out, double now_s) const {
  const double requested_ttl_s = amounts.requested_ttl_s;
  const std::size_t per_key = cfg_.stats_per_key();
  const std::size_t n_work = cfg_.work_fields.size(), work_at = cfg_.work_offset();
  const bool with_running = cfg_.running_stats();
  const std::size_t running_at = cfg_.running_offset();
  const bool has_request = requested_ttl_s > 0.0 && std::isfinite(requested_ttl_s);
  // Every key's lookup first, its statistics' cache line prefetched, so that the keys'
  // cache misses overlap instead of each waiting behind the previous key's arithmetic.
  std::array<const KeyHistory*, kNumHistoryKeys> found{};
  for (std::size_t k = 0; k < cfg_.keys.size(); ++k) {
    const auto i = static_cast<std::size_t>(cfg_.keys[k]);
    found[k] = keys.present[i] ? find(keys.hash[i]) : nullptr;
    if (found[k] != nullptr) __builtin_prefetch(&found[k]->derived);
  }
  for (std::size_t k = 0; k < cfg_.keys.size(); ++k) {
    const auto i = static_cast<std::size_t>(cfg_.keys[k]);
    const KeyHistory* h = found[k];
    std::fill(out, out + per_key, kNaN);
    out[0] = 0.0f;  // log1p(0): no history
    if (h != nullptr && h->count > 0) {
      const KeyHistory::Derived& d = h->derived;
      out[static_cast<int>(HistoryStat::LogCount)] = d.log_count;
      out[static_cast<int>(HistoryStat::LogMeanLastK)] = d.log_mean_last_k;
      out[static_cast<int>(HistoryStat::LogEwma)] = d.log_ewma;
      out[static_cast<int>(HistoryStat::LogMax)] = d.log_max;
      out[static_cast<int>(HistoryStat::LogLast)] = d.log_last;
      out[static_cast<int>(HistoryStat::MeanLog)] = d.mean_log;
      if (cfg_.ratio_stats && h->ratio_count > 0) {
        const double r = d.ratio_mean_last_k;
        out[static_cast<int>(HistoryStat::RatioMeanLastK)] = static_cast<float>(r);
        if (has_request)
          out[static_cast<int>(HistoryStat::LogRatioTimesRequest)] = features_detail::log1p_float(r * requested_ttl_s);
      }
      for (std::size_t w = 0; w < n_work; ++w) {
        const KeyHistory::Work& hw = h->work[w];
        const double work = amounts.work[w];
        if (hw.count == 0 || !(work > 0.0) || !std::isfinite(work)) continue;
        float* o = out + work_at + kWorkStatsPerField * w;
        double estimate_s = d.rate[w] * work;
        if (cfg_.censored_rates) {
          const double censored = censored_estimate(cfg_.keys[k], keys.hash[i], *h, keys.type, w, work, now_s);
          if (!std::isnan(censored)) estimate_s = censored;
        }
        o[static_cast<int>(WorkStat::LogRateTimesWork)] = features_detail::log1p_float(estimate_s);
        o[static_cast<int>(WorkStat::RateTimesWorkHours)] = static_cast<float>(estimate_s / 3600.0);
      }
    }
    if (with_running) {
      if (keys.present[i])
        running_stats(keys.hash[i], now_s, out + running_at);
      else
        out[running_at + static_cast<int>(RunningStat::LogCount)] = 0.0f;
    }
    out += per_key;
  }
}

const KeyHistory* HistoryState::find(std::uint64_t key_hash) const {
  auto it = keys_.find(key_hash);
  return it == keys_.end() ? nullptr : &it->second;
}

}  // namespace ttlpred
