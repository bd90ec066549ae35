#include "data/trace_summary.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace ttlpred {
namespace {

JobTable small_table() {
  JobTable t;
  JobRecord r;
  const double walls[] = {0.5, 5, 50, 500, 5000, 50000, 100, 200, 300, 400};
  for (int i = 0; i < 10; ++i) {
    r.clear();
    r[Field::WallTime] = walls[i];
    if (i < 8) r[Field::RequestedTtl] = 1000;  // jobs 4 and 5 ran past it
    r.text(Field::User) = i < 6 ? "alice" : (i < 9 ? "bob" : "carol");
    t.append(r);
  }
  return t;
}

TEST(TraceSummary, PercentilesUseNearestRank) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(percentile_sorted(v, 50), 5);
  EXPECT_EQ(percentile_sorted(v, 99), 10);
  EXPECT_EQ(percentile_sorted(v, 0), 1);
  EXPECT_EQ(percentile_sorted(v, 100), 10);
  EXPECT_TRUE(std::isnan(percentile_sorted({}, 50)));
}

TEST(TraceSummary, ColumnsDistributionsAndPastTtlShare) {
  const TraceSummary s = summarize(small_table());
  EXPECT_EQ(s.rows, 10u);
  ASSERT_EQ(s.columns.size(), 3u);  // user, requested_ttl_s, wall_s: only known columns
  const auto& user = s.columns[0];
  EXPECT_EQ(user.field, Field::User);
  EXPECT_EQ(user.known, 10u);
  EXPECT_EQ(user.distinct, 3u);
  EXPECT_EQ(user.top[0], (std::pair<std::string, std::size_t>{"alice", 6}));
  EXPECT_EQ(user.top[1], (std::pair<std::string, std::size_t>{"bob", 3}));
  const auto& wall = s.columns[2];
  EXPECT_EQ(wall.field, Field::WallTime);
  EXPECT_EQ(wall.min, 0.5);
  EXPECT_EQ(wall.max, 50000);
  EXPECT_EQ(wall.p50, 200);
  EXPECT_DOUBLE_EQ(wall.mean, 56555.5 / 10);
  EXPECT_EQ(s.with_wall_and_ttl, 8u);
  EXPECT_EQ(s.past_ttl, 2u);
  // Histogram: [0,1) 1; [1,3.16) 0; [3.16,10) 1; [31.6,100) 1; [100,316) 3 ...
  EXPECT_EQ(s.wall.n, 10u);
  ASSERT_GE(s.wall.bins.size(), 10u);
  EXPECT_EQ(s.wall.bins[0].lo, 0);
  EXPECT_EQ(s.wall.bins[0].count, 1u);
  EXPECT_EQ(s.wall.bins[2].count, 1u);
  EXPECT_NEAR(s.wall.bins[5].lo, 100, 1e-9);
  EXPECT_EQ(s.wall.bins[5].count, 3u);
  std::size_t total = 0;
  for (const auto& b : s.wall.bins) total += b.count;
  EXPECT_EQ(total, 10u);
  // Requested times are all 1000 s: leading empty bins are dropped.
  ASSERT_EQ(s.ttl.bins.size(), 1u);
  EXPECT_NEAR(s.ttl.bins[0].lo, 1000, 1e-9);
}

TEST(TraceSummary, TextAndJsonCarryTheNumbers) {
  const TraceSummary s = summarize(small_table());
  const std::string text = format_summary(s);
  EXPECT_NE(text.find("rows: 10"), std::string::npos) << text;
  EXPECT_NE(text.find("ran past the requested time: 2 of 8 jobs (25.00%)"), std::string::npos) << text;
  EXPECT_NE(text.find("\"alice\" 6"), std::string::npos) << text;
  ReadReport rep;
  rep.path = "t.csv";
  rep.format = "csv";
  rep.rows = 10;
  rep.skip(SkipReason::NotANumber, 3, "wall_s", "not a number: \"x\"");
  const nlohmann::json j = summary_to_json(s, rep);
  EXPECT_EQ(j["rows"], 10);
  EXPECT_EQ(j["skipped"]["total"], 1);
  EXPECT_EQ(j["skipped"]["by_reason"]["not a number"], 1);
  EXPECT_EQ(j["skipped"]["examples"][0], "t.csv:3: field wall_s: not a number: \"x\"");
  EXPECT_EQ(j["columns"]["wall_s"]["max"], 50000.0);
  EXPECT_EQ(j["columns"]["user"]["distinct"], 3);
  EXPECT_EQ(j["wall_s"]["percentiles"]["p50"], 200.0);
  EXPECT_EQ(j["past_requested_time"]["share"], 0.25);
}

TEST(TraceSummary, HumanDurations) {
  EXPECT_EQ(human_duration(45), "45s");
  EXPECT_EQ(human_duration(90), "1.5m");
  EXPECT_EQ(human_duration(7200), "2h");
  EXPECT_EQ(human_duration(3 * 86400), "3d");
}

}  // namespace
}  // namespace ttlpred
