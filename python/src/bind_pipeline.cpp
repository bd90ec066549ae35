// Training and evaluation with the CLI's protocol and option names.
//  - train(table, out, split, options): `ttlpred train --data ... --out OUT --split S` with
//    `options` keyed by the command's long option names without dashes ("hidden", "epochs",
//    "lr", "seed", "group-by", ...; "-" or "_" alike), parsed by the command's own
//    declaration (app/train_run.hpp). An unknown key is refused by name rather than ignored:
//    a misspelt option must not silently train with a default. train_option_defaults(): each
//    option's default as that declaration prints it (TTLRegressor's parameters).
//  - evaluate(predictor, table, split, ..., calibration): `ttlpred eval --json --calibration`
//    (the default calibration unless named), the same JSON object, plus the scored jobs'
//    predictions and outcomes as arrays (what `--per-job` writes).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "app/command_options.hpp"
#include "app/eval_report.hpp"
#include "app/train_run.hpp"
#include "cli_options.hpp"
#include "engine/isa.hpp"
#include "engine/variant.hpp"
#include "features/history.hpp"
#include "model/model_file.hpp"
#include "model/target_transform.hpp"
#include "pipeline/evaluate.hpp"
#include "pipeline/fit_model.hpp"
#include "pipeline/model_checks.hpp"
#include "pipeline/split.hpp"
#include "predict/predictor.hpp"
#include "handles.hpp"
#include "train/progress.hpp"
#include "train/train_config.hpp"
#include "util/error.hpp"

namespace py = pybind11;

namespace ttlpred::python {
namespace {

// The training options as `ttlpred train` declares them (app/train_run.hpp), with Python's
// own spellings of two: quiet unless quiet=False (a notebook wants no per-epoch lines), and
// request_aware_ttl=False for the flag --no-request-aware-ttl.
py::dict train_options_of(const py::dict& options, double split_fraction) {
  py::dict o;
  o["quiet"] = true;
  for (const auto& [key, value] : options) {
    std::string name = py::str(key);
    for (char& c : name)
      if (c == '-') c = '_';
    if (name == "request_aware_ttl") {
      if (!py::isinstance<py::bool_>(value)) throw Error("training option 'request_aware_ttl' takes True or False");
      o["no_request_aware_ttl"] = !value.cast<bool>();
    } else {
      o[py::str(name)] = value;
    }
  }
  o["split"] = split_fraction;
  return o;
}

py::dict train_option_defaults() {
  CLI::App cmd("train");
  cmd.set_help_flag();
  app::TrainCliOptions o;
  app::add_train_options(cmd, o);
  py::dict d;
  for (const CLI::Option* opt : cmd.get_options()) {
    for (std::string name : opt->get_lnames()) {
      if (name == "help" || name == "split") continue;
      for (char& c : name)
        if (c == '-') c = '_';
      if (opt->get_expected_min() == 0)
        d[py::str(name)] = opt->get_default_str() == "true";
      else
        d[py::str(name)] = opt->get_default_str();
    }
  }
  return d;
}

// `ttlpred train` on a table; the model goes to `out`, or, where `out` is empty, comes back
// as the model file's bytes ("model_bytes": what TTLRegressor keeps and pickles).
py::dict train(const Table& table, const std::string& out, double split_fraction, const py::dict& options) {
  CLI::App cmd("train");
  cmd.set_help_flag();
  app::TrainCliOptions o;
  app::add_train_options(cmd, o);
  parse_cli_options(cmd, "training", train_options_of(options, split_fraction));
  ModelFile start;
  const FitOptions fit = app::resolve_train_options(o, cmd, start);
  FitReport report;
  std::vector<std::uint8_t> bytes;
  {
    py::gil_scoped_release release;
    const ChronologicalSplit split = chronological_split(JobTable(*table.jobs), o.split);
    ModelFile model = fit_model(split, fit, o.quiet ? ProgressFn{} : stderr_progress(), &report);
    model.provenance.trace_format = table.format;
    model.provenance.trace_name = table.name;
    if (out.empty())
      bytes = model_file_bytes(model);
    else
      save_model_file(out, model);
  }
  py::dict d;
  if (out.empty())
    d["model_bytes"] = py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  else
    d["model"] = out;
  d["fit_rows"] = report.fit_rows;
  d["calibration_rows"] = report.calibration_rows;
  d["best_epoch"] = report.train.best_epoch;
  d["best_val_rmse_hours"] = report.train.best_val_rmse_hours;
  d["calibration_rmse_hours"] = report.calibration_rmse_hours;
  d["group_column"] = report.group_column;
  d["seconds"] = report.seconds;
  return d;
}

py::array_t<double> column_of(const JobTable& t, Field f, std::size_t first) {
  const auto v = t.num(f);
  py::array_t<double> a(static_cast<py::ssize_t>(t.rows() - first));
  std::copy(v.begin() + static_cast<std::ptrdiff_t>(first), v.end(), a.mutable_data());
  return a;
}

py::tuple evaluate_table(const PyPredictor& predictor, const Table& table, double split_fraction, bool allow_overlap,
                         bool allow_schema_mismatch, const std::string& calibration) {
  app::OnlineCalibrationCli method;
  method.name = calibration;
  EvaluationCalibration scored_by;
  scored_by.online = app::online_calibration_options(method);  // Error naming the accepted names
  const Predictor& p = *predictor.predictor;
  const std::string& path = predictor.path;
  const ModelCheck schema = check_schema(p.model(), p.encoder(), *table.jobs, table.format, "model " + path);
  for (const auto& w : schema.warnings) PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 1);
  if (!schema.refusal.empty() && !allow_schema_mismatch)
    throw Error(schema.refusal + " (allow_schema_mismatch=True scores anyway)");
  std::unique_ptr<ChronologicalSplit> split;
  Evaluation e;
  ModelCheck overlap;
  {
    py::gil_scoped_release release;
    split = std::make_unique<ChronologicalSplit>(chronological_split(JobTable(*table.jobs), split_fraction));
    overlap = check_split_overlap(p.model(), *split, "model " + path);
  }
  for (const auto& w : overlap.warnings) PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 1);
  if (!overlap.refusal.empty() && !allow_overlap) throw Error(overlap.refusal + " (allow_overlap=True scores anyway)");
  {
    py::gil_scoped_release release;
    e = evaluate(p, *split, nullptr, scored_by);
  }
  nlohmann::json j = app::evaluation_json(e);
  j["calibration"] = calibration;
  j["training_rows_scored"] = overlap.overlap_rows;
  j["variant"] = std::string(engine::variant_name(p.backend().variant()));
  j["isa"] = std::string(p.backend().target());
  j["alpha"] = p.options().alpha;
  const std::size_t first = split->train_rows, n = e.predictions.size();
  py::array_t<double> expected(static_cast<py::ssize_t>(n)), safe(static_cast<py::ssize_t>(n));
  for (std::size_t i = 0; i < n; ++i) {
    expected.mutable_data()[i] = e.predictions[i].expected_wall_s;
    safe.mutable_data()[i] = e.predictions[i].safe_ttl_s;
  }
  py::dict per_job;
  per_job["job_id"] = column_of(split->jobs, Field::JobId, first);
  per_job["expected_wall_s"] = expected;
  per_job["safe_ttl_s"] = safe;
  per_job["wall_s"] = column_of(split->jobs, Field::WallTime, first);
  per_job["requested_ttl_s"] = column_of(split->jobs, Field::RequestedTtl, first);
  return py::make_tuple(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), per_job);
}

}  // namespace

void bind_pipeline(py::module_& m) {
  m.def("train_option_defaults", &train_option_defaults,
        "Each training option of `ttlpred train` (Python spelling) and its default as the command prints it");
  m.def("train", &train, py::arg("table"), py::arg("out"), py::arg("split") = kDefaultSplit, py::arg("options") = py::dict(),
        "`ttlpred train`: trains on the first `split` of the eligible jobs in submit order and writes the model file");
  m.def("evaluate", &evaluate_table, py::arg("predictor"), py::arg("table"), py::arg("split") = kDefaultSplit,
        py::arg("allow_overlap") = false, py::arg("allow_schema_mismatch") = false,
        py::arg("calibration") = std::string(kDefaultCalibration),
        "`ttlpred eval --json`: (JSON text, per-job arrays of the scored jobs)");
}

}  // namespace ttlpred::python
