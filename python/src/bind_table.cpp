// Job tables between Python and C++.
//  - read_trace(path): any trace the CLI reads (same readers, same skipped rows), returned
//    as columns: numbers as float64 arrays (NaN = unknown), categories as (codes, values)
//    with code -1 for unknown, which pandas turns into a Categorical without a per-row loop.
//  - Table.from_columns(columns): the reverse, from the schema's field names. Every column
//    is checked before any row is built, and a bad one is refused with the field's name:
//    an unknown name, a text column for a number field, an infinite number, a code outside
//    the values. NaN stays "unknown", as an empty CSV cell is.
// The table is built by JobTable::append_columns, a column at a time (each distinct
// category value interned once), which builds bit for bit the table the readers' row path
// (JobTable::append) builds from the same values, so a table from columns is the table the
// CLI would have read.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.hpp"
#include "data/job_table.hpp"
#include "data/read_report.hpp"
#include "data/schema.hpp"
#include "data/trace_readers.hpp"
#include "handles.hpp"
#include "util/error.hpp"

namespace py = pybind11;

namespace ttlpred::python {
namespace {

py::dict report_dict(const ReadReport& r) {
  py::dict d;
  d["path"] = r.path;
  d["format"] = r.format;
  d["lines"] = r.lines;
  d["rows"] = r.rows;
  d["skipped"] = r.skipped_total();
  py::dict by_reason;
  for (std::size_t i = 0; i < kNumSkipReasons; ++i)
    if (r.skipped[i] > 0) by_reason[py::str(std::string(skip_reason_name(static_cast<SkipReason>(i))))] = r.skipped[i];
  d["skipped_by_reason"] = by_reason;
  d["examples"] = r.examples;
  d["warnings"] = r.warnings;
  d["notes"] = r.notes;
  return d;
}

// Columns with at least one known value (a trace's unused schema fields are left out).
py::dict table_columns(const JobTable& t) {
  py::dict out;
  const std::size_t n = t.rows();
  for (const FieldInfo& f : kFields) {
    if (!t.has_values(f.field)) continue;
    const py::str name(std::string(f.name));
    if (f.kind == FieldKind::Number) {
      const auto src = t.num(f.field);
      py::array_t<double> a(static_cast<py::ssize_t>(n));
      std::copy(src.begin(), src.end(), a.mutable_data());
      out[name] = a;
    } else {
      const auto codes = t.codes(f.field);
      py::array_t<std::int64_t> c(static_cast<py::ssize_t>(n));
      std::int64_t* dst = c.mutable_data();
      for (std::size_t i = 0; i < n; ++i) dst[i] = codes[i] == kMissingCode ? -1 : static_cast<std::int64_t>(codes[i]);
      out[name] = py::make_tuple(c, t.dict(f.field).values());
    }
  }
  return out;
}

// One checked input column, ready to fill records without the GIL.
struct InputColumn {
  Field field;
  py::array_t<double> numbers;        // Number fields
  py::array_t<std::int64_t> codes;    // Category fields
  std::vector<std::string> values;    // Category fields
};

std::string field_message(const std::string& name, const std::string& problem) {
  return "column '" + name + "': " + problem;
}

// Checks what only Python can get wrong (a name that is no field, a column of the wrong
// Python type); the values themselves are checked by JobTable::append_columns.
InputColumn check_column(const std::string& name, const py::handle& value) {
  const auto field = field_by_name(name);
  if (!field) {
    std::string known;
    for (const FieldInfo& f : kFields) known += (known.empty() ? "" : ", ") + std::string(f.name);
    throw Error(field_message(name, "not a field of the job schema (fields: " + known + ")"));
  }
  InputColumn col{*field, {}, {}, {}};
  if (info(*field).kind == FieldKind::Number) {
    const py::array raw = py::array::ensure(value);
    if (!raw || raw.ndim() != 1) throw Error(field_message(name, "expected a one-dimensional numeric array"));
    const char kind = raw.dtype().kind();
    if (kind != 'f' && kind != 'i' && kind != 'u' && kind != 'b')
      throw Error(field_message(name, "field '" + name + "' is a number, but the column's dtype is " +
                                          std::string(py::str(raw.dtype())) + " (convert it, or map another column)"));
    col.numbers = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(raw);
  } else {
    if (!py::isinstance<py::tuple>(value) || py::len(value) != 2)
      throw Error(field_message(name, "field '" + name + "' is a category: expected (codes, values)"));
    const py::tuple t = py::reinterpret_borrow<py::tuple>(value);
    col.codes = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(t[0]);
    if (!col.codes || col.codes.ndim() != 1) throw Error(field_message(name, "category codes must be a 1-D integer array"));
    for (const py::handle v : t[1]) {
      if (!py::isinstance<py::str>(v))
        throw Error(field_message(name, "category values must be strings, got " + std::string(py::str(py::type::of(v)))));
      col.values.push_back(v.cast<std::string>());
    }
  }
  return col;
}

Table table_from_columns(const py::dict& columns, const std::string& format, const std::string& name) {
  std::vector<InputColumn> cols;
  for (const auto& [key, value] : columns) {
    if (!py::isinstance<py::str>(key)) throw Error("column names must be strings (schema field names)");
    cols.push_back(check_column(key.cast<std::string>(), value));
  }
  if (cols.empty()) throw Error("no columns: give at least one field of the job schema");
  // Views into the arrays and strings above, which outlive the append.
  std::vector<NumberColumnIn> numbers;
  std::vector<CategoryColumnIn> categories;
  std::vector<std::vector<std::string_view>> value_views;
  value_views.reserve(cols.size());
  for (const InputColumn& c : cols) {
    if (info(c.field).kind == FieldKind::Number) {
      numbers.push_back({c.field, {c.numbers.data(), static_cast<std::size_t>(c.numbers.size())}});
    } else {
      value_views.emplace_back(c.values.begin(), c.values.end());
      categories.push_back({c.field, {c.codes.data(), static_cast<std::size_t>(c.codes.size())}, value_views.back()});
    }
  }
  auto table = std::make_shared<JobTable>();
  {
    py::gil_scoped_release release;
    table->append_columns(numbers, categories);
  }
  return Table{std::move(table), format, name};
}

}  // namespace

void bind_table(py::module_& m) {
  py::class_<Table>(m, "Table", "A job table in the C++ library's columnar form (immutable)")
      .def_static("from_columns", &table_from_columns, py::arg("columns"), py::arg("format") = "",
                  py::arg("name") = "<columns>",
                  "Builds a table from {field name: float array | (int codes, [str values])}; refuses bad columns by name")
      .def_property_readonly("rows", [](const Table& t) { return t.jobs->rows(); })
      .def_property_readonly("format", [](const Table& t) { return t.format; })
      .def_property_readonly("name", [](const Table& t) { return t.name; })
      .def("columns", [](const Table& t) { return table_columns(*t.jobs); },
           "{field name: float64 array | (int64 codes, values)} for every field with a known value")
      .def("__len__", [](const Table& t) { return t.jobs->rows(); });

  m.def("read_trace",
        [](const std::string& path, const std::string& format) {
          const auto f = format_by_name(format);
          if (!f) throw Error("format must be auto, csv, swf or gwf, not '" + format + "'");
          ReadReport report;
          auto jobs = std::make_shared<JobTable>();
          {
            py::gil_scoped_release release;
            *jobs = read_trace(path, report, *f);
          }
          const std::string name = path.substr(path.rfind('/') + 1);
          return py::make_tuple(Table{std::move(jobs), report.format, name}, report_dict(report));
        },
        py::arg("path"), py::arg("format") = "auto",
        "Reads a trace file (CSV, SWF, GWF, optionally gzip) with the CLI's readers: (Table, read report dict)");

  py::list fields;
  for (const FieldInfo& f : kFields) {
    py::dict d;
    d["name"] = std::string(f.name);
    d["kind"] = f.kind == FieldKind::Number ? "number" : "category";
    d["phase"] = std::string(phase_name(f.phase));
    d["unit"] = std::string(f.unit);
    d["doc"] = std::string(f.doc);
    fields.append(d);
  }
  m.attr("schema") = fields;
}

}  // namespace ttlpred::python
