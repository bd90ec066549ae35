#include "sim/policy_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "pipeline/online_scoring.hpp"
#include "sim/online_model_ttl.hpp"
#include "sim/online_ttl.hpp"
#include "sim/sim_output.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {

GridConfig grid_config(const SimTrace& t, GridTtl policy, const GridOptions& o) {
  GridConfig cfg;
  cfg.oracle = policy == GridTtl::Oracle;
  // The same slots for every policy: they depend on the jobs' work and the seed only.
  cfg.slots = slots_from_trace(t, cores_for_load(t, o.load), o.seed);
  cfg.pilot_gap_mean_s = o.pilot_gap_s;
  cfg.proxy_lifetime_s = o.proxy_lifetime_s;
  cfg.max_retries = o.max_retries;
  cfg.seed = o.seed;
  return cfg;
}

std::unique_ptr<TtlSource> model_ttl_source(const SimTrace& t, GridTtl policy, const GridOptions& o) {
  const SimCalibration cal = sim_calibration_from_name(o.calibration);
  if (policy != GridTtl::Model) return nullptr;
  if (t.predictions.empty()) throw Error("simulate: --ttl model needs --model");
  const std::size_t n = t.rows(), k = t.hosts.empty() ? 1 : t.hosts.classes.size();
  if (!t.hosts.empty() && t.hosts.predictions.size() != n * k)
    throw Error("simulate: the jobs were not predicted on the host classes");
  const auto at = [&](std::size_t job, std::size_t h) -> const Prediction& {
    return t.hosts.empty() ? t.predictions[job] : t.hosts.predictions[job * k + h];
  };
  if (cal.method == OnlineMethod::Static) {
    if (k == 1) return nullptr;  // grid_jobs' TTLs
    std::vector<double> ttl(n * k);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t h = 0; h < k; ++h) ttl[i * k + h] = at(i, h).safe_ttl_s;
    return std::make_unique<TableTtl>(std::move(ttl), k);
  }
  const Predictor& predictor = *t.predictor;
  if (predictor.model().safe_ttl.empty())
    throw Error("simulate: --calibration " + cal.name + " needs a model with a safe-TTL calibration");
  OnlineCalibrationOptions oo;
  oo.method = cal.method;
  oo.gamma = o.gamma;
  oo.target_scale = o.target_scale;
  oo.log_level = cal.log_level;
  oo.batch_guard = o.batch_guard;
  TtlPolicy ttl_policy(predictor, oo);
  const JobTable& jobs = t.split.jobs;
  std::vector<std::size_t> rows(n);
  std::iota(rows.begin(), rows.end(), t.first_row);
  const auto keys = key_codes(jobs, rows, o.calibration_key);
  const auto batch = batch_keys(jobs, rows);
  const auto req = jobs.num(Field::RequestedTtl), cores = jobs.num(Field::CpuCores);
  std::vector<OnlineJob> online(n * k);
  std::vector<int> job_cores(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t h = 0; h < k; ++h) {
      online[i * k + h] = TtlPolicy::job_of(at(i, h), req[rows[i]], keys[i], kMissingNumber, batch[i]);
    }
  // The cores grid_jobs gives each job.
  for (std::size_t i = 0; i < n; ++i) job_cores[i] = static_cast<int>(std::max(1.0, std::isnan(cores[rows[i]]) ? 1.0 : cores[rows[i]]));
  return std::make_unique<OnlineTtl>(std::move(ttl_policy), std::move(online), std::move(job_cores), k, cal.cpu_weighted);
}

std::unique_ptr<JalienStatsTtl> jalien_stats_source(const SimTrace& t, const GridOptions& o,
                                                    const std::vector<GridJob>& grid) {
  static_assert(kNoProduction == kMissingCode);
  const JobTable& jobs = t.split.jobs;
  const auto production = jobs.codes(Field::ProductionTag), site = jobs.codes(Field::Site),
             cpu = jobs.codes(Field::CpuModel);
  const auto wall = jobs.num(Field::WallTime), submit = jobs.num(Field::SubmitTime);
  const std::size_t n = t.rows(), k = t.hosts.empty() ? 1 : t.hosts.classes.size();
  std::vector<StatsKey> keys(n * k);
  std::vector<double> static_ttl(n);
  if (grid.size() != n) throw Error("simulate: the JAliEn statistics need the simulated jobs");
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = t.first_row + i;
    static_ttl[i] = grid[i].ttl;
    for (std::size_t h = 0; h < k; ++h)
      keys[i * k + h] = t.hosts.empty() ? StatsKey{production[r], site[r], cpu[r]}
                                        : StatsKey{production[r], kMissingCode, t.hosts.classes[h].cpu_model_code};
  }
  auto source = std::make_unique<JalienStatsTtl>(std::move(keys), std::move(static_ttl), k, o.stats);
  for (std::size_t r = 0; r < t.first_row; ++r) {
    if (jobs.text(Field::Status, r) == "ERROR_E" || !(wall[r] >= 0) || !std::isfinite(wall[r])) continue;
    const double end = submit[r] + wall[r];  // the recorded wait is not known everywhere
    if (t.hosts.empty()) {
      source->recorded({production[r], site[r], cpu[r]}, wall[r], end);
      continue;
    }
    for (const HostClass& c : t.hosts.classes)
      if (c.cpu_model_code == cpu[r]) source->recorded({production[r], kMissingCode, c.cpu_model_code}, wall[r], end);
  }
  return source;
}

std::unique_ptr<TtlSource> online_model_source(const SimTrace& t, const GridOptions& o,
                                               const std::vector<GridJob>& grid) {
  if (!t.hosts.empty()) throw Error("simulate: --ttl online answers one TTL per job: --host-speed slot does not apply");
  const JobTable& jobs = t.split.jobs;
  const std::size_t n = t.rows();
  if (grid.size() != n) throw Error("simulate: the online TTLs need the simulated jobs");
  std::vector<double> static_ttl(n), requested(n);
  std::vector<int> cores(n);
  std::vector<std::size_t> rows(n);
  const auto req = jobs.num(Field::RequestedTtl);
  for (std::size_t i = 0; i < n; ++i) {
    rows[i] = t.first_row + i;
    static_ttl[i] = grid[i].ttl;
    cores[i] = grid[i].cores;
    requested[i] = req[rows[i]] > 0 ? req[rows[i]] : 0.0;
  }
  OnlineCalibrationOptions oo;
  oo.gamma = o.gamma;
  oo.target_scale = o.target_scale;
  oo.batch_guard = o.batch_guard;
  return std::make_unique<OnlineModelTtl>(std::make_unique<OnlineModel>(jobs, t.first_row, o.online, o.online_progress),
                                          sim_calibration_from_name(o.calibration), oo, std::move(static_ttl),
                                          std::move(requested), std::move(cores), key_codes(jobs, rows, o.calibration_key),
                                          batch_keys(jobs, rows));
}

std::unique_ptr<TtlSource> ttl_source(const SimTrace& t, GridTtl policy, const GridOptions& o,
                                      const std::vector<GridJob>& jobs) {
  if (policy == GridTtl::JalienStats) return jalien_stats_source(t, o, jobs);
  if (policy == GridTtl::Online) return online_model_source(t, o, jobs);
  return model_ttl_source(t, policy, o);
}

PolicyRun run_jalien_policy(const SimTrace& t, GridTtl policy, const GridOptions& o) {
  PolicyRun run;
  run.jobs = grid_jobs(t, policy, o.default_ttl_s);
  run.config = grid_config(t, policy, o);
  run.source = ttl_source(t, policy, o, run.jobs);
  run.config.ttl_source = run.source.get();
  run.result = simulate_jalien(run.jobs, run.config);
  return run;
}

double final_calibration_level(const PolicyRun& run) {
  if (const auto* online = dynamic_cast<const OnlineTtl*>(run.source.get())) return online->policy().level();
  if (const auto* loop = dynamic_cast<const OnlineModelTtl*>(run.source.get())) return loop->final_level();
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<PolicyRow> jalien_policy_rows(const SimTrace& t, const GridOptions& o, const std::vector<GridOptions>& more_models) {
  std::vector<PolicyRow> rows;
  const auto run = [&](GridTtl p, const char* name, const GridOptions& opts) {
    std::fprintf(stderr, "simulate: jalien --ttl %s%s%s on %zu jobs\n", name, p == GridTtl::Model ? " --calibration " : "",
                 p == GridTtl::Model ? opts.calibration.c_str() : "", t.rows());
    rows.push_back({name, run_jalien_policy(t, p, opts).result.metrics, p == GridTtl::Model ? opts.calibration : ""});
  };
  run(GridTtl::Static, "static", o);
  if (!t.predictions.empty()) {
    run(GridTtl::Model, "model", o);
    for (const GridOptions& m : more_models) run(GridTtl::Model, "model", m);
  }
  run(GridTtl::Oracle, "oracle", o);
  return rows;
}

GridOptions recommended_online_options() {
  GridOptions o;
  o.calibration = "aci-log";
  o.target_scale = 0.35;
  return o;
}

double gap_closed(double static_value, double model_value, double oracle_value) {
  const double gap = oracle_value - static_value;
  if (gap == 0) return std::numeric_limits<double>::quiet_NaN();
  return (model_value - static_value) / gap;
}

std::string policy_table_markdown(const std::vector<PolicyRow>& rows) {
  std::size_t models = 0;
  const GridMetrics *st = nullptr, *oracle = nullptr;
  for (const auto& r : rows) {
    models += r.policy == "model";
    if (r.policy == "static") st = &r.metrics;
    if (r.policy == "oracle") oracle = &r.metrics;
  }
  const auto label = [&](const PolicyRow& r) {
    return models > 1 && r.policy == "model" ? "model (`" + r.calibration + "`)" : r.policy;
  };
  std::string md =
      "| TTL policy | jobs done/day | mean wait (h) | p95 wait (h) | slot core-h wasted (TTL) | CPU-h lost to kills "
      "(% of used) | kills | matches rejected for TTL | utilization |\n|---|---|---|---|---|---|---|---|---|\n";
  char line[512];
  for (const auto& r : rows) {
    const GridMetrics& m = r.metrics;
    std::snprintf(line, sizeof line, "| %s | %.0f | %.2f | %.2f | %.0f (%.0f) | %.0f (%.2f%%) | %zu | %zu | %.3f |\n",
                  label(r).c_str(), m.jobs_completed_per_day, m.mean_wait_s / 3600, m.p95_wait_s / 3600,
                  m.wasted_core_hours, m.wasted_core_hours_ttl, m.cpu_hours_lost_to_kills,
                  m.cpu_hours_used > 0 ? 100 * m.cpu_hours_lost_to_kills / m.cpu_hours_used : 0.0, m.kills,
                  m.matches_rejected_for_ttl, m.utilization);
    md += line;
  }
  if (!st || !oracle) return md;
  md += "\n";
  for (const auto& r : rows) {
    if (r.policy != "model") continue;
    const GridMetrics &s = *st, &m = r.metrics, &o = *oracle;
    const std::string who = models > 1 ? "the model (`" + r.calibration + "`)" : "the model";
    std::snprintf(line, sizeof line,
                  "Static-to-oracle gap closed by %s: %.0f%% of slot core-hours wasted for TTL, %.0f%% of the "
                  "mean wait, %.0f%% of jobs completed per day.\n",
                  who.c_str(), 100 * gap_closed(s.wasted_core_hours_ttl, m.wasted_core_hours_ttl, o.wasted_core_hours_ttl),
                  100 * gap_closed(s.mean_wait_s, m.mean_wait_s, o.mean_wait_s),
                  100 * gap_closed(s.jobs_completed_per_day, m.jobs_completed_per_day, o.jobs_completed_per_day));
    md += line;
  }
  return md;
}

std::string policy_table_caption(double alpha, const std::vector<GridOptions>& models) {
  char line[512];
  std::snprintf(line, sizeof line, "Model TTLs: the safe TTL at alpha %g", alpha);
  std::string out = line;
  for (std::size_t k = 0; k < models.size(); ++k) {
    const GridOptions& o = models[k];
    const std::string who = models.size() > 1 ? " (`" + o.calibration + "`)" : "";
    out += k == 0 ? "; " : "; and ";
    const SimCalibration cal = sim_calibration_from_name(o.calibration);
    if (cal.method == OnlineMethod::Static) {
      out += "model" + who + " through the model's static calibration (`simulate --calibration static`)";
    } else {
      // aci-capped aims at its own share of alpha (--target-scale is the others').
      const bool capped = cal.method == OnlineMethod::AciCapped;
      const double target = capped ? ttlpred::OnlineCalibrationOptions{}.capped_target_scale : o.target_scale;
      char scale[48] = "";
      if (!capped) std::snprintf(scale, sizeof scale, " --target-scale %g", o.target_scale);
      char flags[160];
      std::snprintf(flags, sizeof flags, "--calibration %s --gamma %g%s --batch-guard %s", o.calibration.c_str(), o.gamma,
                    scale, o.batch_guard ? "on" : "off");
      std::snprintf(line, sizeof line,
                    "model%s through the `%s` online calibration at gamma %g, target %g alpha%s, fed by the simulated "
                    "job ends (`simulate %s`",
                    who.c_str(), o.calibration.c_str(), o.gamma, target, o.batch_guard ? ", batch guard on" : "", flags);
      out += line;
      // The CPU-weighted rules are the simulator's own; the others are what a service runs.
      if (!cal.cpu_weighted) out += std::string("; `serve ") + flags + "` answers with the same";
      if (o.calibration == kDefaultCalibration) out += "; the default";
      out += ")";
    }
  }
  return out + " (docs/SIMULATION.md, \"Online calibration in the broker\").\n\n";
}

nlohmann::json policy_table_json(const std::vector<PolicyRow>& rows) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : rows) {
    nlohmann::json row = metrics_json(r.metrics);
    row["scheduler"] = "jalien";
    row["policy"] = r.policy;
    if (!r.calibration.empty()) row["calibration"] = r.calibration;
    j.push_back(row);
  }
  return j;
}

}  // namespace ttlpred::sim
