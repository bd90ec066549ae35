#pragma once
// The pieces of the Python module `ttlpred._core`, one file each: job tables (trace files and
// columns in and out), the Predictor, training / evaluation, backtests and simulations. Only glue lives here: every
// number is computed by the C++ libraries, exactly as the `ttlpred` program computes it.
#include <pybind11/pybind11.h>

namespace ttlpred::python {

void bind_table(pybind11::module_& m);
void bind_predictor(pybind11::module_& m);
void bind_pipeline(pybind11::module_& m);
void bind_backtest(pybind11::module_& m);
void bind_simulate(pybind11::module_& m);

}  // namespace ttlpred::python
