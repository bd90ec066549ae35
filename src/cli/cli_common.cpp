#include "cli/cli_common.hpp"

#include <cstdio>

#include "data/csv_column_map.hpp"
#include "data/read_report.hpp"
#include "data/trace_readers.hpp"
#include "engine/isa.hpp"
#include "pipeline/model_checks.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {

JobTable load_trace(const std::string& path, bool quiet, std::string* format) {
  return load_trace(path, TraceInput{}, quiet, format);
}

void add_trace_input_options(CLI::App& cmd, TraceInput& input, bool with_format) {
  if (with_format)
    cmd.add_option("--format", input.format, "trace format: auto (from extension, then content), csv, swf, gwf, sacct")
      ->capture_default_str();
  cmd.add_option("--map", input.map,
                 "CSV column mapping target=Column,... (e.g. submit=SubmitTime,start=StartTime,end=EndTime,user=Owner); "
                 "implies CSV");
}

JobTable load_trace(const std::string& path, const TraceInput& input, bool quiet, std::string* format) {
  TraceReadOptions options;
  const auto f = format_by_name(input.format);
  if (!f) throw Error("--format must be auto, csv, swf, gwf or sacct, not '" + input.format + "'");
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

std::vector<std::size_t> parse_positive_list(const std::string& text, const char* option, std::size_t max) {
  std::vector<std::size_t> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(start, comma - start);
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || v == 0 || v > max)
      throw Error(std::string(option) + ": '" + item + "' is not an integer in 1.." + std::to_string(max) + " (in '" +
                  text + "')");
    out.push_back(static_cast<std::size_t>(v));
    start = comma + 1;
  }
  return out;
}

std::vector<std::uint32_t> parse_widths(const std::string& text, const char* option) {
  std::vector<std::uint32_t> out;
  for (std::size_t v : parse_positive_list(text, option, 65536)) out.push_back(static_cast<std::uint32_t>(v));
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

PredictorOptions predictor_options(const std::string& variant, const std::string& isa, double alpha,
                                   const BoundOptions& bounds) {
  PredictorOptions o;
  o.max_ttl_s = bounds.max_ttl_s;
  o.min_seconds = bounds.min_seconds;
  if (variant == "auto")
    o.variant_from_model = true;
  else
    o.variant = engine::variant_from_name(variant);
  if (!isa.empty()) o.isa = engine::isa_from_name(isa);
  o.alpha = alpha;
  return o;
}

}  // namespace ttlpred::cli
