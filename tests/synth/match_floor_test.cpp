#include "synth/match_floor.hpp"

#include <gtest/gtest.h>

#include "util/error.hpp"

namespace ttlpred::synth {
namespace {

GeneratorConfig small_trace() {
  GeneratorConfig c;
  c.jobs = 30000;
  c.seed = 5;
  return c;
}

const FloorBucket& bucket(const MatchFloor& f, const std::string& name) {
  for (const auto& b : f.buckets)
    if (b.name == name) return b;
  throw Error("no bucket " + name);
}

// The floor rebuilds every scored job's mean from its row and the world; expected_wall_s
// checks the rebuild, and every production's TTL must be one its latent cost allows.
TEST(MatchFloor, RebuildsEveryRowsExpectedWallAndExplainsEveryTtl) {
  const MatchFloor f = match_time_floor(small_trace(), FloorOptions{});
  EXPECT_EQ(f.mean_mismatches, 0u);
  EXPECT_EQ(f.ttl_unexplained, 0u);
  ASSERT_EQ(f.jobs.size(), 6000u);
  EXPECT_EQ(bucket(f, "all").jobs, 6000u);
  std::size_t by_type = 0;
  for (auto t : kJobTypes) by_type += bucket(f, std::string(model_of(t).name)).jobs;
  EXPECT_EQ(by_type, 6000u);
}

// Above the oracle (which knows the latent costs), far above it on the jobs whose production
// has no outcome yet, and at it where a hundred outcomes are in.
TEST(MatchFloor, AboveTheOracleAndAtItWhereOutcomesAreIn) {
  const GeneratorConfig c = small_trace();
  const MatchFloor f = match_time_floor(c, FloorOptions{});
  const FloorBucket& all = bucket(f, "all");
  EXPECT_GT(all.floor_rmse_h(), all.oracle_rmse_h());
  EXPECT_LT(all.floor_rmse_h(), 2.0 * all.oracle_rmse_h());  // 1.37 against 0.83 h: a small trace is mostly new productions
  const FloorBucket& cold = bucket(f, "HYPERLOOP, none finished");
  ASSERT_GT(cold.jobs, 100u);
  EXPECT_GT(cold.floor_rmse_h(), 1.1 * cold.oracle_rmse_h());
  // Jobs with 100 or more finished siblings: the posterior has all but pinned the cost.
  double warm_floor = 0, warm_oracle = 0;
  std::size_t warm = 0;
  const auto first = c.jobs - f.jobs.size();
  TraceGenerator gen(c);
  std::uint64_t row = 0;
  gen.run([&](const JobRecord& r) {
    if (row >= first) {
      const FloorJob& j = f.jobs[row - first];
      EXPECT_EQ(j.job_id, r[Field::JobId]);
      if (j.finished >= 100) {
        ++warm;
        warm_floor += (j.floor_s - r[Field::WallTime]) * (j.floor_s - r[Field::WallTime]);
        warm_oracle += (r[Field::ExpectedWall] - r[Field::WallTime]) * (r[Field::ExpectedWall] - r[Field::WallTime]);
      }
    }
    ++row;
  });
  ASSERT_GT(warm, 1000u);
  EXPECT_NEAR(std::sqrt(warm_floor / warm_oracle), 1.0, 0.03);
}

TEST(MatchFloor, SameAnswerOnOneThreadAndOnSeveral) {
  FloorOptions one, two;
  one.threads = 1;
  two.threads = 3;
  GeneratorConfig c = small_trace();
  c.jobs = 8000;
  const MatchFloor a = match_time_floor(c, one), b = match_time_floor(c, two);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (std::size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].floor_s, b.jobs[i].floor_s) << i;
    EXPECT_EQ(a.jobs[i].finished, b.jobs[i].finished) << i;
  }
  EXPECT_EQ(a.buckets.front().floor_sq_s2, b.buckets.front().floor_sq_s2);
}

TEST(MatchFloor, RefusesADriftScenarioAndABadSplit) {
  GeneratorConfig c = small_trace();
  c.jobs = 1000;
  FloorOptions o;
  o.split = 1.0;
  EXPECT_THROW(match_time_floor(c, o), Error);
  c.drift.slow_site_day = 3;
  EXPECT_THROW(match_time_floor(c, FloorOptions{}), Error);
}

}  // namespace
}  // namespace ttlpred::synth
