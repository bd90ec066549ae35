#pragma once
// Trained per-split models kept in a folder, so that a second backtest of the same trace
// with the same training settings costs scoring only: comparing calibration methods, or
// tuning one, retrains nothing (each split's training is minutes; its scoring, seconds).
//
// A split's model is DIR/split-<s>.model, next to DIR/split-<s>.json, the settings it was
// trained under: the digest of the whole trace as read, the split fraction and its training
// rows, every training option that changes the model (fit_settings_json) and the program
// version. A model is reused only when that file exists and equals the settings of the run
// asking; otherwise the split is trained and both files are (re)written, the model first, so
// that an interrupted write leaves settings that no longer match. The settings name the
// data and the options, not the trainer's code: after changing the trainer, empty DIR.
#include <string>

#include "model/model_file.hpp"
#include "pipeline/fit_model.hpp"
#include "pipeline/split.hpp"

namespace ttlpred {

// Every FitOptions field that changes the trained model, as one JSON object (sorted keys).
// Throws Error for options a backtest does not train with (a fine-tune's starting model, or
// compression), which the cache cannot name.
std::string fit_settings_json(const FitOptions& options);

struct CachedFit {
  ModelFile model;
  bool reused = false;  // read from the folder rather than trained
};

// `dir` empty: trains. Otherwise reuses DIR's model for this split when its settings match,
// else trains and writes it (creating DIR). `trace_digest`: table_digest of the whole trace
// the split was cut from. Throws Error naming the file when one cannot be read or written.
CachedFit fit_or_reuse_model(const ChronologicalSplit& split, const FitOptions& options, const std::string& dir,
                             const std::string& trace_digest);

}  // namespace ttlpred
