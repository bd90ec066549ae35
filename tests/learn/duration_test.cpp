// Durations on the command line (learn/duration.hpp): every unit, bare seconds, and every
// refusal naming the option.
#include <gtest/gtest.h>

#include <string>

#include "learn/duration.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

TEST(Duration, ParsesEveryUnit) {
  const struct {
    const char* text;
    double seconds;
  } cases[] = {{"90s", 90}, {"30m", 1800}, {"6h", 21600}, {"7d", 604800}, {"2w", 1209600},
               {"45", 45},  {"1.5d", 129600}, {"0", 0},   {"0d", 0}};
  for (const auto& c : cases) EXPECT_EQ(parse_duration(c.text, "--window"), c.seconds) << c.text;
}

TEST(Duration, RefusesWhatIsNoDurationNamingTheOption) {
  for (const char* bad : {"", "d", "7x", "-1d", "1.5.2h", "nan", "inf", "7 d", "h7"}) {
    try {
      parse_duration(bad, "--retrain-every");
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("--retrain-every: '" + std::string(bad) + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(Duration, TextUsesTheLargestWholeUnit) {
  EXPECT_EQ(duration_text(604800), "1w");
  EXPECT_EQ(duration_text(30 * 86400.0), "30d");
  EXPECT_EQ(duration_text(21600), "6h");
  EXPECT_EQ(duration_text(90), "90s");
  EXPECT_EQ(duration_text(0), "0s");
  EXPECT_EQ(duration_text(1.5), "1.5s");
}

}  // namespace
}  // namespace ttlpred
