#pragma once
// The hand-written job-log samples next to these tests (tests/data/samples/): a Slurm
// sacct --parsable2 export and a database-style CSV with ISO-8601 times.
#include <string>

namespace ttlpred::test {

inline std::string job_log_sample(const std::string& name) {
  const std::string here = __FILE__;
  return here.substr(0, here.rfind('/')) + "/samples/" + name;
}

}  // namespace ttlpred::test
