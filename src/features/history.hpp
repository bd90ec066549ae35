#pragma once
// Leak-free history features: for each job, statistics of the run times of earlier jobs that
// share a key with it (same user, same production, same master job ...), counting only jobs
// that had FINISHED by the job's prediction time. On real traces this is the strongest signal
// there is; using the run time of a job that was still running would leak the future.
//
// The prediction time is the job's submit time, or, for a configuration made for match time
// (PredictionTime::Match), its start (submit + wait): the broker (JAliEn) applies a job's TTL
// when a pilot takes it, and by then more of its siblings have finished and some are running.
// At match time every key also reports the jobs of the key still running then: how many, and
// their elapsed times, each a lower bound on that job's run time.
//
// Two ways in, one arithmetic:
//  - HistoryState: incremental. The prediction service calls observe() with each finished
//    job and features() for each new one (no heap allocation). Saved/restored as a file.
//  - compute_history(): a whole table, walked in submit order with a min-heap of pending
//    finish times, giving the features every job would have had when it was submitted.
// docs/features.md lists the keys and statistics and says how leak-freeness is tested.
#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {

// What groups jobs into a history. `All` is every job (the recent state of the whole system).
enum class HistoryKey : std::uint8_t {
  All = 0,
  User,
  Group,
  Queue,
  Partition,
  Executable,
  ProductionTag,
  MasterJob,       // master_job_id (a number)
  JobTypePackage,  // job_type and package together: a kind of work at one software version
  // user and requested TTL together: where a request is set per kind of work (a production's
  // TTL, sized from its cost), the first job of a new production finds its earlier
  // look-alikes. Opt-in (pipeline/fit_model.hpp, FitOptions::request_key): it pays on a large
  // ALICE-like trace at match time and not on small or SWF traces (docs/features.md).
  UserRequest,
  // job_type and interaction_type (the collision system) together: a kind of work on one
  // system, whose cost per unit of work a new production of that kind shares more closely
  // than with the others of its type. Opt-in (FitOptions::system_key), like UserRequest.
  JobTypeSystem,
};
inline constexpr std::size_t kNumHistoryKeys = 11;
std::string_view history_key_name(HistoryKey k);

// When a job is predicted, which decides what its history may see.
enum class PredictionTime : std::uint8_t {
  Submit = 0,  // at submission: outcomes finished by the submit time
  Match = 1,   // when a pilot takes the job (submit + wait; submit where the wait is unknown):
               // outcomes finished by then, and the running-job statistics
};
std::string_view prediction_time_name(PredictionTime at);  // "submit", "match"
std::optional<PredictionTime> prediction_time_by_name(std::string_view name);

// Statistics per key, in output order. Times are transformed with log1p so that they are on
// the scale the model sees; a key with no finished jobs gives count 0 and NaN elsewhere
// (the encoder maps NaN to the training mean; the count column tells the model it is empty).
enum class HistoryStat : std::uint8_t {
  LogCount,           // log1p(number of finished jobs with this key)
  LogMeanLastK,       // log1p(mean wall of the last k of them, in finish order)
  LogEwma,            // log1p(exponentially weighted mean wall, weight `ewma_alpha` on the newest)
  LogMax,             // log1p(max wall, a lone extreme one excepted: robust_max)
  LogLast,            // log1p(wall of the most recently finished one)
  MeanLog,            // mean of log1p(wall) over all of them
  RatioMeanLastK,     // mean of wall / requested TTL over the last k that had a request (capped)
  LogRatioTimesRequest,  // log1p(RatioMeanLastK x this job's requested TTL): a direct estimate
};
inline constexpr std::size_t kBaseHistoryStats = 6;   // without the two ratio statistics
inline constexpr std::size_t kRatioHistoryStats = 8;  // with them
inline constexpr std::uint32_t kMaxLastK = 16;
inline constexpr double kMaxWallOverRequest = 10.0;  // caps ratios from tiny requests
// Run times are clipped to this before they enter any statistic (about 116 days, longer than
// any batch queue grants): a single absurd value (1e30 s) must not own the means for hundreds
// of jobs, nor overflow the float rings to inf. Every statistic of a key is the last k
// values, an EWMA (which forgets a value geometrically), a maximum that ignores a lone
// extreme value, or the mean of logs (where one value weighs 1/count), so one extreme job's
// effect fades.
inline constexpr double kMaxHistoryWallS = 1e7;
// The maximum statistic is the largest run time of a key unless that one stands alone, more
// than kOutlierFactor times the second largest on a key with at least kOutlierMinCount jobs:
// then it is the second largest (robust_max). One extreme job would otherwise set the maximum
// of a shared key (All) for good. A maximum that decays instead was tried: it turns the
// All key's nearly constant maximum into a moving feature, and on the pipeline test trace the
// kill rate of the safe TTL rose from 0.1 % to 3.75 %; this rule leaves normal data's
// features as they were.
inline constexpr double kOutlierFactor = 10.0;
inline constexpr std::uint64_t kOutlierMinCount = 8;

// Work-rate statistics ("seconds per unit of work"). A job's work in a work field is the
// field's value (events, input bytes, input files: known at submission) divided by the job's
// host speed when the configuration says so (known at match time); the work is unknown when
// the value (or the speed) is missing or not > 0. For every work field of the configuration
// and every key, after the statistics above:
// With r = exp(mean of log(wall / work) over the key's finished jobs whose work was known)
// (their typical seconds per unit of work; walls under 1 s count as 1 s; at match time with
// censored_rates, the key's running jobs count too: below):
enum class WorkStat : std::uint8_t {
  LogRateTimesWork,    // log1p(r x this job's work): a direct run-time estimate, log scale
  RateTimesWorkHours,  // r x this job's work / 3600: the same estimate on the target's scale
};
inline constexpr std::size_t kWorkStatsPerField = 2;
inline constexpr std::size_t kMaxWorkFields = 3;
// The fields that may measure work, in the order for_table() lists them.
inline constexpr std::array<Field, kMaxWorkFields> kWorkFieldCandidates = {Field::Events, Field::InputBytes,
                                                                          Field::InputFiles};

// Running-job statistics per key (configurations for match time only), after the work
// statistics: the jobs of the key that have started strictly before the prediction time and
// not finished by it. A running job counts while its elapsed time is below kMaxHistoryWallS
// (a start whose outcome never comes must not count for ever).
enum class RunningStat : std::uint8_t {
  LogCount,             // log1p(number of running jobs); 0 when none
  LogMaxElapsed,        // log1p(elapsed time of the longest-running one); NaN when none
  LogMedianElapsed,     // log1p(median elapsed time); NaN when none
};
inline constexpr std::size_t kRunningStats = 3;

// Censored work rates (configurations for match time with `censored_rates`): the work
// statistics above take a key's running jobs as lower bounds. At match time a young key's
// first outcomes are its shortest runs; its running jobs say how long the others take at
// least. With the log rates x_i of the key's n finished jobs (the work statistics' sample)
// and c_j = log(max(elapsed_j, 1 s) / work_j) of its running jobs (the kCensoredMaxRunning
// longest-running ones whose work is known), mu is the normal MLE with the c_j
// right-censored (features/censored_mean.hpp), and the estimate exp(mu + sigma^2 / 2) x this
// job's work, the mean of that log-normal, replaces r x work in both work statistics. A key
// with kCensoredMaxFinished finished jobs or more takes mu = mean(x_i): its running jobs no
// longer move it, and the solver's cost is saved.
//
// sigma, the spread of log rates within a key, is the key's own, shrunk toward the pooled
// within-key spread of all keys of its kind and work field whose jobs had this job's type
// (job_type; all jobs of the kind where the job has none or that pool is young):
//   sigma^2 = (sum of squared deviations of x_i + kSpreadPriorWeight x pooled) / (n - 1 + kSpreadPriorWeight).
// The pooled spreads grow from the observed jobs only, so they are leak-free like the rest.
// Until a pool has kMinSpreadDof degrees of freedom the plain estimate r x work stands.
//
// Why in place of the plain estimate and not beside it: on the 1 M ALICE-like trace at match
// time (three seeds each, docs/ACCURACY.md) the extra columns let the network fit the first
// guesses of new productions worse, while the same values in place of the plain ones gave
// the warm jobs' gain without that loss.
inline constexpr std::uint64_t kCensoredMaxFinished = 100;
inline constexpr std::size_t kCensoredMaxRunning = 64;
inline constexpr double kSpreadPriorWeight = 20.0;
inline constexpr std::uint64_t kMinSpreadDof = 10;
// At most this many (kind, field, job type) pools: a service fed hostile job types must not
// grow them without bound; past it, new types use their kind's pool.
inline constexpr std::size_t kMaxSpreadPools = 4096;

// A job's own numbers that the statistics read besides its keys: its request and its
// work in each work field of the configuration (NaN: unknown).
struct JobAmounts {
  double requested_ttl_s = kMissingNumber;
  std::array<double, kMaxWorkFields> work{kMissingNumber, kMissingNumber, kMissingNumber};
};

struct HistoryConfig {
  std::vector<HistoryKey> keys;  // output order: keys[0]'s stats first
  std::uint32_t last_k = 5;      // 1 .. kMaxLastK
  double ewma_alpha = 0.3;       // (0, 1]
  bool ratio_stats = false;      // wall / requested-TTL statistics (when requests are known)
  std::vector<Field> work_fields;  // work-rate statistics per field (kWorkFieldCandidates)
  bool work_per_speed = false;     // work = field value / host_speed (a match-time field)
  // The prediction time the features are made for. Match adds the running-job statistics to
  // every key; a model file records it through its encoder's copy of this configuration.
  PredictionTime at = PredictionTime::Submit;
  // Censored work rates (match time only; above): the work statistics take each key's running
  // jobs as lower bounds.
  bool censored_rates = false;

  // Every key whose column(s) have values in `t` (All always), ratio stats when `t` has
  // requested TTLs, work-rate stats for each work field with a value > 0 in `t` (per host
  // speed when `t` has host speeds). This is the default feature set for a trace, except that
  // training drops UserRequest and JobTypeSystem unless asked for them (FitOptions::request_key,
  // FitOptions::system_key).
  static HistoryConfig for_table(const JobTable& t, std::uint32_t last_k = 5, double ewma_alpha = 0.3);

  bool running_stats() const { return at == PredictionTime::Match; }
  std::size_t stats_per_key() const { return running_offset() + (running_stats() ? kRunningStats : 0); }
  // Offset of the work statistics within one key's block.
  std::size_t work_offset() const { return ratio_stats ? kRatioHistoryStats : kBaseHistoryStats; }
  // Offset of the running-job statistics within one key's block (when running_stats()).
  std::size_t running_offset() const { return work_offset() + kWorkStatsPerField * work_fields.size(); }
  // A record's prediction time under this configuration: its submit time, plus its wait at
  // match time (NaN when the submit time is unknown).
  double prediction_time_of(const JobRecord& r) const;
  // A record's request and work amounts under this configuration.
  JobAmounts amounts_of(const JobRecord& r) const;
  std::size_t width() const { return keys.size() * stats_per_key(); }
  // "h_user_log_mean_k", ... in output order (for reports).
  std::vector<std::string> feature_names() const;
  // Throws Error naming the bad setting.
  void validate() const;

  // Format version 2 added the work fields; version 1 configurations have none. The
  // prediction time is written only for match time (a byte after the rest), so files made
  // for submit time keep the older format and its bytes; `with_prediction_time` says whether
  // the container's version has that byte (the encoder's and the state's versions say).
  // Likewise a byte for censored_rates follows only when it is set (`with_censored_flag`).
  void write(BinaryWriter& w) const;
  static HistoryConfig read(BinaryReader& r, std::uint32_t format_version, bool with_prediction_time = false,
                            bool with_censored_flag = false);  // validates
  bool operator==(const HistoryConfig&) const = default;
};

// Running statistics of one key. Recent values live in fixed rings, so a key never allocates
// after it is created.
struct KeyHistory {
  std::uint64_t count = 0;
  double ewma = 0, max = 0, last = 0, sum_log = 0;
  double max2 = 0;  // second largest (0 while count < 2): see robust_max
  std::uint32_t ring_pos = 0;  // next slot to write in `recent`
  std::array<float, kMaxLastK> recent{};
  std::uint64_t ratio_count = 0;
  std::uint32_t ratio_pos = 0;
  std::array<float, kMaxLastK> recent_ratio{};
  // One per work field of the configuration: log(wall / work) of the jobs whose work was known.
  struct Work {
    std::uint64_t count = 0;
    double sum_log_rate = 0;
    double m2 = 0;  // sum of squared deviations of the log rates from their mean (Welford; censored_rates only)
  };
  std::array<Work, kMaxWorkFields> work{};
  // observed() of the state when this key last took a job: the eviction order under a
  // capacity (least recently updated first).
  std::uint64_t last_seen = 0;
  // The statistics features() reports that depend on this key alone, computed whenever the
  // key changes (observe, load) instead of on every prediction: a key is read by every job
  // that has it, and these are six logarithms and an exponential per work field. The same
  // expressions as before, so the same bits.
  struct Derived {
    float log_count = 0, log_mean_last_k = 0, log_ewma = 0, log_max = 0, log_last = 0, mean_log = 0;
    double ratio_mean_last_k = 0;               // when ratio_count > 0
    std::array<double, kMaxWorkFields> rate{};  // exp(mean log(wall / work)), when work[w].count > 0
  } derived;
};

// The maximum statistic of a key: h.max, or h.max2 when h.max is a lone extreme value.
double robust_max(const KeyHistory& h);

// Which keys one job has, as hashes (present[k] false: the job has no value for key k).
struct JobKeys {
  std::array<std::uint64_t, kNumHistoryKeys> hash{};
  std::array<bool, kNumHistoryKeys> present{};
  // The hash of the job's type (job_type), 0 when it has none: which pooled spread the
  // censored work-rate statistics use. Not part of a running job's saved keys.
  std::uint64_t type = 0;
};
// Hashes of a record's keys, from its string values.
JobKeys job_keys(const JobRecord& r);

class HistoryState {
 public:
  explicit HistoryState(HistoryConfig cfg);

  const HistoryConfig& config() const { return cfg_; }
  std::size_t width() const { return cfg_.width(); }
  std::uint64_t observed() const { return observed_; }
  std::size_t keys_tracked() const { return keys_.size(); }

  // At most `max_keys` keys (0: no limit, the default, and what training and eval use: a
  // trace's keys are bounded by the trace). Past it the least recently updated keys are
  // dropped, in batches down to 90 % of the capacity so that the cost is amortised; a
  // dropped key is a key never seen (count 0). The service sets it: with outcomes from the
  // network, unique user or production tags would otherwise grow the state without limit.
  // Applies at once to a state already larger.
  void set_capacity(std::size_t max_keys);
  std::size_t capacity() const { return capacity_; }
  std::uint64_t evicted() const { return evicted_; }  // keys dropped since construction

  // Adds a finished job (wall_s known and >= 0; otherwise it is ignored and false returned).
  bool observe(const JobRecord& finished);
  // Writes width() floats for a job about to run, as of its prediction time
  // (config().prediction_time_of(job)), or as of `now_s` where given: the running-job
  // statistics measure elapsed times up to it. No heap allocation.
  void features(const JobRecord& job, float* out) const;
  void features(const JobRecord& job, double now_s, float* out) const;

  // The same, from precomputed key hashes and amounts (the batch walk uses these).
  bool observe(const JobKeys& keys, double wall_s, const JobAmounts& amounts);
  void features(const JobKeys& keys, const JobAmounts& amounts, float* out, double now_s = kMissingNumber) const;

  // The running set (used by the running-job statistics; kept whatever the configuration).
  // `job` is the caller's identifier of a job (the service: a hash of its job_id; the batch
  // walk: its row). start_running: false (and nothing changes) when `job` is already running
  // or `start_s` is not finite; `amounts` gives its work for the censored work-rate
  // statistics (unknown work: it is not one of their lower bounds). stop_running: false when
  // `job` was not running.
  bool start_running(std::uint64_t job, const JobKeys& keys, double start_s, const JobAmounts& amounts = {});
  bool stop_running(std::uint64_t job);
  std::size_t running() const { return running_.size(); }
  bool is_running(std::uint64_t job) const { return running_.count(job) > 0; }

  // Bounds of the running set, for a service whose starts may never see their outcome (a
  // lost pilot, a broker that forgets to post it). A running job counts in the statistics
  // while its elapsed time is below `max_age_s` (default kMaxHistoryWallS, what the batch walk
  // uses), and prune_running(now_s) forgets the jobs started at or before now_s - max_age_s:
  // none of them counts at now_s or later, so pruning never changes such an answer. Past
  // `max_jobs` running jobs (0: no limit, the default) start_running forgets the earliest
  // start (ties: the smallest identifier), so that equal event sequences give equal sets.
  // Throws Error for a max_age_s outside (0, kMaxHistoryWallS]. Not saved with the state:
  // the owner sets them again.
  void set_running_limits(std::size_t max_jobs, double max_age_s);
  std::size_t running_capacity() const { return running_capacity_; }
  double running_max_age() const { return running_max_age_; }
  std::size_t prune_running(double now_s);  // how many it forgot
  std::uint64_t running_expired() const { return running_expired_; }  // forgotten by age, since construction
  std::uint64_t running_evicted() const { return running_evicted_; }  // forgotten at the cap, since construction

  // A sealed container (magic "TTLHIST"); from_bytes refuses truncated or corrupted input.
  std::vector<std::uint8_t> to_bytes() const;
  static HistoryState from_bytes(const std::vector<std::uint8_t>& bytes, const std::string& what);
  void save(const std::string& path) const;  // atomic
  static HistoryState load(const std::string& path);

  // Read access for tests and reports; nullptr when the key was never observed.
  const KeyHistory* find(std::uint64_t key_hash) const;

 private:
  struct RunningJob {
    double start_s = 0;
    JobKeys keys;
    std::array<float, kMaxWorkFields> log_work{};  // log(work) per work field; NaN: unknown
  };
  // One running job in its key's list, ascending by start. `job` points into running_ (its
  // elements stay where they are when the map rehashes).
  struct RunningEntry {
    double start_s = 0;
    const RunningJob* job = nullptr;
  };
  // A pooled spread: the sum of the keys' squared-deviation increments and their number.
  struct Spread {
    double m2 = 0;
    std::uint64_t dof = 0;
  };

  void evict_oldest();
  void derive(KeyHistory& h) const;  // refreshes h.derived
  // start_running with the work already as logarithms (what a saved state holds).
  bool start_running_logged(std::uint64_t job, const JobKeys& keys, double start_s,
                            const std::array<float, kMaxWorkFields>& log_work);
  void running_stats(std::uint64_t key_hash, double now_s, float* out) const;
  // The censored work-rate estimate (censored_rates) of key `h` for work field w and this
  // job's work (> 0), in seconds; NaN while the spread's pool is young.
  double censored_estimate(HistoryKey kind, std::uint64_t key_hash, const KeyHistory& h, std::uint64_t type,
                           std::size_t w, double work, double now_s) const;
  // The running jobs of a key counted at now_s, ascending by start ([nullptr, nullptr) when none).
  std::pair<const RunningEntry*, const RunningEntry*> counted_running(std::uint64_t key_hash, double now_s) const;
  // Adds one key's squared-deviation increment to the pools of its kind (censored_rates).
  void pool_spread(HistoryKey kind, std::size_t w, std::uint64_t type, double m2_step);
  // The pooled spread for (kind, work field w, job type) in the censored statistics: the
  // within-key variance of log rates, or NaN while it has fewer than kMinSpreadDof.
  double pooled_spread(HistoryKey kind, std::size_t w, std::uint64_t type) const;

  HistoryConfig cfg_;
  std::uint64_t observed_ = 0;
  std::unordered_map<std::uint64_t, KeyHistory> keys_;
  std::unordered_map<std::uint64_t, RunningJob> running_;  // by job
  // Each key's running jobs, ascending by start (order statistics in O(log n)).
  std::unordered_map<std::uint64_t, std::vector<RunningEntry>> running_by_key_;
  // Pooled within-key spreads by hash of (kind, work field, job type or 0 for all types);
  // kept only for censored_rates.
  std::unordered_map<std::uint64_t, Spread> spreads_;
  // Every running job by (start, identifier): the earliest start first, for the limits.
  std::set<std::pair<double, std::uint64_t>> running_by_start_;
  std::size_t running_capacity_ = 0;
  double running_max_age_ = kMaxHistoryWallS;
  std::uint64_t running_expired_ = 0, running_evicted_ = 0;
  std::size_t capacity_ = 0;
  std::uint64_t evicted_ = 0;
};

// Features of every row of a table, row-major, aligned with the table's row order.
struct HistoryMatrix {
  std::size_t rows = 0;
  std::size_t width = 0;
  std::vector<float> values;  // rows x width
  const float* row(std::size_t r) const { return values.data() + r * width; }
};

// Walks `t` in order of prediction time: the submit time, or at match time the start
// (submit + wait; unknown wait counts as 0). A job's features see exactly the jobs whose
// submit + wait + wall <= its prediction time and whose prediction time is strictly earlier
// (unknown wall time: never seen); at match time its running-job statistics count the jobs
// whose start is strictly earlier and that have not finished by then (an unknown wall time
// runs until kMaxHistoryWallS has elapsed). `state` starts as given (e.g. restored from a
// file; its running set must be empty); on return it has observed every job of `t` with a
// known wall time and a known submit time, as a service would once they all finished, and
// its running set is empty again. The walk's time is the configuration's `at` unless given:
// a configuration for submit time may be walked at match time (its history as of the match,
// without running statistics); one for match time cannot be walked at submit time (Error:
// its running statistics are made for the start).
//
// A job WITHOUT a submit time is predicted as of now: its features are those of the state
// at the end of the walk (every timed job with a run time observed), exactly what
// HistoryState::features gives the service for the same job from its current state. That
// is the one rule for such jobs (docs/data-format.md, "Jobs without a submit time"); they
// cannot be placed in time, so they are never observed themselves.
HistoryMatrix compute_history(const JobTable& t, HistoryState& state);
HistoryMatrix compute_history(const JobTable& t, HistoryState& state, PredictionTime at);
HistoryMatrix compute_history(const JobTable& t, const HistoryConfig& cfg);
HistoryMatrix compute_history(const JobTable& t, const HistoryConfig& cfg, PredictionTime at);

}  // namespace ttlpred
