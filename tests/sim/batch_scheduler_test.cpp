// Hand-computed schedules of the batch schedulers (4-processor machine unless said).
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <random>
#include <vector>

#include "sim/batch_scheduler.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {
namespace {

BatchJob job(std::int64_t id, double submit, int procs, double run, double request, std::uint32_t user = 0) {
  return {.id = id, .submit = submit, .run = run, .request = request, .procs = procs, .user = user};
}

BatchResult run(const std::vector<BatchJob>& jobs, BatchPolicy p, Estimator e = Estimator::Request, int procs = 4) {
  return simulate_batch(jobs, BatchConfig{p, e, procs, nullptr, {}});
}

// A holds 3 of 4 processors until 100; B needs all 4, so it is reserved at 100 with no extra
// processors; C takes 1 processor for 50 s and asks for `c_request`.
std::vector<BatchJob> a_b_c(double c_request) {
  return {job(1, 0, 3, 100, 100), job(2, 1, 4, 50, 50), job(3, 2, 1, 50, c_request)};
}

// C waits for B: B starts at its reservation (100), C after it, nothing backfilled.
void expect_c_after_b(const BatchResult& r) {
  EXPECT_EQ(r.outcomes[1].start, 100);
  EXPECT_EQ(r.outcomes[2].start, 150);
  EXPECT_EQ(r.metrics.backfilled, 0u);
}

// C with request 50 ends by 52 <= 100: it must be backfilled at 2.
TEST(BatchScheduler, EasyBackfillsAJobThatEndsBeforeTheReservation) {
  const BatchResult r = run(a_b_c(50), BatchPolicy::Easy);
  EXPECT_EQ(r.outcomes[0].start, 0);
  EXPECT_EQ(r.outcomes[2].start, 2);
  EXPECT_EQ(r.outcomes[2].end, 52);
  EXPECT_EQ(r.outcomes[1].start, 100);  // the reservation held
  EXPECT_EQ(r.outcomes[1].end, 150);
  EXPECT_EQ(r.metrics.backfilled, 1u);
  // Waits 0, 99, 0; bounded slowdowns 1, (99+50)/50, 1.
  EXPECT_DOUBLE_EQ(r.metrics.mean_wait_s, 33);
  EXPECT_DOUBLE_EQ(r.metrics.max_wait_s, 99);
  EXPECT_DOUBLE_EQ(r.metrics.avg_bounded_slowdown, (1 + 149.0 / 50 + 1) / 3);
  EXPECT_DOUBLE_EQ(r.metrics.makespan_s, 150);
  EXPECT_DOUBLE_EQ(r.metrics.utilization, (300.0 + 200 + 50) / (4 * 150));
}

TEST(BatchScheduler, FcfsNeverOvertakesTheHead) { expect_c_after_b(run(a_b_c(50), BatchPolicy::Fcfs)); }

// Same, but C requests 200: by its request it would end at 202 > 100 and there are no extra
// processors, so backfilling it would delay B. It must wait for B.
TEST(BatchScheduler, EasyDoesNotBackfillAJobThatWouldDelayTheReservation) {
  const std::vector<BatchJob> jobs = a_b_c(200);
  expect_c_after_b(run(jobs, BatchPolicy::Easy));
  // With true run times (50), C fits before the shadow time again.
  const BatchResult oracle = run(jobs, BatchPolicy::EasyPlusPlus, Estimator::Oracle);
  EXPECT_EQ(oracle.outcomes[2].start, 2);
  EXPECT_EQ(oracle.outcomes[1].start, 100);
}

// A job that only uses processors the head will not need ("extra") may run past the
// shadow time: machine 6, A holds 4 until 100, B needs 4 (extra at 100: 6 - 4 = 2).
TEST(BatchScheduler, EasyBackfillsIntoExtraProcessors) {
  const std::vector<BatchJob> jobs = {job(1, 0, 4, 100, 100), job(2, 1, 4, 50, 50), job(3, 2, 2, 500, 500)};
  const BatchResult r = run(jobs, BatchPolicy::Easy, Estimator::Request, 6);
  EXPECT_EQ(r.outcomes[2].start, 2);
  EXPECT_EQ(r.outcomes[1].start, 100);
}

// EASY++ tries the shortest estimate first: with one free processor, C (request 90) and D
// (request 40) both fit before the shadow time at 100, but only one processor is free; D
// goes first although it arrived later.
TEST(BatchScheduler, EasyPlusPlusBackfillsShortestFirst) {
  const std::vector<BatchJob> jobs = {job(1, 0, 3, 100, 100), job(2, 1, 4, 50, 50), job(3, 2, 1, 90, 90),
                                      job(4, 2, 1, 40, 40)};
  const BatchResult easy = run(jobs, BatchPolicy::Easy);
  EXPECT_EQ(easy.outcomes[2].start, 2);   // arrival order: C
  const BatchResult pp = run(jobs, BatchPolicy::EasyPlusPlus);
  EXPECT_EQ(pp.outcomes[3].start, 2);     // shortest first: D
  EXPECT_EQ(pp.outcomes[3].end, 42);
}

// The model's expected time (50) runs out at 50: corrected to its safe TTL (80), which runs
// out at 80: corrected to the request (1000). The job still ends at its real 100 s.
TEST(BatchScheduler, ModelEstimateIsCorrectedToSafeTtlThenRequest) {
  BatchJob a = job(1, 0, 4, 100, 1000);
  a.model_expected = 50;
  a.model_safe = 80;
  const BatchResult r = run({a}, BatchPolicy::EasyPlusPlus, Estimator::Model);
  EXPECT_EQ(r.outcomes[0].corrections, 2);
  EXPECT_EQ(r.metrics.corrections, 2u);
  EXPECT_EQ(r.outcomes[0].end, 100);
}

// last2: the user's third job is estimated at the mean of the first two runs (10 and 30 ->
// 20), so with one free processor it backfills before a reservation at 100 that its request
// (500) would miss.
TEST(BatchScheduler, Last2UsesTheMeanOfTheUsersLastTwoRuns) {
  const std::vector<BatchJob> jobs = {job(1, 0, 1, 10, 500, 7), job(2, 0, 1, 30, 500, 7), job(3, 40, 3, 100, 100, 1),
                                      job(4, 41, 4, 50, 50, 2),  job(5, 42, 1, 20, 500, 7)};
  const BatchResult req = run(jobs, BatchPolicy::Easy, Estimator::Request);
  EXPECT_EQ(req.outcomes[4].start, 190);  // after job 4 (140..190)
  const BatchResult l2 = run(jobs, BatchPolicy::Easy, Estimator::Last2);
  EXPECT_EQ(l2.outcomes[4].start, 42);
  EXPECT_EQ(l2.outcomes[3].start, 140);
}

// A trace run longer than its request is killed at the request.
TEST(BatchScheduler, KillsAtTheRequest) {
  const BatchResult r = run({job(1, 0, 2, 300, 200)}, BatchPolicy::Easy);
  EXPECT_EQ(r.outcomes[0].end, 200);
  EXPECT_TRUE(r.outcomes[0].killed_at_request);
}

// Every job starts once, after its submission, and runs exactly min(run, request); the
// processor-hours used are the sum of those.
TEST(BatchScheduler, ConservesJobsAndWork) {
  std::vector<BatchJob> jobs;
  double expected_work = 0;
  for (int i = 0; i < 300; ++i) {
    const double run = 10 + (i * 37) % 400, request = run * (1 + (i % 5)) - (i % 7 == 0 ? run / 2 : 0);
    jobs.push_back(job(i, i * 13.0, 1 + (i * 7) % 16, run, request, static_cast<std::uint32_t>(i % 9)));
    expected_work += std::min(run, request) * jobs.back().procs;
  }
  for (auto policy : {BatchPolicy::Fcfs, BatchPolicy::Easy, BatchPolicy::EasyPlusPlus})
    for (auto est : {Estimator::Request, Estimator::Last2, Estimator::Oracle}) {
      const BatchResult r = run(jobs, policy, est, 16);
      double work = 0;
      for (std::size_t j = 0; j < jobs.size(); ++j) {
        EXPECT_GE(r.outcomes[j].start, jobs[j].submit);
        EXPECT_DOUBLE_EQ(r.outcomes[j].end - r.outcomes[j].start, std::min(jobs[j].run, jobs[j].request));
        work += (r.outcomes[j].end - r.outcomes[j].start) * jobs[j].procs;
      }
      EXPECT_NEAR(work, expected_work, 1e-6);
      EXPECT_NEAR(r.metrics.cpu_hours_used, expected_work / 3600, 1e-9);
    }
}

// The oracle's overestimate: never short of the run time (no correction on any job), the
// same schedule for the same seed, another for another seed, the exact oracle at 0.
TEST(BatchScheduler, OracleOverestimateIsSeededAndNeverShort) {
  std::vector<BatchJob> jobs;
  for (int i = 0; i < 300; ++i) {
    const double run = 10 + (i * 37) % 400, request = run * (1 + (i % 5)) - (i % 7 == 0 ? run / 2 : 0);
    jobs.push_back(job(i, i * 13.0, 1 + (i * 7) % 16, run, request, static_cast<std::uint32_t>(i % 9)));
  }
  auto sim = [&](double factor, std::uint64_t seed) {
    BatchConfig c{BatchPolicy::EasyPlusPlus, Estimator::Oracle, 16, nullptr, {}};
    c.oracle_overestimate = factor;
    c.oracle_seed = seed;
    return simulate_batch(jobs, c);
  };
  const BatchResult exact = run(jobs, BatchPolicy::EasyPlusPlus, Estimator::Oracle, 16);
  const BatchResult zero = sim(0, 7), a = sim(0.5, 1), again = sim(0.5, 1), other = sim(0.5, 2);
  EXPECT_EQ(a.metrics.corrections, 0u);
  EXPECT_EQ(other.metrics.corrections, 0u);
  bool differs = false, moved = false;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    EXPECT_EQ(zero.outcomes[j].start, exact.outcomes[j].start);
    EXPECT_EQ(a.outcomes[j].start, again.outcomes[j].start);
    differs = differs || a.outcomes[j].start != other.outcomes[j].start;
    moved = moved || a.outcomes[j].start != exact.outcomes[j].start;
  }
  EXPECT_TRUE(differs);
  EXPECT_TRUE(moved);
  BatchConfig bad{BatchPolicy::Easy, Estimator::Oracle, 16, nullptr, {}};
  bad.oracle_overestimate = -0.1;
  EXPECT_THROW(simulate_batch(jobs, bad), Error);
}

// Never above the request: C (50 s, request 90) overestimated by up to 100x still ends by
// its request, 92 <= the reservation at 100, so it is backfilled at 2 whatever the draw.
TEST(BatchScheduler, OracleOverestimateStopsAtTheRequest) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    BatchConfig c{BatchPolicy::Easy, Estimator::Oracle, 4, nullptr, {}};
    c.oracle_overestimate = 100;
    c.oracle_seed = seed;
    const BatchResult r = simulate_batch(a_b_c(90), c);
    EXPECT_EQ(r.outcomes[2].start, 2) << "seed " << seed;
    EXPECT_EQ(r.outcomes[1].start, 100) << "seed " << seed;
  }
}

TEST(BatchScheduler, RefusesAJobLargerThanTheMachine) {
  EXPECT_THROW(run({job(1, 0, 5, 10, 10)}, BatchPolicy::Easy), Error);
}

// A source that answers from a table (nullopt where it has none) and checks the protocol:
// simulated time never goes back between the calls, each job is asked once and ends once.
class CheckingSource final : public EstimateSource {
 public:
  explicit CheckingSource(std::vector<std::optional<Estimate>> answers) : answers_(std::move(answers)) {
    asked.assign(answers_.size(), 0);
    ended.assign(answers_.size(), -1);
  }
  std::optional<Estimate> estimate(std::size_t job, double t) override {
    EXPECT_GE(t, now) << "asked about job " << job << " at " << t << " after an outcome at " << now;
    now = std::max(now, t);
    ++asked[job];
    return answers_[job];
  }
  void finished(std::size_t job, double t, double run_s) override {
    EXPECT_GE(t, now);
    now = std::max(now, t);
    EXPECT_EQ(ended[job], -1) << "job " << job << " ended twice";
    ended[job] = run_s;
  }
  double now = -1;
  std::vector<int> asked;
  std::vector<double> ended;

 private:
  std::vector<std::optional<Estimate>> answers_;
};

// The online estimator: a job the source answers gets its estimate and, when it outlives
// it, the safe TTL as the first correction; a job it does not answer gets the user's last
// two. A (user 0, 10 s of a 100 s request) and B (user 0, 20 s) end; C (user 0) is not
// answered: last two = 15 s, corrected to the request when it outlives them. D is answered
// 5 s (safe 40 s) and runs 30 s: one correction, to 40 s.
TEST(BatchScheduler, OnlineEstimatesComeFromTheSourceWithTheLastTwoAsFallback) {
  const std::vector<BatchJob> jobs = {job(1, 0, 1, 10, 100), job(2, 0, 1, 20, 100), job(3, 50, 1, 30, 100),
                                      job(4, 50, 1, 30, 100)};
  CheckingSource src({std::nullopt, std::nullopt, std::nullopt, EstimateSource::Estimate{5, 40}});
  BatchConfig c{BatchPolicy::Easy, Estimator::Online, 4, nullptr, {}};
  c.source = &src;
  const BatchResult r = simulate_batch(jobs, c);
  EXPECT_EQ(src.asked, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_EQ(src.ended, (std::vector<double>{10, 20, 30, 30}));
  EXPECT_EQ(r.outcomes[2].corrections, 1);  // 15 s -> the request
  EXPECT_EQ(r.outcomes[3].corrections, 1);  // 5 s -> 40 s
  c.source = nullptr;
  EXPECT_THROW(simulate_batch(jobs, c), Error);
}

// On a random busy stream, the source is never told of an end after it was asked at a later
// time (nothing from the future), and every job is asked once and ends once.
TEST(BatchScheduler, OnlineSourceSeesOnlyThePast) {
  std::mt19937_64 rng(3);
  std::vector<BatchJob> jobs;
  double t = 0;
  for (int i = 0; i < 2000; ++i) {
    t += std::exponential_distribution<double>(1.0 / 30)(rng);
    const double run = std::exponential_distribution<double>(1.0 / 600)(rng);
    jobs.push_back(job(i, t, 1 + static_cast<int>(rng() % 16), run, run * (1 + rng() % 4) + 1, static_cast<std::uint32_t>(rng() % 20)));
  }
  std::vector<std::optional<EstimateSource::Estimate>> answers(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); i += 2) answers[i] = EstimateSource::Estimate{jobs[i].run * 0.5, jobs[i].run * 2};
  for (const BatchPolicy p : {BatchPolicy::Fcfs, BatchPolicy::Easy, BatchPolicy::EasyPlusPlus}) {
    CheckingSource src(answers);
    BatchConfig c{p, Estimator::Online, 64, nullptr, {}};
    c.source = &src;
    simulate_batch(jobs, c);
    EXPECT_TRUE(std::all_of(src.asked.begin(), src.asked.end(), [](int n) { return n == 1; }));
    EXPECT_TRUE(std::all_of(src.ended.begin(), src.ended.end(), [](double e) { return e >= 0; }));
  }
}

}  // namespace
}  // namespace ttlpred::sim
