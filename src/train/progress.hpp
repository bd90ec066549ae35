#pragma once
// The default rendering of training progress: one line per epoch on stderr, e.g.
//   epoch  3/30 [######..........................] loss 0.2107  val 1.934 h *  412k rows/s  2.6 s
// ('*' marks a new best). The CLI may pass its own ProgressFn instead.
#include <cstdio>
#include <string>

#include "train/train_config.hpp"

namespace ttlpred {

std::string format_progress_line(const EpochStats& s);
ProgressFn stderr_progress(std::FILE* out = stderr);

}  // namespace ttlpred
