// The protocol's chronological split on a table small enough to follow by hand: which jobs
// are dropped and why, the stable submit order (ties keep the trace's order), the training
// count floor(fraction x kept), and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "pipeline/split.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

struct Row {
  double id, submit, wall, request;
};

JobTable table_of(const std::vector<Row>& rows) {
  JobTable t;
  JobRecord r;
  for (const Row& x : rows) {
    r.clear();
    r[Field::JobId] = x.id;
    r[Field::SubmitTime] = x.submit;
    r[Field::WallTime] = x.wall;
    r[Field::RequestedTtl] = x.request;
    t.append(r);
  }
  return t;
}

TEST(Split, DropsByReasonAndKeepsTheSubmitOrderStable) {
  const double nan = std::nan("");
  const JobTable t = table_of({
      {1, 300, 10, 60},    // kept
      {2, 100, 10, 60},    // kept, first in submit order
      {3, 200, 0, 60},     // ran 0 s: no run time
      {4, 200, 10, 60},    // kept; ties with 5 and 6 at 200 keep the trace's order
      {5, 200, 10, 60},    // kept
      {6, 200, 10, nan},   // no request (the trace has requests)
      {7, nan, 10, 60},    // no submit time: counted with the run-time drops
      {8, 150, nan, 60},   // run time unknown
      {9, 200, 5, 60},     // kept
      {10, 50, 10, 0},     // request 0: no request
  });
  const ChronologicalSplit s = chronological_split(t, 0.5);
  EXPECT_EQ(s.dropped_no_runtime, 3u);  // jobs 3, 7, 8
  EXPECT_EQ(s.dropped_no_request, 2u);  // jobs 6, 10
  ASSERT_EQ(s.jobs.rows(), 5u);
  std::vector<double> ids;
  for (double v : s.jobs.num(Field::JobId)) ids.push_back(v);
  EXPECT_EQ(ids, (std::vector<double>{2, 4, 5, 9, 1}));
  EXPECT_EQ(s.trace_rows, (std::vector<std::size_t>{1, 3, 4, 8, 0}));
  EXPECT_EQ(s.train_rows, 2u);  // floor(0.5 x 5)
  EXPECT_EQ(s.scored_rows(), 3u);
  EXPECT_EQ(s.trace->rows(), 10u);  // the whole trace stays for the history features
  EXPECT_EQ(chronological_split(t, 1.0).train_rows, 5u);
  EXPECT_EQ(chronological_split(t, 0.99).train_rows, 4u);
}

TEST(Split, WithoutAnyRequestNoJobIsDroppedForLackingOne) {
  const double nan = std::nan("");
  const ChronologicalSplit s = chronological_split(table_of({{1, 10, 5, nan}, {2, 5, 5, nan}}), 0.5);
  EXPECT_EQ(s.dropped_no_request, 0u);
  EXPECT_EQ(s.jobs.rows(), 2u);
  EXPECT_EQ(s.jobs.num(Field::JobId)[0], 2);
}

TEST(Split, Refusals) {
  const JobTable t = table_of({{1, 10, 5, 60}});
  for (double f : {0.0, -0.5, 1.5, std::nan("")}) {
    try {
      chronological_split(t, f);
      FAIL() << f << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--split must be in (0, 1]"), std::string::npos) << e.what();
    }
  }
  try {
    chronological_split(table_of({{1, 10, 0, 60}}), 0.8);
    FAIL() << "a trace without an eligible job was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "no job has a run time > 0 and a submit time: nothing to train or score");
  }
  // A column missing altogether (a CSV header that misspells it) is named.
  const double nan = std::nan("");
  for (const auto& [rows, want] :
       {std::pair<std::vector<Row>, std::string>{{{1, 10, nan, 60}, {2, 11, nan, 60}}, "no job has a run time: the trace has no wall_s values"},
        {{{1, nan, 5, 60}}, "no job has a submit time: the trace has no submit_time values"}}) {
    try {
      chronological_split(table_of(rows), 0.8);
      FAIL() << want;
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind(want, 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("--map"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ttlpred
