#pragma once
// The job serve_load sends (job i of a batch), shared with the JSON benchmark and the
// reader tests so that they measure and check exactly the bodies the load test sends.
#include <string>

namespace ttlpred::load {

inline std::string load_job(int i) {
  static const char* users[] = {"alice", "bob", "carol", "dave", "erin"};
  static const char* types[] = {"MC", "USER", "MERGE"};
  return std::string("{\"user\":\"") + users[i % 5] + "\",\"job_type\":\"" + types[i % 3] +
         "\",\"requested_ttl_s\":" + std::to_string(3600 + 100 * (i % 500)) + ",\"cpu_cores\":" +
         std::to_string(1 << (i % 4)) + ",\"submit_time\":1800000000}";
}

}  // namespace ttlpred::load
