// Training and evaluation with the CLI's protocol and option names.
//  - train(table, out, split, options): `ttlpred train --data ... --out OUT --split S` with
//    `options` keyed by the command's long option names without dashes ("hidden", "epochs",
//    "lr", "seed", "group-by", ...; "-" or "_" alike). An unknown key is refused by name
//    rather than ignored: a misspelt option must not silently train with a default.
//  - evaluate(predictor, table, split): `ttlpred eval --json`, the same JSON object, plus the
//    scored jobs' predictions and outcomes as arrays (what `--per-job` writes).
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
#include "cli/eval_report.hpp"
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

std::vector<std::uint32_t> widths_from(const py::handle& v) {
  std::vector<std::uint32_t> out;
  if (py::isinstance<py::str>(v)) {
    const std::string s = v.cast<std::string>();
    std::size_t start = 0;
    while (start <= s.size()) {
      std::size_t comma = s.find(',', start);
      if (comma == std::string::npos) comma = s.size();
      out.push_back(static_cast<std::uint32_t>(std::stoul(s.substr(start, comma - start))));
      start = comma + 1;
    }
  } else {
    for (const py::handle w : v) out.push_back(w.cast<std::uint32_t>());
  }
  for (std::uint32_t w : out)
    if (w == 0 || w > 65536) throw Error("option 'hidden': widths must be in 1..65536");
  if (out.empty()) throw Error("option 'hidden': no widths");
  return out;
}

// Applies {option: value} to `fit`; returns whether progress output is wanted.
bool apply_options(const py::dict& options, FitOptions& fit) {
  TrainConfig& t = fit.train;
  bool quiet = true;
  std::string group_by = "auto";
  using Setter = std::function<void(const py::handle&)>;
  const std::map<std::string, Setter> setters = {
      {"hidden", [&](const py::handle& v) { t.hidden = widths_from(v); }},
      {"target", [&](const py::handle& v) { t.target = parse_target_kind(v.cast<std::string>()); }},
      {"epochs", [&](const py::handle& v) { t.max_epochs = v.cast<std::uint32_t>(); }},
      {"patience", [&](const py::handle& v) { t.patience = v.cast<std::uint32_t>(); }},
      {"batch-size", [&](const py::handle& v) { t.batch_size = v.cast<std::uint32_t>(); }},
      {"lr", [&](const py::handle& v) { t.learning_rate = v.cast<float>(); }},
      {"dropout", [&](const py::handle& v) { t.dropout = v.cast<float>(); }},
      {"weight-decay", [&](const py::handle& v) { t.weight_decay = v.cast<float>(); }},
      {"ensemble", [&](const py::handle& v) { fit.ensemble = v.cast<std::uint32_t>(); }},
      {"seed", [&](const py::handle& v) { t.seed = v.cast<std::uint64_t>(); }},
      {"threads", [&](const py::handle& v) { t.threads = v.cast<int>(); }},
      {"calibration-fraction", [&](const py::handle& v) { fit.calibration_fraction = v.cast<double>(); }},
      {"group-by", [&](const py::handle& v) { group_by = v.cast<std::string>(); }},
      {"ttl-alpha-scale", [&](const py::handle& v) { fit.safe_ttl.request.alpha_scale = v.cast<double>(); }},
      {"ttl-min-saving", [&](const py::handle& v) { fit.safe_ttl.request.min_saving_per_kill = v.cast<double>(); }},
      {"ttl-max-exponent", [&](const py::handle& v) { fit.safe_ttl.request.max_exponent = v.cast<double>(); }},
      {"request-aware-ttl", [&](const py::handle& v) { fit.safe_ttl.request_aware = v.cast<bool>(); }},
      {"residual", [&](const py::handle& v) { fit.residual = v.cast<bool>(); }},
      {"request-key", [&](const py::handle& v) { fit.request_key = v.cast<bool>(); }},
      {"censored-rates", [&](const py::handle& v) { fit.censored_rates = v.cast<bool>(); }},
      {"system-key", [&](const py::handle& v) { fit.system_key = v.cast<bool>(); }},
      {"at", [&](const py::handle& v) {
         const std::string name = v.cast<std::string>();
         const auto at = prediction_time_by_name(name);
         if (!at) throw Error("training option 'at': '" + name + "' is neither 'submit' nor 'match'");
         fit.at = *at;
       }},
      {"ttl-by-group", [&](const py::handle& v) { fit.safe_ttl.request_by_group = v.cast<bool>(); }},
      {"quiet", [&](const py::handle& v) { quiet = v.cast<bool>(); }},
  };
  for (const auto& [key, value] : options) {
    std::string name = py::str(key);
    for (char& c : name)
      if (c == '_') c = '-';
    const auto it = setters.find(name);
    if (it == setters.end()) {
      std::string known;
      for (const auto& s : setters) known += (known.empty() ? "" : ", ") + s.first;
      throw Error("unknown training option '" + std::string(py::str(key)) + "' (options: " + known + ")");
    }
    try {
      it->second(value);
    } catch (const py::cast_error&) {
      throw Error("training option '" + name + "': cannot use " + std::string(py::repr(value)));
    }
  }
  if (fit.ensemble < 1) throw Error("training option 'ensemble' must be at least 1");
  fit.group_column = group_by == "none" ? "" : group_by;
  return !quiet;
}

py::dict train(const Table& table, const std::string& out, double split_fraction, const py::dict& options) {
  FitOptions fit;
  const bool progress = apply_options(options, fit);
  FitReport report;
  {
    py::gil_scoped_release release;
    const ChronologicalSplit split = chronological_split(JobTable(*table.jobs), split_fraction);
    ModelFile model = fit_model(split, fit, progress ? stderr_progress() : ProgressFn{}, &report);
    model.provenance.trace_format = table.format;
    model.provenance.trace_name = table.name;
    save_model_file(out, model);
  }
  py::dict d;
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
                         bool allow_schema_mismatch) {
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
    e = evaluate(p, *split);
  }
  nlohmann::json j = cli::evaluation_json(e);
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
  m.def("train", &train, py::arg("table"), py::arg("out"), py::arg("split") = 0.8, py::arg("options") = py::dict(),
        "`ttlpred train`: trains on the first `split` of the eligible jobs in submit order and writes the model file");
  m.def("evaluate", &evaluate_table, py::arg("predictor"), py::arg("table"), py::arg("split") = 0.8,
        py::arg("allow_overlap") = false, py::arg("allow_schema_mismatch") = false,
        "`ttlpred eval --json`: (JSON text, per-job arrays of the scored jobs)");
}

}  // namespace ttlpred::python
