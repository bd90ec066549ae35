// predict's history rule (pipeline/predict_history.hpp) on a model trained by the program: a
// job after the training period is answered from the model's state plus the trace's later
// jobs, alone or beside training-period jobs; the training period's own jobs, and a trace that
// begins with the model's training jobs, are replayed from the trace alone.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "data/trace_readers.hpp"
#include "pipeline/predict_history.hpp"
#include "pipeline/split.hpp"
#include "predict/predictor.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

// 3000 synthetic ALICE jobs, a small model trained on the first 80 %.
struct Trained {
  std::string trace, model, out;
  int rc = 0;
};
const Trained& trained() {
  static const Trained t = [] {
    Trained r;
    const std::string dir = test::temp_dir();
    r.trace = dir + "/alice.csv";
    r.model = dir + "/alice.ttlp";
    r.rc = test::run_cli("generate --jobs 3000 --seed 5 --out '" + r.trace + "'", &r.out);
    if (r.rc == 0)
      r.rc = test::run_cli("train --data '" + r.trace + "' --split 0.8 --epochs 2 --hidden 32,32 --quiet --out '" +
                               r.model + "'", &r.out);
    return r;
  }();
  return t;
}

#define NEED_MODEL()                                                                    \
  if (trained().rc == 127) GTEST_SKIP() << "build the ttlpred target to run this test"; \
  ASSERT_EQ(trained().rc, 0) << trained().out

// Values as bits, so that equal NaNs (unknown features) compare equal.
std::vector<std::uint32_t> bits(const float* v, std::size_t n) {
  std::vector<std::uint32_t> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = std::bit_cast<std::uint32_t>(v[i]);
  return b;
}
std::vector<std::uint32_t> row_of(const HistoryMatrix& m, std::size_t r) { return bits(m.row(r), m.width); }
std::vector<std::uint32_t> all_of(const HistoryMatrix& m) { return bits(m.values.data(), m.values.size()); }

struct Fixture {
  Predictor predictor = Predictor::load(trained().model, {});
  JobTable trace;
  ChronologicalSplit split;
  Fixture() {
    ReadReport report;
    trace = read_trace(trained().trace, report);
    split = chronological_split(trace, 0.8);
  }
  // Eligible rows [from, to) of the trace, in submit order, and `extra` after them.
  JobTable rows(std::size_t from, std::size_t to, std::vector<std::size_t> extra = {}) const {
    std::vector<std::size_t> r;
    for (std::size_t i = from; i < to; ++i) r.push_back(i);
    r.insert(r.end(), extra.begin(), extra.end());
    return split.jobs.select(r);
  }
};

TEST(PredictHistory, ATraceThatBeginsWithTheTrainingJobsIsReplayedFromItsStartAsEval) {
  NEED_MODEL();
  const Fixture f;
  const PredictHistory h = predict_history(f.predictor, f.trace);
  EXPECT_EQ(h.source, HistorySource::TraceFromStart);
  EXPECT_GT(h.training_period_rows, 2300u);  // of the 2,400 training jobs, those not tied with the last
  EXPECT_EQ(all_of(h.features), all_of(compute_history(f.trace, f.predictor.encoder().history_config())));
}

TEST(PredictHistory, LaterJobsAloneStartFromTheModelsState) {
  NEED_MODEL();
  const Fixture f;
  const JobTable later = f.rows(f.split.train_rows + 10, f.split.jobs.rows());
  const PredictHistory h = predict_history(f.predictor, later);
  EXPECT_EQ(h.source, HistorySource::ModelState);
  EXPECT_EQ(h.training_period_rows, 0u);
  HistoryState state = f.predictor.initial_history();
  EXPECT_GT(state.observed(), 2000u);
  EXPECT_EQ(all_of(h.features), all_of(compute_history(later, state)));
}

TEST(PredictHistory, ALaterJobGetsTheSameAnswerAloneOrBesideTrainingPeriodJobs) {
  NEED_MODEL();
  const Fixture f;
  for (std::size_t offset : {10u, 200u, 500u}) {
    const std::size_t job = f.split.train_rows + offset;
    const JobTable alone = f.rows(job, job + 1);
    const JobTable beside = f.rows(1000, 1500, {job});  // 500 jobs from the middle of the training period
    const PredictHistory a = predict_history(f.predictor, alone);
    const PredictHistory b = predict_history(f.predictor, beside);
    ASSERT_EQ(a.source, HistorySource::ModelState);
    ASSERT_EQ(b.source, HistorySource::Both);
    EXPECT_EQ(b.training_period_rows, 500u);
    EXPECT_EQ(row_of(b.features, 500), row_of(a.features, 0)) << "job " << job;
    const std::vector<std::size_t> one = {0}, last = {500};
    const Prediction pa = f.predictor.predict_rows(alone, one, a.features).at(0);
    const Prediction pb = f.predictor.predict_rows(beside, last, b.features).at(0);
    EXPECT_EQ(pa.expected_wall_s, pb.expected_wall_s);
    EXPECT_EQ(pa.safe_ttl_s, pb.safe_ttl_s);
    // What the rule replaced: the partial trace replayed alone, which forgets the model's state.
    const HistoryMatrix trace_alone = compute_history(beside, f.predictor.encoder().history_config());
    EXPECT_NE(row_of(trace_alone, 500), row_of(a.features, 0)) << "job " << job;
    // The training period's own jobs: from the trace alone (the state holds their outcomes).
    for (std::size_t r : {0u, 250u, 499u}) EXPECT_EQ(row_of(b.features, r), row_of(trace_alone, r));
  }
}

TEST(PredictHistory, LaterJobsOfTheTraceThatEndedBeforeAJobAreAddedToTheModelsState) {
  NEED_MODEL();
  const Fixture f;
  // The later jobs beside training-period jobs: each later job sees the state plus the later
  // jobs that ended before it, exactly as the later jobs alone do.
  const std::size_t from = f.split.train_rows + 5, to = f.split.jobs.rows();
  std::vector<std::size_t> tail;
  for (std::size_t i = from; i < to; ++i) tail.push_back(i);
  const PredictHistory alone = predict_history(f.predictor, f.rows(from, to));
  const PredictHistory beside = predict_history(f.predictor, f.rows(2000, 2100, tail));
  ASSERT_EQ(beside.source, HistorySource::Both);
  for (std::size_t k = 0; k < tail.size(); ++k) ASSERT_EQ(row_of(beside.features, 100 + k), row_of(alone.features, k)) << k;
}

}  // namespace
}  // namespace ttlpred
