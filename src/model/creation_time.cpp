#include "model/creation_time.hpp"

#include <charconv>
#include <cstdlib>
#include <ctime>
#include <string_view>

#include "util/error.hpp"

namespace ttlpred {

std::string model_creation_time_utc() {
  std::time_t t = std::time(nullptr);
  const char* env = std::getenv("SOURCE_DATE_EPOCH");
  if (env != nullptr && *env != '\0') {
    const std::string_view text(env);
    long long seconds = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    // Up to the year 9999, which the stamp's four-digit year can show.
    if (ec != std::errc{} || end != text.data() + text.size() || seconds < 0 || seconds > 253402300799LL)
      throw Error("SOURCE_DATE_EPOCH: '" + std::string(text) + "' is not a whole number of seconds since 1970 (0 to 253402300799)");
    t = static_cast<std::time_t>(seconds);
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace ttlpred
