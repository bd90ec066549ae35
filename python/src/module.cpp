// The module `ttlpred._core`. C++ errors a user can fix (ttlpred::Error: a bad trace, a
// refused model file, a bad option) become `ttlpred.Error`, a ValueError, so a notebook sees
// a Python exception with the C++ message (which names the file, line or field) instead of
// a crash.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "pipeline/split.hpp"
#include "predict/predictor.hpp"
#include "util/error.hpp"
#include "util/version.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "ttlpred's C++ libraries: traces, predictors, training and evaluation (see the ttlpred package)";
  pybind11::register_exception<ttlpred::Error>(m, "Error", PyExc_ValueError);
  m.attr("__version__") = ttlpred::kVersion;
  m.attr("git_commit") = ttlpred::kGitCommit;
  // The library's defaults, which the Python signatures take rather than retype.
  m.attr("DEFAULT_ALPHA") = ttlpred::kDefaultAlpha;
  m.attr("DEFAULT_SPLIT") = ttlpred::kDefaultSplit;
  m.attr("DEFAULT_MAX_TTL_S") = ttlpred::PredictorOptions::kDefaultMaxTtlSeconds;
  m.attr("DEFAULT_MIN_SECONDS") = ttlpred::PredictorOptions::kDefaultMinSeconds;
  ttlpred::python::bind_table(m);
  ttlpred::python::bind_predictor(m);
  ttlpred::python::bind_pipeline(m);
  ttlpred::python::bind_backtest(m);
  ttlpred::python::bind_simulate(m);
}
