#pragma once
// The service's way through a table, for the tests that hold the incremental history state
// to the batch walk's numbers: one event per job's finish and one per its prediction (at
// submit or at its start), replayed in time order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "data/job_table.hpp"
#include "feature_test_table.hpp"
#include "features/history.hpp"

namespace ttlpred::test {

struct HistoryEvent {
  double time;
  int kind;   // 0 = finish, 1 = prediction
  double at;  // the job's prediction time (submit or start)
  std::size_t row;
};

// Replays `events` into `state` in time order; at equal time finishes come first (a job
// finishing at t counts for one predicted at t), then by prediction time and row. A finish
// goes to on_finish(event, record); a prediction compares the state's features with
// `batch`'s row bit for bit, then goes to on_predicted(event, record). Returns how many
// rows compared equal, stopping (a test failure) at the first that does not.
template <class Finish, class Predicted>
std::size_t replay_and_compare(const JobTable& t, HistoryState& state, const HistoryMatrix& batch,
                               std::vector<HistoryEvent> events, Finish on_finish, Predicted on_predicted) {
  std::sort(events.begin(), events.end(), [](const HistoryEvent& a, const HistoryEvent& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.at != b.at ? a.at < b.at : a.row < b.row;
  });
  JobRecord r;
  std::vector<float> out(state.width());
  std::size_t compared = 0;
  for (const auto& e : events) {
    t.record(e.row, r);
    if (e.kind == 0) {
      on_finish(e, r);
      continue;
    }
    state.features(r, out.data());
    if (!same_bits(out.data(), batch.row(e.row), state.width())) {
      ADD_FAILURE() << "features of row " << e.row << " differ from the batch walk's";
      return compared;
    }
    on_predicted(e, r);
    ++compared;
  }
  return compared;
}

// A table's history configuration for predictions at match time (a job's start).
// With `censored_rates`, also the censored work-rate statistics.
inline HistoryConfig match_time_config(const JobTable& t, bool censored_rates = false) {
  HistoryConfig cfg = HistoryConfig::for_table(t);
  cfg.at = PredictionTime::Match;
  cfg.censored_rates = censored_rates;
  return cfg;
}

}  // namespace ttlpred::test
