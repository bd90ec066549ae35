#pragma once
// The encoder's dense columns that are direct run-time estimates from a job's history, as
// residual-base candidates (model/residual_base.hpp): per key, the recent mean, the EWMA and
// the last run time (log1p seconds), the mean wall / request ratio times this job's request
// (log1p seconds) and each work rate times this job's work (hours). The statistics that are
// not estimates of this job's run time (counts, maxima, the mean of logs, running jobs) and
// the log twin of each work estimate (the same value) are left out.
#include <vector>

#include "features/encoder.hpp"
#include "model/residual_base.hpp"

namespace ttlpred {

std::vector<BaseColumn> history_estimate_columns(const FeatureEncoder& encoder);

}  // namespace ttlpred
