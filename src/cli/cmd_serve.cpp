// `ttlpred serve`: the prediction service for the job broker (docs/service.md).
#include <pthread.h>
#include <systemd/sd-daemon.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "engine/variant.hpp"
#include "learn/duration.hpp"
#include "serve/admin_token.hpp"
#include "serve/http_server.hpp"
#include "serve/retrain_loop.hpp"
#include "serve/service.hpp"
#include "util/error.hpp"
#include "util/signal_pipe.hpp"

namespace ttlpred::cli {
namespace {

struct ServeOptions {
  std::string model, listen = serve::HttpOptions{}.host + ':' + std::to_string(serve::HttpOptions{}.port);
  std::string variant = "auto", journal, admin_token, admin_token_file, access_log;
  double alpha = kDefaultAlpha;
  bool open_outcomes = false;
  double outcome_rate = serve::HttpOptions{}.outcome_rate, outcome_burst = serve::HttpOptions{}.outcome_burst;
  BoundOptions bounds;
  std::string device = kDefaultDevice;
  // The server's and the service's own defaults (serve/http_server.hpp, serve/service.hpp).
  std::size_t threads = serve::HttpOptions{}.threads, max_body = serve::HttpOptions{}.max_body;
  std::size_t max_header = serve::HttpOptions{}.max_header, max_connections = serve::HttpOptions{}.max_connections;
  std::size_t max_batch = serve::ServiceOptions{}.max_batch;
  std::uint64_t snapshot_every = serve::ServiceOptions{}.snapshot_every;
  double max_outcome_wall_s = serve::ServiceOptions{}.max_outcome_wall_s;
  double outcome_kill_margin_s = serve::ServiceOptions{}.outcome_kill_margin_s;
  std::uint64_t max_model_bytes = serve::ServiceOptions{}.max_model_bytes;
  std::size_t history_capacity = serve::ServiceOptions{}.history_capacity;
  std::size_t running_capacity = serve::ServiceOptions{}.running_capacity;
  double running_max_age_s = serve::ServiceOptions{}.running_max_age_s;
  bool sync_starts = serve::ServiceOptions{}.sync_starts;
  // static by default: out of the box the service answers what `predict` and `eval` answer
  // (one rule for every caller). With outcomes flowing, `aci-capped` keeps the kill rate at
  // every backtest split (docs/ACCURACY.md, "The chosen method"), `aci-log` at 0.35 alpha the
  // CPU lost to kills in the broker simulation (docs/SIMULATION.md); docs/service.md,
  // "Online calibration".
  OnlineCalibrationCli calibration;
  std::string calibration_key = kDefaultCalibrationKey;
  std::size_t recent_predictions = serve::ServiceOptions{}.recent_predictions;
  double drift_delta = serve::DriftOptions{}.delta, drift_threshold = serve::DriftOptions{}.threshold;
  std::string drift_scope = serve::drift_scope_name(serve::DriftOptions{}.scope);
  std::string drift_direction = serve::drift_direction_name(serve::DriftOptions{}.direction);
  std::uint64_t drift_min_outcomes = serve::DriftOptions{}.min_outcomes;
  int read_timeout_s = serve::HttpOptions{}.read_timeout_s, keep_alive_timeout_s = serve::HttpOptions{}.keep_alive_timeout_s;
  // The retrain thread (serve/retrain_loop.hpp); off without --retrain-every.
  std::string retrain_every, retrain_window = "0", retrain_from = retrain_start_name(RetrainOptions{}.start), retrain_out;
  std::string retrain_censored = kDefaultRetrainCensored ? "on" : "off";
  double retrain_holdout = kDefaultHoldoutFraction;
  std::size_t retrain_max_outcomes = kDefaultMaxOutcomes;
  std::uint32_t retrain_epochs = 0;
  bool retrain_on_drift = false;
};

// The retrain thread's options from the command line, or nullopt without --retrain-every.
std::optional<serve::RetrainLoopOptions> retrain_loop_options(const ServeOptions& o) {
  if (o.retrain_every.empty()) return std::nullopt;
  serve::RetrainLoopOptions r;
  r.every_s = parse_duration(o.retrain_every, "--retrain-every");
  r.retrain = retrain_defaults(retrain_start_from_name(o.retrain_from));
  r.retrain.window_s = parse_duration(o.retrain_window, "--retrain-window");
  r.retrain.holdout_fraction = o.retrain_holdout;
  r.retrain.max_outcomes = o.retrain_max_outcomes;
  if (o.retrain_epochs > 0) r.retrain.fit.train.max_epochs = o.retrain_epochs;
  r.retrain.fit.censored = parse_censored(o.retrain_censored);
  r.out_path = o.retrain_out;
  r.on_drift = o.retrain_on_drift;
  return r;
}

void split_listen(const std::string& listen, std::string& host, int& port) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) throw Error("--listen must be HOST:PORT, got '" + listen + "'");
  host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string p = listen.substr(colon + 1);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos || std::stoi(p) > 65535)
    throw Error("--listen: port must be 0..65535, got '" + p + "'");
  port = std::stoi(p);
}

void run_serve(const ServeOptions& o) {
  serve::ServiceOptions so;
  so.model_path = o.model;
  so.predictor = predictor_options(o.variant, "", o.alpha, o.bounds, o.device);
  so.journal_dir = o.journal;
  so.max_batch = o.max_batch;
  so.snapshot_every = o.snapshot_every;
  so.max_outcome_wall_s = o.max_outcome_wall_s;
  so.outcome_kill_margin_s = o.outcome_kill_margin_s;
  so.max_model_bytes = o.max_model_bytes;
  so.history_capacity = o.history_capacity;
  so.running_capacity = o.running_capacity;
  so.running_max_age_s = o.running_max_age_s;
  so.sync_starts = o.sync_starts;
  so.calibration = online_calibration_options(o.calibration);
  so.calibration_key = o.calibration_key;
  so.recent_predictions = o.recent_predictions;
  so.drift.delta = o.drift_delta;
  so.drift.threshold = o.drift_threshold;
  so.drift.scope = serve::drift_scope_from_name(o.drift_scope);
  so.drift.direction = serve::drift_direction_from_name(o.drift_direction);
  so.drift.min_outcomes = o.drift_min_outcomes;
  serve::HttpOptions ho;
  split_listen(o.listen, ho.host, ho.port);
  ho.threads = o.threads;
  ho.max_body = o.max_body;
  ho.max_header = o.max_header;
  ho.read_timeout_s = o.read_timeout_s;
  ho.keep_alive_timeout_s = o.keep_alive_timeout_s;
  ho.max_connections = o.max_connections;
  ho.access_log = o.access_log;
  const serve::AdminToken token = serve::resolve_admin_token({o.admin_token, o.admin_token_file, std::getenv(serve::kAdminTokenEnv)});
  for (const auto& w : token.warnings) std::fprintf(stderr, "ttlpred serve: warning: %s\n", w.c_str());
  ho.admin_token = token.token;
  ho.open_outcomes = o.open_outcomes;
  ho.outcome_rate = o.outcome_rate;
  ho.outcome_burst = o.outcome_burst;
  if (o.open_outcomes && !serve::is_loopback(ho.host))
    throw Error("--open-outcomes is for a test setup on loopback; listening on " + ho.host +
                ", outcomes need an admin token (--admin-token-file)");

  // Signals are handled by one watcher thread, never by a server thread in the middle of a
  // request: our threads inherit a mask that blocks them, and every delivery (on the
  // watcher, or on a thread a library started before main) lands in a pipe the watcher reads.
  // The watcher starts before the model is loaded and the journal replayed, so SIGTERM stops
  // a long start-up too (the replay checks `stop` between lines).
  SignalPipe signal_pipe({SIGHUP, SIGINT, SIGTERM, SIGUSR1});
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGHUP, SIGINT, SIGTERM, SIGUSR1}) sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  std::atomic<bool> stop{false};
  so.stop = &stop;
  std::mutex running_mutex;  // guards the two pointers below, set once serving can start
  serve::Service* running_service = nullptr;
  serve::HttpServer* running_server = nullptr;
  std::thread watcher([&] {
    pthread_sigmask(SIG_UNBLOCK, &signals, nullptr);
    for (;;) {
      const int sig = signal_pipe.wait();
      std::lock_guard lock(running_mutex);
      if (sig == SIGHUP) {
        if (!running_service) {
          std::fprintf(stderr, "ttlpred serve: SIGHUP during start-up: ignored (the model is being loaded)\n");
          continue;
        }
        const std::string why = running_service->reload_from(o.model);
        if (why.empty()) {
          std::fprintf(stderr, "ttlpred serve: SIGHUP: reloaded %s (version %s)\n", o.model.c_str(),
                       running_service->model_version().c_str());
        } else {
          std::fprintf(stderr, "ttlpred serve: SIGHUP: reload refused, still serving %s: %s\n",
                       running_service->model_version().c_str(), why.c_str());
        }
        continue;
      }
      stop = true;
      if (running_service) running_service->set_ready(false);
      if (running_server) running_server->stop();
      return;  // SIGINT/SIGTERM: shut down; SIGUSR1: the server stopped on its own
    }
  });
  auto end_watcher = [&] {
    SignalPipe::notify(SIGUSR1);  // wakes the watcher if it is still waiting
    watcher.join();
  };
  std::optional<serve::Service> service_slot;
  std::optional<serve::HttpServer> server_slot;
  int port = 0;
  try {
    service_slot.emplace(so);
    server_slot.emplace(*service_slot, ho);
    port = server_slot->bind();
  } catch (...) {
    end_watcher();
    throw;
  }
  serve::Service& service = *service_slot;
  serve::HttpServer& server = *server_slot;
  // Declared after the service: stopped (after a retrain in progress) before it goes.
  std::optional<serve::RetrainLoop> retrain_loop;
  if (const auto r = retrain_loop_options(o)) {
    retrain_loop.emplace(service, *r);
    std::fprintf(stderr, "ttlpred serve: retraining every %s on the journal's last %s, candidates written to %s\n",
                 duration_text(r->every_s).c_str(), duration_text(r->retrain.window_s).c_str(), retrain_loop->out_path().c_str());
  }
  const auto loaded = service.model();
  std::fprintf(stderr, "ttlpred serve: model %s (version %s, variant %s on %s), %llu outcomes replayed\n",
               o.model.c_str(), loaded->version.c_str(),
               std::string(engine::variant_name(loaded->predictor.backend().variant())).c_str(),
               std::string(loaded->predictor.backend().target()).c_str(),
               static_cast<unsigned long long>(service.replayed_outcomes()));
  if (!token.source.empty()) std::fprintf(stderr, "ttlpred serve: admin token from %s\n", token.source.c_str());
  const TrainingProvenance& trained = loaded->predictor.model().provenance;
  std::fprintf(stderr, "ttlpred serve: model trained on %s; safe TTLs capped at %s, answers floored at %g s\n",
               trained.empty() ? "(not recorded: an older model file)"
                               : ((trained.trace_format.empty() ? std::string("a trace") : "a " + trained.trace_format + " trace") +
                                  (trained.trace_name.empty() ? std::string() : " (" + trained.trace_name + ")")).c_str(),
               o.bounds.max_ttl_s > 0 ? (std::to_string(static_cast<long long>(o.bounds.max_ttl_s)) + " s").c_str() : "nothing",
               o.bounds.min_seconds);
  // Scripts and tests read the port from this line (it matters with --listen HOST:0).
  std::printf("listening on %s\n", serve::listen_url(ho.host, port).c_str());
  std::fflush(stdout);
  // Under systemd (Type=notify, packaging/ttlpred.service) the unit becomes active only now,
  // with the model loaded, the journal replayed and the socket bound, so units ordered after
  // it find a service that answers. Without NOTIFY_SOCKET this does nothing.
  sd_notify(0, "READY=1");

  bool stopped_early = false;
  {
    std::lock_guard lock(running_mutex);
    running_service = &service;
    running_server = &server;
    stopped_early = stop.load();  // a signal came during start-up, before there was a server to stop
  }
  if (!stopped_early) server.run();
  retrain_loop.reset();
  end_watcher();
  std::fprintf(stderr, "ttlpred serve: stopped\n");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto o = std::make_shared<ServeOptions>();
  auto* cmd = app.add_subcommand("serve", "Serve predictions to the job broker over HTTP/JSON (docs/service.md)");
  cmd->option_defaults()->group("Model and answers");
  cmd->add_option("--model", o->model, "model file")->required();
  cmd->add_option("--variant", o->variant, "inference variant (" + engine::variant_names_list() + "), or auto: the one each loaded model "
                  "was made for")
      ->capture_default_str();
  add_device_option(*cmd, o->device);
  add_alpha_option(*cmd, o->alpha);
  add_bound_options(*cmd, o->bounds);
  cmd->add_option("--max-model-size", o->max_model_bytes,
                  "largest model file a start or reload reads, bytes (regular files only)")
      ->capture_default_str();
  cmd->option_defaults()->group("HTTP");
  cmd->add_option("--listen", o->listen, "HOST:PORT (port 0: any free port, printed at start)")->capture_default_str();
  cmd->add_option("--threads", o->threads, "worker threads = requests served at once (idle connections need none)")
      ->capture_default_str();
  cmd->add_option("--max-connections", o->max_connections,
                  "open connections at most, idle ones included (beyond it new ones are closed at once)")
      ->capture_default_str();
  cmd->add_option("--max-batch", o->max_batch, "most jobs in one request")->capture_default_str();
  cmd->add_option("--max-body", o->max_body, "largest request body, bytes")->capture_default_str();
  cmd->add_option("--max-header", o->max_header, "largest request line and headers, bytes")->capture_default_str();
  cmd->add_option("--read-timeout", o->read_timeout_s, "seconds a request may take to arrive whole, from its first byte")
      ->capture_default_str();
  cmd->add_option("--keep-alive-timeout", o->keep_alive_timeout_s, "seconds an idle connection is kept")
      ->capture_default_str();
  cmd->add_option("--access-log", o->access_log,
                  "JSON-lines access log (time, endpoint, status, latency, batch size): a file, or - for stderr; off by default");
  cmd->option_defaults()->group("Who may write");
  cmd->add_option("--admin-token", o->admin_token,
                  "token for /admin/reload, /v1/outcomes and /v1/started ('Authorization: Bearer T'); required for the "
                  "last two, and for all off loopback. Visible to every local user in ps: prefer --admin-token-file or "
                  "the TTLPRED_ADMIN_TOKEN environment variable");
  cmd->add_option("--admin-token-file", o->admin_token_file,
                  "file holding the admin token (trailing line break ignored; keep it chmod 600)");
  cmd->add_flag("--open-outcomes", o->open_outcomes,
                "without an admin token, accept /v1/outcomes and /v1/started from anyone on loopback (a test setup: "
                "any local process can then move every user's TTL); refused off loopback");
  cmd->add_option("--outcome-rate", o->outcome_rate,
                  "outcomes (and starts) a second one client address may send to /v1/outcomes and /v1/started; past "
                  "it, 429 until its bucket refills (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--outcome-burst", o->outcome_burst, "outcomes one client may send at once before --outcome-rate applies")
      ->capture_default_str();
  cmd->option_defaults()->group("Outcomes and learned state");
  cmd->add_option("--journal", o->journal,
                  "folder for the outcome journal and history snapshots (without it outcomes are not durable)");
  cmd->add_option("--snapshot-every", o->snapshot_every, "outcomes between history snapshots (0: never)")
      ->capture_default_str();
  cmd->add_option("--max-outcome-wall", o->max_outcome_wall_s,
                  "longest wall_s accepted by /v1/outcomes, seconds (longer ones are refused: they would skew every "
                  "prediction through the shared history)")
      ->capture_default_str();
  cmd->add_option("--outcome-kill-margin", o->outcome_kill_margin_s,
                  "refuse an outcome whose wall_s exceeds its requested_ttl_s by more than this many seconds: 300 "
                  "for JAliEn, which kills jobs at TTL + 300 s; negative: no check (schedulers that let jobs overrun)")
      ->capture_default_str();
  cmd->add_option("--history-capacity", o->history_capacity,
                  "most history keys kept (users, production tags, master jobs ...); the least recently updated are "
                  "dropped past it (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--running-capacity", o->running_capacity,
                  "most running jobs kept for a model made for match time; the earliest start goes past it (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--running-max-age", o->running_max_age_s,
                  "seconds after which a start without an outcome stops counting as running and is forgotten")
      ->capture_default_str();
  cmd->add_flag("--sync-starts", o->sync_starts,
                "put each start /v1/match records on disk (fdatasync) before answering; default: written before the "
                "answer, on disk with the next outcome batch");
  cmd->add_option("--recent-predictions", o->recent_predictions,
                  "served predictions kept for their job's outcome (by job_id; the oldest overwritten first; 0: none)")
      ->capture_default_str();
  cmd->option_defaults()->group("Online calibration");
  add_calibration_option(*cmd, o->calibration.name,
                         "online safe-TTL calibration, learning from outcomes matched to the answer served for their job: "
                         "static (the model's), rolling, aci, multi-aci, mondrian, aci-capped, or aci-log, mondrian-log (the "
                         "level stepped in log space) (eval --calibration's methods; aci-capped is the one to deploy with "
                         "outcomes flowing: docs/ACCURACY.md; aci-log with --target-scale 0.35 the one that holds the CPU "
                         "lost to kills under 1 % in the broker simulation: docs/SIMULATION.md)",
                         [](const std::string& name) { answering_calibration_from_name(name); });
  add_calibration_key_option(*cmd, o->calibration_key);
  add_online_tuning_options(*cmd, o->calibration);
  cmd->option_defaults()->group("Drift alarm");
  cmd->add_option("--drift-delta", o->drift_delta, "drift alarm: log residual change tolerated (Page-Hinkley delta)")
      ->capture_default_str();
  cmd->add_option("--drift-threshold", o->drift_threshold, "drift alarm: Page-Hinkley threshold")->capture_default_str();
  cmd->add_option("--drift-scope", o->drift_scope,
                  "drift alarm: one test per job type / queue group (group) or one over all outcomes (all)")
      ->check(CLI::IsMember({"group", "all"}))
      ->capture_default_str();
  cmd->add_option("--drift-direction", o->drift_direction,
                  "drift alarm: raised by jobs running longer than predicted (longer) or by either direction (both)")
      ->check(CLI::IsMember({"longer", "both"}))
      ->capture_default_str();
  cmd->add_option("--drift-min-outcomes", o->drift_min_outcomes, "drift alarm: outcomes a test needs since its last alarm")
      ->capture_default_str();
  cmd->option_defaults()->group("Retraining");
  add_retrain_every_option(*cmd, o->retrain_every,
                           "retrain on the journal's outcomes this often (needs --journal) and swap in a candidate its shadow "
                           "evaluation accepts, as `ttlpred retrain` decides; off by default");
  cmd->add_option("--retrain-window", o->retrain_window, "each retrain learns from outcomes submitted this long before the newest")
      ->capture_default_str();
  cmd->add_option("--retrain-max-outcomes", o->retrain_max_outcomes, "each retrain learns from at most this many, the most recent")
      ->capture_default_str();
  cmd->add_option("--retrain-from", o->retrain_from, "fine-tune (the serving network) or scratch")->capture_default_str();
  cmd->add_option("--retrain-holdout", o->retrain_holdout, "fraction of the outcomes, the most recent, for the shadow evaluation")
      ->capture_default_str();
  cmd->add_option("--retrain-epochs", o->retrain_epochs, "maximum epochs per retrain (0: 6 for a fine-tune)")
      ->capture_default_str();
  cmd->add_option("--retrain-censored", o->retrain_censored,
                  "train outcomes killed at their limit (status ERROR_E or TIMEOUT, or at 99% of their request) as lower "
                  "bounds (on/off)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  cmd->add_flag("--retrain-on-drift", o->retrain_on_drift,
                "with --retrain-every: also retrain at once when the drift alarm is raised; while it stands after a refused candidate, again after as many "
                "further outcomes as the alarm needed, then twice as many each time");
  cmd->add_option("--retrain-out", o->retrain_out, "where accepted candidates are written and reloaded from (default: JOURNAL/retrained.model)");
  add_config_and_environment(*cmd);
  cmd->callback([o] { run_serve(*o); });
}

}  // namespace ttlpred::cli
