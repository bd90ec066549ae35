#pragma once
// The broker comparison the pipeline's report ends with: one jalien simulation per TTL
// policy (static, model, oracle) on the same jobs, slots and seed, as a Markdown table and
// JSON, with how much of the static-to-oracle gap the model closes.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/jalien_broker.hpp"
#include "sim/sim_input.hpp"

namespace ttlpred::sim {

struct PolicyRow {
  std::string policy;
  GridMetrics metrics;
};

struct GridOptions {
  double load = 0.95;
  double pilot_gap_s = 300;
  double proxy_lifetime_s = 0;
  int max_retries = 2;
  double default_ttl_s = 21600;
  std::uint64_t seed = 1;
};

GridConfig grid_config(const SimTrace& t, GridTtl policy, const GridOptions& o);

// static, model (when the trace has predictions) and oracle, in that order.
std::vector<PolicyRow> jalien_policy_rows(const SimTrace& t, const GridOptions& o);

// Fraction of the static-to-oracle gap the model closes in one metric (NaN without a gap).
double gap_closed(double static_value, double model_value, double oracle_value);

std::string policy_table_markdown(const std::vector<PolicyRow>& rows);
nlohmann::json policy_table_json(const std::vector<PolicyRow>& rows);

}  // namespace ttlpred::sim
