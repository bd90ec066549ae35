#include "pipeline/quantize_model.hpp"

#include <algorithm>

#include "features/history.hpp"
#include "predict/predictor.hpp"
#include "quant/activation_ranges_io.hpp"
#include "util/error.hpp"

namespace ttlpred {

quant::ActivationRanges add_int8_calibration(ModelFile& model, const JobTable& jobs,
                                             const quant::ActivationRangeOptions& options, std::size_t max_rows,
                                             std::size_t first_rows) {
  const std::size_t pool = std::min(first_rows, jobs.rows());
  if (pool == 0) throw Error("no rows to calibrate int8 ranges on");
  const Predictor predictor(model, PredictorOptions{});
  HistoryState state = predictor.initial_history();
  const HistoryMatrix history = compute_history(jobs, state);
  const std::size_t n = std::min(std::max<std::size_t>(max_rows, 1), pool);
  std::vector<std::size_t> rows(n);
  for (std::size_t i = 0; i < n; ++i) rows[i] = i * pool / n;
  const EncodedBatch batch = predictor.encoder().encode_batch(jobs, rows, &history);
  quant::ActivationRanges ranges = quant::measure_activation_ranges(model.mlp, batch, options);
  model.int8_calibration = quant::activation_ranges_bytes(ranges);
  return ranges;
}

}  // namespace ttlpred
