#pragma once
// The two objects Python holds. A job table: the C++ JobTable (shared, immutable once built) and the
// trace format it was read as ("csv", "swf", "gwf"; "" for columns from a DataFrame), which
// the model checks compare with the format a model was trained on.
#include <memory>
#include <string>

#include "data/job_table.hpp"
#include "features/history.hpp"
#include "predict/predictor.hpp"

namespace ttlpred::python {

struct Table {
  std::shared_ptr<const JobTable> jobs;
  std::string format;
  std::string name;  // the file it came from, or "<columns>": for messages and provenance
};

// A loaded Predictor and the path it came from (named in the model checks' messages).
struct PyPredictor {
  std::shared_ptr<const Predictor> predictor;
  std::string path;
  // The model's stored history, read once for predict_job (Predictor::initial_history reads
  // it from the file's bytes on every call). Only touched with the GIL held.
  std::shared_ptr<const HistoryState> history;
};

}  // namespace ttlpred::python
