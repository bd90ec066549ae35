#pragma once
// The simple rule the safe TTL has to beat (the reference in docs/ACCURACY.md, which the
// accuracy peers compute the same way): a job's TTL is
//   min(request, m x q99 of its user's last 200 finished run times)
// and the request itself for a user with fewer than 5 finished jobs. "Finished" is the
// history features' rule (split_history.hpp): eligible jobs submitted strictly earlier
// whose submit + wait + run time is no later than the job's submit time. q99 interpolates
// linearly between order statistics (numpy's default quantile).
#include <cstddef>
#include <span>
#include <vector>

#include "model/online_calibration.hpp"
#include "model/safe_ttl.hpp"
#include "pipeline/split.hpp"

namespace ttlpred {

inline constexpr std::size_t kSimpleRuleHistory = 200;
inline constexpr std::size_t kSimpleRuleMinJobs = 5;

// Linear-interpolation quantile (numpy's default) of `values` at level q in [0, 1]; values
// need not be sorted. Throws Error when empty.
double interpolated_quantile(std::vector<double> values, double q);

// The q99 of each of split.jobs's rows [begin, end) (NaN where the user has fewer than
// kSimpleRuleMinJobs finished jobs), walking the split's eligible jobs from the start.
std::vector<double> simple_rule_q99(const ChronologicalSplit& split, std::size_t begin, std::size_t end);

// TTL for one margin: the request where q99 is NaN, else min(request, margin x q99).
double simple_rule_ttl(double q99, double margin, double requested_s);

// The rule at one margin over rows given by their q99, run times and requests (parallel):
// its kill rate (killed_by, model/online_calibration.hpp) and mean TTL. A margin <= 0 answers the
// request for every row. Throws Error for spans of different lengths.
struct SimpleRuleOutcome {
  double kill_rate = 0;
  double mean_ttl_s = 0;
};
SimpleRuleOutcome simple_rule_outcome(std::span<const double> q99, std::span<const float> wall_s,
                                      std::span<const float> requested_s, double margin);
// The tightest of `margins` whose kill rate over these rows is <= limit; 0 (the request)
// when none is.
double tightest_margin_within(std::span<const double> q99, std::span<const float> wall_s,
                              std::span<const float> requested_s, std::span<const double> margins, double limit);

// The table of the aci-history calibration (model/online_calibration.hpp): log(wall / q99) of
// split.jobs's rows [begin, end) whose user had a q99 and that did not outrun their request
// (never killed, as in the kill rate), run times and q99 clamped to >= floor_s.
ResidualQuantiles simple_rule_residuals(const ChronologicalSplit& split, std::size_t begin, std::size_t end,
                                        double floor_s = 1.0);

}  // namespace ttlpred
