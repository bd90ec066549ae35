#include "serve/access_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace ttlpred::serve {

AccessLog::AccessLog(const std::string& destination) {
  if (destination == "-") {
    file_ = stderr;
    return;
  }
  const int fd = ::open(destination.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
  if (fd < 0) throw Error(destination + ": cannot open the access log: " + std::strerror(errno));
  file_ = ::fdopen(fd, "a");
  if (!file_) {
    ::close(fd);
    throw Error(destination + ": cannot open the access log: " + std::strerror(errno));
  }
  owned_ = true;
}

AccessLog::~AccessLog() {
  if (owned_) std::fclose(file_);
}

void AccessLog::write(const AccessRecord& r) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const std::time_t secs = system_clock::to_time_t(now);
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char when[40];
  const std::size_t n = std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(when + n, sizeof when - n, ".%03dZ", static_cast<int>(ms));
  nlohmann::json j = {{"time", when},       {"endpoint", r.endpoint}, {"method", r.method},
                      {"path", r.path},     {"status", r.status},     {"latency_s", r.latency_s},
                      {"batch", r.batch}};
  // replace: a path with invalid UTF-8 must not lose the line
  const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::lock_guard lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fflush(file_);
}

std::size_t batch_size_of_reply(std::string_view endpoint, std::string_view body) {
  auto number_after = [&](std::string_view key) -> std::size_t {
    const auto at = body.find(key);
    if (at == std::string_view::npos) return 0;
    std::size_t v = 0;
    for (std::size_t i = at + key.size(); i < body.size() && body[i] >= '0' && body[i] <= '9'; ++i) v = v * 10 + static_cast<std::size_t>(body[i] - '0');
    return v;
  };
  if (endpoint == "predict") {
    if (body.find("\"predictions\"") == std::string_view::npos) return body.find("\"expected_wall_s\"") != std::string_view::npos ? 1 : 0;
    std::size_t count = 0;
    for (auto at = body.find("\"safe_ttl_s\""); at != std::string_view::npos; at = body.find("\"safe_ttl_s\"", at + 1)) ++count;
    return count;
  }
  if (endpoint == "match") return number_after("\"considered\":");
  if (endpoint == "outcomes") return number_after("\"accepted\":");
  return 0;
}

}  // namespace ttlpred::serve
