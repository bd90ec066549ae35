// Drift scenarios of the generator (synth/generator.hpp, DriftConfig): each starts on its
// day and not before, does what it says, and with all off the trace is unchanged.
#include <gtest/gtest.h>

#include <string>

#include "synth/generator.hpp"
#include "util/error.hpp"

namespace ttlpred::synth {
namespace {

GeneratorConfig small(double days = 4) {
  GeneratorConfig c;
  c.jobs = 6000;
  c.days = days;
  return c;
}

bool is_mc(const JobTable& t, std::size_t i) { return t.text(Field::JobType, i) == "MC"; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

TEST(Drift, OffLeavesTheTraceUnchanged) {
  GeneratorConfig off = small();
  off.drift.slow_version_factor = 2;  // factors alone switch nothing on
  const JobTable a = generate_table(small()), b = generate_table(off);
  ASSERT_EQ(a.rows(), b.rows());
  for (std::size_t i = 0; i < a.rows(); ++i) ASSERT_EQ(a.num(Field::WallTime)[i], b.num(Field::WallTime)[i]) << i;
}

TEST(Drift, SlowVersionFromItsDayOn) {
  GeneratorConfig d = small();
  d.drift.slow_version_day = 2;
  const JobTable base = generate_table(small()), drift = generate_table(d);
  ASSERT_EQ(base.rows(), drift.rows());
  const double from = d.start_time + 2 * 86400.0;
  double before_ratio = 0, after_ratio = 0;
  std::size_t before = 0, after = 0;
  for (std::size_t i = 0; i < drift.rows(); ++i) {
    if (!is_mc(drift, i)) {
      // The slowed release draws no random numbers: every other job is as it was.
      EXPECT_EQ(drift.num(Field::WallTime)[i], base.num(Field::WallTime)[i]) << i;
      continue;
    }
    const double r = drift.num(Field::ExpectedWall)[i] / base.num(Field::ExpectedWall)[i];
    const bool tagged = ends_with(drift.text(Field::Package, i), "-drift");
    if (drift.num(Field::SubmitTime)[i] < from - 600) {  // masters start a little before their jobs' submits
      EXPECT_FALSE(tagged) << i;
      before_ratio += r;
      ++before;
    } else if (drift.num(Field::SubmitTime)[i] > from + 600) {
      EXPECT_TRUE(tagged) << i;
      after_ratio += r;
      ++after;
    }
  }
  ASSERT_GT(before, 100u);
  ASSERT_GT(after, 100u);
  EXPECT_NEAR(before_ratio / static_cast<double>(before), 1.0, 1e-9);
  // 1.3x, a little less where the TTL caps the expected run time.
  EXPECT_NEAR(after_ratio / static_cast<double>(after), 1.3, 0.05);
}

TEST(Drift, HeavyUserArrivesOnItsDay) {
  GeneratorConfig d = small();
  d.drift.heavy_user_day = 2;
  const JobTable t = generate_table(d);
  const double from = d.start_time + 2 * 86400.0;
  std::size_t heavy = 0;
  for (std::size_t i = 0; i < t.rows(); ++i)
    if (t.text(Field::User, i) == kHeavyUserName) {
      EXPECT_GE(t.num(Field::SubmitTime)[i], from - 600) << i;
      ++heavy;
    }
  EXPECT_GT(heavy, 10u);
}

TEST(Drift, SlowSiteRunsSlowerThanItsBenchmarkSays) {
  GeneratorConfig d = small();
  d.drift.slow_site_day = 0;
  const JobTable base = generate_table(small()), drift = generate_table(d);
  ASSERT_EQ(base.rows(), drift.rows());
  std::size_t slowed = 0;
  for (std::size_t i = 0; i < drift.rows(); ++i) {
    EXPECT_EQ(drift.num(Field::HostSpeed)[i], base.num(Field::HostSpeed)[i]);
    if (drift.num(Field::ExpectedWall)[i] > base.num(Field::ExpectedWall)[i] * 1.2) {
      EXPECT_EQ(drift.text(Field::Site, i), base.text(Field::Site, i));
      ++slowed;
    }
  }
  EXPECT_GT(slowed, 10u);
}

TEST(Drift, RefusesBadSettings) {
  GeneratorConfig d = small();
  d.drift.heavy_user_share = 2;
  EXPECT_THROW(TraceGenerator{d}, Error);
}

}  // namespace
}  // namespace ttlpred::synth
