#pragma once
// What several commands share: reading a trace with its skip report on stderr, parsing
// lists and variant options.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "data/job_table.hpp"
#include "engine/variant.hpp"
#include "model/online_calibration.hpp"
#include "model/quantile_heads.hpp"
#include "pipeline/fit_model.hpp"
#include "predict/predictor.hpp"

namespace ttlpred::app {

// Reads `path` (any supported format; "-" is standard input); skipped rows and warnings go
// to stderr, counted. `format`, when given, receives the format read ("csv", "swf", "gwf").
JobTable load_trace(const std::string& path, bool quiet = false, std::string* format = nullptr);

// How a command reads its trace: --format (auto, csv, swf, gwf, sacct) and --map (a CSV
// column mapping, "submit=SubmitTime,user=UserName"; docs/data-format.md).
struct TraceInput {
  std::string format = "auto";
  std::string map;
};
// `with_format` false where the command's --format already names its output (predict).
void add_trace_input_options(CLI::App& cmd, TraceInput& input, bool with_format = true);
// load_trace with the format and column map of `input`; throws Error on a bad --format/--map.
JobTable load_trace(const std::string& path, const TraceInput& input, bool quiet = false, std::string* format = nullptr);

// `--config FILE` (TOML, or INI for a .ini file) and an environment variable for every option
// of `cmd`: TTLPRED_<COMMAND>_<OPTION> (`serve --max-batch` <- TTLPRED_SERVE_MAX_BATCH). Call
// after the command's options are declared. Precedence: command line, then environment,
// then the config file, then the default.
// A command with a config file has tens of options (serve, train): `--help` lists them in
// sections, each declared under `cmd.option_defaults()->group(TITLE)`, and every option but
// --help and --config must be in one: Error otherwise, so that a new option cannot land
// outside them unnoticed (every command is built at start-up, and its help is tested).
void add_config_and_environment(CLI::App& cmd);
// What main() parses: `args` (argv without the program name, in order) with the options of a
// `--config FILE` given to a command of add_config_and_environment put in front of that
// command's own. Throws Error naming the file and key for an unreadable file, a section that
// is not the command, or a key that is not one of its options.
std::vector<std::string> expand_config_file(const CLI::App& app, std::vector<std::string> args);

// The help text of every --data option (one wording for all commands).
inline constexpr const char* kDataHelp = "trace file (CSV, SWF, GWF, optionally .gz), a `serve --journal` folder, or - for standard input";

// --model FILE and --data TRACE (kDataHelp), both required: what a command scoring or
// answering with a model reads.
void add_model_and_data_options(CLI::App& cmd, std::string& model, std::string& data);
// --variant (an engine variant, or auto: the one the model was made for, then `auto_note`),
// --isa and --alpha: how the command's predictor runs and the kill rate its safe TTL targets.
// --alpha, the safe TTL's target kill rate (default kDefaultAlpha, from the library's
// options): one declaration for every command; `help` where a command reads it otherwise.
void add_alpha_option(CLI::App& cmd, double& alpha, const std::string& help = "target kill rate of the safe TTL, in (0, 1)");
void add_variant_options(CLI::App& cmd, std::string& variant, std::string& isa, double& alpha,
                         const std::string& auto_note = "");

// The check of a --split that chronological_split reads (pipeline/split.hpp): a value outside
// (0, 1] is refused while the command line is parsed, before any trace is read.
CLI::Validator split_fraction_check();

// The check of an option whose value a library function reads (`parse` throws Error naming
// what it accepts): run while the command line is parsed, its refusal the library's message
// (less a leading "OPTION: ", which CLI11 puts in front of it already). `description` is the
// value's kind in the help (DURATION, METHOD ...).
CLI::Validator parsed_by(const std::string& option, const std::string& description,
                         std::function<void(const std::string&)> parse);

// "1,8,64" -> {1, 8, 64}, each in 1..max; throws Error naming `option` and the bad item.
std::vector<std::size_t> parse_positive_list(const std::string& text, const char* option, std::size_t max);
// Layer widths, each in 1..65536.
std::vector<std::uint32_t> parse_widths(const std::string& text, const char* option);
// The text parse_widths reads back ({256, 256, 256} -> "256,256,256"): how an option shows
// the trainer's default widths without retyping them.
std::string widths_text(const std::vector<std::uint32_t>& widths);
// "0.5,0.6,0.9": a list option's default written from the library's vector.
std::string numbers_text(const std::vector<double>& values);

// The bounds every answer obeys (PredictorOptions::max_ttl_s, min_seconds), as options.
struct BoundOptions {
  double max_ttl_s = PredictorOptions::kDefaultMaxTtlSeconds;
  double min_seconds = PredictorOptions::kDefaultMinSeconds;
};
// Adds --max-ttl and --min-seconds to `cmd`, stored in `bounds`.
void add_bound_options(CLI::App& cmd, BoundOptions& bounds);

// --at submit|match: when jobs are predicted (features/history.hpp, PredictionTime). At
// match time a job's history sees the outcomes known at its start and the jobs running then.
CLI::Option* add_prediction_time_option(CLI::App& cmd, std::string& at, const char* help);
// The prediction time `at` names; `fallback` when `at` is empty. Throws Error naming --at
// for another value.
PredictionTime parse_prediction_time(const std::string& at, PredictionTime fallback);
// --censored on|off: train censored outcomes (killed at their limit) as lower bounds
// (pipeline/censored_outcomes.hpp). Stored as "on"/"off" in `value`.
void add_censored_option(CLI::App& cmd, std::string& value);
inline constexpr const char* kDefaultCensored = "off";
bool parse_censored(const std::string& value);
// The model choices that train, backtest and pipeline share, each on|off (stored as
// "on"/"off", all off by default): --residual (FitOptions::residual: the network learns each
// job's distance from its best history estimate), --request-key (FitOptions::request_key:
// the history key (user, requested TTL)), --censored-rates (FitOptions::censored_rates:
// work rates with the running jobs as lower bounds, at match time) and --system-key
// (FitOptions::system_key: the history key (job type, collision system)). One table in
// command_options.cpp declares them, so a new choice is added in one place.
struct ModelChoiceOptions {
  std::string residual = "off", request_key = "off", censored_rates = "off", system_key = "off";
  // --quantiles LEVELS|off: the network's quantile heads (TrainConfig::quantile_levels) and
  // with them each job's own safe TTL (model/quantile_ttl.hpp).
  std::string quantiles = kDefaultQuantileLevels;
  // --piecewise-bins N: the encoder's piecewise-linear bins per numeric column (EncoderOptions).
  std::uint32_t piecewise_bins = FitOptions{}.encoder.piecewise_bins;
  bool operator==(const ModelChoiceOptions&) const = default;
};
void add_model_choice_options(CLI::App& cmd, ModelChoiceOptions& choices);
// Sets the choices in `fit`; throws Error naming the option for a value other than on or off.
void apply_model_choices(const ModelChoiceOptions& choices, FitOptions& fit);

// --ttl-by-group: a request-aware safe-TTL table per calibration group (SafeTtlOptions::request_by_group).
// --ttl-kill-budget count|cpu-time (RequestAwareOptions::budget, by name), for train and backtest.
void add_kill_budget_option(CLI::App& cmd, std::string& value);
// --retrain-every, a duration (learn/duration.hpp) checked while the command line is parsed;
// `what` says what is retrained on what, in the command's terms (serve: the journal; replay:
// the outcomes known by then; simulate: the jobs finished in the simulation).
void add_retrain_every_option(CLI::App& cmd, std::string& value, const std::string& what);
void add_ttl_by_group_option(CLI::App& cmd, bool& value);

// --device cpu|cuda|cuda:N (predict/device.hpp): the backend the command's network runs on.
void add_device_option(CLI::App& cmd, std::string& device);
inline constexpr const char* kDefaultDevice = "cpu";

// The online safe-TTL calibration `eval --calibration` and `serve --calibration` answer with
// (model/online_calibration.hpp): the method (aci-log, mondrian-log: the level stepped in log
// space), and --gamma / --target-scale, its learning rate and the share of alpha it aims at.
struct OnlineCalibrationCli {
  std::string name = kDefaultCalibration;
  double gamma = OnlineCalibrationOptions{}.gamma;
  double target_scale = OnlineCalibrationOptions{}.target_scale;
  bool batch_guard = OnlineCalibrationOptions{}.batch_guard;
};
// Adds --gamma, --target-scale and --batch-guard on|off (OnlineCalibrationOptions::batch_guard;
// --calibration stays the command's, with its own help):
// one declaration and one check for every command that steps an online level. `methods`
// names the command's methods each applies to, for the help texts.
struct OnlineTuningHelp {
  std::string gamma_methods = "aci, aci-capped, mondrian (and -log)";
  std::string scale_methods = "aci, multi-aci, mondrian (and -log)";
  std::string scale_note = " (aci-capped aims at its own 0.6)";
};
void add_online_tuning_options(CLI::App& cmd, double& gamma, double& target_scale, bool& batch_guard,
                               const OnlineTuningHelp& help = {});
void add_online_tuning_options(CLI::App& cmd, OnlineCalibrationCli& c);
// --calibration: the online calibration that answers (model/online_calibration.hpp), `what`
// saying what it calibrates and which names the command takes; `parse` reads a name the
// command's way (Error naming the accepted ones) and runs while the command line is parsed,
// so an unknown name is refused before any trace is read. --calibration-key: the mondrian
// calibration's key.
void add_calibration_option(CLI::App& cmd, std::string& name, const std::string& what,
                            std::function<void(const std::string&)> parse);
void add_calibration_key_option(CLI::App& cmd, std::string& key);
// The options `c` names, on top of OnlineCalibrationOptions' defaults. Throws Error for an
// unknown name.
OnlineCalibrationOptions online_calibration_options(const OnlineCalibrationCli& c);

// The predictor options the command line names. `device` as --device gives it; --isa pins the
// CPU's instruction set, so a non-empty `isa` with another device is refused.
PredictorOptions predictor_options(const std::string& variant, const std::string& isa, double alpha,
                                   const BoundOptions& bounds = {}, const std::string& device = kDefaultDevice);

// The model checks of eval and predict (pipeline/model_checks.hpp): refuses a model of
// another schema unless `allow_schema_mismatch`.
void check_model_fits_trace(const Predictor& predictor, const std::string& model_path, const JobTable& trace,
                            const std::string& trace_format, bool allow_schema_mismatch);

}  // namespace ttlpred::app
