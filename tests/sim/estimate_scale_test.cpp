// The backfilling estimate's scale: parsed from --estimate-scale, applied to the model's
// answers, and chosen by replaying ended jobs only.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "sim/batch_scheduler.hpp"
#include "sim/estimate_scale.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {
namespace {

BatchJob job(std::int64_t id, double submit, int procs, double run, double expected, double safe) {
  return {.id = id, .submit = submit, .run = run, .request = 1000, .procs = procs, .model_expected = expected, .model_safe = safe};
}

BatchResult run(const std::vector<BatchJob>& jobs, EstimateScaleOptions scale, BatchPolicy p = BatchPolicy::EasyPlusPlus) {
  BatchConfig c{p, Estimator::Model, 4, nullptr, {}};
  c.scale = std::move(scale);
  return simulate_batch(jobs, c);
}

EstimateScaleOptions fixed(double c) {
  EstimateScaleOptions o;
  o.candidates = {c};
  return o;
}

TEST(EstimateScale, ParsesAutoAndAFixedScale) {
  EXPECT_EQ(estimate_scale_from_text("auto").candidates, (std::vector<double>{1, 0.5, 0.25, 0.125, 0.0625}));
  EXPECT_TRUE(estimate_scale_from_text("auto").chosen());
  EXPECT_EQ(estimate_scale_from_text("0.25").candidates, (std::vector<double>{0.25}));
  EXPECT_FALSE(estimate_scale_from_text("1").chosen());
  for (const char* bad : {"", "0", "-0.5", "1.5", "nan", "inf", "0.5x", "half"})
    EXPECT_THROW(estimate_scale_from_text(bad), Error) << bad;
}

// Hand-computed choices of the pooled one-standard-error rule.
TEST(EstimateScale, PooledReplaysPickTheLeastAggressiveScaleWithinOneStandardError) {
  ReplayEvidence e(3);
  EXPECT_EQ(e.pick(), 0u);  // no evidence: the first candidate
  // Candidate 0 minus candidate 2 per job: 1, 2, 3, 6 (mean 3, standard error
  // sqrt(14 / 3 / 4) = 1.08): 0 is not within it; candidate 1 minus 2: 0, 1, 0, 1 (mean 0.5,
  // standard error sqrt(1 / 3 / 4) = 0.29): neither; candidate 2 is the lowest.
  e.add({{2, 4, 6, 10}, {1, 3, 3, 5}, {1, 2, 3, 4}});
  EXPECT_EQ(e.jobs(), 4u);
  EXPECT_EQ(e.pick(), 2u);
  // A second replay where the three tie on four more jobs: the pooled 1 minus 2 is 0, 1, 0, 1,
  // 0, 0, 0, 0 (mean 0.25, standard error sqrt((2 - 8 x 0.0625) / 7 / 8) = 0.164): still 2;
  // 0 minus 2: 1, 2, 3, 6, 0, 0, 0, 0 (mean 1.5 > its standard error 0.76).
  e.add({{7, 7, 7, 7}, {7, 7, 7, 7}, {7, 7, 7, 7}});
  EXPECT_EQ(e.pick(), 2u);
  // A replay where candidate 1 is better than 2 by 1 on two jobs: pooled sums 0: 22 + 28 + 18 =
  // 68, 1: 12 + 28 + 2 = 42, 2: 10 + 28 + 4 = 42 over 10 jobs; 1 and 2 tie, the lowest is the
  // first of them (1); 0 minus 1: 1, 1, 3, 5, 0, 0, 0, 0, 8, 8 (mean 2.6, standard error
  // sqrt((164 - 67.6) / 9 / 10) = 1.04): not within; so 1.
  e.add({{9, 9}, {1, 1}, {2, 2}});
  EXPECT_EQ(e.pick(), 1u);
  EXPECT_THROW(e.add({{1}, {1}}), Error);        // a row short of the candidates
  EXPECT_THROW(e.add({{1}, {1, 2}, {1}}), Error);  // rows of unequal length
}

// R (2 of 4 processors, runs 100 s, expected 100 s, safe TTL 400 s) starts at 0; H needs all 4
// at 1; C (2 processors, runs 20 s, expected 150 s) arrives at 60. At scale 1, R's estimate
// holds the reservation at 100 and C (60 + 150 > 100, no extra processors) waits for H: it
// starts at 110. At scale 1/2 R outlived its 50 s estimate at 50 and was corrected to its safe
// TTL (400 s), so C (60 + 75 <= 400) is backfilled on arrival and ends before R: H is not delayed.
std::vector<BatchJob> r_h_c(double offset = 0) {
  return {job(1, offset, 2, 100, 100, 400), job(2, offset + 1, 4, 10, 10, 40), job(3, offset + 60, 2, 20, 150, 600)};
}

TEST(EstimateScale, AFixedScaleScalesTheModelsEstimateNotItsSafeTtl) {
  const BatchResult one = run(r_h_c(), fixed(1));
  EXPECT_EQ(one.outcomes[2].start, 110);
  EXPECT_EQ(one.outcomes[1].start, 100);
  EXPECT_EQ(one.metrics.estimate_scale_replays, 0u);
  const BatchResult half = run(r_h_c(), fixed(0.5));
  EXPECT_EQ(half.outcomes[2].start, 60);
  EXPECT_EQ(half.outcomes[1].start, 100);  // C ended at 80: the reservation held
  EXPECT_EQ(half.outcomes[0].corrections, 1);
  EXPECT_DOUBLE_EQ(half.metrics.estimate_scale, 0.5);
  EXPECT_DOUBLE_EQ(half.metrics.mean_estimate_scale, 0.5);
}

// The same three jobs every 1,000 s for six weeks: every replay finds 1/2 and below better
// than 1 by far more than a standard error, and equal to each other, so the least aggressive
// of them (1/2) is chosen, from the first week's replay on.
TEST(EstimateScale, AutoChoosesTheLeastAggressiveScaleThatReplaysBest) {
  std::vector<BatchJob> jobs;
  for (int k = 0; k < 6 * 7 * 86400 / 1000; ++k)
    for (const BatchJob& b : r_h_c(1000.0 * k)) {
      jobs.push_back(b);
      jobs.back().id = static_cast<std::int64_t>(jobs.size());
    }
  const BatchResult r = run(jobs, estimate_scale_from_text("auto"));
  EXPECT_DOUBLE_EQ(r.metrics.estimate_scale, 0.5);
  EXPECT_EQ(r.metrics.estimate_scale_replays, 5u);  // at 7, 14, 21, 28 and 35 days
  // Before the first choice at scale 1, after it at 1/2.
  EXPECT_EQ(r.outcomes[2].start - jobs[2].submit, 50);
  EXPECT_EQ(r.outcomes.back().start - jobs.back().submit, 0);
}

// Nothing from the future: two streams that differ only in the run times of jobs that end
// after time T (each lengthened, so it still ends after T) give the same schedule before T,
// replays and their chosen scales included.
TEST(EstimateScale, AutoReplaysOnlyJobsThatHaveEnded) {
  std::mt19937_64 rng(7);
  std::vector<BatchJob> jobs;
  double t = 0;
  while (t < 8 * 7 * 86400.0) {
    t += std::exponential_distribution<double>(1.0 / 300)(rng);
    const double run = std::exponential_distribution<double>(1.0 / 240)(rng) + 1;
    const double expected = run * std::exp(std::normal_distribution<double>(0, 1)(rng));
    jobs.push_back({.id = static_cast<std::int64_t>(jobs.size()), .submit = t, .run = run, .request = run * 8,
                    .procs = 1 + static_cast<int>(rng() % 4), .model_expected = expected, .model_safe = 3 * expected});
  }
  const EstimateScaleOptions autos = estimate_scale_from_text("auto");
  const BatchResult a = run(jobs, autos);
  ASSERT_GE(a.metrics.estimate_scale_replays, 5u);
  const double cut = 5 * 7 * 86400.0 + 1000;
  std::vector<BatchJob> changed = jobs;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (a.outcomes[j].end > cut) changed[j].run = jobs[j].run * 1.5, changed[j].request = jobs[j].request * 1.5;
  const BatchResult b = run(changed, autos);
  std::size_t compared = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j)
    if (a.outcomes[j].start < cut) {
      EXPECT_EQ(a.outcomes[j].start, b.outcomes[j].start) << "job " << j;
      ++compared;
    }
  EXPECT_GT(compared, jobs.size() / 2);
}

TEST(EstimateScale, RefusesAScaleOutsideZeroToOne) {
  EXPECT_THROW(run(r_h_c(), fixed(0)), Error);
  EXPECT_THROW(run(r_h_c(), fixed(2)), Error);
}

}  // namespace
}  // namespace ttlpred::sim
