#include "app/simulate_run.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "engine/variant.hpp"
#include "app/simulate_figures.hpp"
#include "sim/online_model_ttl.hpp"
#include "sim/online_ttl.hpp"
#include "sim/policy_table.hpp"
#include "sim/sim_input.hpp"
#include "sim/sim_output.hpp"
#include "sim/swf_header.hpp"
#include "util/error.hpp"

namespace ttlpred::app {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The loop's heads, --quantiles auto read for the scheduler (kLoopQuantilesAuto).
std::string loop_quantiles(const SimulateCliOptions& o) {
  if (o.choices.quantiles != kLoopQuantilesAuto) return o.choices.quantiles;
  return o.scheduler == "jalien" ? "off" : kDefaultQuantileLevels;
}

sim::OnlineModelOptions online_model_options(const SimulateCliOptions& o) {
  sim::OnlineModelOptions m;
  m.retrain_every_s = parse_duration(o.retrain_every, "--retrain-every");
  m.min_outcomes = o.online_min_jobs;
  ModelChoiceOptions choices = o.choices;
  choices.quantiles = loop_quantiles(o);
  apply_model_choices(choices, m.fit);
  m.fit.train.seed = o.train_seed;
  m.predictor = predictor_options(o.variant, o.isa, o.alpha, o.bounds);
  return m;
}

sim::GridOptions grid_options(const SimulateCliOptions& o, const SimulateProgress& progress) {
  sim::GridOptions g;
  g.load = o.load;
  g.pilot_gap_s = o.pilot_gap;
  g.proxy_lifetime_s = o.proxy_lifetime;
  g.max_retries = o.max_retries;
  g.default_ttl_s = o.default_ttl;
  g.seed = o.seed;
  g.calibration = o.calibration;
  g.calibration_key = o.calibration_key;
  g.gamma = o.gamma;
  g.target_scale = o.target_scale;
  g.batch_guard = o.batch_guard;
  g.stats.rule = sim::stats_rule_from_name(o.stats_rule);
  g.stats.min_jobs = o.stats_min_jobs;
  if (o.ttl == "online") {
    g.online = online_model_options(o);
    g.online_progress = progress;
  }
  return g;
}

nlohmann::json online_model_json(const SimulateCliOptions& o, const sim::OnlineModelStats& s) {
  nlohmann::json j = {{"retrain_every", o.retrain_every}, {"min_jobs", o.online_min_jobs}, {"train_seed", o.train_seed},
                      {"alpha", o.alpha},                 {"retrains", s.retrains},      {"predicted_jobs", s.predicted},
                      {"fallback_jobs", s.fallbacks},     {"train_seconds", s.train_seconds},
                      {"quantiles", loop_quantiles(o)}};
  if (s.first_model_at_s >= 0) j["first_model_at_s"] = s.first_model_at_s;
  return j;
}

}  // namespace

void add_simulate_options(CLI::App& cmd, SimulateCliOptions& o) {
  cmd.add_option("--scheduler", o.scheduler, "jalien (ALICE pull broker), fcfs, easy or easy++ (batch cluster)")->capture_default_str();
  cmd.add_option("--ttl", o.ttl,
                 "TTL / run-time estimate policy: static, model, jalien-stats (JAliEn's history-based TTL), online, oracle "
                 "(jalien); request, last2, model, online, oracle (batch). online: a model learnt from the jobs that end in "
                 "the simulation, from an empty start")
      ->capture_default_str();
  cmd.add_option("--model", o.model, "model file (for --ttl model)");
  cmd.add_option("--split", o.split, "simulate the jobs after this fraction in submit order (the part a model trained with it never saw); 0: all")
      ->capture_default_str();
  cmd.add_option("--procs", o.procs, "batch machine size (default: the SWF header's MaxProcs)");
  cmd.add_option("--load", o.load, "jalien: pilot slot cores = offered load / this")->capture_default_str();
  cmd.add_option("--pilot-gap", o.pilot_gap, "jalien: mean seconds before an emptied slot gets a new pilot")->capture_default_str();
  cmd.add_option("--proxy-lifetime", o.proxy_lifetime, "jalien: proxy lifetime cap on a pilot's time left (s; 0: none)")->capture_default_str();
  cmd.add_option("--max-retries", o.max_retries, "jalien: resubmissions of a killed job")->capture_default_str();
  cmd.add_option("--default-ttl", o.default_ttl, "jalien: static TTL of a job without one (JAliEn: 21600 s)")->capture_default_str();
  cmd.add_option("--seed", o.seed, "jalien: seed of slots and pilot arrivals; fcfs, easy, easy++: of --oracle-overestimate's draws")
      ->capture_default_str();
  cmd.add_option("--variant", o.variant, "engine variant (" + engine::variant_names_list() + "), or auto")->capture_default_str();
  cmd.add_option("--isa", o.isa, "pin an instruction set");
  add_alpha_option(cmd, o.alpha);
  add_calibration_option(cmd, o.calibration,
                         "jalien, --ttl model or online: the safe TTL's calibration, following the outcomes as jobs end: static "
                         "(the model's), rolling, aci, aci-capped, multi-aci, mondrian (serve --calibration's methods), aci-cpu, "
                         "mondrian-cpu (steps weighted by CPU time), or aci, mondrian, aci-cpu, mondrian-cpu with -log (the "
                         "level stepped in log space)",
                         [](const std::string& name) { sim::sim_calibration_from_name(name); });
  add_calibration_key_option(cmd, o.calibration_key);
  add_online_tuning_options(cmd, o.gamma, o.target_scale, o.batch_guard,
                            {"aci, aci-cpu, mondrian (and -log; the service's default)", "aci, aci-cpu, multi-aci, mondrian",
                             " (aci-cpu: in CPU time)"});
  cmd.add_option("--host-speed", o.host_speed,
                 "jalien: trace (a job runs its recorded wall time on the host the trace recorded) or slot (each pilot "
                 "slot has a host of one of the trace's CPU models; the job runs its work at that host's speed and the "
                 "model is asked for it on that host)")
      ->capture_default_str();
  cmd.add_option("--stats-rule", o.stats_rule,
                 "jalien, --ttl jalien-stats: the estimated TTL from a (production, site, CPU model) key's finished jobs: max, "
                 "mean+2sd or mean+3sd (the static TTL until the key has --stats-min-jobs; never above it)")
      ->check(parsed_by("--stats-rule", "RULE", [](const std::string& name) { sim::stats_rule_from_name(name); }))
      ->capture_default_str();
  cmd.add_option("--stats-min-jobs", o.stats_min_jobs, "jalien, --ttl jalien-stats: finished jobs a key needs before its estimate is used")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::numeric_limits<std::size_t>::max()));
  add_retrain_every_option(cmd, o.retrain_every,
                           "--ttl online: retrain the model on the jobs finished so far this often in simulated time");
  cmd.add_option("--online-min-jobs", o.online_min_jobs,
                 "--ttl online: finished jobs before the first model (until then: the user's last two run times)")
      ->capture_default_str();
  cmd.add_option("--train-seed", o.train_seed, "--ttl online: the trainer's seed")->capture_default_str();
  add_model_choice_options(cmd, o.choices);  // --ttl online's models: train's choices
  CLI::Option* quantiles = cmd.get_option("--quantiles");
  quantiles->description(quantiles->get_description() +
                         "; auto: train's heads (" + kDefaultQuantileLevels + ") under fcfs, easy and easy++, off under jalien");
  cmd.add_option("--estimate-scale", o.estimate_scale,
                 "easy, easy++ with --ttl model or online: the backfilling estimate is the model's expected time times "
                 "this scale (the safe TTL stays the first correction); auto: chosen each week of simulated time among "
                 "1, 1/2, 1/4, 1/8, 1/16 by replaying the last four weeks' ended jobs with each (the least aggressive "
                 "within one standard error of the lowest average bounded slowdown over every replay so far); a number "
                 "in (0, 1]: that scale")
      ->check(parsed_by("--estimate-scale", "SCALE", [](const std::string& text) { sim::estimate_scale_from_text(text); }))
      ->capture_default_str();
  cmd.add_option("--oracle-overestimate", o.oracle_overestimate,
                 "fcfs, easy, easy++ with --ttl oracle: each job's estimate is its run time times 1 + F x u, u uniform in "
                 "[0, 1) drawn per job from --seed, never above its request (never short: no corrections): how far the "
                 "clairvoyant schedule moves when its estimates move; 0: exact")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  add_bound_options(cmd, o.bounds);
  cmd.add_option("--out", o.out,
                 "write DIR/schedule.csv (per job), DIR/timeseries.csv (per hour) and DIR/report.html (the hourly series drawn)");
}

std::optional<Predictor> load_simulate_model(const SimulateCliOptions& o) {
  const bool grid = o.scheduler == "jalien";
  if (!grid && o.scheduler != "fcfs" && o.scheduler != "easy" && o.scheduler != "easy++")
    throw Error("simulate: --scheduler must be jalien, fcfs, easy or easy++, got '" + o.scheduler + "'");
  const bool batch_policy = o.ttl == "request" || o.ttl == "last2" || o.ttl == "model" || o.ttl == "oracle" || o.ttl == "online";
  const bool grid_policy =
      o.ttl == "static" || o.ttl == "model" || o.ttl == "oracle" || o.ttl == "jalien-stats" || o.ttl == "online";
  if (grid ? !grid_policy : !batch_policy)
    throw Error("simulate: --ttl " + o.ttl + " does not apply to --scheduler " + o.scheduler +
                (grid ? " (jalien takes static, model, jalien-stats, online, oracle)"
                      : " (fcfs, easy, easy++ take request, last2, model, online, oracle)"));
  if (o.ttl == "model" && o.model.empty()) throw Error("simulate: --ttl model needs --model");
  if (o.host_speed != "trace" && o.host_speed != "slot")
    throw Error("simulate: --host-speed must be trace or slot, got '" + o.host_speed + "'");
  if (o.host_speed == "slot" && !grid) throw Error("simulate: --host-speed slot applies to --scheduler jalien");
  const sim::SimCalibration cal = sim::sim_calibration_from_name(o.calibration);
  // The default calibration goes wherever a model's TTL is followed; another one named where no
  // model's TTL is (a batch scheduler, --ttl static ...) would change nothing and is refused.
  if (cal.method != OnlineMethod::Static && o.calibration != kDefaultCalibration &&
      !(grid && (o.ttl == "model" || o.ttl == "online")))
    throw Error("simulate: --calibration " + o.calibration + " applies to --scheduler jalien --ttl model or online");
  if (o.estimate_scale != sim::kDefaultEstimateScale && !((o.scheduler == "easy" || o.scheduler == "easy++") && (o.ttl == "model" || o.ttl == "online")))
    throw Error("simulate: --estimate-scale applies to --scheduler easy or easy++ with --ttl model or online");
  if (o.oracle_overestimate != 0 && (grid || o.ttl != "oracle"))
    throw Error("simulate: --oracle-overestimate applies to --scheduler fcfs, easy or easy++ with --ttl oracle");
  if (!(o.choices == online_model_choices()) && o.ttl != "online")
    throw Error("simulate: --quantiles, --piecewise-bins, --residual, --request-key, --censored-rates and --system-key "
                "apply to --ttl online (the models it trains; --ttl model's were chosen at train)");
  std::optional<Predictor> predictor;
  if (!o.model.empty()) predictor.emplace(Predictor::load(o.model, predictor_options(o.variant, o.isa, o.alpha, o.bounds)));
  return predictor;
}

nlohmann::json run_simulate(const SimulateCliOptions& o, const std::optional<Predictor>& predictor, SimulateInput input,
                            const SimulateProgress& progress) {
  const auto say = [&](const char* format, auto... args) {
    if (!progress) return;
    char line[400];
    std::snprintf(line, sizeof line, format, args...);
    progress(line);
  };
  const auto t0 = std::chrono::steady_clock::now();
  const bool grid = o.scheduler == "jalien";
  if (predictor) check_model_fits_trace(*predictor, o.model, input.trace, input.format, false);
  if (o.ttl == "model" && o.split < predictor->model().provenance.split)
    say("simulate: WARNING: --split %.2f is below the model's training split %.2f: on its own training trace, the "
        "simulated jobs include jobs the model learned from", o.split, predictor->model().provenance.split);
  const sim::SimTrace st = sim::prepare_trace(std::move(input.trace), o.split, o.ttl == "model" ? &*predictor : nullptr,
                                              o.host_speed == "slot");
  say("simulate: %zu jobs after the %.2f split%s (%.1f s)", st.rows(), o.split, o.ttl == "model" ? ", predicted" : "",
      seconds_since(t0));

  nlohmann::json j;
  j["scheduler"] = o.scheduler;
  j["policy"] = o.ttl;
  j["trace"] = input.data;
  j["split"] = o.split;
  const auto t_sim = std::chrono::steady_clock::now();
  std::vector<sim::HourSample> hours;
  if (grid) {
    const auto policy = o.ttl == "static"         ? sim::GridTtl::Static
                        : o.ttl == "model"        ? sim::GridTtl::Model
                        : o.ttl == "jalien-stats" ? sim::GridTtl::JalienStats
                        : o.ttl == "online"       ? sim::GridTtl::Online
                                                  : sim::GridTtl::Oracle;
    if (!st.hosts.empty()) say("simulate: %zu host classes (cpu_model)", st.hosts.classes.size());
    sim::PolicyRun run = sim::run_jalien_policy(st, policy, grid_options(o, progress));
    const sim::GridConfig& cfg = run.config;
    double cores = 0;
    for (const auto& s : cfg.slots) cores += s.cores;
    say("simulate: %zu pilot slots, %.0f cores (load %.2f)", cfg.slots.size(), cores, o.load);
    j["slots"] = cfg.slots.size();
    j["cores"] = cores;
    j["seed"] = o.seed;
    j["host_speed"] = o.host_speed;
    if (!st.hosts.empty()) j["host_classes"] = st.hosts.classes.size();
    if (o.ttl == "model" || o.ttl == "online") {
      j["alpha"] = o.alpha;
      j["calibration"] = o.calibration;
      if (o.calibration != "static") {
        j["gamma"] = o.gamma;
        j["target_scale"] = o.target_scale;
        j["batch_guard"] = o.batch_guard;
      }
      const double level = sim::final_calibration_level(run);
      if (!std::isnan(level)) j["calibration_final_level"] = level;
    }
    if (const auto* loop = dynamic_cast<const sim::OnlineModelTtl*>(run.source.get()))
      j["online"] = online_model_json(o, loop->model().stats());
    if (const auto* stats = dynamic_cast<const sim::JalienStatsTtl*>(run.source.get())) {
      j["stats_rule"] = o.stats_rule;
      j["stats_min_jobs"] = o.stats_min_jobs;
      j["stats_estimated_jobs"] = stats->estimated();
      j["stats_static_jobs"] = stats->fallbacks();
      j["stats_keys"] = stats->keys_seen();
      say("simulate: jalien-stats answered %zu jobs with an estimate, %zu with the static TTL (%zu keys)", stats->estimated(),
          stats->fallbacks(), stats->keys_seen());
    }
    j.update(sim::metrics_json(run.result.metrics));
    if (!o.out.empty()) sim::write_grid_outputs(o.out, run.jobs, run.result);
    hours = std::move(run.result.hours);
  } else {
    int procs = o.procs;
    if (procs <= 0 && input.format == "swf" && !input.swf_header.empty())
      procs = sim::swf_max_procs(input.swf_header).value_or(0);
    if (procs <= 0) throw Error("simulate: the machine size is unknown: the trace has no MaxProcs header, give --procs");
    sim::BatchConfig cfg;
    cfg.machine_procs = procs;
    cfg.policy = o.scheduler == "fcfs" ? sim::BatchPolicy::Fcfs : o.scheduler == "easy" ? sim::BatchPolicy::Easy : sim::BatchPolicy::EasyPlusPlus;
    cfg.estimator = o.ttl == "request" ? sim::Estimator::Request : o.ttl == "last2" ? sim::Estimator::Last2
                    : o.ttl == "model" ? sim::Estimator::Model : o.ttl == "online" ? sim::Estimator::Online
                    : sim::Estimator::Oracle;
    if (o.ttl == "model" || o.ttl == "online") cfg.scale = sim::estimate_scale_from_text(o.estimate_scale);
    cfg.oracle_overestimate = o.oracle_overestimate;
    cfg.oracle_seed = o.seed;
    const auto jobs = sim::batch_jobs(st);
    std::optional<sim::OnlineModel> online;
    std::optional<sim::OnlineModelEstimates> estimates;
    if (o.ttl == "online") {
      online.emplace(st.split.jobs, st.first_row, online_model_options(o), progress);
      estimates.emplace(*online);
      cfg.source = &*estimates;
    }
    sim::BatchResult r = sim::simulate_batch(jobs, cfg);
    j["procs"] = procs;
    j.update(sim::metrics_json(r.metrics));
    if (o.ttl == "model" || o.ttl == "online") {
      j["estimate_scale_option"] = o.estimate_scale;
      j["estimate_scale"] = r.metrics.estimate_scale;
      j["mean_estimate_scale"] = r.metrics.mean_estimate_scale;
      j["estimate_scale_replays"] = r.metrics.estimate_scale_replays;
    }
    if (o.oracle_overestimate != 0) j["oracle_overestimate"] = {{"factor", o.oracle_overestimate}, {"seed", o.seed}};
    if (online) j["online"] = online_model_json(o, online->stats());
    if (!o.out.empty()) sim::write_batch_outputs(o.out, jobs, r);
    hours = std::move(r.hours);
  }
  j["simulate_seconds"] = seconds_since(t_sim);
  say("simulate: simulated in %.2f s", seconds_since(t_sim));
  if (!o.out.empty()) {
    write_simulate_report(j, hours, o.out);
    say("simulate: wrote %s/schedule.csv, %s/timeseries.csv and %s/report.html", o.out.c_str(), o.out.c_str(),
        o.out.c_str());
  }
  return j;
}

}  // namespace ttlpred::app
