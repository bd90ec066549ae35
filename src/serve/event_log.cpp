#include "serve/event_log.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace ttlpred::serve {

double unix_now() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

std::string event_line(double unix_s, std::string_view level, std::string_view event, const nlohmann::json& fields) {
  // Whole milliseconds first: 1764621845.123 is 1764621845.12299... as a double.
  const long long total_ms = std::llround(unix_s * 1000.0);
  const std::time_t t = static_cast<std::time_t>(total_ms / 1000);
  const int ms = static_cast<int>(total_ms % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char ts[80];
  std::snprintf(ts, sizeof ts, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  nlohmann::ordered_json j;
  j["ts"] = ts;
  j["level"] = level;
  j["event"] = event;
  if (fields.is_object())
    for (const auto& [k, v] : fields.items()) j[k] = v;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void log_event(std::string_view level, std::string_view event, const nlohmann::json& fields) {
  const std::string line = event_line(unix_now(), level, event, fields) + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t w = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (w <= 0) return;  // a log line must never fail the request that logs it
    done += static_cast<std::size_t>(w);
  }
}

}  // namespace ttlpred::serve
