// The hourly series: exact integrals per hour, whatever the start time's rounding.
#include <gtest/gtest.h>

#include "sim/time_series.hpp"

namespace ttlpred::sim {
namespace {

TEST(TimeSeries, IntegratesEachHourExactly) {
  TimeSeries ts(100);
  ts.set_capacity(4);
  ts.set_busy(2);
  ts.advance(100 + 1800);
  ts.set_busy(4);
  const auto hours = ts.finish(100 + 3600 + 900);
  ASSERT_EQ(hours.size(), 2u);
  EXPECT_DOUBLE_EQ(hours[0].utilization, (2 * 1800.0 + 4 * 1800.0) / (4 * 3600.0));
  EXPECT_DOUBLE_EQ(hours[1].utilization, 1.0);
}

// With this start, the end of hour 931 divided back by 3600 s rounds below 932: the series
// must still move on (it used to loop for ever there).
TEST(TimeSeries, MovesPastAnHourWhoseEndRoundsDown) {
  const double start = 847433.7369372327;
  TimeSeries ts(start);
  ts.set_capacity(1);
  ts.set_busy(1);
  ts.advance(start + 940 * 3600.0);
  const auto hours = ts.finish(start + 940 * 3600.0);
  ASSERT_EQ(hours.size(), 940u);
  for (const auto& h : hours) EXPECT_NEAR(h.utilization, 1.0, 1e-9);
}

}  // namespace
}  // namespace ttlpred::sim
