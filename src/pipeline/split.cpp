#include "pipeline/split.hpp"

#include <cmath>
#include <cstdio>

#include "util/binary_io.hpp"
#include "util/error.hpp"

namespace ttlpred {

void check_split_fraction(double fraction) {
  if (!(fraction > 0 && fraction <= 1)) throw Error("--split must be in (0, 1], got " + std::to_string(fraction));
}

ChronologicalSplit chronological_split(JobTable whole, double fraction) {
  check_split_fraction(fraction);
  ChronologicalSplit s;
  s.trace = std::make_shared<const JobTable>(std::move(whole));
  const JobTable& trace = *s.trace;
  const auto wall = trace.num(Field::WallTime);
  const auto req = trace.num(Field::RequestedTtl);
  const auto submit = trace.num(Field::SubmitTime);
  const bool has_requests = trace.has_values(Field::RequestedTtl);
  std::vector<std::size_t> keep;
  keep.reserve(trace.rows());
  for (std::size_t i : trace.submit_order()) {
    if (!(wall[i] > 0) || std::isnan(submit[i])) {
      ++s.dropped_no_runtime;
      continue;
    }
    if (has_requests && !(req[i] > 0)) {
      ++s.dropped_no_request;
      continue;
    }
    keep.push_back(i);
  }
  if (keep.empty()) {
    // Name the column that is missing: a CSV whose header misspells wall_s or submit_time
    // reads as jobs without them (the reader's warnings name the unknown column).
    const char* const where = " (a CSV names it in its header, or --map names the column holding it; see docs/data-format.md)";
    if (!trace.has_values(Field::WallTime))
      throw Error("no job has a run time: the trace has no wall_s values" + std::string(where) + "; nothing to train or score");
    if (!trace.has_values(Field::SubmitTime))
      throw Error("no job has a submit time: the trace has no submit_time values" + std::string(where) + "; nothing to train or score");
    throw Error("no job has a run time > 0 and a submit time: nothing to train or score");
  }
  s.jobs = trace.select(keep);
  s.trace_rows = std::move(keep);
  s.fraction = fraction;
  s.train_rows = static_cast<std::size_t>(std::floor(fraction * static_cast<double>(s.trace_rows.size())));
  return s;
}

std::string table_digest(const JobTable& t, std::size_t rows) {
  BinaryWriter w;
  for (Field f : {Field::SubmitTime, Field::WallTime, Field::RequestedTtl})
    for (std::size_t i = 0; i < rows; ++i) w.put<double>(t.num(f)[i]);
  const auto& b = w.bytes();
  char hex[32];
  std::snprintf(hex, sizeof hex, "%08x-%zu", crc32_of(b.data(), b.size()), rows);
  return hex;
}

}  // namespace ttlpred
