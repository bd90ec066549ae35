#include "pipeline/split_history.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/error.hpp"

namespace ttlpred {

HistoryMatrix split_history(const ChronologicalSplit& split, const HistoryConfig& cfg) {
  return split_history(split, cfg, cfg.at);
}

HistoryMatrix split_history(const ChronologicalSplit& split, const HistoryConfig& cfg, PredictionTime at) {
  if (!split.trace || split.trace_rows.size() != split.jobs.rows())
    throw Error("split_history: the split does not carry its trace");
  HistoryState state(cfg);
  const HistoryMatrix whole = compute_history(*split.trace, state, at);
  HistoryMatrix m;
  m.rows = split.jobs.rows();
  m.width = whole.width;
  m.values.resize(m.rows * m.width);
  for (std::size_t i = 0; i < m.rows; ++i)
    std::copy_n(whole.row(split.trace_rows[i]), m.width, m.values.data() + i * m.width);
  return m;
}

HistoryState history_after_training(const ChronologicalSplit& split, const HistoryConfig& cfg) {
  if (!split.trace || split.trace_rows.size() != split.jobs.rows())
    throw Error("history_after_training: the split does not carry its trace");
  const JobTable& t = *split.trace;
  HistoryState state(cfg);
  if (split.train_rows == 0) return state;
  const auto submit = t.num(Field::SubmitTime), wait = t.num(Field::WaitTime), wall = t.num(Field::WallTime);
  const double last_train_submit = submit[split.trace_rows[split.train_rows - 1]];
  std::vector<bool> scored(t.rows(), false);
  for (std::size_t i = split.train_rows; i < split.trace_rows.size(); ++i) scored[split.trace_rows[i]] = true;
  auto finish = [&](std::size_t i) { return submit[i] + (std::isnan(wait[i]) || wait[i] < 0 ? 0.0 : wait[i]) + wall[i]; };
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < t.rows(); ++i)
    if (!scored[i] && submit[i] <= last_train_submit && wall[i] >= 0.0 && std::isfinite(wall[i])) rows.push_back(i);
  // Finish order, ties by submit time then row: the order compute_history feeds them in.
  std::stable_sort(rows.begin(), rows.end(), [&](std::size_t a, std::size_t b) {
    if (finish(a) != finish(b)) return finish(a) < finish(b);
    return submit[a] < submit[b];
  });
  JobRecord r;
  for (std::size_t i : rows) {
    t.record(i, r);
    state.observe(r);
  }
  return state;
}

}  // namespace ttlpred
