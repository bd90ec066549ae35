// `ttlpred eval`: scores a model on the tail of a chronological split (issue 3's protocol).
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "pipeline/evaluate.hpp"

namespace ttlpred::cli {
namespace {

struct EvalOptions {
  std::string model, data, variant = "fp32-fused", isa;
  double split = 0.8, alpha = 0.01;
  bool json = false;
};

nlohmann::json number_or_null(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }

nlohmann::json metrics_json(const Metrics& m) {
  return {{"rows_scored", m.rows},
          {"rmse_hours", number_or_null(m.rmse_hours)},
          {"mae_hours", number_or_null(m.mae_hours)},
          {"r2", number_or_null(m.r2)},
          {"kill_rate", number_or_null(m.kill_rate)},
          {"killed", m.killed},
          {"mean_safe_ttl_hours", number_or_null(m.mean_safe_ttl_hours)},
          {"mean_requested_ttl_hours", number_or_null(m.mean_requested_ttl_hours)}};
}

void print_text(const Evaluation& e, const EvalOptions& o) {
  auto h = [](double v) {
    if (!std::isfinite(v)) return std::string("-");
    char b[32];
    std::snprintf(b, sizeof b, "%.3f", v);
    return std::string(b);
  };
  const Metrics& m = e.metrics;
  std::printf("model %s on %s: trained on %zu jobs, scored %zu (variant %s, alpha %.3g)\n", o.model.c_str(),
              o.data.c_str(), e.train_rows, m.rows, o.variant.c_str(), o.alpha);
  std::printf("  RMSE %s h   MAE %s h   R2 %s\n", h(m.rmse_hours).c_str(), h(m.mae_hours).c_str(), h(m.r2).c_str());
  std::printf("  requested/static TTL as prediction: RMSE %s h;  oracle (noise-free expectation): %s h\n",
              h(e.baseline_rmse_hours).c_str(), h(e.oracle_rmse_hours).c_str());
  std::printf("  safe TTL: kill rate %.3f%% (%zu jobs), mean safe TTL %s h vs mean requested TTL %s h\n",
              100 * m.kill_rate, m.killed, h(m.mean_safe_ttl_hours).c_str(), h(m.mean_requested_ttl_hours).c_str());
  if (e.groups.empty()) return;
  std::printf("\n  %-16s %9s %10s %10s %10s %12s %12s\n", e.group_column.c_str(), "jobs", "RMSE h", "static h",
              "kill %", "safe TTL h", "request h");
  for (const auto& g : e.groups)
    std::printf("  %-16s %9zu %10s %10s %10.3f %12s %12s\n", g.name.substr(0, 16).c_str(), g.metrics.rows,
                h(g.metrics.rmse_hours).c_str(), h(g.baseline_rmse_hours).c_str(), 100 * g.metrics.kill_rate,
                h(g.metrics.mean_safe_ttl_hours).c_str(), h(g.metrics.mean_requested_ttl_hours).c_str());
}

void run_eval(const EvalOptions& o) {
  const Predictor predictor = Predictor::load(o.model, predictor_options(o.variant, o.isa, o.alpha));
  const ChronologicalSplit split = chronological_split(load_trace(o.data, o.json), o.split);
  const Evaluation e = evaluate(predictor, split);
  if (!o.json) return print_text(e, o);
  nlohmann::json j = metrics_json(e.metrics);
  j["baseline_rmse_hours"] = number_or_null(e.baseline_rmse_hours);
  j["oracle_rmse_hours"] = number_or_null(e.oracle_rmse_hours);
  j["train_rows"] = e.train_rows;
  j["variant"] = o.variant;
  j["isa"] = std::string(engine::isa_name(predictor.plan().isa()));
  j["alpha"] = o.alpha;
  j["group_column"] = e.group_column;
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : e.groups) {
    nlohmann::json gj = metrics_json(g.metrics);
    gj["name"] = g.name;
    gj["baseline_rmse_hours"] = number_or_null(g.baseline_rmse_hours);
    groups.push_back(gj);
  }
  j["groups"] = groups;
  std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto o = std::make_shared<EvalOptions>();
  auto* cmd = app.add_subcommand("eval", "Score a model on the part of a trace after the chronological split");
  cmd->add_option("--model", o->model, "model file")->required();
  cmd->add_option("--data", o->data, "trace file")->required();
  cmd->add_option("--split", o->split, "fraction of eligible jobs the model was trained on")->capture_default_str();
  cmd->add_option("--variant", o->variant, "engine variant (fp32, fp32-fused, fp16, bf16, int8-dynamic, int8-static, ...)")
      ->capture_default_str();
  cmd->add_option("--isa", o->isa, "pin an instruction set (scalar, avx2, avx512, avx512vnni)");
  cmd->add_option("--alpha", o->alpha, "target kill rate of the safe TTL")->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object");
  cmd->callback([o] { run_eval(*o); });
}

}  // namespace ttlpred::cli
