// The outcomes a retrain learns from (learn/window_table.hpp), on a hand-built table whose
// known-at times are worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "learn/window_table.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// submit, wait (NaN: unknown), wall; rows deliberately out of submit order.
JobTable hand_table() {
  const double rows[][3] = {{300, 10, 100},   // known at 410
                            {100, NAN, 50},   // 150 (unknown wait counts 0)
                            {200, 0, 1000},   // 1200
                            {400, 5, 20},     // 425
                            {NAN, 0, 10}};    // never known
  JobTable t;
  JobRecord r;
  for (const auto& x : rows) {
    r.clear();
    r[Field::SubmitTime] = x[0];
    r[Field::WaitTime] = x[1];
    r[Field::WallTime] = x[2];
    r.text(Field::User) = x[0] == 400 ? "bob" : "alice";
    t.append(r);
  }
  return t;
}

TEST(WindowTable, KnownAtIsSubmitPlusWaitPlusWall) {
  const JobTable t = hand_table();
  EXPECT_EQ(outcome_known_at(t, 0), 410);
  EXPECT_EQ(outcome_known_at(t, 1), 150);
  EXPECT_EQ(outcome_known_at(t, 2), 1200);
  EXPECT_TRUE(std::isnan(outcome_known_at(t, 4)));
}

TEST(WindowTable, RowsKnownByTheEndWithinTheLengthInSubmitOrder) {
  const JobTable t = hand_table();
  const struct {
    double end, length;
    std::vector<std::size_t> rows;
  } cases[] = {{1000, 0, {1, 0, 3}},     // 1200 not known yet; no limit on submit
               {2000, 0, {1, 2, 0, 3}},  // all known
               {425, 150, {0, 3}},       // submitted at >= 275
               {424, 150, {0}},          // row 3 known at 425
               {100, 0, {}}};
  for (const auto& c : cases) EXPECT_EQ(rows_in_window(t, {c.end, c.length}), c.rows) << c.end << " " << c.length;
}

TEST(WindowTable, ConcatPutsTheOriginalsEarlierJobsFirst) {
  const JobTable original = hand_table();
  JobTable recent;
  JobRecord r;
  r[Field::SubmitTime] = 500;
  r[Field::WallTime] = 7;
  r.text(Field::User) = "carol";
  recent.append(r);
  std::size_t n = 0;
  const JobTable t = concat_before(original, 300, recent, &n);
  EXPECT_EQ(n, 2u);  // submitted at 100 and 200
  ASSERT_EQ(t.rows(), 3u);
  EXPECT_EQ(t.num(Field::SubmitTime)[0], 100);
  EXPECT_EQ(t.num(Field::SubmitTime)[1], 200);
  EXPECT_EQ(t.num(Field::SubmitTime)[2], 500);
  EXPECT_EQ(t.text(Field::User, 2), "carol");
  EXPECT_EQ(t.num(Field::WallTime)[1], 1000);
}

TEST(WindowTable, AJobItsTtlKilledIsDeliveredCensoredAtTheTtl) {
  const JobTable t = hand_table();
  // Row 2 (submitted at 200, no wait, runs 1000 s) was given 500 s: killed at 500, known at
  // 700; row 0 (runs 100 s) was given 200 s: it finished.
  const std::vector<std::size_t> served = {2, 0};
  const std::vector<double> ttl = {500, 200};
  std::size_t killed = 0;
  const JobTable d = delivered_outcomes(t, served, ttl, 0, {800, 0}, &killed);
  EXPECT_EQ(killed, 1u);
  ASSERT_EQ(d.rows(), 4u);  // known by 800: rows 1, 2 (at 700 now, 1200 before), 0, 3
  EXPECT_EQ(d.num(Field::SubmitTime)[1], 200);
  EXPECT_EQ(d.num(Field::WallTime)[1], 500);
  EXPECT_EQ(d.text(Field::Status, 1), "TIMEOUT");  // the table has no ERROR_E status
  EXPECT_EQ(d.num(Field::WallTime)[2], 100);
  EXPECT_EQ(d.text(Field::Status, 2), "");
  EXPECT_EQ(d.text(Field::User, 3), "bob");

  // With a kill margin of 600 s it would have been killed at 1100: it ended first, at 1200
  // as the trace has it, after the window.
  const JobTable m = delivered_outcomes(t, served, ttl, 600, {800, 0}, &killed);
  EXPECT_EQ(killed, 0u);
  ASSERT_EQ(m.rows(), 3u);
  EXPECT_EQ(m.num(Field::SubmitTime)[1], 300);

  EXPECT_THROW(delivered_outcomes(t, served, std::vector<double>{1}, 0, {800, 0}), Error);
}

}  // namespace
}  // namespace ttlpred
