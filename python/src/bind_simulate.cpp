// simulate(table, data, swf_header, options): `ttlpred simulate --data DATA --json` on a
// table, with `options` parsed by the command's own option declaration
// (app/simulate_run.hpp): the same options, defaults and checks, the same JSON object (as
// text, for json.loads), and with out=DIR the same schedule.csv, timeseries.csv and
// report.html. `swf_header`: the SWF file whose MaxProcs sizes a batch machine ("": none).
#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "app/simulate_run.hpp"
#include "cli_options.hpp"
#include "handles.hpp"

namespace py = pybind11;

namespace ttlpred::python {
namespace {

std::string simulate(const Table& table, const std::string& data, const std::string& swf_header, const py::dict& options) {
  const app::SimulateCliOptions o = command_options("simulate", &app::add_simulate_options, options);
  nlohmann::json j;
  {
    py::gil_scoped_release release;
    const std::optional<Predictor> predictor = app::load_simulate_model(o);
    j = app::run_simulate(o, predictor, app::SimulateInput{JobTable(*table.jobs), table.format, data, swf_header});
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void bind_simulate(py::module_& m) {
  m.def("simulate", &simulate, py::arg("table"), py::arg("data"), py::arg("swf_header") = "",
        py::arg("options") = py::dict(),
        "`ttlpred simulate --json` on a table (`data`: its name in the JSON); options as the command's long options");
}

}  // namespace ttlpred::python
