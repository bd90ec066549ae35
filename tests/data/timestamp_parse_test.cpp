// ISO-8601 date-times and Slurm durations, against values worked out by hand.
#include "data/timestamp_parse.hpp"

#include <gtest/gtest.h>

namespace ttlpred {
namespace {

double iso(const char* s) {
  double v = -1;
  EXPECT_TRUE(parse::iso8601_seconds(s, v)) << s;
  return v;
}

TEST(Iso8601, DateTimesInUtcAndWithOffsets) {
  EXPECT_EQ(iso("1970-01-01"), 0);
  EXPECT_EQ(iso("2024-03-01"), 1709251200);  // date -u -d 2024-03-01 +%s
  EXPECT_EQ(iso("2024-03-01T08:00:00"), 1709280000);
  EXPECT_EQ(iso("2024-03-01T08:00:00Z"), 1709280000);
  EXPECT_EQ(iso("2024-03-01 08:00:00"), 1709280000);
  EXPECT_EQ(iso("2024-03-01T08:00"), 1709280000);
  EXPECT_EQ(iso("2024-03-01T10:00:00+02:00"), 1709280000);
  EXPECT_EQ(iso("2024-03-01T10:00:00+0200"), 1709280000);
  EXPECT_EQ(iso("2024-03-01T03:00:00-05"), 1709280000);
  EXPECT_DOUBLE_EQ(iso("2024-03-01T08:00:00.25Z"), 1709280000.25);
  EXPECT_EQ(iso("2024-02-29T00:00:00Z"), 1709164800);  // leap day
}

TEST(Iso8601, RefusesWhatItDoesNotUnderstand) {
  double v = 0;
  for (const char* bad : {"", "2024", "2024-3-1", "2024-13-01", "2023-02-29", "2024-03-01T25:00", "2024-03-01T08:00:00Q",
                          "2024-03-01T08:00:00+2", "01/03/2024", "1969-12-31", "2024-03-01T08:00:00Z junk"})
    EXPECT_FALSE(parse::iso8601_seconds(bad, v)) << bad;
}

TEST(SlurmDuration, EveryFormOfTheGrammar) {
  double v = 0;
  const struct {
    const char* text;
    double seconds;
  } forms[] = {{"30", 1800},  // a bare number is minutes
               {"30:15", 1815},      {"01:10:00", 4200}, {"1-00:00:00", 86400},
               {"2-12", 216000},     {"1-02:03", 93780}, {"00:01.500", 1.5}};
  for (const auto& f : forms) {
    ASSERT_TRUE(parse::slurm_duration_seconds(f.text, v)) << f.text;
    EXPECT_DOUBLE_EQ(v, f.seconds) << f.text;
  }
  for (const char* bad : {"", "UNLIMITED", "1:2:3:4", "-1", "1-", "a:00", "01:00:00.5.5"})
    EXPECT_FALSE(parse::slurm_duration_seconds(bad, v)) << bad;
}

}  // namespace
}  // namespace ttlpred
