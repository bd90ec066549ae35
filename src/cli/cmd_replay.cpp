// `ttlpred replay`: the service's loop run offline over a trace in time order, retraining on
// schedule beside a frozen model (learn/replay.hpp); per-week RMSE, kill rate and mean safe
// TTL of both.
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "learn/duration.hpp"
#include "learn/learn_json.hpp"
#include "learn/replay.hpp"
#include "serve/group_drift.hpp"
#include "train/train_config.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {
namespace {

struct ReplayCommand {
  std::string data, retrain_every = "7d", window = "0", from = retrain_start_name(RetrainOptions{}.start), calibration = kDefaultCalibration;
  std::string hidden = widths_text(TrainConfig{}.hidden);
  std::string killed_as = killed_as_name(ReplayOptions::Killed::Censored), censored = kDefaultRetrainCensored ? "on" : "off";
  ReplayOptions options;
  double alpha = kDefaultAlpha, week_days = 7;
  std::uint32_t epochs = 0, retrain_epochs = 0;
  std::uint64_t seed = TrainConfig{}.seed;  // training seed: the trainer's default
  BoundOptions bounds;
  bool json = false, drift_grid = false;
  std::string outcomes_csv;
  std::uint64_t drift_min_outcomes = serve::DriftOptions{}.min_outcomes;
};

// The drift alarm (serve/group_drift.hpp) over a grid of its settings and both scopes, run on
// the residuals each side of the replay served (against the run times its service would
// learn), in the order the outcomes arrive: how often it fires where nothing drifts, and how
// soon where something does (docs/ACCURACY.md, "Tuning the drift alarm").
struct DriftGridCell {
  serve::DriftScope scope = serve::DriftScope::Group;
  serve::DriftDirection direction = serve::DriftDirection::Longer;
  double delta = 0, threshold = 0;
  std::size_t frozen_alarms = 0, retrained_alarms = 0;
  double frozen_first_day = -1;  // days after the first replayed submit; -1: never
  std::vector<double> frozen_alarm_days;  // the first kMaxAlarmDays
};
constexpr std::size_t kMaxAlarmDays = 100;

std::vector<DriftGridCell> drift_grid(const ReplayResult& r, std::uint64_t min_outcomes) {
  // The groups by the service's rule (serve/live_groups.hpp), named by their bucket.
  auto group = [](std::uint32_t g) {
    const std::uint32_t b = serve::live_group_bucket(g);
    return b == kNoGroup ? std::string() : std::to_string(b);
  };
  std::vector<DriftGridCell> out;
  for (serve::DriftDirection direction : {serve::DriftDirection::Both, serve::DriftDirection::Longer})
    for (serve::DriftScope scope : {serve::DriftScope::All, serve::DriftScope::Group})
      for (double delta : {0.05, 0.1, 0.2, 0.3, 0.5})
        for (double threshold : {25.0, 50.0, 100.0, 200.0, 400.0, 800.0}) {
          DriftGridCell c;
          c.direction = direction;
          c.scope = scope;
          c.delta = delta;
          c.threshold = threshold;
          serve::DriftOptions d;
          d.delta = delta;
          d.threshold = threshold;
          d.min_outcomes = min_outcomes;
          d.scope = scope;
          d.direction = direction;
          serve::DriftTest frozen(d), retrained(d);
          std::uint32_t serving = 0;  // the retrained side's model, as its service's reloads saw them
          for (const ReplayOutcome& o : r.outcomes) {
            if (frozen.add(group(o.frozen.group), serve::log_residual(o.frozen.delivered_s, o.frozen.expected_s))) {
              const double day = (o.known_at_s - r.scored_start_s) / 86400.0;
              if (c.frozen_alarms++ == 0) c.frozen_first_day = day;
              if (c.frozen_alarm_days.size() < kMaxAlarmDays) c.frozen_alarm_days.push_back(day);
            }
            // A service restarts its tests when a new model is swapped in, and an outcome answered
            // by the model before is not matched (docs/service.md, "Served predictions").
            if (o.retrained.model > serving) {
              serving = o.retrained.model;
              retrained.reset();
            }
            if (o.retrained.model == serving)
              c.retrained_alarms += retrained.add(group(o.retrained.group),
                                                  serve::log_residual(o.retrained.delivered_s, o.retrained.expected_s));
          }
          out.push_back(std::move(c));
        }
  return out;
}

// One line per outcome in arrival order: what each side served and learned, for studying the
// drift alarm offline (the residuals the grid runs on).
void write_outcomes_csv(const ReplayResult& r, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw Error("--outcomes-csv: cannot write " + path);
  std::fprintf(f, "known_at_day,wall_s,frozen_expected_s,frozen_delivered_s,frozen_group,retrained_expected_s,"
                  "retrained_delivered_s,retrained_group\n");
  auto group = [](std::uint32_t g) { return g == kNoGroup ? -1L : static_cast<long>(g); };
  for (const ReplayOutcome& o : r.outcomes)
    std::fprintf(f, "%.6f,%.17g,%.17g,%.17g,%ld,%.17g,%.17g,%ld\n", (o.known_at_s - r.scored_start_s) / 86400.0, o.wall_s,
                 o.frozen.expected_s, o.frozen.delivered_s, group(o.frozen.group), o.retrained.expected_s,
                 o.retrained.delivered_s, group(o.retrained.group));
  if (std::fclose(f) != 0) throw Error("--outcomes-csv: writing " + path + " failed");
}

void print_side(const char* name, const ReplaySide& s) {
  std::printf("  %-10s RMSE %.3f h  kill rate %.2f%% (%zu of %zu)  mean safe TTL %.2f h\n", name, s.rmse_hours,
              100 * s.kill_rate, s.killed, s.rows, s.mean_safe_ttl_hours);
}

void print_replay(const ReplayResult& r, const std::string& data) {
  const ReplayOptions& o = r.options;
  std::printf("replay of %s: first model on %zu jobs, %zu replayed; retrain every %s on the last %s (%s), %s calibration\n",
              data.c_str(), r.initial_rows, r.retrained.rows,
              o.retrain_every_s > 0 ? duration_text(o.retrain_every_s).c_str() : "never", duration_text(o.retrain.window_s).c_str(),
              retrain_start_name(o.retrain.start), std::string(online_method_name(o.online.method)).c_str());
  std::printf("%zu retrains, %zu swaps\n", r.retrains.size(), r.swaps);
  print_side("retrained", r.retrained);
  print_side("frozen", r.frozen);
  std::printf("weeks with >= %zu jobs: %zu; kill rate <= %.2f%% in %zu (retrained) and %zu (frozen)\n", o.min_window_rows,
              r.weeks_counted, 100 * o.kill_limit, r.weeks_within_limit_retrained, r.weeks_within_limit_frozen);
  std::printf("\n%-4s %-10s %7s | %9s %7s %9s | %9s %7s %9s\n", "week", "start", "jobs", "RMSE h", "kill %", "safe h",
              "frozen h", "kill %", "safe h");
  for (std::size_t i = 0; i < r.weeks.size(); ++i) {
    const ReplayWeek& w = r.weeks[i];
    const std::time_t t = static_cast<std::time_t>(w.start_s);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char day[16];
    std::strftime(day, sizeof day, "%Y-%m-%d", &tm);
    std::printf("%-4zu %-10s %7zu | %9.3f %7.2f %9.2f | %9.3f %7.2f %9.2f%s\n", i, day, w.retrained.rows,
                w.retrained.rmse_hours, 100 * w.retrained.kill_rate, w.retrained.mean_safe_ttl_hours, w.frozen.rmse_hours,
                100 * w.frozen.kill_rate, w.frozen.mean_safe_ttl_hours, w.retrained.rows >= o.min_window_rows ? "" : "  (few jobs)");
  }
}

void run_replay_command(ReplayCommand& c) {
  ReplayOptions& o = c.options;
  o.retrain_every_s = parse_duration(c.retrain_every, "--retrain-every");
  const double holdout = o.retrain.holdout_fraction;
  o.retrain = retrain_defaults(retrain_start_from_name(c.from));
  o.retrain.holdout_fraction = holdout;
  o.retrain.window_s = parse_duration(c.window, "--window");
  o.retrain.fit.censored = parse_censored(c.censored);
  o.killed_as = killed_as_from_name(c.killed_as);
  o.online.method = online_method_from_name(c.calibration);
  o.predictor = predictor_options("auto", "", c.alpha, c.bounds);
  o.retrain.predictor = o.predictor;
  o.week_s = c.week_days * 86400.0;
  if (c.epochs > 0) o.initial_fit.train.max_epochs = c.epochs;
  if (c.retrain_epochs > 0) o.retrain.fit.train.max_epochs = c.retrain_epochs;
  if (!c.hidden.empty()) {
    o.initial_fit.train.hidden = parse_widths(c.hidden, "--hidden");
    o.retrain.fit.train.hidden = o.initial_fit.train.hidden;
  }
  o.initial_fit.train.seed = o.retrain.fit.train.seed = c.seed;
  o.keep_outcomes = c.drift_grid || !c.outcomes_csv.empty();
  const JobTable trace = load_trace(c.data, c.json);
  const ReplayResult r = run_replay(trace, o, [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
  if (!c.outcomes_csv.empty()) write_outcomes_csv(r, c.outcomes_csv);
  const auto grid = c.drift_grid ? drift_grid(r, c.drift_min_outcomes) : std::vector<DriftGridCell>{};
  if (c.json) {
    nlohmann::json j = replay_json(r);
    j["data"] = c.data;
    if (c.drift_grid) {
      j["drift_grid"] = nlohmann::json::array();
      for (const auto& g : grid)
        j["drift_grid"].push_back({{"direction", serve::drift_direction_name(g.direction)},
                                   {"scope", serve::drift_scope_name(g.scope)},
                                   {"delta", g.delta},
                                   {"threshold", g.threshold},
                                   {"outcomes", r.outcomes.size()},
                                   {"frozen_alarms", g.frozen_alarms},
                                   {"frozen_first_alarm_day", g.frozen_first_day < 0 ? nlohmann::json(nullptr) : nlohmann::json(g.frozen_first_day)},
                                   {"frozen_alarm_days", g.frozen_alarm_days},
                                   {"retrained_alarms", g.retrained_alarms}});
    }
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  print_replay(r, c.data);
  if (c.drift_grid) {
    std::printf("\ndrift alarms over %zu outcomes (Page-Hinkley, at least %llu outcomes between alarms)\n", r.outcomes.size(),
                static_cast<unsigned long long>(c.drift_min_outcomes));
    std::printf("%9s %6s %6s %9s | %13s %16s | %16s\n", "direction", "scope", "delta", "threshold", "frozen alarms",
                "first (day)", "retrained alarms");
    for (const auto& g : grid)
      std::printf("%9s %6s %6.2f %9.0f | %13zu %16.2f | %16zu\n", serve::drift_direction_name(g.direction),
                  serve::drift_scope_name(g.scope), g.delta, g.threshold, g.frozen_alarms, g.frozen_first_day,
                  g.retrained_alarms);
  }
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto c = std::make_shared<ReplayCommand>();
  auto* cmd = app.add_subcommand(
      "replay", "Prequential replay: predict at submit, learn at finish, retrain on schedule, beside a frozen model");
  cmd->add_option("--data", c->data, kDataHelp)->required();
  add_retrain_every_option(*cmd, c->retrain_every, "retrain on the outcomes known by then this often in submit time");
  cmd->add_option("--window", c->window, "each retrain learns from outcomes submitted this long before it")
      ->capture_default_str();
  cmd->add_option("--from", c->from, "retrain by fine-tune or from scratch")->capture_default_str();
  cmd->add_option("--holdout", c->options.retrain.holdout_fraction,
                  "fraction of a retrain's outcomes, the most recent, held out for its shadow evaluation")
      ->capture_default_str();
  cmd->add_option("--initial", c->options.initial_fraction, "fraction of the eligible jobs the first model trains on")
      ->capture_default_str();
  add_calibration_option(*cmd, c->calibration, "online safe-TTL calibration: static, rolling, aci, multi-aci, mondrian or aci-capped",
                         [](const std::string& name) { online_method_from_name(name); });
  add_alpha_option(*cmd, c->alpha);
  cmd->add_option("--window-days", c->week_days, "length of the reporting windows, in days of submit time")
      ->capture_default_str();
  cmd->add_option("--min-window-rows", c->options.min_window_rows, "windows with fewer jobs are listed, not counted")
      ->capture_default_str();
  cmd->add_option("--kill-limit", c->options.kill_limit, "a window keeps the promise at or below this kill rate")
      ->capture_default_str();
  cmd->add_option("--epochs", c->epochs, "maximum epochs of the first model (0: the trainer's default)")->capture_default_str();
  cmd->add_option("--retrain-epochs", c->retrain_epochs, "maximum epochs of each retrain (0: 6 for a fine-tune)")
      ->capture_default_str();
  cmd->add_option("--hidden", c->hidden, "hidden layer widths of the first model")->capture_default_str();
  cmd->add_option("--seed", c->seed, "training seed")->capture_default_str();
  cmd->add_option("--killed-as", c->killed_as,
                  "what a retrain learns of a job its served safe TTL killed: censored (the TTL plus --kill-margin, status "
                  "ERROR_E or TIMEOUT, as a service's journal holds it) or run-time (its true run time)")
      ->check(CLI::IsMember({"censored", "run-time"}))
      ->capture_default_str();
  cmd->add_option("--kill-margin", c->options.kill_margin_s, "seconds a job runs past its safe TTL before it is killed")
      ->capture_default_str();
  add_censored_option(*cmd, c->censored);
  cmd->add_option("--outcomes-csv", c->outcomes_csv,
                  "write every outcome (arrival day, run time, each side's expected, delivered run time and group) here");
  cmd->add_flag("--drift-grid", c->drift_grid,
                "also run the drift alarm over a grid of its settings (delta, threshold, direction, scope; at least 30 outcomes between alarms) on each side's residuals");
  add_bound_options(*cmd, c->bounds);
  cmd->add_flag("--json", c->json, "print one JSON object");
  cmd->callback([c] { run_replay_command(*c); });
}

}  // namespace ttlpred::cli
