// The per-job safe TTL (model/quantile_ttl.hpp) on hand-computed calibration sets, its
// bounds, and its file section.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "model/quantile_heads.hpp"
#include "model/quantile_ttl.hpp"
#include "model/safe_ttl.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

TEST(QuantileTtl, ScoresCountOnlyJobsTheRuleCouldKill) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NEAR(quantile_ttl_score(200, 100, 100, 0), std::log(2.0), 1e-12);
  EXPECT_EQ(quantile_ttl_score(90, 100, 50, 0), -inf);     // under its expected time: TTL >= E
  EXPECT_EQ(quantile_ttl_score(400, 100, 100, 300), -inf); // outran its own request
  EXPECT_NEAR(quantile_ttl_score(300, 100, 150, 300), std::log(2.0), 1e-12);  // at its request: killable
}

TEST(QuantileTtl, ConformalMarginOnAHandComputedSet) {
  // 99 jobs, each with expected 100 s and head quantile 100 s, run times 101..199 s: scores
  // log(w / 100). At alpha 0.1 the conformal rank is ceil(100 * 0.9) = 90: the 90th smallest,
  // w = 190 s. Rows with no request.
  std::vector<float> wall, expected, req, q;
  for (int i = 1; i <= 99; ++i) {
    wall.push_back(100.0f + static_cast<float>(i));
    expected.push_back(100.0f);
    req.push_back(0.0f);
    q.push_back(100.0f);
  }
  const std::vector<float> levels = {0.9f};
  QuantileTtlOptions o;
  o.head_alpha = 0.1;
  const QuantileTtlCalibration c = calibrate_quantile_ttl(wall, expected, req, q, 1, levels, {}, o);
  EXPECT_EQ(c.head, 0u);
  EXPECT_FLOAT_EQ(c.level, 0.9f);
  EXPECT_NEAR(c.log_margin(kNoGroup, 0.1), std::log(1.90), 1e-6);
  // A job of head quantile 50 s and expected 40 s: 50 * 1.9 = 95 s.
  EXPECT_NEAR(c.safe_ttl(40, 50, kNoGroup, 0.1), 95.0, 1e-3);
  // Never below the expected time.
  EXPECT_NEAR(c.safe_ttl(120, 50, kNoGroup, 0.1), 120.0, 1e-9);
  // Killed on the calibration set at that margin: w > 190 -> 9 of 99, within 10 %.
  int killed = 0;
  for (std::size_t i = 0; i < wall.size(); ++i) killed += wall[i] > c.safe_ttl(expected[i], q[i], kNoGroup, 0.1) ? 1 : 0;
  EXPECT_EQ(killed, 9);
}

TEST(QuantileTtl, ChoosesTheHeadWithTheShortestCalibratedTtl) {
  // Head 0 is the same for every job (uninformative); head 1 follows each job's run time.
  std::mt19937_64 rng(2);
  std::lognormal_distribution<double> ln(7.0, 1.0);
  std::vector<float> wall, expected, req, q;
  for (int i = 0; i < 2000; ++i) {
    const double w = ln(rng);
    wall.push_back(static_cast<float>(w));
    expected.push_back(10.0f);
    req.push_back(0.0f);
    q.push_back(1000.0f);
    q.push_back(static_cast<float>(w * 1.05));
  }
  const std::vector<float> levels = {0.9f, 0.99f};
  const QuantileTtlCalibration c = calibrate_quantile_ttl(wall, expected, req, q, 2, levels, {});
  EXPECT_EQ(c.head, 1u);
  EXPECT_FLOAT_EQ(c.level, 0.99f);
}

TEST(QuantileTtl, GroupsAreShrunkTowardTheGlobalMargin) {
  // Group 1: scores log 2 for every killable job; group 2: log 4. 2000 rows each.
  std::vector<float> wall, expected, req, q;
  std::vector<std::uint32_t> group;
  for (int i = 0; i < 4000; ++i) {
    const bool second = i % 2 == 1;
    wall.push_back(second ? 400.0f : 200.0f);
    expected.push_back(10.0f);
    req.push_back(0.0f);
    q.push_back(100.0f);
    group.push_back(second ? 2u : 1u);
  }
  QuantileTtlOptions o;
  o.min_group_rows = 1000;
  o.group_shrink_rows = 1000;
  const std::vector<float> levels = {0.9f};
  const QuantileTtlCalibration c = calibrate_quantile_ttl(wall, expected, req, q, 1, levels, group, o);
  ASSERT_EQ(c.group_ids.size(), 2u);
  const double global = c.log_margin(kNoGroup, 0.01);
  EXPECT_NEAR(global, std::log(4.0), 1e-6);
  // n / (n + shrink) = 2/3 of the group's own margin.
  EXPECT_NEAR(c.log_margin(1, 0.01), 2.0 / 3.0 * std::log(2.0) + 1.0 / 3.0 * std::log(4.0), 1e-6);
  EXPECT_NEAR(c.log_margin(2, 0.01), std::log(4.0), 1e-6);
  EXPECT_NEAR(c.log_margin(7, 0.01), global, 1e-12);  // an unknown group
}

TEST(QuantileTtl, ColdStartJobsGetTheirStratumsMarginWhenItIsWider) {
  // 1000 warm jobs scoring log 1.5, and 20 cold starts scoring log 3: too few for a 5 %
  // quantile, so the cold stratum's margin is its largest score; never below the global one.
  std::vector<float> wall, expected, req, q;
  std::vector<std::uint8_t> cold;
  for (int i = 0; i < 1020; ++i) {
    const bool c = i >= 1000;
    wall.push_back(c ? 300.0f : 150.0f);
    expected.push_back(10.0f);
    req.push_back(0.0f);
    q.push_back(100.0f);
    cold.push_back(c ? 1 : 0);
  }
  const std::vector<float> levels = {0.9f};
  const QuantileTtlCalibration c = calibrate_quantile_ttl(wall, expected, req, q, 1, levels, {}, {}, cold);
  EXPECT_EQ(c.cold.n, 20u);
  EXPECT_NEAR(c.log_margin(kNoGroup, 0.05), std::log(1.5), 1e-6);  // rank ceil(1021 * 0.95) = 970: a warm score
  EXPECT_NEAR(c.log_margin(kNoGroup, 0.05, true), std::log(3.0), 1e-6);
  EXPECT_NEAR(c.safe_ttl(10, 100, kNoGroup, 0.05, true), 300.0, 1e-3);
  // A cold stratum narrower than the global margin does not narrow a cold job's TTL.
  std::vector<std::uint8_t> narrow(cold.size(), 0);
  for (std::size_t i = 0; i < 500; ++i) narrow[i] = 1;
  const QuantileTtlCalibration d = calibrate_quantile_ttl(wall, expected, req, q, 1, levels, {}, {}, narrow);
  EXPECT_NEAR(d.log_margin(kNoGroup, 0.01, true), d.log_margin(kNoGroup, 0.01), 1e-12);
  // The stratum is kept in the file.
  BinaryWriter w;
  c.write(w);
  const auto bytes = w.bytes();
  BinaryReader r(bytes, "test");
  EXPECT_EQ(QuantileTtlCalibration::read(r, 1).cold.values, c.cold.values);
}

TEST(QuantileTtl, TheSafeTtlIsCappedAtTheRequestAndTheRuleIsUsedOnlyWithAQuantile) {
  std::vector<float> wall = {150, 160, 170}, expected = {100, 100, 100}, req = {0, 0, 0}, q = {100, 100, 100};
  const std::vector<float> levels = {0.9f};
  SafeTtlCalibration s = calibrate_safe_ttl(wall, expected, {});
  s.quantile = calibrate_quantile_ttl(wall, expected, req, q, 1, levels, {});
  // (n + 1)(1 - 0.5) = 2: the second smallest score, log 1.6.
  EXPECT_NEAR(s.safe_ttl(100, 100, kNoGroup, 0.5, 0), 160.0, 1e-3);
  EXPECT_NEAR(s.safe_ttl(100, 100, kNoGroup, 0.5, 120), 120.0, 1e-9);
  // Without a quantile (NaN): the mean's calibration answers.
  EXPECT_NEAR(s.safe_ttl(100, std::numeric_limits<double>::quiet_NaN(), kNoGroup, 0.5, 0), s.safe_ttl(100, kNoGroup, 0.5),
              1e-9);
}

TEST(QuantileTtl, RoundTripsAndRefusesACorruptSection) {
  std::vector<float> wall = {150, 160, 170, 180}, expected = {100, 100, 100, 100}, req = {0, 0, 0, 0},
                     q = {90, 100, 100, 110, 100, 120, 100, 130};
  const std::vector<float> levels = {0.5f, 0.9f};
  const QuantileTtlCalibration c = calibrate_quantile_ttl(wall, expected, req, q, 2, levels, {});
  BinaryWriter w;
  c.write(w);
  const auto bytes = w.bytes();
  BinaryReader r(bytes, "test");
  const QuantileTtlCalibration back = QuantileTtlCalibration::read(r, 2);
  EXPECT_EQ(back.head, c.head);
  EXPECT_EQ(back.global.values, c.global.values);
  // The head must exist in the model that reads it.
  BinaryReader r1(bytes, "test");
  EXPECT_THROW(QuantileTtlCalibration::read(r1, c.head), Error);
  // Truncated.
  const std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(bytes.size() / 2));
  BinaryReader r2(cut, "test");
  EXPECT_THROW(QuantileTtlCalibration::read(r2, 2), Error);
}

TEST(QuantileTtl, ParsesLevelsAndNamesTheBadOne) {
  EXPECT_EQ(parse_quantile_levels("0.5,0.9,0.99").levels, (std::vector<float>{0.5f, 0.9f, 0.99f}));
  EXPECT_THROW(parse_quantile_levels("0.5,x"), Error);
  EXPECT_THROW(parse_quantile_levels("0.9,0.5"), Error);
  EXPECT_THROW(parse_quantile_levels("0.5,1.0"), Error);
  EXPECT_THROW(parse_quantile_levels("0.5,,0.9"), Error);
  try {
    parse_quantile_levels("0.5,abc");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("abc"), std::string::npos);
  }
}

}  // namespace
}  // namespace ttlpred
