#pragma once
// Safe TTLs of a run of scored jobs with the calibration following outcomes as they arrive,
// leak-free by the history features' rule (split_history.hpp): a scored job's TTL is decided
// knowing exactly the outcomes of scored jobs submitted strictly earlier whose outcome was
// known by its submit time. A job's outcome is known when it ends: at submit + wait + its run
// time, or, when the TTL it was given kills it, at submit + wait + that TTL (the broker sees
// the kill then). Outcomes are applied in the order they become known (ties: submit order).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "model/online_calibration.hpp"
#include "predict/predictor.hpp"
#include "predict/ttl_policy.hpp"

namespace ttlpred {

// The category codes of `column` for `rows` of `jobs` (the mondrian keys); all 0 when
// `column` is "" or the table has no values there. Throws Error for an unknown field name.
std::vector<std::uint32_t> key_codes(const JobTable& jobs, std::span<const std::size_t> rows, const std::string& column);
// The batch guard's key of `rows` (OnlineJob::batch): TtlPolicy::text_key of each job's user,
// the key the service and the simulator use too; all 0 when the table has no users.
std::vector<std::uint32_t> batch_keys(const JobTable& jobs, std::span<const std::size_t> rows);

// A model swap in the middle of a run, as a service's reload does: from rows[first] on, the
// policy answers through `calibration` (TtlPolicy::rebase: what it learned is kept), and the
// predictions passed are the new model's.
struct CalibrationSwap {
  std::size_t first = 0;
  const SafeTtlCalibration* calibration = nullptr;
};

// `rows`: rows of `jobs` in submit order; `preds` and `groups` (the static calibration's
// group ids, kNoGroup when ungrouped) and `keys` parallel to them, and `history_q99` (the
// aci-history method's q99 of the user's finished run times, pipeline/simple_rule.hpp, itself
// leak-free) parallel too or empty; `swaps` (ascending by first) applied on the way. Returns
// each row's safe TTL and leaves `policy` holding every outcome of the run.
std::vector<double> score_online(const JobTable& jobs, std::span<const std::size_t> rows,
                                 std::span<const Prediction> preds, std::span<const std::uint32_t> groups,
                                 std::span<const std::uint32_t> keys, TtlPolicy& policy,
                                 std::span<const double> history_q99 = {},
                                 std::span<const CalibrationSwap> swaps = {});

}  // namespace ttlpred
