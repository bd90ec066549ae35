#include "pipeline/history_estimates.hpp"

namespace ttlpred {

std::vector<BaseColumn> history_estimate_columns(const FeatureEncoder& encoder) {
  const HistoryConfig& cfg = encoder.history_config();
  const std::size_t per_key = cfg.stats_per_key();
  const auto names = encoder.dense_names();
  std::vector<BaseColumn> out;
  for (std::size_t j = 0; j < encoder.dense_columns().size(); ++j) {
    const DenseColumn& c = encoder.dense_columns()[j];
    if (c.source != DenseSource::History || per_key == 0) continue;
    const std::size_t stat = c.index % per_key;
    BaseColumn b{static_cast<std::uint32_t>(j), c.mean, c.inv_std, BaseScale::Log1pSeconds, names[j]};
    if (stat < cfg.work_offset()) {
      const auto s = static_cast<HistoryStat>(stat);
      if (s != HistoryStat::LogMeanLastK && s != HistoryStat::LogEwma && s != HistoryStat::LogLast &&
          s != HistoryStat::LogRatioTimesRequest)
        continue;
    } else if (stat < cfg.running_offset()) {
      if ((stat - cfg.work_offset()) % kWorkStatsPerField != static_cast<std::size_t>(WorkStat::RateTimesWorkHours)) continue;
      b.scale = BaseScale::Hours;
    } else {
      continue;  // running-job statistics: lower bounds, not estimates
    }
    if (!(c.inv_std > 0)) continue;
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace ttlpred
