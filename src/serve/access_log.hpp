#pragma once
// The structured access log: one JSON object per request, one per line (time, endpoint,
// method, path, status, latency, batch size), to a file or stderr. Off unless
// `ttlpred serve --access-log` names a destination: at tens of thousands of requests a second
// a log line per request is a cost an operator chooses.
#include <cstdio>
#include <mutex>
#include <string>
#include <string_view>

namespace ttlpred::serve {

struct AccessRecord {
  std::string_view endpoint;  // metrics name: predict, match, outcomes, ..., other
  std::string_view method;
  std::string_view path;      // without the query
  int status = 0;
  double latency_s = 0;       // handler time, as in the metrics histogram
  std::size_t batch = 0;      // jobs in the request (predict, match, outcomes); 0 otherwise
};

class AccessLog {
 public:
  // "-" is stderr; any other destination is a file opened for appending (created 0640).
  // Throws Error naming the path when it cannot be opened.
  explicit AccessLog(const std::string& destination);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  // One line, written whole under a lock and flushed, so lines of concurrent requests never
  // interleave and a crash loses none that were answered.
  void write(const AccessRecord& r);

 private:
  std::FILE* file_ = nullptr;
  bool owned_ = false;
  std::mutex mutex_;
};

// The jobs a reply was about, read from the service's own reply body: 1 for a single-job
// predict, the entries of `predictions`, `considered` of a match, `accepted` of outcomes.
std::size_t batch_size_of_reply(std::string_view endpoint, std::string_view body);

}  // namespace ttlpred::serve
