// backtest(table, data, options): `ttlpred backtest --data DATA --json` on a table, with
// `options` parsed by the command's own option declaration (app/backtest_run.hpp): the same
// options, defaults and checks, and the same JSON object (as text, for json.loads). With
// out=DIR, DIR/report.html is written as the command writes it.
#include <pybind11/pybind11.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "bindings.hpp"
#include "app/backtest_figures.hpp"
#include "app/backtest_report.hpp"
#include "app/backtest_run.hpp"
#include "cli_options.hpp"
#include "handles.hpp"

namespace py = pybind11;

namespace ttlpred::python {
namespace {

std::string backtest(const Table& table, const std::string& data, const py::dict& options) {
  const app::BacktestCliOptions o = command_options("backtest", &app::add_backtest_options, options);
  nlohmann::json j;
  {
    py::gil_scoped_release release;
    const Backtest result = app::run_backtest(*table.jobs, o);
    if (!o.out.empty()) {
      std::filesystem::create_directories(o.out);
      app::write_backtest_report(result, data, o.out);
    }
    if (!o.per_job.empty()) app::write_backtest_jobs(result, o.per_job);
    j = app::backtest_json(result, data);
  }
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

void bind_backtest(py::module_& m) {
  m.def("backtest", &backtest, py::arg("table"), py::arg("data"), py::arg("options") = py::dict(),
        "`ttlpred backtest --json` on a table (`data`: its name in the JSON); options as the command's long options");
}

}  // namespace ttlpred::python
