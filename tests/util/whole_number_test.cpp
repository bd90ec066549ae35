// parse_whole_number: digits only, the whole text, no overflow (util/whole_number.hpp).
#include "util/whole_number.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string_view>

namespace ttlpred {
namespace {

struct Case {
  std::string_view text;
  std::optional<unsigned long long> want;
};

TEST(WholeNumber, DigitsOnlyTheWholeTextNoOverflow) {
  const Case cases[] = {
      {"0", 0ull},
      {"7", 7ull},
      {"65536", 65536ull},
      {"007", 7ull},
      {"18446744073709551615", 18446744073709551615ull},
      {"18446744073709551616", std::nullopt},  // one past the largest
      {"", std::nullopt},
      {"-1", std::nullopt},  // std::stoull: the largest value
      {"+1", std::nullopt},
      {" 7", std::nullopt},  // std::stoull: 7
      {"7 ", std::nullopt},
      {"7x", std::nullopt},  // std::stoull: 7
      {"1e3", std::nullopt},
      {"0x10", std::nullopt},
      {"3.0", std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(parse_whole_number(c.text), c.want) << "'" << c.text << "'";
}

}  // namespace
}  // namespace ttlpred
