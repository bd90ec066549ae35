#pragma once
// JAliEn's own history-based TTL, as the broker the model is compared with: per (production,
// site, CPU model) the count, mean, standard deviation (Welford's method) and maximum of the
// run times of finished jobs (status DONE), fed as jobs end; a job whose key has seen at
// least `min_jobs` finished jobs gets an estimated TTL from them, the others the static TTL
// (../shared/alice-facts.md: JAliEn merge requests 244 and 249, table
// TTLPredictionHistorySite).
//
// The estimate's formula is not public in what we have, so the documented candidates are
// each a rule: the largest finished run time (`max`), or the mean plus two or three sample
// standard deviations (`mean+2sd`, `mean+3sd`). docs/SIMULATION.md says which one is taken as
// the peer and why. Choices of ours where JAliEn's are unknown, each written down there:
// - the estimate only shortens a TTL: a job gets min(static TTL, estimate) (the statistics
//   are of jobs that ran under the static TTL, so none of them ran past it);
// - a job's key is known when it is submitted, from the host the trace recorded (the pilot
//   stands for that host) or, with host classes (`--host-speed slot`), from each class's CPU
//   model with no site (a pilot slot has a host class, not a site); JAliEn asks at match;
// - a job without a production (JAliEn: no LPMJobTypeID) never gets an estimate;
// - killed attempts teach nothing (JAliEn learns from DONE jobs); a resubmission that
//   finishes does, on the host it finished on; with a split, the recorded jobs before it
//   teach their run times from the moment they ended.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/ttl_source.hpp"

namespace ttlpred::sim {

enum class StatsRule : std::uint8_t { Max, MeanPlus2Sd, MeanPlus3Sd };

// "max", "mean+2sd" or "mean+3sd"; Error naming the accepted names otherwise.
StatsRule stats_rule_from_name(std::string_view name);
const char* stats_rule_name(StatsRule rule);

struct JalienStatsOptions {
  StatsRule rule = StatsRule::Max;
  std::size_t min_jobs = 10;  // finished jobs a key needs before its estimate is used (>= 2)
};

// Count, mean, sample standard deviation and maximum of run times, updated one at a time
// (Welford's method, as JAliEn keeps them).
class RunTimeStats {
 public:
  // Error on a run time that is not finite and >= 0.
  void add(double seconds);
  std::uint64_t count() const { return n_; }
  double mean() const { return mean_; }
  double sd() const;  // sample standard deviation; 0 below two values
  double max() const { return max_; }
  double estimate(StatsRule rule) const;

 private:
  std::uint64_t n_ = 0;
  double mean_ = 0, m2_ = 0, max_ = 0;
};

// The key of a job on one host: production, site and CPU model codes of the trace's
// dictionaries (the table's missing code where a field has none: a missing site is one site,
// a missing CPU model one CPU model; a missing production, kNoProduction, never gets an
// estimate).
inline constexpr std::uint32_t kNoProduction = 0xFFFFFFFFu;  // data/job_table.hpp's kMissingCode
struct StatsKey {
  std::uint32_t production = 0, site = 0, cpu_model = 0;
  bool operator==(const StatsKey&) const = default;
};
struct StatsKeyHash {
  std::size_t operator()(const StatsKey& k) const noexcept;
};

class JalienStatsTtl final : public TtlSource {
 public:
  // keys[job x classes + class]: the job's key on a host of each class; static_ttl[job]: its
  // TTL without an estimate (> 0). Error on sizes that do not match or min_jobs < 2.
  JalienStatsTtl(std::vector<StatsKey> keys, std::vector<double> static_ttl, std::size_t classes,
                 JalienStatsOptions options);

  // A finished job's run time, learnt now.
  void learn(const StatsKey& key, double seconds);
  // A job recorded before the simulated ones (a split's first part) that ended at `end_s`:
  // learnt when the first job decided at or after end_s is (nothing from the future).
  void recorded(const StatsKey& key, double seconds, double end_s);

  std::size_t classes() const override { return classes_; }
  void decide(std::size_t job, double t, std::span<double> ttl) override;
  void matched(std::size_t job, std::size_t host_class) override;
  void ended(std::size_t job, double t, double ran_s, int cores, bool killed) override;
  void retry_ended(std::size_t job, std::size_t host_class, double t, double ran_s, bool killed) override;

  // Jobs answered with an estimate (on any class) and without.
  std::size_t estimated() const { return estimated_; }
  std::size_t fallbacks() const { return fallbacks_; }
  std::size_t keys_seen() const { return stats_.size(); }
  // The statistics of a key (null before it has seen a finished job).
  const RunTimeStats* stats(const StatsKey& key) const;

 private:
  std::vector<StatsKey> keys_;
  std::vector<double> static_ttl_;
  std::size_t classes_;
  JalienStatsOptions options_;
  std::unordered_map<StatsKey, RunTimeStats, StatsKeyHash> stats_;
  std::vector<std::uint32_t> matched_class_;  // per job: the class its first attempt ran on
  struct Recorded {
    double end_s, seconds;
    StatsKey key;
  };
  std::vector<Recorded> recorded_;  // not learnt yet, latest end first (learnt from the back)
  bool recorded_sorted_ = true;
  std::size_t estimated_ = 0, fallbacks_ = 0;
};

}  // namespace ttlpred::sim
