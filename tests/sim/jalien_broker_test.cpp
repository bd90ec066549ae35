// Hand-computed runs of the JAliEn-style broker. Pilots start with age 0 (initial_age_s) so
// that every time left is known: lifetime - elapsed - 600 s.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "sim/jalien_broker.hpp"
#include "sim/online_ttl.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {
namespace {

GridJob job(std::int64_t id, double submit, double work, double ttl, int cores = 1) {
  return {.id = id, .submit = submit, .work = work, .cores = cores, .ttl = ttl};
}

GridConfig config(std::vector<SlotKind> slots) {
  GridConfig c;
  c.slots = std::move(slots);
  c.initial_age_s = 0;
  c.pilot_gap_mean_s = 1e9;  // emptied slots stay empty within these tests
  return c;
}

// A job that runs 1000 s with a TTL of 500 s is killed at 500 + 300 = 800 s (ERROR_E) and
// resubmitted; the same pilot takes it again at 800 and it is killed again at 1600; with one
// retry allowed it then fails. The pilot, left with nothing, exits at 1600 with
// 86400 - 1600 s of its 8 cores unused.
TEST(JalienBroker, KillsPastTtlPlusMarginAndResubmits) {
  GridConfig c = config({SlotKind{8, 1, 86400}});
  c.max_retries = 1;
  const GridResult r = simulate_jalien({job(1, 0, 1000, 500)}, c);
  const GridJobOutcome& o = r.outcomes[0];
  EXPECT_EQ(o.status, GridStatus::Failed);
  EXPECT_EQ(o.attempts, 2);
  EXPECT_EQ(o.kills, 2);
  EXPECT_DOUBLE_EQ(o.start, 800);
  EXPECT_DOUBLE_EQ(o.end, 1600);
  EXPECT_EQ(r.metrics.kills, 2u);
  EXPECT_EQ(r.metrics.resubmissions, 1u);
  EXPECT_EQ(r.metrics.failed, 1u);
  EXPECT_DOUBLE_EQ(r.metrics.cpu_hours_lost_to_kills, 1600.0 / 3600);
  EXPECT_DOUBLE_EQ(r.metrics.cpu_hours_used, 1600.0 / 3600);
  // Nothing was waiting when it left: the slot was handed back, not wasted.
  EXPECT_DOUBLE_EQ(r.metrics.wasted_core_hours, 0);
  EXPECT_DOUBLE_EQ(r.metrics.idle_exit_core_hours, 8 * (86400.0 - 1600) / 3600);
}

// A resubmission takes the job's retry TTL: killed at 800 with TTL 500, it runs again with
// TTL 2000 from 800 and completes at 1800.
TEST(JalienBroker, ResubmissionUsesTheRetryTtl) {
  GridJob j = job(1, 0, 1000, 500);
  j.retry_ttl = 2000;
  const GridResult r = simulate_jalien({j}, config({SlotKind{8, 1, 86400}}));
  EXPECT_EQ(r.outcomes[0].status, GridStatus::Done);
  EXPECT_EQ(r.outcomes[0].attempts, 2);
  EXPECT_DOUBLE_EQ(r.outcomes[0].start, 800);
  EXPECT_DOUBLE_EQ(r.outcomes[0].end, 1800);
  EXPECT_DOUBLE_EQ(r.metrics.cpu_hours_lost_to_kills, 800.0 / 3600);
  EXPECT_DOUBLE_EQ(r.metrics.cpu_hours_used, 1800.0 / 3600);
}

// The same job with a TTL above its run time completes; the oracle's TTL (run + 300) too.
TEST(JalienBroker, CompletesWithinTtl) {
  for (bool oracle : {false, true}) {
    GridConfig c = config({SlotKind{8, 1, 86400}});
    c.oracle = oracle;
    const GridResult r = simulate_jalien({job(1, 0, 1000, 2000)}, c);
    EXPECT_EQ(r.outcomes[0].status, GridStatus::Done);
    EXPECT_DOUBLE_EQ(r.outcomes[0].end, 1000);
    EXPECT_EQ(r.metrics.kills, 0u);
    EXPECT_EQ(r.metrics.completed, 1u);
  }
}

// Slot 0's pilot has 3600 - 600 = 3000 s left, below the job's TTL of 3500 s: the match is
// rejected for TTL and the pilot exits with its whole hour unused. Slot 1's pilot (85800 s
// left) takes the job, runs it 0..100, then exits with 86300 s left.
TEST(JalienBroker, PilotExitsWithTimeLeftWhenNoTtlFits) {
  const GridConfig c = config({SlotKind{1, 1, 3600}, SlotKind{1, 1, 86400}});
  const GridResult r = simulate_jalien({job(1, 0, 100, 3500)}, c);
  EXPECT_EQ(r.metrics.matches_rejected_for_ttl, 1u);
  EXPECT_DOUBLE_EQ(r.metrics.wasted_core_hours_ttl, 1.0);
  EXPECT_DOUBLE_EQ(r.metrics.wasted_core_hours, 1.0);
  EXPECT_DOUBLE_EQ(r.metrics.idle_exit_core_hours, 86300.0 / 3600);
  EXPECT_EQ(r.metrics.early_exits, 2u);
  EXPECT_EQ(r.outcomes[0].status, GridStatus::Done);
  EXPECT_DOUBLE_EQ(r.outcomes[0].end, 100);
  // With a TTL of 2000 s the short-lived pilot takes it and nothing is rejected.
  const GridResult fit = simulate_jalien({job(1, 0, 100, 2000)}, c);
  EXPECT_EQ(fit.metrics.matches_rejected_for_ttl, 0u);
  EXPECT_DOUBLE_EQ(fit.metrics.wasted_core_hours, 0);
  EXPECT_DOUBLE_EQ(fit.metrics.idle_exit_core_hours, (3600.0 - 100) / 3600 + 86400.0 / 3600);
}

// The broker gives the first job in submit order whose TTL fits, skipping one that does not:
// slot 0's pilot (3000 s left, 1 core) skips job 1 (TTL 5000) and takes job 2 (TTL 1000);
// slot 1's pilot (6600 s left) takes job 1.
TEST(JalienBroker, FirstFittingJobInSubmitOrder) {
  const GridConfig c = config({SlotKind{1, 1, 3600}, SlotKind{1, 1, 7200}});
  const GridResult r = simulate_jalien({job(1, 0, 100, 5000), job(2, 0, 100, 1000)}, c);
  EXPECT_EQ(r.outcomes[0].status, GridStatus::Done);
  EXPECT_EQ(r.outcomes[1].status, GridStatus::Done);
  EXPECT_DOUBLE_EQ(r.outcomes[1].start, 0);  // on slot 0, which skipped job 1
  EXPECT_DOUBLE_EQ(r.outcomes[0].start, 0);  // on slot 1
  EXPECT_EQ(r.metrics.matches_rejected_for_ttl, 0u);
}

// A job no slot could ever take is reported, not left waiting forever.
TEST(JalienBroker, ReportsJobsNoPilotCanTake) {
  const GridResult r = simulate_jalien({job(1, 0, 100, 90000)}, config({SlotKind{8, 1, 86400}}));
  EXPECT_EQ(r.outcomes[0].status, GridStatus::NeverMatched);
  EXPECT_EQ(r.metrics.never_matched, 1u);
}

// Every job ends exactly once (done, failed or never matched), and the CPU-hours used are
// the completed run times plus the killed time.
TEST(JalienBroker, ConservesJobsAndCpuTime) {
  std::vector<GridJob> jobs;
  for (int i = 0; i < 2000; ++i)
    jobs.push_back(job(i, i * 30.0, 200 + (i * 7919) % 20000, 2000 + (i * 104729) % 30000, i % 3 == 0 ? 8 : 1));
  GridConfig c;
  c.slots = {SlotKind{8, 1, 86400}, SlotKind{8, 1, 172800}, SlotKind{16, 1, 259200}, SlotKind{64, 1, 86400}};
  c.seed = 7;
  const GridResult r = simulate_jalien(jobs, c);
  EXPECT_EQ(r.metrics.completed + r.metrics.failed + r.metrics.never_matched, jobs.size());
  double done = 0, killed = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    const auto& o = r.outcomes[j];
    if (o.status == GridStatus::Done) {
      EXPECT_NEAR(o.end - o.start, jobs[j].work, 1e-6);
      done += jobs[j].work * jobs[j].cores;
    }
    killed += o.kills * (jobs[j].ttl + 300) * jobs[j].cores;
  }
  EXPECT_GT(r.metrics.kills, 0u);
  EXPECT_NEAR(r.metrics.cpu_hours_done, done / 3600, 1e-6);
  EXPECT_NEAR(r.metrics.cpu_hours_lost_to_kills, killed / 3600, 1e-6);
  EXPECT_NEAR(r.metrics.cpu_hours_used, (done + killed) / 3600, 1e-6);
  // Deterministic for a seed.
  const GridResult again = simulate_jalien(jobs, c);
  EXPECT_DOUBLE_EQ(again.metrics.mean_wait_s, r.metrics.mean_wait_s);
  EXPECT_DOUBLE_EQ(again.metrics.wasted_core_hours, r.metrics.wasted_core_hours);
}

// A TTL source that answers from a table and writes down every call, to check when the broker
// asks and what it posts.
class RecordingSource final : public TtlSource {
 public:
  explicit RecordingSource(std::vector<double> ttl) : ttl_(std::move(ttl)) {}
  std::size_t classes() const override { return 1; }
  void decide(std::size_t job, double t, std::span<double> ttl) override {
    ttl[0] = ttl_[job];
    log.push_back("decide " + std::to_string(job) + " at " + std::to_string(static_cast<int>(t)));
  }
  void matched(std::size_t job, std::size_t h) override {
    log.push_back("matched " + std::to_string(job) + " on " + std::to_string(h));
  }
  void ended(std::size_t job, double t, double ran_s, int cores, bool killed) override {
    log.push_back("ended " + std::to_string(job) + " at " + std::to_string(static_cast<int>(t)) + " ran " +
                  std::to_string(static_cast<int>(ran_s)) + " on " + std::to_string(cores) + (killed ? " killed" : ""));
  }
  void retry_ended(std::size_t job, std::size_t h, double t, double ran_s, bool killed) override {
    log.push_back("retry ended " + std::to_string(job) + " on " + std::to_string(h) + " at " +
                  std::to_string(static_cast<int>(t)) + " ran " + std::to_string(static_cast<int>(ran_s)) +
                  (killed ? " killed" : ""));
  }
  std::vector<std::string> log;

 private:
  std::vector<double> ttl_;
};

// The source is asked when each job is submitted and told when its answered attempt ends:
// job 0 (1000 s, TTL 500) is killed at 800 after running 800 s, what the broker posts; its
// resubmission runs under the retry TTL (2000), which the source did not answer, so its end
// at 1800 is posted as a retry's. Job 1 (submitted at 100, 100 s on 2 cores) waits for the pilot to
// ask again (when job 0 ends, at 800) and ends at 900.
TEST(JalienBroker, AsksTheSourceAtSubmissionAndPostsEachOutcome) {
  GridJob a = job(1, 0, 1000, 0);
  a.retry_ttl = 2000;
  GridJob b = job(2, 100, 100, 0, 2);
  RecordingSource src({500, 2000});
  GridConfig c = config({SlotKind{8, 1, 86400}});
  c.ttl_source = &src;
  const GridResult r = simulate_jalien({a, b}, c);
  EXPECT_EQ(src.log, (std::vector<std::string>{"decide 0 at 0", "matched 0 on 0", "decide 1 at 100",
                                               "ended 0 at 800 ran 800 on 1 killed", "matched 1 on 0",
                                               "ended 1 at 900 ran 100 on 2", "retry ended 0 on 0 at 1800 ran 1000"}));
  EXPECT_EQ(r.outcomes[0].status, GridStatus::Done);
  EXPECT_DOUBLE_EQ(r.outcomes[0].end, 1800);
  EXPECT_DOUBLE_EQ(r.outcomes[0].first_ttl_s, 500);
  EXPECT_DOUBLE_EQ(r.outcomes[1].first_ttl_s, 2000);
  EXPECT_EQ(r.metrics.kills, 1u);
  EXPECT_EQ(r.metrics.jobs_killed, 1u);
}

// Two kills of one job count two kills and one job killed.
TEST(JalienBroker, CountsRepeatedKillsOfOneJob) {
  GridConfig c = config({SlotKind{8, 1, 86400}});
  c.max_retries = 1;
  const GridResult r = simulate_jalien({job(1, 0, 1000, 500), job(2, 0, 100, 500)}, c);
  EXPECT_EQ(r.metrics.kills, 2u);
  EXPECT_EQ(r.metrics.jobs_killed, 1u);
}

// Per host class: work 1000 s at speed 1. The pilot on the fast host (class 0, speed 1) has
// 2000 - 600 = 1400 s left, below the 1500 s TTL given for class 0: it is refused and exits
// with the job waiting. The pilot on the slow host (class 1, speed 0.5) is matched against the
// TTL given for class 1 (2500 s < 85800 s left): the job runs 1000 / 0.5 = 2000 s there and
// completes under that TTL (the fast host's 1500 s would have killed it at 1800 s).
TEST(JalienBroker, AJobOnASlowerHostRunsLongerUnderThatHostsTtl) {
  TableTtl src({1500, 2500}, 2);
  GridConfig c = config({SlotKind{8, 1, 2000, 0}, SlotKind{8, 0.5, 86400, 1}});
  c.ttl_source = &src;
  const GridResult r = simulate_jalien({job(1, 0, 1000, 0)}, c);
  const GridJobOutcome& o = r.outcomes[0];
  // (status, host speed, TTL, start, end): every value exact in binary.
  EXPECT_EQ(std::make_tuple(o.status, o.host_speed, o.first_ttl_s, o.start, o.end),
            std::make_tuple(GridStatus::Done, 0.5, 2500.0, 0.0, 2000.0));
  EXPECT_EQ(std::make_pair(r.metrics.kills, r.metrics.matches_rejected_for_ttl), std::make_pair(std::size_t{0}, std::size_t{1}));
  EXPECT_DOUBLE_EQ(r.metrics.wasted_core_hours_ttl, 8 * 2000.0 / 3600);
  // On the slow host with the fast host's TTL it is killed at 1500 + 300.
  TableTtl fast({1500, 1500}, 2);
  c.ttl_source = &fast;
  c.max_retries = 0;
  const GridResult k = simulate_jalien({job(1, 0, 1000, 0)}, c);
  EXPECT_EQ(k.metrics.kills, 1u);
  EXPECT_DOUBLE_EQ(k.outcomes[0].end, 1800);
  EXPECT_DOUBLE_EQ(k.outcomes[0].first_ttl_s, 1500);
}

TEST(JalienBroker, RefusesASlotOfAnUnknownHostClass) {
  TableTtl src({1500, 2500}, 2);
  GridConfig c = config({SlotKind{8, 1, 86400, 2}});
  c.ttl_source = &src;
  EXPECT_THROW(simulate_jalien({job(1, 0, 1000, 0)}, c), Error);
}

TEST(JalienBroker, RefusesAJobLargerThanEverySlot) {
  EXPECT_THROW(simulate_jalien({job(1, 0, 100, 1000, 16)}, config({SlotKind{8, 1, 86400}})), Error);
}

}  // namespace
}  // namespace ttlpred::sim
