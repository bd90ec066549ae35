#include "app/command_options.hpp"

#include "model/quantile_heads.hpp"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "data/csv_column_map.hpp"
#include "data/read_report.hpp"
#include "data/trace_readers.hpp"
#include "engine/isa.hpp"
#include "learn/duration.hpp"
#include "pipeline/model_checks.hpp"
#include "pipeline/split.hpp"
#include "predict/device.hpp"
#include "util/error.hpp"
#include "util/whole_number.hpp"

namespace ttlpred::app {

std::string environment_name(const CLI::App& cmd, const std::string& option) {
  std::string env = "TTLPRED_";
  for (const std::string& part : {cmd.get_name(), option}) {
    for (char c : part) env += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    env += '_';
  }
  env.pop_back();
  return env;
}

void add_config_and_environment(CLI::App& cmd) {
  for (CLI::Option* opt : cmd.get_options()) {
    if (opt->get_lnames().empty()) continue;  // positional, or -h only
    const std::string& name = opt->get_lnames().front();
    if (name != "help" && opt->get_group() == "Options")
      throw Error("`" + cmd.get_name() + " --" + name + "` is declared outside the help sections of its command");
    // The admin token has its own variable, TTLPRED_ADMIN_TOKEN (serve/admin_token.hpp).
    if (name == "help" || name == "admin-token") continue;
    opt->envname(environment_name(cmd, name));
  }
  cmd.add_option("--config")
      ->group("Options")
      ->description("read options from this file: TOML (name = value, [" + cmd.get_name() +
                                 "] section optional) or INI for a .ini file; the command line and TTLPRED_" +
                                 environment_name(cmd, "").substr(8) + "* environment variables win over it")
      ->check(CLI::ExistingFile);
}

std::vector<std::string> expand_config_file(const CLI::App& app, std::vector<std::string> args) {
  // The command, and its --config.
  std::size_t cmd_at = args.size();
  const CLI::App* cmd = nullptr;
  for (std::size_t i = 0; i < args.size() && !cmd; ++i)
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
      if (sub->get_name() == args[i]) {
        cmd = sub;
        cmd_at = i;
        break;
      }
  if (!cmd || !cmd->get_option_no_throw("--config")) return args;
  std::string file;
  for (std::size_t i = cmd_at + 1; i < args.size(); ++i) {
    if (args[i] == "--config" && i + 1 < args.size()) file = args[i + 1];
    else if (args[i].rfind("--config=", 0) == 0) file = args[i].substr(9);
  }
  if (file.empty()) return args;
  std::vector<CLI::ConfigItem> items;
  try {
    const bool ini = file.size() > 4 && file.compare(file.size() - 4, 4, ".ini") == 0;
    items = ini ? CLI::ConfigINI().from_file(file) : CLI::ConfigTOML().from_file(file);
  } catch (const CLI::Error& e) {
    throw Error(file + ": cannot read the config file: " + e.what());
  }
  auto given_on_command_line = [&](const std::string& name) {
    for (std::size_t i = cmd_at + 1; i < args.size(); ++i)
      if (args[i] == "--" + name || args[i].rfind("--" + name + "=", 0) == 0) return true;
    return false;
  };
  std::vector<std::string> from_file;
  for (const auto& item : items) {
    if (item.name == "++" || item.name == "--") continue;  // CLI11's section markers
    if (!(item.parents.empty() || (item.parents.size() == 1 && item.parents[0] == cmd->get_name())))
      throw Error(file + ": section [" + item.parents[0] + "] is not [" + cmd->get_name() + "]");
    const CLI::Option* opt = cmd->get_option_no_throw("--" + item.name);
    if (!opt || item.name == "config" || item.name == "help")
      throw Error(file + ": '" + item.name + "' is not an option of ttlpred " + cmd->get_name() + " (see ttlpred " +
                  cmd->get_name() + " --help)");
    if (given_on_command_line(item.name) || std::getenv(environment_name(*cmd, item.name).c_str())) continue;
    if (opt->get_expected_min() == 0) {  // a flag: --name=true|false
      from_file.push_back("--" + item.name + "=" + (item.inputs.empty() ? std::string("true") : item.inputs.front()));
      continue;
    }
    from_file.push_back("--" + item.name);
    for (const auto& v : item.inputs) from_file.push_back(v);
  }
  args.insert(args.begin() + static_cast<long>(cmd_at) + 1, from_file.begin(), from_file.end());
  return args;
}

JobTable load_trace(const std::string& path, bool quiet, std::string* format) {
  return load_trace(path, TraceInput{}, quiet, format);
}

void add_trace_input_options(CLI::App& cmd, TraceInput& input, bool with_format) {
  if (with_format)
    cmd.add_option("--format", input.format, "trace format: auto (a folder: a serve journal; else from extension, then content), csv, swf, gwf, sacct, journal")
      ->capture_default_str();
  cmd.add_option("--map", input.map,
                 "CSV column mapping target=Column,... (e.g. submit=SubmitTime,start=StartTime,end=EndTime,user=Owner); "
                 "implies CSV");
}

JobTable load_trace(const std::string& path, const TraceInput& input, bool quiet, std::string* format) {
  TraceReadOptions options;
  const auto f = format_by_name(input.format);
  if (!f) throw Error("--format must be auto, csv, swf, gwf, sacct or journal, not '" + input.format + "'");
  options.format = *f;
  if (!input.map.empty()) options.column_map = parse_csv_column_map(input.map);
  ReadReport report;
  JobTable t = read_trace(path, report, options);
  if (format) *format = report.format;
  if (!quiet || report.skipped_total() > 0 || !report.warnings.empty()) {
    std::fprintf(stderr, "read %s: %zu rows (%s)", report.path.c_str(), report.rows, report.format.c_str());
    if (report.skipped_total() > 0) std::fprintf(stderr, ", %zu skipped", report.skipped_total());
    std::fputc('\n', stderr);
    if (report.skipped_total() > 0 || !report.warnings.empty()) std::fputs(format_report(report).c_str(), stderr);
  }
  return t;
}

void add_model_and_data_options(CLI::App& cmd, std::string& model, std::string& data) {
  cmd.add_option("--model", model, "model file")->required();
  cmd.add_option("--data", data, kDataHelp)->required();
}

void add_variant_options(CLI::App& cmd, std::string& variant, std::string& isa, double& alpha,
                         const std::string& auto_note) {
  cmd.add_option("--variant", variant,
                 "engine variant (" + engine::variant_names_list() + "), or auto: the one the model was made for" + auto_note)
      ->capture_default_str();
  cmd.add_option("--isa", isa, "pin an instruction set (scalar, avx2, avx512, avx512-vnni, avx512-bf16, avx512-amx)");
  add_alpha_option(cmd, alpha);
}

void add_alpha_option(CLI::App& cmd, double& alpha, const std::string& help) {
  cmd.add_option("--alpha", alpha, help)->capture_default_str();
}

CLI::Validator split_fraction_check() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "not a number: " + text;
        try {
          check_split_fraction(v);
        } catch (const Error&) {
          return "must be in (0, 1] (the fraction of the jobs, in submit order, trained on), got " + text;
        }
        return {};
      },
      "in (0, 1]");
}

CLI::Validator parsed_by(const std::string& option, const std::string& description,
                         std::function<void(const std::string&)> parse) {
  return CLI::Validator(
      [option, parse = std::move(parse)](std::string& text) -> std::string {
        try {
          parse(text);
          return {};
        } catch (const Error& e) {
          const std::string message = e.what();
          return message.rfind(option + ": ", 0) == 0 ? message.substr(option.size() + 2) : message;
        }
      },
      description);
}

std::vector<std::size_t> parse_positive_list(const std::string& text, const char* option, std::size_t max) {
  std::vector<std::size_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    const std::optional<unsigned long long> v = parse_whole_number(item);
    if (!v || *v == 0 || *v > max)
      throw Error(std::string(option) + ": '" + item + "' is not an integer in 1.." + std::to_string(max) + " (in '" +
                  text + "')");
    out.push_back(static_cast<std::size_t>(*v));
    start = comma + 1;
  }
  return out;
}

std::vector<std::uint32_t> parse_widths(const std::string& text, const char* option) {
  std::vector<std::uint32_t> out;
  for (std::size_t v : parse_positive_list(text, option, 65536)) out.push_back(static_cast<std::uint32_t>(v));
  return out;
}

std::string numbers_text(const std::vector<double>& values) {
  std::string out;
  for (double v : values) {
    char buf[32];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // the shortest text that reads back as v
    (void)ec;  // 32 characters hold any double
    out += (out.empty() ? "" : ",") + std::string(buf, end);
  }
  return out;
}

std::string widths_text(const std::vector<std::uint32_t>& widths) {
  std::string out;
  for (std::uint32_t w : widths) out += (out.empty() ? "" : ",") + std::to_string(w);
  return out;
}

void add_bound_options(CLI::App& cmd, BoundOptions& bounds) {
  cmd.add_option("--max-ttl", bounds.max_ttl_s,
                 "cap on every safe TTL and expected wall time, seconds (0: none); 72 h is the longest slot "
                 "an ALICE pilot offers, so a longer TTL is never matched. Capped answers are marked")
      ->capture_default_str();
  cmd.add_option("--min-seconds", bounds.min_seconds,
                 "floor on every expected wall time and safe TTL, seconds (a shorter request still wins)")
      ->capture_default_str();
}

void check_model_fits_trace(const Predictor& predictor, const std::string& model_path, const JobTable& trace,
                            const std::string& trace_format, bool allow_schema_mismatch) {
  if (predictor.model().provenance.empty())
    std::fprintf(stderr, "ttlpred: note: %s predates training provenance (trace format, split, field coverage); "
                 "checked against its encoder's fields only\n", model_path.c_str());
  enforce(check_schema(predictor.model(), predictor.encoder(), trace, trace_format, "model " + model_path),
          allow_schema_mismatch, "--allow-schema-mismatch");
}

CLI::Option* add_prediction_time_option(CLI::App& cmd, std::string& at, const char* help) {
  return cmd.add_option("--at", at, help)->check(CLI::IsMember({"submit", "match"}));
}

PredictionTime parse_prediction_time(const std::string& at, PredictionTime fallback) {
  if (at.empty()) return fallback;
  const auto t = prediction_time_by_name(at);
  if (!t) throw Error("--at: '" + at + "' is neither submit nor match");
  return *t;
}

namespace {
// An option that takes on or off, and its reading; the parse names the option it refuses.
void add_on_off_option(CLI::App& cmd, const std::string& name, std::string& value, const std::string& help) {
  cmd.add_option(name, value, help)->check(CLI::IsMember({"on", "off"}))->capture_default_str();
}
bool parse_on_off(const std::string& name, const std::string& value) {
  if (value == "on") return true;
  if (value == "off") return false;
  throw Error(name + ": '" + value + "' is neither on nor off");
}
}  // namespace

void add_censored_option(CLI::App& cmd, std::string& value) {
  add_on_off_option(cmd, "--censored", value,
                    "on: jobs killed at their limit (status ERROR_E or TIMEOUT, or a run time of at least 99 % of the "
                    "request) train as lower bounds, penalized only below their recorded run time; off: as exact run "
                    "times");
}

bool parse_censored(const std::string& value) { return parse_on_off("--censored", value); }

namespace {
struct ModelChoice {
  const char* flag;
  std::string ModelChoiceOptions::*value;
  bool FitOptions::*target;
  const char* help;
};
const ModelChoice kModelChoices[] = {
    {"--residual", &ModelChoiceOptions::residual, &FitOptions::residual,
     "on: the network learns each job's distance from one of its history estimates (a work rate times its work, a "
     "recent mean run time ...), the estimate chosen per job type on the training rows; off: the run time itself"},
    {"--request-key", &ModelChoiceOptions::request_key, &FitOptions::request_key,
     "on: one more history key, the user and the requested TTL together, so that the first jobs of a new production "
     "find the earlier ones given the same TTL (pays on large ALICE-like traces at match time); off: without it"},
    {"--censored-rates", &ModelChoiceOptions::censored_rates, &FitOptions::censored_rates,
     "on (needs --at match): per history key and work field, the work rate with the key's running jobs as lower "
     "bounds (their elapsed times), so that a young production's first, shortest outcomes do not set its rate alone; "
     "off: without it"},
    {"--system-key", &ModelChoiceOptions::system_key, &FitOptions::system_key,
     "on: one more history key, the job type and the collision system (interaction_type) together, so that the first "
     "jobs of a new production find the earlier ones of the same kind of work (pays on large ALICE-like traces at "
     "match time); off: without it"},
};
}  // namespace

void add_model_choice_options(CLI::App& cmd, ModelChoiceOptions& choices) {
  for (const ModelChoice& c : kModelChoices) add_on_off_option(cmd, c.flag, choices.*c.value, c.help);
  cmd.add_option("--quantiles", choices.quantiles,
                 "LEVELS (e.g. 0.5,0.9,0.95,0.98,0.99,0.995): the network also predicts these quantiles of each job's "
                 "run time (pinball-loss heads, monotone by construction), and each job's safe TTL is its own "
                 "calibrated quantile (conformalized, never below its expected time); off: the mean only")
      ->capture_default_str();
  cmd.add_option("--piecewise-bins", choices.piecewise_bins,
                 "N (2-" + std::to_string(kMaxPiecewiseBins) +
                     "): the network also reads each numeric field of the job (its request, cores ...) as N "
                     "piecewise-linear bins at the quantiles of its training values (a weight per bin, not one per "
                     "input: Gorishniy et al. 2022); 0: the inputs alone")
      ->check(CLI::Range(0u, kMaxPiecewiseBins) &
              CLI::Validator([](std::string& v) { return v == "1" ? std::string("one bin encodes nothing: 0 or 2 and more") : std::string(); },
                             "", "not one"))
      ->capture_default_str();
}

void apply_model_choices(const ModelChoiceOptions& choices, FitOptions& fit) {
  for (const ModelChoice& c : kModelChoices) fit.*c.target = parse_on_off(c.flag, choices.*c.value);
  fit.encoder.piecewise_bins = choices.piecewise_bins;
  fit.train.quantile_levels.clear();
  if (choices.quantiles != "off") fit.train.quantile_levels = parse_quantile_levels(choices.quantiles).levels;
}

void add_kill_budget_option(CLI::App& cmd, std::string& value) {
  cmd.add_option("--ttl-kill-budget", value,
                 "request-aware safe TTL: what alpha bounds on the calibration jobs: count (kills) or cpu-time "
                 "(kills and the CPU time they lose, run time x cores)")
      ->check(CLI::IsMember({"count", "cpu-time"}))
      ->capture_default_str();
}

void add_retrain_every_option(CLI::App& cmd, std::string& value, const std::string& what) {
  cmd.add_option("--retrain-every", value, what + " (a duration: 90s, 30m, 6h, 7d, 2w; 0: never)")
      ->check(parsed_by("--retrain-every", "DURATION", [](const std::string& text) { parse_duration(text, "--retrain-every"); }))
      ->capture_default_str();
}

void add_ttl_by_group_option(CLI::App& cmd, bool& value) {
  cmd.add_flag("--ttl-by-group", value,
               "request-aware safe TTL: a table and a kill budget of its own for every calibration group (job type, "
               "queue) with at least 4000 calibration jobs, the others sharing one; without it one table serves all");
}

void add_device_option(CLI::App& cmd, std::string& device) {
  cmd.add_option("--device", device,
                 "where the network runs: cpu, or cuda / cuda:N (the CUDA backend on GPU N, in a build made with "
                 "-DTTLPRED_CUDA=ON: it refuses a variant it does not run, naming those it runs; --variant auto runs "
                 "a plain model as fp32 there)")
      ->capture_default_str();
}

void add_online_tuning_options(CLI::App& cmd, double& gamma, double& target_scale, bool& batch_guard,
                               const OnlineTuningHelp& help) {
  cmd.add_option("--gamma", gamma, help.gamma_methods + ": learning rate of the online level")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  cmd.add_option("--target-scale", target_scale,
                 help.scale_methods + ": the online level aims at this fraction of alpha in kills" + help.scale_note)
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  cmd.add_option("--batch-guard", batch_guard,
                 "every method but static: the n-th job of a user answered since that user's last outcome is asked "
                 "at the online level / sqrt(n), so that a burst answered on the same evidence cannot spend a "
                 "window's kills at once (off: every job at the level; docs/ACCURACY.md has when it pays)")
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str(batch_guard ? "on" : "off");
}

void add_online_tuning_options(CLI::App& cmd, OnlineCalibrationCli& c) {
  add_online_tuning_options(cmd, c.gamma, c.target_scale, c.batch_guard);
}

void add_calibration_option(CLI::App& cmd, std::string& name, const std::string& what,
                            std::function<void(const std::string&)> parse) {
  cmd.add_option("--calibration", name, what)->check(parsed_by("--calibration", "METHOD", std::move(parse)))->capture_default_str();
}

void add_calibration_key_option(CLI::App& cmd, std::string& key) {
  cmd.add_option("--calibration-key", key, "the mondrian calibration's key: a categorical job field")->capture_default_str();
}

OnlineCalibrationOptions online_calibration_options(const OnlineCalibrationCli& c) {
  OnlineCalibrationOptions o;
  const AnsweringCalibration a = answering_calibration_from_name(c.name);
  o.method = a.method;
  o.log_level = a.log_level;
  o.gamma = c.gamma;
  o.target_scale = c.target_scale;
  o.batch_guard = c.batch_guard;
  return o;
}

PredictorOptions predictor_options(const std::string& variant, const std::string& isa, double alpha,
                                   const BoundOptions& bounds, const std::string& device) {
  const DeviceChoice d = device_named(device);
  if (d.backend != nullptr && !isa.empty())
    throw Error("--isa " + isa + " pins the CPU's instruction set; it does not apply to --device " + device);
  PredictorOptions o = predictor_options_named(variant, isa, alpha, bounds.max_ttl_s, bounds.min_seconds);
  o.backend = d.backend;
  o.device = d.device;
  return o;
}

}  // namespace ttlpred::app
