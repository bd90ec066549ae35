// `ttlpred predict`: one line per job of a trace: expected wall time and safe TTL. History
// features start from the state the model file carries and follow the trace leak-free, as a
// deployed service that receives outcomes would see it.
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "features/history.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace ttlpred::cli {
namespace {

struct PredictOptions {
  std::string model, data, out, format = "csv", variant = "auto", isa;
  double alpha = 0.01;
};

void write_predictions(std::FILE* f, const PredictOptions& o, const JobTable& t, const std::vector<Prediction>& p) {
  const auto ids = t.num(Field::JobId);
  const bool csv = o.format == "csv";
  if (csv) std::fputs("job_id,expected_wall_s,safe_ttl_s\n", f);
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double id = ids[i];
    if (csv) {
      if (std::isnan(id)) std::fprintf(f, ",%.1f,%.1f\n", p[i].expected_wall_s, p[i].safe_ttl_s);
      else std::fprintf(f, "%.0f,%.1f,%.1f\n", id, p[i].expected_wall_s, p[i].safe_ttl_s);
    } else {
      if (std::isnan(id)) std::fprintf(f, "{\"job_id\":null,");
      else std::fprintf(f, "{\"job_id\":%.0f,", id);
      std::fprintf(f, "\"expected_wall_s\":%.1f,\"safe_ttl_s\":%.1f}\n", p[i].expected_wall_s, p[i].safe_ttl_s);
    }
    if (std::ferror(f)) throw Error("cannot write predictions");
  }
}

void run_predict(const PredictOptions& o) {
  if (o.format != "csv" && o.format != "jsonl") throw Error("--format must be csv or jsonl, not '" + o.format + "'");
  const Predictor predictor = Predictor::load(o.model, predictor_options(o.variant, o.isa, o.alpha));
  const JobTable table = load_trace(o.data, true);
  HistoryState state = predictor.initial_history();
  const HistoryMatrix history = compute_history(table, state);
  std::vector<std::size_t> rows(table.rows());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  const auto predictions = predictor.predict_rows(table, rows, history);
  if (o.out.empty() || o.out == "-") return write_predictions(stdout, o, table, predictions);
  write_file_atomic_stream(o.out, [&](std::FILE* f) { write_predictions(f, o, table, predictions); });
  std::fprintf(stderr, "wrote %zu predictions to %s\n", predictions.size(), o.out.c_str());
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto o = std::make_shared<PredictOptions>();
  auto* cmd = app.add_subcommand("predict", "Expected wall time and safe TTL for every job of a trace");
  cmd->add_option("--model", o->model, "model file")->required();
  cmd->add_option("--data", o->data, "trace file")->required();
  cmd->add_option("--out", o->out, "output file (default: standard output)");
  cmd->add_option("--format", o->format, "csv or jsonl")->capture_default_str();
  cmd->add_option("--variant", o->variant, "engine variant, or auto: the one the model was made for")->capture_default_str();
  cmd->add_option("--isa", o->isa, "pin an instruction set");
  cmd->add_option("--alpha", o->alpha, "target kill rate of the safe TTL")->capture_default_str();
  cmd->callback([o] { run_predict(*o); });
}

}  // namespace ttlpred::cli
