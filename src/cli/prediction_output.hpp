#pragma once
// The per-job prediction file, one writer for `predict` and `eval --per-job`, so that the
// two print the same job the same way and can be compared line for line.
//
// CSV header `job_id,expected_wall_s,safe_ttl_s,capped` (capped: 1 when --max-ttl cut the
// answer), or one JSON object per line with the same keys; `with_outcome` appends what the
// job really did, `wall_s,requested_ttl_s`, from which eval's figures can be recomputed.
// A model with a per-job safe TTL (quantile heads) appends `upper_s,cold`: the quantile of the
// head its TTL is built on and whether the job was a cold start (model/quantile_ttl.hpp), what
// the rule in an exported model's sidecar reads beside the expected time (docs/interop.md).
// Seconds are printed with one decimal (upper_s with three: the rule scales it). Columns are
// only ever appended.
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "predict/predictor.hpp"

namespace ttlpred::cli {

// Throws Error unless `format` is "csv" or "jsonl" (callers check before any work).
void check_prediction_format(const std::string& format);

// predictions[i] answers table row rows[i]. `format`: "csv" or "jsonl". Throws Error on a
// write error.
void write_predictions(std::FILE* f, const std::string& format, const JobTable& table,
                       std::span<const std::size_t> rows, const std::vector<Prediction>& predictions,
                       bool with_outcome);

}  // namespace ttlpred::cli
