// `Predictor`: a model file loaded with the CLI's options (variant, isa, alpha, bounds), whose
// predict() is `ttlpred predict` on a table: the same model checks, the same history replay
// (pipeline/predict_history.hpp) and the same batched predict_rows, with the GIL
// released for the whole batch. Answers come back as NumPy arrays, bit for bit the doubles
// the CLI prints (rounded to 0.1 s there).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "engine/isa.hpp"
#include "engine/variant.hpp"
#include "features/history.hpp"
#include "pipeline/model_checks.hpp"
#include "pipeline/predict_history.hpp"
#include "predict/predictor.hpp"
#include "handles.hpp"
#include "util/error.hpp"

namespace py = pybind11;

namespace ttlpred::python {
namespace {

PredictorOptions options_from(const std::string& variant, const std::string& isa, double alpha, double max_ttl_s,
                              double min_seconds) {
  if (!(alpha > 0 && alpha < 1)) throw Error("alpha must be in (0, 1), got " + std::to_string(alpha));
  return predictor_options_named(variant, isa, alpha, max_ttl_s, min_seconds);
}

// Holds the checks' warnings until the GIL is back, then hands them to Python's warnings.
void warn_all(const std::vector<std::string>& warnings) {
  for (const std::string& w : warnings) PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 1);
}

py::dict predict_table(const PyPredictor& self, const Table& table, bool allow_schema_mismatch) {
  const Predictor& p = *self.predictor;
  const std::size_t n = table.jobs->rows();
  // No jobs, no answers: empty arrays, not a schema refusal (an empty frame has no field
  // with a value, which the check below reads as a trace of another kind).
  const bool empty = n == 0;
  const ModelCheck check =
      empty ? ModelCheck{} : check_schema(p.model(), p.encoder(), *table.jobs, table.format, "model " + self.path);
  warn_all(check.warnings);
  if (!check.refusal.empty()) {
    if (!allow_schema_mismatch) throw Error(check.refusal + " (allow_schema_mismatch=True predicts anyway)");
    PyErr_WarnEx(PyExc_UserWarning, check.refusal.c_str(), 1);
  }
  py::array_t<double> expected(static_cast<py::ssize_t>(n)), safe(static_cast<py::ssize_t>(n));
  py::array_t<bool> capped(static_cast<py::ssize_t>(n));
  if (!empty) {
    py::gil_scoped_release release;
    const HistoryMatrix history = predict_history(p, *table.jobs).features;
    std::vector<std::size_t> rows(n);
    std::iota(rows.begin(), rows.end(), std::size_t{0});
    const std::vector<Prediction> out = p.predict_rows(*table.jobs, rows, history);
    double* e = expected.mutable_data();
    double* s = safe.mutable_data();
    bool* c = capped.mutable_data();
    for (std::size_t i = 0; i < n; ++i) {
      e[i] = out[i].expected_wall_s;
      s[i] = out[i].safe_ttl_s;
      c[i] = out[i].capped;
    }
  }
  py::dict d;
  d["expected_wall_s"] = expected;
  d["safe_ttl_s"] = safe;
  d["capped"] = capped;
  return d;
}

// One job given as {field: value}: its answer from the model's own stored history (what
// `serve` starts from), with no table, no schema check and no history replay: the serving
// path, called from Python. A value of None or NaN is unknown; a field name that is not the
// schema's, a category given as something other than text or a number, a number that is not
// one, negative or infinite is refused naming the field.
std::string type_name_of(const py::handle& value) {
  return py::str(py::type::of(value).attr("__name__")).cast<std::string>();
}

py::dict predict_job(PyPredictor& self, const py::dict& job) {
  JobRecord r;
  std::array<std::string, kNumFields> texts;  // the category values the record views
  for (const auto& [key, value] : job) {
    if (!py::isinstance<py::str>(key)) throw Error("predict_job: field names must be strings");
    const std::string name = key.cast<std::string>();
    const std::optional<Field> f = field_by_name(name);
    if (!f) throw Error("predict_job: '" + name + "' is not a field of the job schema");
    if (value.is_none()) continue;
    const bool text_like = py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value);
    const bool integer_like = !text_like && !py::isinstance<py::bool_>(value) && py::hasattr(value, "__index__");
    const bool number_like = !text_like && !py::isinstance<py::bool_>(value) && (integer_like || py::hasattr(value, "__float__"));
    if (is_category(*f)) {
      std::string& text = texts[index_of(*f)];
      if (py::isinstance<py::str>(value)) {
        text = value.cast<std::string>();
      } else if (integer_like) {  // NumPy integers too
        text = py::str(py::int_(py::reinterpret_borrow<py::object>(value))).cast<std::string>();
      } else if (number_like) {
        const double v = py::float_(py::reinterpret_borrow<py::object>(value)).cast<double>();
        if (std::isnan(v)) continue;
        char buf[40];  // an id read as a float (12.0): "12", as the readers write it
        std::snprintf(buf, sizeof buf, v == std::floor(v) && std::fabs(v) < 1e15 ? "%.0f" : "%.17g", v);
        text = buf;
      } else {
        throw Error("predict_job: field '" + name + "' is a category: give text or a number, not " + type_name_of(value));
      }
      r.text(*f) = text;
      continue;
    }
    if (!number_like) throw Error("predict_job: field '" + name + "' is a number, not " + type_name_of(value));
    const double v = py::float_(py::reinterpret_borrow<py::object>(value)).cast<double>();
    if (std::isnan(v)) continue;
    if (std::isinf(v) || v < 0) {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%g", v);
      throw Error("predict_job: field '" + name + "' is " + buf + ": a count, amount or time (None or NaN: unknown)");
    }
    r[*f] = v;
  }
  if (!self.history) self.history = std::make_shared<const HistoryState>(self.predictor->initial_history());
  Prediction out;
  self.predictor->predict(std::span<const JobRecord>(&r, 1), *self.history, std::span<Prediction>(&out, 1));
  py::dict d;
  d["expected_wall_s"] = out.expected_wall_s;
  d["safe_ttl_s"] = out.safe_ttl_s;
  d["capped"] = out.capped;
  return d;
}

py::dict metadata(const PyPredictor& self) {
  const Predictor& p = *self.predictor;
  const ModelFile& m = p.model();
  py::dict d;
  d["path"] = self.path;
  d["variant"] = std::string(engine::variant_name(p.backend().variant()));
  d["made_for_variant"] = std::string(engine::variant_name(model_made_for(m)));
  d["isa"] = std::string(p.backend().target());
  d["alpha"] = p.options().alpha;
  d["max_ttl_s"] = p.options().max_ttl_s;
  d["min_seconds"] = p.options().min_seconds;
  d["data_hash"] = m.meta.data_hash;
  d["created_utc"] = m.meta.created_utc;
  d["metrics_json"] = m.meta.metrics_json;
  d["config_json"] = m.meta.config_json;
  d["ttlpred_version"] = m.meta.ttlpred_version;
  d["has_int8_calibration"] = !m.int8_calibration.empty();
  py::dict prov;
  const TrainingProvenance& pr = m.provenance;
  prov["trace_format"] = pr.trace_format;
  prov["trace_name"] = pr.trace_name;
  prov["split"] = pr.split;
  prov["eligible_rows"] = pr.eligible_rows;
  prov["train_rows"] = pr.train_rows;
  prov["last_train_submit"] = pr.last_train_submit;
  py::dict coverage;
  for (const auto& f : pr.fields) coverage[py::str(f.name)] = f.known_share;
  prov["field_coverage"] = coverage;
  d["provenance"] = prov;
  return d;
}

}  // namespace

void bind_predictor(py::module_& m) {
  py::class_<PyPredictor>(m, "Predictor", "A loaded model file: expected wall time and safe TTL per job")
      .def(py::init([](const std::string& path, const std::string& variant, const std::string& isa, double alpha,
                       double max_ttl_s, double min_seconds) {
             const PredictorOptions o = options_from(variant, isa, alpha, max_ttl_s, min_seconds);
             std::shared_ptr<const Predictor> p;
             {
               py::gil_scoped_release release;
               p = std::make_shared<const Predictor>(Predictor::load(path, o));
             }
             return PyPredictor{std::move(p), path, nullptr};
           }),
           py::arg("path"), py::arg("variant") = "auto", py::arg("isa") = "", py::arg("alpha") = kDefaultAlpha,
           py::arg("max_ttl_s") = PredictorOptions::kDefaultMaxTtlSeconds,
           py::arg("min_seconds") = PredictorOptions::kDefaultMinSeconds)
      .def_static(
          "from_bytes",
          [](const py::bytes& data, const std::string& variant, const std::string& isa, double alpha, double max_ttl_s,
             double min_seconds, const std::string& name) {
            const PredictorOptions o = options_from(variant, isa, alpha, max_ttl_s, min_seconds);
            const std::string_view view = data;
            std::vector<std::uint8_t> bytes(view.begin(), view.end());
            std::shared_ptr<const Predictor> p;
            {
              py::gil_scoped_release release;
              p = std::make_shared<const Predictor>(Predictor(parse_model_file(bytes, name), o, name));
            }
            return PyPredictor{std::move(p), name, nullptr};
          },
          py::arg("data"), py::arg("variant") = "auto", py::arg("isa") = "", py::arg("alpha") = kDefaultAlpha,
          py::arg("max_ttl_s") = PredictorOptions::kDefaultMaxTtlSeconds,
          py::arg("min_seconds") = PredictorOptions::kDefaultMinSeconds, py::arg("name") = "<model bytes>",
          "A model file's bytes (model_bytes()), loaded as the constructor loads a path; `name` stands for the path")
      .def(
          "model_bytes",
          [](const PyPredictor& self) {
            const std::vector<std::uint8_t> bytes = model_file_bytes(self.predictor->model());
            return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
          },
          "The loaded model as a model file's bytes (what pickling keeps)")
      .def("predict", &predict_table, py::arg("table"), py::arg("allow_schema_mismatch") = false,
           "`ttlpred predict` on a Table: {expected_wall_s, safe_ttl_s, capped} arrays (GIL released)")
      .def("predict_job", &predict_job, py::arg("job"),
           "One job {field: value} from the model's stored history: {expected_wall_s, safe_ttl_s, capped}")
      .def("metadata", &metadata, "The model file's metadata and provenance, and the loaded variant")
      .def_property_readonly("path", [](const PyPredictor& p) { return p.path; });
}

}  // namespace ttlpred::python
