// `ttlpred inspect FILE`: reads a trace and says what is in it and what was skipped, so a
// person can judge a trace before training on it.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "data/trace_readers.hpp"
#include "data/trace_summary.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {

namespace {

struct InspectOptions {
  std::string file;
  std::string format = "auto";
  std::string map;
  bool json = false;
};

void run_inspect(const InspectOptions& o) {
  const auto format = format_by_name(o.format);
  if (!format) throw Error("--format must be auto, csv, swf, gwf or sacct, not '" + o.format + "'");
  TraceReadOptions options;
  options.format = *format;
  if (!o.map.empty()) options.column_map = parse_csv_column_map(o.map);
  ReadReport report;
  const JobTable table = read_trace(o.file, report, options);
  const TraceSummary summary = summarize(table);
  if (o.json) {
    // replace: a file name with invalid UTF-8 must not abort the dump
    const std::string text = summary_to_json(summary, report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::printf("%s\n", text.c_str());
    return;
  }
  std::fputs(format_report(report).c_str(), stdout);
  std::fputs("\n", stdout);
  std::fputs(format_summary(summary).c_str(), stdout);
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto opts = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand("inspect",
                                 "Summarize a job trace (CSV, SWF, GWF or Slurm sacct, optionally .gz): rows, skipped rows by reason, "
                                 "per-column summary, run-time and requested-TTL distributions");
  cmd->add_option("file", opts->file, "trace file, or - for standard input")->required();
  cmd->add_option("--format", opts->format, "input format: auto (from extension, then content), csv, swf, gwf, sacct")
      ->capture_default_str();
  cmd->add_option("--map", opts->map,
                  "CSV column mapping target=Column,... (e.g. submit=SubmitTime,end=EndTime); implies CSV");
  cmd->add_flag("--json", opts->json, "print one JSON object instead of text");
  cmd->callback([opts] { run_inspect(*opts); });
}

}  // namespace ttlpred::cli
