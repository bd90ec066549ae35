// JAliEn's history-based TTL (sim/jalien_stats.hpp) against hand-computed statistics, alone
// and inside the broker, and started from a trace's recorded outcomes.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"
#include "sim/jalien_broker.hpp"
#include "sim/jalien_stats.hpp"
#include "sim/policy_table.hpp"
#include "sim/sim_input.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {
namespace {

// 100, 200, 300, 600 s: mean 300, squared deviations 40000 + 10000 + 0 + 90000 = 140000, sample
// variance 140000 / 3, so sd = 216.0247 s; max 600.
TEST(RunTimeStats, HandComputed) {
  RunTimeStats s;
  EXPECT_EQ(s.count(), 0u);
  EXPECT_DOUBLE_EQ(s.sd(), 0);
  for (const double x : {100.0, 200.0, 300.0, 600.0}) s.add(x);
  EXPECT_EQ(s.count(), 4u);
  EXPECT_DOUBLE_EQ(s.mean(), 300);
  const double sd = std::sqrt(140000.0 / 3);
  EXPECT_NEAR(s.sd(), sd, 1e-9);
  EXPECT_DOUBLE_EQ(s.max(), 600);
  EXPECT_DOUBLE_EQ(s.estimate(StatsRule::Max), 600);
  EXPECT_NEAR(s.estimate(StatsRule::MeanPlus2Sd), 300 + 2 * sd, 1e-9);
  EXPECT_NEAR(s.estimate(StatsRule::MeanPlus3Sd), 300 + 3 * sd, 1e-9);
  EXPECT_THROW(s.add(-1), Error);
  EXPECT_THROW(s.add(NAN), Error);
  EXPECT_THROW(s.add(INFINITY), Error);
  EXPECT_EQ(s.count(), 4u);  // a refused value changes nothing
}

// Welford's running values against the two-pass FP64 formulas on random run times of many
// lengths and scales (log-normal, as grid run times are).
TEST(RunTimeStats, MatchesTwoPassReference) {
  std::mt19937_64 rng(7);
  for (const std::size_t n : {1u, 2u, 3u, 17u, 1000u, 100000u})
    for (const double scale : {1.0, 3600.0, 1e6}) {
      std::lognormal_distribution<double> d(0, 1.5);
      std::vector<double> x(n);
      RunTimeStats s;
      for (double& v : x) s.add(v = scale * d(rng));
      double mean = 0, max = 0;
      for (const double v : x) {
        mean += v;
        max = std::max(max, v);
      }
      mean /= static_cast<double>(n);
      double ss = 0;
      for (const double v : x) ss += (v - mean) * (v - mean);
      const double sd = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0;
      EXPECT_NEAR(s.mean(), mean, 1e-12 * mean) << n << " " << scale;
      EXPECT_NEAR(s.sd(), sd, 1e-9 * (sd + mean)) << n << " " << scale;
      EXPECT_EQ(s.max(), max) << n << " " << scale;
    }
}

TEST(RunTimeStats, RuleNames) {
  for (const StatsRule r : {StatsRule::Max, StatsRule::MeanPlus2Sd, StatsRule::MeanPlus3Sd})
    EXPECT_EQ(stats_rule_from_name(stats_rule_name(r)), r);
  try {
    stats_rule_from_name("mean+1sd");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown --stats-rule 'mean+1sd' (expected max, mean+2sd or mean+3sd)"),
              std::string::npos)
        << e.what();
  }
}

double decide(JalienStatsTtl& s, std::size_t job) {
  double ttl = 0;
  s.decide(job, 0, std::span<double>(&ttl, 1));
  return ttl;
}

// Jobs 0-3 share key A, job 4 has key B, job 5 no production. With min_jobs 2 and the max rule:
// the static TTL until A has two finished jobs, then their max, never above the static TTL; a
// killed attempt teaches nothing; a resubmission that finishes does; B and the job without a
// production keep the static TTL.
TEST(JalienStatsTtl, StaticUntilTheKeyHasEnoughFinishedJobs) {
  const StatsKey a{1, 2, 3}, b{1, 2, 4}, none{kNoProduction, 2, 3};
  JalienStatsOptions o;
  o.rule = StatsRule::Max;
  o.min_jobs = 2;
  JalienStatsTtl s({a, a, a, a, b, none}, {5000, 5000, 5000, 300, 5000, 5000}, 1, o);
  EXPECT_DOUBLE_EQ(decide(s, 0), 5000);
  s.matched(0, 0);
  s.ended(0, 100, 100, 1, false);
  EXPECT_DOUBLE_EQ(decide(s, 1), 5000);  // one finished job: below min_jobs
  s.matched(1, 0);
  s.ended(1, 900, 800, 1, true);         // killed: not counted
  EXPECT_DOUBLE_EQ(decide(s, 2), 5000);
  s.retry_ended(1, 0, 2000, 1100, false);  // its resubmission finished after 1100 s
  EXPECT_DOUBLE_EQ(decide(s, 2), 1100);
  EXPECT_DOUBLE_EQ(decide(s, 3), 300);   // the estimate only shortens
  EXPECT_DOUBLE_EQ(decide(s, 4), 5000);  // another CPU model: another key
  s.learn(none, 10);
  s.learn(none, 10);
  EXPECT_DOUBLE_EQ(decide(s, 5), 5000);  // no production: never estimated, nothing kept
  EXPECT_EQ(s.keys_seen(), 1u);
  EXPECT_EQ(s.stats(a)->count(), 2u);
  EXPECT_EQ(s.stats(b), nullptr);
  EXPECT_EQ(s.estimated(), 2u);
  EXPECT_EQ(s.fallbacks(), 5u);
}

// Per host class, a job's key differs by class; its outcome teaches the class it ran on.
TEST(JalienStatsTtl, OneKeyPerHostClass) {
  const StatsKey fast{1, kNoProduction, 10}, slow{1, kNoProduction, 11};
  JalienStatsOptions o;
  o.rule = StatsRule::MeanPlus2Sd;
  o.min_jobs = 2;
  JalienStatsTtl s({fast, slow, fast, slow}, {9000, 9000}, 2, o);
  s.learn(slow, 1000);
  s.learn(slow, 3000);  // mean 2000, sd 1414.2
  std::vector<double> ttl(2);
  s.decide(0, 0, ttl);
  EXPECT_DOUBLE_EQ(ttl[0], 9000);
  EXPECT_NEAR(ttl[1], 2000 + 2 * std::sqrt(2e6), 1e-9);
  s.matched(0, 0);
  s.ended(0, 500, 400, 1, false);
  EXPECT_EQ(s.stats(fast)->count(), 1u);
  EXPECT_EQ(s.stats(slow)->count(), 2u);
  EXPECT_THROW(s.matched(1, 2), Error);
  EXPECT_THROW(s.ended(1, 0, 1, 1, false), Error);  // never matched
}

TEST(JalienStatsTtl, RefusesInconsistentInput) {
  EXPECT_THROW(JalienStatsTtl({StatsKey{}}, {100, 100}, 1, {}), Error);
  EXPECT_THROW(JalienStatsTtl({StatsKey{}}, {0}, 1, {}), Error);
  JalienStatsOptions one;
  one.min_jobs = 1;
  EXPECT_THROW(JalienStatsTtl({StatsKey{}}, {100}, 1, one), Error);
}

// In the broker: jobs 0 and 1 (100 s and 300 s, static TTL 5000 s) end before job 2 is
// submitted at 1000 s, so job 2 runs under their max (300 s), and, at 700 s, is killed at
// 300 + 300 = 600 s: its resubmission runs under the static TTL and finishes, which teaches
// the key 700 s. Job 3, submitted after that, gets the new max. (An emptied slot gets a new
// pilot within seconds, so every job is matched soon after it is submitted.)
TEST(JalienStatsTtl, LearnsFromTheSimulatedEnds) {
  const auto job = [](double submit, double work) {
    GridJob g;
    g.submit = submit;
    g.work = work;
    g.ttl = 5000;
    g.retry_ttl = 5000;
    return g;
  };
  const std::vector<GridJob> jobs = {job(0, 100), job(0, 300), job(1000, 700), job(5000, 100)};
  JalienStatsOptions o;
  o.rule = StatsRule::Max;
  o.min_jobs = 2;
  JalienStatsTtl s(std::vector<StatsKey>(4, StatsKey{1, 1, 1}), {5000, 5000, 5000, 5000}, 1, o);
  GridConfig c;
  c.slots = {SlotKind{8, 1, 86400}};
  c.initial_age_s = 0;
  c.pilot_gap_mean_s = 10;
  c.ttl_source = &s;
  const GridResult r = simulate_jalien(jobs, c);
  EXPECT_DOUBLE_EQ(r.outcomes[0].first_ttl_s, 5000);
  EXPECT_DOUBLE_EQ(r.outcomes[2].first_ttl_s, 300);
  EXPECT_EQ(r.outcomes[2].kills, 1);
  EXPECT_EQ(r.outcomes[2].status, GridStatus::Done);
  EXPECT_DOUBLE_EQ(r.outcomes[3].first_ttl_s, 700);
  EXPECT_LT(r.outcomes[2].end, 5000);
  EXPECT_EQ(s.stats(StatsKey{1, 1, 1})->count(), 4u);  // 100, 300, 700 (the retry), 100
}

// Started from the trace: the recorded jobs before the split that were not killed, per
// (production, site, CPU model) as recorded, each learnt once it ended (submit + run time).
TEST(JalienStatsTtl, StartsFromTheRecordedJobsBeforeTheSplit) {
  JobTable t;
  const struct { const char *production, *site, *status; double wall; } rows[] = {
      {"p1", "s", "DONE", 100}, {"p1", "s", "DONE", 200}, {"p1", "s", "ERROR_E", 9000}, {"p2", "s", "DONE", 50},
      {"", "s", "DONE", 70},     {"p1", "s", "DONE", 400}, {"p1", "s", "DONE", 500}, {"p2", "s", "DONE", 60},
      {"p1", "s", "DONE", 100}, {"p1", "s", "DONE", 100}};
  double submit = 0;
  for (const auto& r : rows) {
    JobRecord j;
    j.text(Field::ProductionTag) = r.production;
    j.text(Field::Site) = r.site;
    j.text(Field::CpuModel) = "E5";
    j.text(Field::Status) = r.status;
    j[Field::SubmitTime] = submit += 10;
    j[Field::WallTime] = r.wall;
    j[Field::RequestedTtl] = 20000;
    t.append(j);
  }
  const SimTrace st = prepare_trace(std::move(t), 0.5, nullptr);
  ASSERT_EQ(st.first_row, 5u);
  GridOptions o;
  o.stats.min_jobs = 2;
  o.stats.rule = StatsRule::Max;
  const auto s = jalien_stats_source(st, o, grid_jobs(st, GridTtl::JalienStats, o.default_ttl_s));
  const JobTable& jobs = st.split.jobs;
  const auto key = [&](std::size_t r) {
    return StatsKey{jobs.codes(Field::ProductionTag)[r], jobs.codes(Field::Site)[r], jobs.codes(Field::CpuModel)[r]};
  };
  // Rows 0 and 1 (p1) ended at 10 + 100 and 20 + 200: at 150 only the first is known, so
  // simulated job 0 (row 5, p1) gets the static TTL.
  double ttl = 0;
  s->decide(0, 150, std::span<double>(&ttl, 1));
  EXPECT_DOUBLE_EQ(ttl, 20000);
  EXPECT_EQ(s->stats(key(0))->count(), 1u);
  s->decide(1, 300, std::span<double>(&ttl, 1));  // by 300 every recorded job has ended
  EXPECT_EQ(s->stats(key(0))->count(), 2u);  // 100, 200: the killed 9000 s job is not counted
  EXPECT_DOUBLE_EQ(s->stats(key(0))->max(), 200);
  EXPECT_EQ(s->stats(key(3))->count(), 1u);
  EXPECT_EQ(s->keys_seen(), 2u);  // the job without a production is not kept
  EXPECT_DOUBLE_EQ(ttl, 200);     // simulated job 1 (row 6, p1): the max of 100 and 200
  s->decide(2, 300, std::span<double>(&ttl, 1));  // row 7 (p2): one finished job, static
  EXPECT_DOUBLE_EQ(ttl, 20000);
}

}  // namespace
}  // namespace ttlpred::sim
