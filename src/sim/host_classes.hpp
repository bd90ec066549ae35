#pragma once
// Host classes of a trace, for the broker with the slot's own host (`simulate --host-speed
// slot`): a class is one CPU model (cpu_model: in the synthetic trace, one CPU generation),
// stood for by its median host_speed and its most common cpu_mhz over the simulated rows.
// A pilot slot runs on a host of one class; a job it takes runs its work at the class's
// speed (work = recorded wall time x recorded host_speed: the generator's run time scales as
// 1 / host speed, docs/synthetic-trace.md), and the model is asked for the job on that host:
// the job's row with its cpu_model, cpu_mhz and host_speed replaced by the class's, every
// other field (site, CE, slot cores, slot time left) and its history features as recorded.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "pipeline/split.hpp"
#include "pipeline/split_history.hpp"
#include "predict/predictor.hpp"

namespace ttlpred::sim {

struct HostClass {
  std::string cpu_model;
  std::uint32_t cpu_model_code = kMissingCode;  // in the trace's cpu_model dictionary
  double cpu_mhz = 0;
  double speed = 1;
  std::size_t rows = 0;  // simulated rows recorded on this class
};

struct HostClasses {
  std::vector<HostClass> classes;         // by descending row count (ties: name)
  std::vector<std::uint32_t> row_class;   // per simulated row: the class of the host it ran on
  std::vector<double> row_speed;          // per simulated row: its recorded host_speed
  // [row x class]: the row predicted on a host of each class (empty without a predictor).
  std::vector<Prediction> predictions;
  bool empty() const { return classes.empty(); }
};

// At most this many classes (distinct cpu_model values among the simulated rows).
inline constexpr std::size_t kMaxHostClasses = 64;

// The classes of the rows [first_row, jobs.rows()) of `jobs`. Throws Error naming the row
// when one has no cpu_model or no positive host_speed (the flag needs both), and when the
// rows have more than kMaxHostClasses CPU models.
HostClasses find_host_classes(const JobTable& jobs, std::size_t first_row);

// Fills `hosts.predictions`: each simulated row predicted as if it ran on each class, with
// the history features `history` computed over `split` (the recorded outcomes).
void predict_on_host_classes(HostClasses& hosts, const ChronologicalSplit& split, std::size_t first_row,
                             const HistoryMatrix& history, const Predictor& predictor);

}  // namespace ttlpred::sim
