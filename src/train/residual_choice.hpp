#pragma once
// Which history estimates a residual target is measured from (model/residual_base.hpp),
// chosen on the training rows: per value of the group column (or once, without one), an
// ordered list of candidates built greedily. Each step adds the candidate that most lowers
// the group's squared error in the target transform's space, where a row takes the first
// listed candidate it knows as its base (error t(actual) - t(base)) and a row that knows
// none counts its distance from the mean of such rows (what the network starts from
// without a base). A step that lowers nothing ends the list, so a group whose estimates
// all lose to its own mean takes none. The residual the network must learn is what is left;
// the smallest residual is the easiest start. A choice on the training rows only, like the
// transform's mean and scale.
#include <cstdint>
#include <span>

#include "model/model_input.hpp"
#include "model/residual_base.hpp"
#include "model/target_transform.hpp"

namespace ttlpred {

// At most this many estimates per group: a production's, then its package's, then ... .
inline constexpr std::size_t kMaxResidualChain = 4;

// Rows [0, rows) of `x` with run times wall_s; `tt` gives t() (its residual is ignored).
// group_cat: a categorical column of x, or -1. The result keeps only the chosen columns;
// it is empty when no group takes a base. Throws Error for a group column or a candidate
// outside the batch.
ResidualBase choose_residual_base(const EncodedBatch& x, std::span<const float> wall_s, std::size_t rows,
                                  const TargetTransform& tt, std::span<const BaseColumn> candidates,
                                  std::int32_t group_cat);

}  // namespace ttlpred
