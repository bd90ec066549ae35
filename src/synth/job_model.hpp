#pragma once
// The per-job-type constants of the synthetic ALICE model and the few formulas that turn a
// job's known fields into its expected wall time. Values and their sources are listed in
// docs/synthetic-trace.md; this header is the single place the generator reads them from.
#include <array>
#include <cstdint>
#include <string_view>

namespace ttlpred::synth {

enum class JobType : std::uint8_t { MC, RawReco, Hyperloop, HlMerge, User, Merge };
inline constexpr std::size_t kNumJobTypes = 6;
inline constexpr std::array<JobType, kNumJobTypes> kJobTypes = {JobType::MC,   JobType::RawReco, JobType::Hyperloop,
                                                                JobType::HlMerge, JobType::User, JobType::Merge};

struct JobTypeModel {
  std::string_view name;     // the job_type column value
  double share;              // target share of sub-jobs in the trace
  double noise_sigma;        // sigma of the mean-1 log-normal run-time noise
  double serial_fraction;    // Amdahl serial fraction: speedup(c) = c / (1 + f (c - 1))
  double cpu_efficiency;     // cpu_time / (wall x cores) on average
  double median_wait_s;      // median queue wait
};

// Shares: MC + Hyperloop trains ~75 %, reconstruction (with its merging) ~10 %, user
// analysis ~15 % (the 2010 mix in alice-facts.md); the split inside each group is assumed.
inline constexpr std::array<JobTypeModel, kNumJobTypes> kJobTypeModels = {{
    {"MC", 0.42, 0.20, 0.08, 0.85, 1800},
    {"RAW_RECO", 0.08, 0.20, 0.10, 0.80, 1200},
    {"HYPERLOOP", 0.28, 0.30, 0.30, 0.55, 600},
    {"HL_MERGE", 0.05, 0.25, 1.00, 0.40, 300},
    {"USER", 0.15, 0.45, 0.30, 0.70, 900},
    {"MERGE", 0.02, 0.25, 1.00, 0.50, 300},
}};

constexpr const JobTypeModel& model_of(JobType t) { return kJobTypeModels[static_cast<std::size_t>(t)]; }

// Parallel speedup of a job using `cores` cores (1 for a single-core job).
double parallel_speedup(JobType t, int cores);

// E[min(mean * N, cap)] for N = LogNormal(-sigma^2/2, sigma): the expected wall time of a
// job whose uncapped expectation is `mean` and that is killed at `cap` = TTL + 300 s. This
// is the conditional mean of the recorded wall time, hence the oracle prediction.
double capped_lognormal_mean(double mean, double sigma, double cap);

// The q-quantile (0 < q < 1) of mean * LogNormal(-sigma^2/2, sigma).
double lognormal_quantile(double mean, double sigma, double q);

// A production's static TTL as its managers set it: `margin` times the p99 run time on the
// slowest hosts, rounded up to `step` seconds and clamped to [lo, hi].
double static_ttl(double p99_slowest_s, double margin, double step, double lo, double hi);

// Expected (noise-free, uncapped) wall time of each job type, in seconds. `speed` is the
// host_speed column, `version` the package's cost factor; everything else is a column of
// the row or a constant of the job's production or user.
inline constexpr double kHyperloopSetupS = 120.0;  // software setup and output upload
inline constexpr double kHyperloopIoSPerGb = 60.0;  // reading 1 GB at reference storage
inline constexpr double kMergeSetupS = 300.0;
inline constexpr double kHlMergeSetupS = 120.0;
inline constexpr double kUserSetupS = 60.0;

inline double mc_mean_s(double events, double s_per_event, double version, double speed) {
  return events * s_per_event * version / (speed * parallel_speedup(JobType::MC, 8));
}
inline double reco_mean_s(double gb, double s_per_gb, double version, double speed) {
  return gb * s_per_gb * version / (speed * parallel_speedup(JobType::RawReco, 8));
}
// Hyperloop trains are partly CPU-bound (scales with the host) and partly I/O-bound
// (scales with the site's storage).
inline double hyperloop_mean_s(double gb, double s_per_gb, double version, double speed, int cores, double io) {
  return kHyperloopSetupS + gb * s_per_gb * version / (speed * parallel_speedup(JobType::Hyperloop, cores)) +
         gb * kHyperloopIoSPerGb / io;
}
inline double merge_mean_s(JobType t, double files, double s_per_file, double speed) {
  return (t == JobType::HlMerge ? kHlMergeSetupS : kMergeSetupS) + files * s_per_file / speed;
}
inline double user_mean_s(double files, double s_per_file, double version, double speed, int cores) {
  return kUserSetupS + files * s_per_file * version / (speed * parallel_speedup(JobType::User, cores));
}

// JAliEn kills a job this long after its TTL has passed (kill reason 20 -> ERROR_E).
inline constexpr double kKillGraceS = 300.0;
// JAliEn's TTL when a JDL gives none.
inline constexpr double kDefaultTtlS = 21600.0;

}  // namespace ttlpred::synth
