// The benchmarks' latency statistics (util/latency.hpp).
#include "util/latency.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace ttlpred {
namespace {

TEST(Latency, SummarizesOrderStatistics) {
  std::vector<double> s;
  for (int i = 100; i >= 1; --i) s.push_back(i);
  const LatencyStats st = summarize(s);
  EXPECT_EQ(st.calls, 100u);
  EXPECT_DOUBLE_EQ(st.median_us, 50.5);
  EXPECT_DOUBLE_EQ(st.p99_us, 100.0);
  EXPECT_DOUBLE_EQ(st.mean_us, 50.5);
  std::size_t calls = 0;
  const LatencyStats m = measure([&](std::size_t) { ++calls; }, 0.001, 50);
  EXPECT_GE(m.calls, 50u);
  EXPECT_GE(calls, m.calls + 3);  // warm-up calls are not timed
}

}  // namespace
}  // namespace ttlpred
