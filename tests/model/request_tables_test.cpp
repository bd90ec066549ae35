// Request-aware tables per calibration group or per stratum (model/safe_ttl.hpp,
// calibrate_request_tables): which jobs get a table of their own, that each such table is
// the one calibrate_request_aware makes from that group's rows alone, that a precise group
// sharing one table with a noisy one is held back by it and is not on its own, and the
// bytes of the tables (none written where there are none).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "model/safe_ttl.hpp"
#include "request_jobs.hpp"
#include "util/binary_io.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// kBig jobs of group 1 predicted within 10 % (log-normal sigma 0.1), kBig of group 2 within
// a factor of 2 (sigma 0.7), and 300 of group 3 (sigma 0.3): every prediction a fifth of
// the request, so that all fall in the same bins of p / R. Groups 1 and 2 are large enough
// for tables of their own, group 3 is not.
constexpr std::size_t kBig = kMinRequestTableRows + 500, kAll = 2 * kBig + 300;
struct Grouped {
  test::Jobs jobs;
  std::vector<std::uint32_t> group;
};

Grouped grouped_jobs(std::uint32_t stratum_bit_for_group_2 = 0) {
  Grouped g;
  const double sigma[] = {0.0, 0.1, 0.7, 0.3};
  g.jobs = test::draw_jobs(kAll, 11, [&](std::size_t i, double req, auto&, auto& n01) {
    const std::size_t k = i < kBig ? 1 : i < 2 * kBig ? 2 : 3;
    const double pred = req / 5;
    return std::pair{pred, pred * std::exp(sigma[k] * n01())};
  });
  for (std::size_t i = 0; i < kAll; ++i)
    g.group.push_back(i < kBig ? 1u : i < 2 * kBig ? (2u | stratum_bit_for_group_2) : 3u);
  return g;
}

std::vector<float> rows_of(const std::vector<float>& v, const std::vector<std::uint32_t>& group, std::uint32_t g) {
  std::vector<float> out;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (group[i] == g) out.push_back(v[i]);
  return out;
}

TEST(RequestTables, ByGroupEachLargeGroupHasItsOwnTableAndBudget) {
  const Grouped g = grouped_jobs();
  const RequestAwareOptions o;
  SafeTtlCalibration c;
  calibrate_request_tables(c, g.jobs.wall, g.jobs.pred, g.jobs.req, g.group, true, o);
  // Groups 1 and 2 have tables of their own; group 3's 300 rows are the shared table's.
  EXPECT_EQ(c.request_keys, (std::vector<std::uint32_t>{1, 2}));
  ASSERT_EQ(c.request_tables.size(), 2u);
  for (std::uint32_t k : {1u, 2u}) {
    const auto alone = calibrate_request_aware(rows_of(g.jobs.wall, g.group, k), rows_of(g.jobs.pred, g.group, k),
                                               rows_of(g.jobs.req, g.group, k), o);
    EXPECT_EQ(c.request_tables[k - 1].q, alone.q) << k;
    EXPECT_EQ(&c.request_table(k), &c.request_tables[k - 1]);
  }
  EXPECT_EQ(&c.request_table(3), &c.request);
  EXPECT_EQ(&c.request_table(kNoGroup), &c.request);

  // Calibrated alone, the precise group's TTL at alpha 1 % is well under the one it gets from
  // one table shared with the noisy group (whose tail then sets the exponent for both).
  SafeTtlCalibration shared;
  calibrate_request_tables(shared, g.jobs.wall, g.jobs.pred, g.jobs.req, g.group, false, o);
  EXPECT_TRUE(shared.request_keys.empty());
  const double req = 36000, pred = req / 5;
  const double own = c.safe_ttl(pred, 1, 0.01, req), pooled = shared.safe_ttl(pred, 1, 0.01, req);
  EXPECT_LT(own, 0.8 * pooled) << own << " " << pooled;
  EXPECT_GT(own, pred * std::exp(0.1 * 2.0));  // still above its own jobs' 2-sigma run time
}

TEST(RequestTables, ByStratumOnlyTheFallbackRowsAreApart) {
  const Grouped g = grouped_jobs(kFallbackStratum);
  const RequestAwareOptions o;
  SafeTtlCalibration c;
  calibrate_request_tables(c, g.jobs.wall, g.jobs.pred, g.jobs.req, g.group, false, o);
  EXPECT_EQ(c.request_keys, (std::vector<std::uint32_t>{kFallbackStratum}));
  // Every group 2 job is answered by the fallback table, whatever its category; the others
  // by the shared one, which is calibrated on them alone (groups 1 and 3).
  EXPECT_EQ(&c.request_table(2 | kFallbackStratum), &c.request_tables[0]);
  EXPECT_EQ(&c.request_table(7 | kFallbackStratum), &c.request_tables[0]);
  EXPECT_EQ(&c.request_table(2), &c.request);
  std::vector<float> w, p, r;
  for (std::size_t i = 0; i < g.group.size(); ++i)
    if (!in_fallback_stratum(g.group[i])) {
      w.push_back(g.jobs.wall[i]);
      p.push_back(g.jobs.pred[i]);
      r.push_back(g.jobs.req[i]);
    }
  EXPECT_EQ(c.request.q, calibrate_request_aware(w, p, r, o).q);
  EXPECT_EQ(group_category(2 | kFallbackStratum), 2u);
  EXPECT_EQ(group_category(kNoGroup), kNoGroup);
  EXPECT_FALSE(in_fallback_stratum(kNoGroup));

  // Too few rows apart (group 3's 300 in the stratum): one table for all.
  std::vector<std::uint32_t> few = g.group;
  for (auto& id : few) id = group_category(id) == 3 ? (3 | kFallbackStratum) : group_category(id);
  SafeTtlCalibration one;
  calibrate_request_tables(one, g.jobs.wall, g.jobs.pred, g.jobs.req, few, false, o);
  EXPECT_TRUE(one.request_keys.empty());
  EXPECT_EQ(one.request.q, calibrate_request_aware(g.jobs.wall, g.jobs.pred, g.jobs.req, o).q);
  EXPECT_THROW(calibrate_request_tables(one, g.jobs.wall, g.jobs.pred, g.jobs.req, std::vector<std::uint32_t>{1}, false, o),
               Error);
}

TEST(RequestTables, TablesRoundTripAndAreWrittenOnlyWherePresent) {
  const Grouped g = grouped_jobs();
  std::vector<float> cw = g.jobs.wall, cp = g.jobs.pred;
  SafeTtlCalibration c = calibrate_safe_ttl(cw, cp, g.group, {}, "job_type");
  calibrate_request_tables(c, g.jobs.wall, g.jobs.pred, g.jobs.req, g.group, false, {});
  BinaryWriter plain;
  c.write(plain);  // no table apart: the bytes of a calibration made before they existed
  calibrate_request_tables(c, g.jobs.wall, g.jobs.pred, g.jobs.req, g.group, true, {});
  BinaryWriter with_tables;
  c.write(with_tables);
  EXPECT_GT(with_tables.bytes().size(), plain.bytes().size());
  BinaryReader r(with_tables.bytes(), "calibration");
  const SafeTtlCalibration back = SafeTtlCalibration::read(r);
  EXPECT_TRUE(r.at_end());
  EXPECT_TRUE(back.request_by_group);
  EXPECT_EQ(back.request_keys, c.request_keys);
  for (std::uint32_t k : {1u, 2u, 3u})
    EXPECT_EQ(back.safe_ttl(7200, k, 0.01, 36000), c.safe_ttl(7200, k, 0.01, 36000)) << k;
  BinaryReader rp(plain.bytes(), "calibration");
  EXPECT_TRUE(SafeTtlCalibration::read(rp).request_keys.empty());
}

}  // namespace
}  // namespace ttlpred
