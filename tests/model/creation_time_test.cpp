// A model file's creation stamp: now, or SOURCE_DATE_EPOCH's time for reproducible files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "model/creation_time.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// Sets SOURCE_DATE_EPOCH for one scope (unset: nullptr) and puts back what was there.
class EpochScope {
 public:
  explicit EpochScope(const char* value) {
    if (const char* old = std::getenv("SOURCE_DATE_EPOCH")) old_ = old, had_ = true;
    value ? ::setenv("SOURCE_DATE_EPOCH", value, 1) : ::unsetenv("SOURCE_DATE_EPOCH");
  }
  ~EpochScope() { had_ ? ::setenv("SOURCE_DATE_EPOCH", old_.c_str(), 1) : ::unsetenv("SOURCE_DATE_EPOCH"); }

 private:
  std::string old_;
  bool had_ = false;
};

TEST(CreationTime, SourceDateEpochNamesTheTime) {
  struct Case {
    const char* epoch;
    const char* stamp;
  };
  for (const Case& c : {Case{"0", "1970-01-01T00:00:00Z"}, Case{"1700000000", "2023-11-14T22:13:20Z"},
                        Case{"253402300799", "9999-12-31T23:59:59Z"}}) {
    EpochScope scope(c.epoch);
    EXPECT_EQ(model_creation_time_utc(), c.stamp) << c.epoch;
  }
}

// "YYYY-MM-DDTHH:MM:SSZ" with digits where the pattern has 9 (no std::regex: g++ 12 warns
// inside it under the sanitizers).
bool looks_like_a_stamp(const std::string& s) {
  const std::string pattern = "9999-99-99T99:99:99Z";
  if (s.size() != pattern.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (pattern[i] == '9' ? !(s[i] >= '0' && s[i] <= '9') : s[i] != pattern[i]) return false;
  return true;
}

TEST(CreationTime, WithoutItTheStampIsNow) {
  for (const char* unset : {static_cast<const char*>(nullptr), ""}) {  // an empty one counts as unset
    EpochScope scope(unset);
    const std::string stamp = model_creation_time_utc();
    EXPECT_TRUE(looks_like_a_stamp(stamp) && stamp.compare(0, 2, "20") == 0) << stamp;
  }
}

TEST(CreationTime, RefusesAMalformedEpochByName) {
  for (const char* bad : {"-1", "12a", "1.5", " 5", "253402300800", "99999999999999999999"}) {
    EpochScope scope(bad);
    try {
      model_creation_time_utc();
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("SOURCE_DATE_EPOCH"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ttlpred
