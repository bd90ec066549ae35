#include "train/progress.hpp"

#include <cmath>
#include <string>

namespace ttlpred {

std::string format_progress_line(const EpochStats& s) {
  constexpr int kBar = 30;
  const int filled = s.max_epochs ? static_cast<int>(kBar * static_cast<double>(s.epoch) / s.max_epochs) : 0;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(kBar - filled), '.');
  char val[32];
  if (std::isnan(s.val_rmse_hours))
    std::snprintf(val, sizeof val, "val   n/a");
  else
    std::snprintf(val, sizeof val, "val %.3f h", s.val_rmse_hours);
  char line[256];
  if (s.epoch == 0) {  // a fine-tune's starting point, scored before any step
    std::snprintf(line, sizeof line, "start     [%s]               %s %s                 %.1f s", bar.c_str(), val,
                  s.best ? "*" : " ", s.seconds);
    return line;
  }
  std::snprintf(line, sizeof line, "epoch %3u/%u [%s] loss %.4f  %s %s %6.0fk rows/s  %.1f s", s.epoch, s.max_epochs,
                bar.c_str(), s.train_loss, val, s.best ? "*" : " ", s.samples_per_s / 1000.0, s.seconds);
  return line;
}

ProgressFn stderr_progress(std::FILE* out) {
  return [out](const EpochStats& s) {
    std::fprintf(out, "%s\n", format_progress_line(s).c_str());
    std::fflush(out);
  };
}

}  // namespace ttlpred
