#pragma once
// The synthetic ALICE job trace: `ttlpred generate` and the embedded default data set.
// The same seed and job count give the same rows, in submit-time order, on every platform
// (synth/rng.hpp). The model is documented in docs/synthetic-trace.md.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"
#include "synth/trace_stats.hpp"
#include "synth/world.hpp"

namespace ttlpred::synth {

inline constexpr double kDefaultStartTime = 1714521600.0;  // 2024-05-01T00:00:00Z

// Drift scenarios (docs/synthetic-trace.md, "Drift scenarios"): changes that start on a
// given day of the simulated span and that the history of earlier jobs cannot foresee, to
// test whether safe TTLs keep their promise when the workload moves. A day < 0 switches a
// scenario off; with all off the trace is the same, row for row, as without them.
struct DriftConfig {
  // From this day on, MC productions run a new O2sim release (package tag + "-drift") whose
  // jobs take `slow_version_factor` times as long.
  double slow_version_day = -1;
  double slow_version_factor = 1.3;
  // From this day on, the hosts of the first tier-1 site run `slow_site_factor` times slower;
  // their host_speed column (a benchmark taken once) does not show it.
  double slow_site_day = -1;
  double slow_site_factor = 1.5;
  // From this day on, a new user (kHeavyUserName) submits this share of the user-analysis
  // masters, each job `heavy_user_cost` times the work per file of the heaviest user.
  double heavy_user_day = -1;
  double heavy_user_share = 0.3;
  double heavy_user_cost = 4.0;
  bool any() const { return slow_version_day >= 0 || slow_site_day >= 0 || heavy_user_day >= 0; }
};
inline constexpr const char* kHeavyUserName = "newcomer_heavy";

struct GeneratorConfig {
  std::uint64_t jobs = 1'000'000;  // the embedded default trace: 1 M jobs, seed 1
  std::uint64_t seed = 1;
  double start_time = kDefaultStartTime;
  double days = 30;
  DriftConfig drift;
};

// The columns the generator fills, in schema order (group and queue stay empty: ALICE
// has neither).
const std::vector<Field>& generated_columns();

class TraceGenerator {
 public:
  // Throws ttlpred::Error on a config it cannot honour (no jobs, no days).
  explicit TraceGenerator(const GeneratorConfig& config);
  const GeneratorConfig& config() const { return config_; }
  const World& world() const { return world_; }

  // Calls `sink` once per job in submit-time order. The record's text fields point into
  // world(), so they stay valid as long as this generator.
  void run(const std::function<void(const JobRecord&)>& sink) const;

 private:
  GeneratorConfig config_;
  World world_;
};

// The whole trace as a table (tests, the training pipeline).
JobTable generate_table(const GeneratorConfig& config);

// Streams the trace to `path` (.csv, or .csv.gz compressed) through CsvWriter, which
// writes atomically; returns the number of rows. `stats`, when given, sees every row.
std::size_t generate_csv(const GeneratorConfig& config, const std::string& path, TraceStats* stats = nullptr);

}  // namespace ttlpred::synth
