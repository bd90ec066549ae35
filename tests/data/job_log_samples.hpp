#pragma once
// The hand-written job-log samples next to these tests (tests/data/samples/): a Slurm
// sacct --parsable2 export and a database-style CSV with ISO-8601 times.
#include <string>

#include "test_support.hpp"

namespace ttlpred::test {

inline std::string job_log_sample(const std::string& name) { return source_path("tests/data/samples/" + name); }

}  // namespace ttlpred::test
