#pragma once
// The synthetic ALICE grid that jobs are drawn from: sites with several CPU generations,
// software package releases over time, data-taking periods, productions (MC, reconstruction
// campaigns, Hyperloop trains) that appear and end over the simulated month, and analysis
// users with heavy-tailed activity. Built once from the seed; the job generator only reads
// it. Every per-production and per-user constant here is something a model can learn from
// the history of earlier jobs of that production or user.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "synth/job_model.hpp"
#include "synth/rng.hpp"

namespace ttlpred::synth {

struct CpuGeneration {
  std::string_view model;
  double mhz;
  double speed;    // throughput per core relative to the reference host (speed 1)
  int node_cores;  // logical cores of one node: a whole-node slot's size
};
extern const std::array<CpuGeneration, 8> kCpuCatalog;

enum class Interaction : std::uint8_t { pp, PbPb, pPb, OO };
std::string_view interaction_name(Interaction i);

struct HostGroup {
  std::size_t cpu;  // index into kCpuCatalog
  double speed;     // the host_speed column: catalog speed x this site's configuration
};

struct Site {
  std::string name;
  std::vector<std::string> ces;
  std::vector<HostGroup> hosts;
  WeightedPicker host_picker;
  double io_factor = 1;         // storage throughput for I/O-bound jobs, 1 = reference
  double slot_lifetime_s = 0;   // pilot slot window (24, 48 or 72 h)
};

struct Package {
  std::string tag;
  double released = 0;     // Unix seconds
  double cost_factor = 1;  // run time multiplier of this version (software gets heavier/lighter)
};

// Successive versions of one software line, ordered by release time.
struct PackageLine {
  std::vector<Package> versions;
  // Index of the newest version released at or before t (the oldest when none is).
  std::size_t latest_at(double t) const;
};

struct DataPeriod {
  std::string name;  // LHC23zzh
  Interaction interaction;
  int first_run, last_run;
  int passes = 0;        // reconstruction passes so far (apass1 ... apassN)
  std::string pass;      // newest pass name: the anchor pass of MC and the data of trains
  double ctf_gb;         // raw (CTF) file size
  double aod_gb;         // analysis (AO2D) file size
  double weight;
};

// An MC production, a reconstruction campaign or a Hyperloop train.
struct Production {
  JobType type = JobType::MC;
  std::string tag;   // production_tag column
  std::string pass;  // pass_name column
  std::size_t period = 0;
  double begin = 0, end = 0;  // active window (Unix seconds)
  double weight = 1;
  std::size_t package = 0;  // index into the type's package line
  int cores = 1;
  double cost = 0;           // MC: core-s per event; RAW_RECO, HYPERLOOP: core-s per GB
  double events_per_job = 0; // MC: nominal events per job (Split)
  int files_per_job = 0;     // HYPERLOOP: input files per job (SplitMaxInputFileNumber)
  double merge_s_per_file = 0;  // its MERGE / HL_MERGE jobs
  double ttl = 0;           // static TTL of its jobs
  double merge_ttl = 0;     // static TTL of its merging jobs
  double rss_mb = 0;        // typical peak memory per job
};

struct User {
  std::string name;
  double s_per_file;  // core-s per input file of this user's analysis
  double files_mean;  // typical input files per job
  double file_gb;
  double ttl;         // the TTL this user habitually writes (often the 21600 s default)
  int cores;
  double package_lag_s;  // how far behind the newest O2Physics tag this user runs
  double rss_mb;
  std::size_t period;    // the data this user analyses
};

// A latent constant of one production or user: drawn once, log-normal with this median and
// sigma, clamped to [lo, hi]. Its value is hidden from the trace; only the run times of the
// jobs that share it tell it. Named here because two readers need the same numbers:
// build_world draws from them and the match-time floor (synth/match_floor.hpp) uses them as
// the prior of the best predictor.
struct LatentPrior {
  double median, sigma;
  double lo = 0, hi = std::numeric_limits<double>::infinity();
  double draw(Rng& rng) const { return std::clamp(rng.lognormal_median(median, sigma), lo, hi); }
};
// MC: a job's hours on the reference host at the production's nominal events (the per-event
// cost is derived from it, mc_cost_per_event).
inline constexpr LatentPrior kMcHoursPrior{3.0, 0.45, 0.75, 9.0};
// RAW_RECO: the campaign's factor on its collision system's core-s per GB.
inline constexpr LatentPrior kRecoCostFactorPrior{1.0, 0.25};
// HYPERLOOP: the train's core-s per GB.
inline constexpr LatentPrior kTrainCostPrior{150.0, 0.6, 20.0, 2000.0};
// MERGE (per production) and HL_MERGE (per train): s per merged file on the reference host.
inline constexpr LatentPrior kMergeCostPrior{30.0, 0.3};
inline constexpr LatentPrior kHlMergeCostPrior{4.0, 0.4};
// USER: the user's core-s per input file.
inline constexpr LatentPrior kUserCostPrior{150.0, 1.0, 5.0, 20000.0};

// Core-s per GB of reconstruction by collision system (before the campaign's factor).
double reco_core_s_per_gb(Interaction i);
// MC per-event cost (core-s) from the latent hours and the production's nominal events.
double mc_cost_per_event(double hours, double events_per_job);

// The job size each static TTL rule is sized for: 2 CTF files of the period (RAW_RECO), the
// train's files per job of the period's AO2D (HYPERLOOP); 15 % above the mean file size.
double reco_nominal_gb(const DataPeriod& period);
double train_nominal_gb(const Production& train, const DataPeriod& period);

// The static TTL rules of build_world, as functions of each latent constant, so that the
// floor can tell which latent values a production's observed TTL allows. `slow` and
// `slow_io` are the world's slowest host speed and storage factor.
double mc_ttl(double base_ttl, double events_per_job, double cost, double version, double slow);
double reco_ttl(double gb_nominal, double cost, double version, double slow);
double train_ttl(double gb_nominal, double cost, double version, double slow, int cores, double slow_io);
double merge_ttl(double s_per_file, double slow);
// MC productions keep grid_submit.sh's 82000 s with this probability, else 72000 s.
inline constexpr double kMcTtl82000Share = 0.65;
// A user's TTL habit from the mean run time of a job twice the user's typical size on a
// 0.8-speed host (`typical`) and the user's uniform draw `u` in [0, 1); the habit changes
// only where u crosses one of kUserTtlHabitBreaks.
double user_ttl_habit(double typical, double u);
inline constexpr std::array<double, 3> kUserTtlHabitBreaks = {0.5, 0.75, 0.9};
double user_typical_s(double files_mean, double s_per_file, int cores);

struct World {
  double begin = 0, end = 0;  // the simulated interval
  std::vector<Site> sites;
  WeightedPicker site_picker;  // by capacity
  WeightedPicker t1_picker;    // reconstruction runs at the tier-1 sites (indices 0..kNumT1-1)
  double slowest_speed = 1, slowest_io = 1;
  PackageLine o2sim, async_reco, o2physics;
  std::vector<DataPeriod> periods;
  WeightedPicker period_picker;
  std::vector<Production> mc, reco, trains;
  std::vector<User> users;
  WeightedPicker user_picker;  // by activity (heavy-tailed)

  const PackageLine& packages_of(JobType t) const;
};

inline constexpr std::size_t kNumSites = 60;
inline constexpr std::size_t kNumT1 = 10;

World build_world(std::uint64_t seed, double begin, double days);

// Index of an active production at time t, chosen by weight; when none is active, the most
// recently started one (so a sparse world never runs dry).
std::size_t pick_production(const std::vector<Production>& ps, double t, Rng& rng);

// "20240501" for a Unix time (UTC).
std::string yyyymmdd(double unix_seconds);

}  // namespace ttlpred::synth
