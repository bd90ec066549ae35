// The safe TTL's exact guarantees, asserted as equalities or hard bounds rather than "close to
// alpha": the plain conformal quantile kills exactly n - ceil((n+1)(1-alpha)) of n distinct
// calibration residuals; the request-aware tables kill at most floor(alpha x scale x n)
// calibration rows and their exponents never rise with alpha. Also every refusal of a
// damaged safe-TTL section, the cap at the request without a request-aware table, and a NaN
// prediction (the floor, never a NaN TTL).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "model/request_aware_ttl.hpp"
#include "request_jobs.hpp"
#include "model/safe_ttl.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

TEST(SafeTtlGuarantees, PlainConformalKillsExactlyTheRanksAboveTheQuantile) {
  // n = 1000 residuals 0.000, 0.001, ..., 0.999 (wall = 100 e^r, prediction 100), shuffled.
  const std::size_t n = 1000;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
  std::vector<float> wall, pred;
  for (std::size_t i : order) {
    wall.push_back(static_cast<float>(100.0 * std::exp(0.001 * static_cast<double>(i))));
    pred.push_back(100.0f);
  }
  const auto c = calibrate_safe_ttl(wall, pred, {});
  // rank k = ceil((n+1)(1-alpha)): alpha 1% -> 991, 5% -> 951, 20% -> 801; kills n - k.
  const struct {
    double alpha;
    std::size_t kills;
  } expected[] = {{0.01, 9}, {0.05, 49}, {0.2, 199}, {0.0005, 0}};
  for (const auto& e : expected) {
    const double safe = c.safe_ttl(100.0, kNoGroup, e.alpha);
    // The residuals are 0.1% apart, so a 1e-5 relative margin cannot move a row across.
    std::size_t killed = 0;
    for (float w : wall) killed += w > safe * (1 + 1e-5);
    EXPECT_EQ(killed, e.kills) << "alpha " << e.alpha;
    EXPECT_LE(static_cast<double>(killed), std::floor(e.alpha * static_cast<double>(n + 1)));
  }
}

using test::Jobs;

// Half "steady" jobs far below their request, half near it, a third of those running to it.
Jobs draw(std::size_t n, std::uint64_t seed) {
  return test::draw_jobs(n, seed, [](std::size_t i, double req, auto& u, auto& n01) {
    const double pred = req * (i % 2 == 0 ? 0.05 + 0.1 * u() : 0.4 + 0.2 * u());
    return std::pair{pred, i % 2 == 1 && u() < 1.0 / 3 ? req * (0.99 + 0.02 * u()) : pred * std::exp(0.3 * n01())};
  });
}

TEST(SafeTtlGuarantees, RequestAwareKillsAtMostTheBudgetOnItsCalibrationRows) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const Jobs calib = draw(4000 + 1000 * seed, seed);
    const double n = static_cast<double>(calib.wall.size());
    for (double scale : {0.5, 1.0}) {
      for (double saving : {0.0, 0.2}) {
        RequestAwareOptions o;
        o.alpha_scale = scale;
        o.min_saving_per_kill = saving;
        const auto c = calibrate_request_aware(calib.wall, calib.pred, calib.req, o);
        ASSERT_EQ(c.alphas, request_aware_alpha_grid());
        std::size_t previous_kills = 0;
        for (std::size_t a = 0; a < c.alphas.size(); ++a) {
          const double alpha = c.alphas[a];
          std::size_t kills = 0;
          for (std::size_t i = 0; i < calib.wall.size(); ++i) {
            const double p = std::min(calib.pred[i], calib.req[i]);
            const double s = request_aware_score(calib.wall[i], p, calib.req[i], 1.0);
            // The kill event as the calibration ranks it: scores are kept as floats, and the
            // exponent is one of them. (Compared in double, a score within float rounding of
            // the exponent counts as a kill: measured 1-3 more than the budget here, a
            // relative 1e-7 of a TTL.)
            kills += static_cast<float>(s) > c.exponent(p / calib.req[i], alpha);
          }
          EXPECT_LE(kills, static_cast<std::size_t>(std::floor(alpha * scale * n)))
              << "seed " << seed << " scale " << scale << " alpha " << alpha;
          EXPECT_GE(kills, previous_kills) << "a larger alpha killed fewer";
          previous_kills = kills;
          // Exponents never rise with alpha, bin by bin, and never pass 1 (the request).
          for (std::size_t b = 0; b < c.q[a].size(); ++b) {
            EXPECT_LE(c.q[a][b], 1.0f);
            if (a > 0) {
              EXPECT_LE(c.q[a][b], c.q[a - 1][b]) << "bin " << b << " alpha " << alpha;
            }
          }
        }
        // Spending the whole budget (no minimum saving) uses a real share of it at 10%.
        if (saving == 0.0) {
          EXPECT_GE(previous_kills, static_cast<std::size_t>(0.5 * 0.1 * scale * n));
        }
      }
    }
  }
}

TEST(SafeTtlGuarantees, WithoutARequestAwareTableTheRequestStillCapsTheTtl) {
  const std::vector<float> wall = {100, 200, 300};
  const std::vector<float> pred = {100, 100, 100};
  SafeTtlOptions o;
  o.request_aware = false;
  const auto c = calibrate_safe_ttl(wall, pred, {}, o);
  ASSERT_TRUE(c.request.empty());
  // alpha 0.5: margin log 2, so 80 s -> 160 s; a request of 150 s cuts it, one of 500 s does not.
  EXPECT_NEAR(c.safe_ttl(80, kNoGroup, 0.5, 0.0), 160.0, 1e-3);
  EXPECT_EQ(c.safe_ttl(80, kNoGroup, 0.5, 150.0), 150.0);
  EXPECT_NEAR(c.safe_ttl(80, kNoGroup, 0.5, 500.0), 160.0, 1e-3);
  // A NaN prediction is the floor (1 s) times the margin, never NaN.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NEAR(c.safe_ttl(nan, kNoGroup, 0.5), 2.0, 1e-6);
  EXPECT_NEAR(c.safe_ttl(nan, kNoGroup, 0.5, 150.0), 2.0, 1e-6);
  EXPECT_NEAR(c.safe_ttl(-5.0, kNoGroup, 0.5), 2.0, 1e-6);
}

TEST(SafeTtlGuarantees, RequestAwareAnswerForANaNPredictionIsFiniteAndWithinTheRequest) {
  const Jobs calib = draw(3000, 9);
  const auto c = calibrate_request_aware(calib.wall, calib.pred, calib.req);
  const double t = c.safe_ttl(std::numeric_limits<double>::quiet_NaN(), 3600.0, 0.01);
  EXPECT_TRUE(std::isfinite(t));
  EXPECT_GT(t, 0.0);
  EXPECT_LE(t, 3600.0);
}

// Safe-TTL sections written field by field, as SafeTtlCalibration::write lays them out.
struct Section {
  BinaryWriter w;
  Section& header(double floor_s, std::uint64_t n, const std::vector<float>& values) {
    w.put_string("job_type");
    w.put<double>(floor_s);
    w.put<std::uint64_t>(200);
    w.put<std::uint64_t>(n);
    w.put_vector(values);
    return *this;
  }
  Section& groups(const std::vector<std::uint32_t>& ids) {
    w.put<std::uint64_t>(ids.size());
    for (std::uint32_t id : ids) {
      w.put<std::uint32_t>(id);
      w.put<std::uint64_t>(2);
      w.put_vector(std::vector<float>{0.1f, 0.2f});
    }
    return *this;
  }
};

std::string safe_ttl_refusal(const BinaryWriter& w) {
  BinaryReader r(w.bytes(), "m.model (safe-TTL calibration section)");
  try {
    SafeTtlCalibration::read(r);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

void expect_refusal(const BinaryWriter& w, const std::string& why) {
  const std::string msg = safe_ttl_refusal(w);
  EXPECT_NE(msg.find("m.model (safe-TTL calibration section)"), std::string::npos) << msg;
  EXPECT_NE(msg.find(why), std::string::npos) << "expected '" << why << "', got: " << msg;
}

TEST(SafeTtlGuarantees, ReadRefusesEveryDamagedSafeTtlField) {
  {
    Section s;
    s.header(2.0, 3, {0.1f, 0.2f, 0.3f}).groups({1, 4});
    s.w.put<std::uint8_t>(0);
    EXPECT_EQ(safe_ttl_refusal(s.w), "(accepted)");  // the well-formed base of every case below
  }
  for (double floor_s : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    Section s;
    s.header(floor_s, 3, {0.1f, 0.2f, 0.3f}).groups({});
    expect_refusal(s.w, "safe-TTL floor must be a positive number");
  }
  {
    Section s;  // more stored values than residuals
    s.header(1.0, 2, {0.1f, 0.2f, 0.3f}).groups({});
    expect_refusal(s.w, "safe-TTL residual table stores 3 values for 2 residuals");
  }
  {
    Section s;  // residuals but a single stored value
    s.header(1.0, 50, {0.1f}).groups({});
    expect_refusal(s.w, "safe-TTL residual table stores 1 values for 50 residuals");
  }
  {
    Section s;
    s.header(1.0, 3, {0.1f, std::numeric_limits<float>::infinity(), 0.3f}).groups({});
    expect_refusal(s.w, "safe-TTL residual is not finite");
  }
  {
    Section s;
    s.header(1.0, 3, {0.1f, 0.3f, 0.2f}).groups({});
    expect_refusal(s.w, "safe-TTL residuals are not sorted");
  }
  {
    Section s;
    s.header(1.0, 3, {0.1f, 0.2f, 0.3f});
    s.w.put<std::uint64_t>((1u << 20) + 1);
    expect_refusal(s.w, "safe-TTL calibration claims 1048577 groups");
  }
  {
    Section s;
    s.header(1.0, 3, {0.1f, 0.2f, 0.3f}).groups({4, 4});
    expect_refusal(s.w, "safe-TTL group ids are not strictly increasing");
  }
  {
    Section s;
    s.header(1.0, 3, {0.1f, 0.2f, 0.3f}).groups({1});
    s.w.put<std::uint8_t>(2);
    expect_refusal(s.w, "safe-TTL request-aware flag is not 0 or 1");
  }
  {
    Section s;  // the request-aware table cut off after its flag
    s.header(1.0, 3, {0.1f, 0.2f, 0.3f}).groups({});
    s.w.put<std::uint8_t>(1);
    expect_refusal(s.w, "truncated");
  }
}

// A request-aware table after a valid safe-TTL head, fields as RequestAwareCalibration::write
// lays them out.
BinaryWriter with_request_table(double floor_s, const std::vector<float>& edges, const std::vector<double>& alphas,
                                const std::vector<std::vector<float>>& q) {
  Section s;
  s.header(1.0, 3, {0.1f, 0.2f, 0.3f}).groups({});
  s.w.put<std::uint8_t>(1);
  s.w.put<double>(floor_s);
  s.w.put_vector(edges);
  s.w.put_vector(alphas);
  for (const auto& row : q) s.w.put_vector(row);
  return std::move(s.w);
}

TEST(SafeTtlGuarantees, ReadRefusesEveryDamagedRequestAwareField) {
  const std::vector<float> edges = {0.2f, 0.5f};
  const std::vector<double> alphas = {0.01, 0.05};
  const std::vector<std::vector<float>> q = {{1.0f, 0.8f, 0.9f}, {0.7f, 0.6f, 0.9f}};
  {
    BinaryWriter w = with_request_table(1.0, edges, alphas, q);
    BinaryReader r(w.bytes(), "m");
    const auto c = SafeTtlCalibration::read(r);
    EXPECT_EQ(c.request.q, q);  // the well-formed base
  }
  expect_refusal(with_request_table(0.0, edges, alphas, q), "request-aware safe-TTL floor must be a positive number");
  expect_refusal(with_request_table(1.0, {0.5f, 0.2f}, alphas, q), "request-aware safe-TTL bin edges are not finite and ascending");
  expect_refusal(with_request_table(1.0, {0.2f, std::numeric_limits<float>::quiet_NaN()}, alphas, q),
                 "request-aware safe-TTL bin edges are not finite and ascending");
  expect_refusal(with_request_table(1.0, edges, {0.05, 0.01}, q),
                 "request-aware safe-TTL alphas are not strictly ascending in (0, 1)");
  expect_refusal(with_request_table(1.0, edges, {0.01, 1.0}, q),
                 "request-aware safe-TTL alphas are not strictly ascending in (0, 1)");
  expect_refusal(with_request_table(1.0, edges, alphas, {{1.0f, 0.8f}, {0.7f, 0.6f}}),
                 "request-aware safe-TTL table has the wrong number of bins");
  expect_refusal(with_request_table(1.0, edges, alphas, {{1.0f, 0.8f, 0.9f}, {0.7f, 1.5f, 0.9f}}),
                 "request-aware safe-TTL exponent is not a finite number <= 1");
}

}  // namespace
}  // namespace ttlpred
