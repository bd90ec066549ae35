// `ttlpred simulate`: what the TTLs buy on a JAliEn-style broker or a batch cluster
// (docs/SIMULATION.md).
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "sim/policy_table.hpp"
#include "sim/sim_input.hpp"
#include "sim/sim_output.hpp"
#include "sim/swf_header.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {
namespace {

struct SimulateOptions {
  std::string data, scheduler = "easy", ttl = "request", model, out, variant = "auto", isa;
  double split = 0.8, alpha = 0.01, load = 0.95, pilot_gap = 300, proxy_lifetime = 0, default_ttl = 21600;
  int procs = 0, max_retries = 2;
  std::uint64_t seed = 1;
  BoundOptions bounds;
  bool json = false;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

sim::GridOptions grid_options(const SimulateOptions& o) {
  sim::GridOptions g;
  g.load = o.load;
  g.pilot_gap_s = o.pilot_gap;
  g.proxy_lifetime_s = o.proxy_lifetime;
  g.max_retries = o.max_retries;
  g.default_ttl_s = o.default_ttl;
  g.seed = o.seed;
  return g;
}

void run_simulate(const SimulateOptions& o) {
  const bool grid = o.scheduler == "jalien";
  if (!grid && o.scheduler != "fcfs" && o.scheduler != "easy" && o.scheduler != "easy++")
    throw Error("simulate: --scheduler must be jalien, fcfs, easy or easy++, got '" + o.scheduler + "'");
  const bool batch_policy = o.ttl == "request" || o.ttl == "last2" || o.ttl == "model" || o.ttl == "oracle";
  const bool grid_policy = o.ttl == "static" || o.ttl == "model" || o.ttl == "oracle";
  if (grid ? !grid_policy : !batch_policy)
    throw Error("simulate: --ttl " + o.ttl + " does not apply to --scheduler " + o.scheduler +
                (grid ? " (jalien takes static, model, oracle)" : " (fcfs, easy, easy++ take request, last2, model, oracle)"));
  if (o.ttl == "model" && o.model.empty()) throw Error("simulate: --ttl model needs --model");

  const auto t0 = std::chrono::steady_clock::now();
  std::optional<Predictor> predictor;
  if (!o.model.empty()) predictor.emplace(Predictor::load(o.model, predictor_options(o.variant, o.isa, o.alpha, o.bounds)));
  std::string format;
  JobTable trace = load_trace(o.data, o.json, &format);
  std::fprintf(stderr, "simulate: read %zu jobs (%s) in %.1f s\n", trace.rows(), format.c_str(), seconds_since(t0));
  if (predictor) check_model_fits_trace(*predictor, o.model, trace, format, false);
  if (o.ttl == "model" && o.split < predictor->model().provenance.split)
    std::fprintf(stderr, "simulate: WARNING: --split %.2f is below the model's training split %.2f: on its own training "
                 "trace, the simulated jobs include jobs the model learned from\n", o.split,
                 predictor->model().provenance.split);
  const sim::SimTrace st = sim::prepare_trace(std::move(trace), o.split, o.ttl == "model" ? &*predictor : nullptr);
  std::fprintf(stderr, "simulate: %zu jobs after the %.2f split%s (%.1f s)\n", st.rows(), o.split,
               o.ttl == "model" ? ", predicted" : "", seconds_since(t0));

  nlohmann::json j;
  j["scheduler"] = o.scheduler;
  j["policy"] = o.ttl;
  j["trace"] = o.data;
  j["split"] = o.split;
  const auto t_sim = std::chrono::steady_clock::now();
  if (grid) {
    const auto policy = o.ttl == "static" ? sim::GridTtl::Static : o.ttl == "model" ? sim::GridTtl::Model : sim::GridTtl::Oracle;
    const auto jobs = sim::grid_jobs(st, policy, o.default_ttl);
    const sim::GridConfig cfg = sim::grid_config(st, policy, grid_options(o));
    double cores = 0;
    for (const auto& s : cfg.slots) cores += s.cores;
    std::fprintf(stderr, "simulate: %zu pilot slots, %.0f cores (load %.2f)\n", cfg.slots.size(), cores, o.load);
    const sim::GridResult r = sim::simulate_jalien(jobs, cfg);
    j["slots"] = cfg.slots.size();
    j["cores"] = cores;
    j["seed"] = o.seed;
    j.update(sim::metrics_json(r.metrics));
    if (!o.out.empty()) sim::write_grid_outputs(o.out, jobs, r);
  } else {
    int procs = o.procs;
    if (procs <= 0 && format == "swf") procs = sim::swf_max_procs(o.data).value_or(0);
    if (procs <= 0) throw Error("simulate: the machine size is unknown: the trace has no MaxProcs header, give --procs");
    sim::BatchConfig cfg;
    cfg.machine_procs = procs;
    cfg.policy = o.scheduler == "fcfs" ? sim::BatchPolicy::Fcfs : o.scheduler == "easy" ? sim::BatchPolicy::Easy : sim::BatchPolicy::EasyPlusPlus;
    cfg.estimator = o.ttl == "request" ? sim::Estimator::Request : o.ttl == "last2" ? sim::Estimator::Last2
                    : o.ttl == "model" ? sim::Estimator::Model : sim::Estimator::Oracle;
    const auto jobs = sim::batch_jobs(st);
    const sim::BatchResult r = sim::simulate_batch(jobs, cfg);
    j["procs"] = procs;
    j.update(sim::metrics_json(r.metrics));
    if (!o.out.empty()) sim::write_batch_outputs(o.out, jobs, r);
  }
  j["simulate_seconds"] = seconds_since(t_sim);
  std::fprintf(stderr, "simulate: simulated in %.2f s\n", seconds_since(t_sim));
  if (!o.out.empty()) std::fprintf(stderr, "simulate: wrote %s/schedule.csv and %s/timeseries.csv\n", o.out.c_str(), o.out.c_str());
  if (o.json) {
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  for (const auto& [k, v] : j.items()) std::printf("%-28s %s\n", k.c_str(), v.dump().c_str());
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto o = std::make_shared<SimulateOptions>();
  auto* cmd = app.add_subcommand("simulate", "Simulate a broker or batch scheduler on a trace with a TTL policy (docs/SIMULATION.md)");
  cmd->add_option("--data", o->data, kDataHelp)->required();
  cmd->add_option("--scheduler", o->scheduler, "jalien (ALICE pull broker), fcfs, easy or easy++ (batch cluster)")->capture_default_str();
  cmd->add_option("--ttl", o->ttl, "TTL / run-time estimate policy: static, model, oracle (jalien); request, last2, model, oracle (batch)")
      ->capture_default_str();
  cmd->add_option("--model", o->model, "model file (for --ttl model)");
  cmd->add_option("--split", o->split, "simulate the jobs after this fraction in submit order (the part a model trained with it never saw); 0: all")
      ->capture_default_str();
  cmd->add_option("--procs", o->procs, "batch machine size (default: the SWF header's MaxProcs)");
  cmd->add_option("--load", o->load, "jalien: pilot slot cores = offered load / this")->capture_default_str();
  cmd->add_option("--pilot-gap", o->pilot_gap, "jalien: mean seconds before an emptied slot gets a new pilot")->capture_default_str();
  cmd->add_option("--proxy-lifetime", o->proxy_lifetime, "jalien: proxy lifetime cap on a pilot's time left (s; 0: none)")->capture_default_str();
  cmd->add_option("--max-retries", o->max_retries, "jalien: resubmissions of a killed job")->capture_default_str();
  cmd->add_option("--default-ttl", o->default_ttl, "jalien: static TTL of a job without one (JAliEn: 21600 s)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "jalien: seed of slots and pilot arrivals")->capture_default_str();
  cmd->add_option("--variant", o->variant, "engine variant, or auto")->capture_default_str();
  cmd->add_option("--isa", o->isa, "pin an instruction set");
  cmd->add_option("--alpha", o->alpha, "target kill rate of the safe TTL")->capture_default_str();
  add_bound_options(*cmd, o->bounds);
  cmd->add_flag("--json", o->json, "print one JSON object: scheduler, policy, every metric");
  cmd->add_option("--out", o->out, "write DIR/schedule.csv (per job) and DIR/timeseries.csv (per hour)");
  cmd->callback([o] { run_simulate(*o); });
}

}  // namespace ttlpred::cli
