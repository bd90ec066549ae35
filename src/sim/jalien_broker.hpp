#pragma once
// A JAliEn-style pull broker: pilots (job agents) hold slots of a fixed lifetime and ask a
// central task queue for work; the broker hands each the first waiting job that fits.
//
// Rules (docs/SIMULATION.md gives each with its source in ../shared/alice-facts.md):
// - A pilot's time left = min(lifetime - elapsed, proxy left - 900 s) - 600 s.
// - The broker gives a pilot the first waiting job in priority order (submit order; a
//   resubmitted job keeps its place) with TTL < time left and cores <= the pilot's free
//   cores. The pilot keeps asking while it has free cores and gets jobs.
// - A job runs work / host speed seconds on the pilot's host; past TTL + 300 s it is killed
//   (ERROR_E) and resubmitted with its retry TTL, up to `max_retries` times.
// - A pilot that gets nothing and runs no job exits; the rest of its lifetime x its cores is
//   wasted when jobs were waiting (idle otherwise). Its slot gets a new pilot after an
//   exponential gap.
// - TTL policies: a fixed TTL per job (static, model), the oracle: the job's true run time
//   on the asking pilot's host + 300 s, or a TtlSource (sim/ttl_source.hpp) asked at each
//   submission and told of each outcome, optionally with one TTL per host class (a pilot is
//   matched against its host class's TTL).
// Deterministic for a seed.
#include <cstdint>
#include <vector>

#include "sim/time_series.hpp"
#include "sim/ttl_source.hpp"

namespace ttlpred::sim {

struct GridJob {
  std::int64_t id = 0;
  double submit = 0;
  double work = 0;   // run time on a host of speed 1 (s): trace wall time x the trace host's speed
  int cores = 1;
  double ttl = 0;    // the TTL the policy gives the job (ignored by the oracle and under a TtlSource)
  double retry_ttl = 0;  // the TTL of a resubmission after a kill (<= 0: ttl again)
};

// One kind of slot a site offers: cores, host speed and lifetime of the pilots it runs.
struct SlotKind {
  int cores = 8;
  double speed = 1;
  double lifetime_s = 86400;
  std::uint32_t host_class = 0;  // the TtlSource's class of the host (ignored without one, or with one class)
};

struct GridConfig {
  bool oracle = false;           // TTL = true run time on the pilot's host + kill margin
  // Not owned; null: every job's TTL is GridJob::ttl. Ignored by the oracle.
  TtlSource* ttl_source = nullptr;
  std::vector<SlotKind> slots;   // one pilot slot each
  double pilot_gap_mean_s = 300; // mean wait before an emptied slot gets a new pilot
  double proxy_lifetime_s = 0;   // 0: no proxy cap
  double proxy_margin_s = 900;
  double safety_margin_s = 600;
  double kill_margin_s = 300;
  int max_retries = 2;
  std::uint64_t seed = 1;
  // Age of every slot's first pilot at the start; < 0: uniform over its lifetime (the
  // steady state of slots started at random times).
  double initial_age_s = -1;
};

enum class GridStatus : std::uint8_t { Done, Failed, NeverMatched };

struct GridJobOutcome {
  double start = 0, end = 0;   // of the last attempt
  double wait_s = 0;           // time queued, summed over attempts
  int attempts = 0;
  int kills = 0;
  double host_speed = 0;       // of the last attempt
  double first_ttl_s = -1;     // the TTL its first attempt ran under (< 0: never matched)
  GridStatus status = GridStatus::NeverMatched;
};

struct GridMetrics {
  std::size_t jobs = 0, completed = 0, failed = 0, never_matched = 0;
  double days = 0;                      // first to last submit
  double jobs_completed_per_day = 0;    // completions up to the last submit / days
  double mean_wait_s = 0, p95_wait_s = 0;
  double wasted_core_hours = 0;         // pilots exiting early while jobs wait: cores x lifetime left
  double wasted_core_hours_ttl = 0;     // of which: jobs that fit the cores waited, none with a TTL below the time left
  double idle_exit_core_hours = 0;      // pilots exiting early on an empty queue (not waste: no work)
  double cpu_hours_used = 0;            // cores x time of every attempt, killed ones included
  double cpu_hours_done = 0;            // of completed attempts
  double cpu_hours_lost_to_kills = 0;
  std::size_t kills = 0, resubmissions = 0;
  std::size_t jobs_killed = 0;          // jobs killed at least once (kills - jobs_killed: repeated kills)
  std::size_t matches_rejected_for_ttl = 0;
  std::size_t pilots = 0, early_exits = 0;
  double utilization = 0;               // busy core time / core time of pilots alive
  double makespan_s = 0;
};

struct GridResult {
  std::vector<GridJobOutcome> outcomes;  // by job index
  GridMetrics metrics;
  std::vector<HourSample> hours;
};

// Throws Error on an empty slot list, a job with more cores than any slot, or a slot whose
// host class the TTL source does not have.
GridResult simulate_jalien(const std::vector<GridJob>& jobs, const GridConfig& config);

}  // namespace ttlpred::sim
