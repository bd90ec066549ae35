#include "sim/online_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "pipeline/split.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {

OnlineModel::OnlineModel(const JobTable& jobs, std::size_t first_row, OnlineModelOptions options,
                         OnlineModelProgress progress)
    : jobs_(jobs), first_row_(first_row), options_(std::move(options)), progress_(std::move(progress)),
      next_retrain_s_(-std::numeric_limits<double>::infinity()), now_s_(-std::numeric_limits<double>::infinity()) {
  if (first_row_ > jobs_.rows()) throw Error("simulate: the online model's first job is past the trace");
  if (!(options_.retrain_every_s >= 0) || !std::isfinite(options_.retrain_every_s))
    throw Error("simulate: --retrain-every must be a finite duration >= 0");
  if (options_.min_outcomes < 200)
    throw Error("simulate: --online-min-jobs must be at least 200 (the trainer needs 191 jobs for its validation and calibration tails)");
  if (options_.max_outcomes < options_.min_outcomes)
    throw Error("simulate: the online model's largest training set is below its smallest (--online-min-jobs)");
  // The jobs before the simulated ones end as the trace recorded them (submit + run time: the
  // recorded wait is not known everywhere), each known from that moment on.
  const auto submit = jobs_.num(Field::SubmitTime), wall = jobs_.num(Field::WallTime);
  for (std::size_t r = 0; r < first_row_; ++r) recorded_.push_back({r, submit[r] + wall[r], wall[r]});
  std::stable_sort(recorded_.begin(), recorded_.end(), [](const Outcome& a, const Outcome& b) { return a.end_s < b.end_s; });
}

void OnlineModel::advance(double t) {
  // Simulated time only moves forward: every outcome known now ended at or before t.
  if (!(t >= now_s_)) throw Error("simulate: the online model was asked or told at an earlier time than before");
  now_s_ = t;
  for (; next_recorded_ < recorded_.size() && recorded_[next_recorded_].end_s <= t; ++next_recorded_)
    learn(recorded_[next_recorded_]);
}

void OnlineModel::learn(const Outcome& o) {
  finished_.push_back(o);
  if (!history_) return;
  jobs_.record(o.row, record_);
  record_[Field::WallTime] = o.run_s;
  history_->observe(record_);
}

std::optional<Prediction> OnlineModel::predict(std::size_t job, double t) {
  if (first_row_ + job >= jobs_.rows()) throw Error("simulate: the online model was asked for a job past the trace");
  advance(t);
  // Due every retrain_every_s, and also as soon as the known outcomes have doubled since the
  // last model: the first model learns from the first min_outcomes jobs to end (the short
  // ones), and waiting a whole period to correct it would answer a week with it.
  const bool due = t >= next_retrain_s_ || finished_.size() >= 2 * finished_at_last_model_;
  if (options_.retrain_every_s > 0 && due && finished_.size() >= options_.min_outcomes) {
    retrain(t);
    next_retrain_s_ = t + options_.retrain_every_s;
  }
  if (!predictor_) {
    ++stats_.fallbacks;
    return std::nullopt;
  }
  jobs_.record(first_row_ + job, record_);
  Prediction p;
  predictor_->predict(std::span<const JobRecord>(&record_, 1), *history_, std::span<Prediction>(&p, 1));
  ++stats_.predicted;
  return p;
}

void OnlineModel::finished(std::size_t job, double t, double run_s) {
  if (first_row_ + job >= jobs_.rows()) throw Error("simulate: an outcome came for a job past the trace");
  if (!(run_s >= 0) || !std::isfinite(run_s)) throw Error("simulate: a finished job's run time must be finite and >= 0");
  advance(t);
  learn({first_row_ + job, t, run_s});
}

void OnlineModel::retrain(double t) {
  const auto t0 = std::chrono::steady_clock::now();
  // The finished jobs in submit order (rows are), the most recent max_outcomes of them, each
  // with the run time the schedule gave it.
  std::vector<const Outcome*> by_submit(finished_.size());
  for (std::size_t i = 0; i < finished_.size(); ++i) by_submit[i] = &finished_[i];
  std::sort(by_submit.begin(), by_submit.end(), [](const Outcome* a, const Outcome* b) { return a->row < b->row; });
  if (by_submit.size() > options_.max_outcomes)
    by_submit.erase(by_submit.begin(), by_submit.end() - static_cast<std::ptrdiff_t>(options_.max_outcomes));
  std::vector<std::size_t> rows(by_submit.size());
  for (std::size_t k = 0; k < rows.size(); ++k) rows[k] = by_submit[k]->row;
  JobTable table = jobs_.select(rows);
  const auto wall = table.num_mut(Field::WallTime);
  for (std::size_t k = 0; k < rows.size(); ++k) wall[k] = by_submit[k]->run_s;
  const ChronologicalSplit split = chronological_split(std::move(table), 1.0);
  FitReport report;
  ModelFile model = fit_model(split, options_.fit, ProgressFn{}, &report);
  predictor_ = std::make_unique<Predictor>(std::move(model), options_.predictor, "online model");
  // The history a service would hold now: every outcome known, in the order they came.
  history_ = std::make_unique<HistoryState>(predictor_->encoder().history_config());
  for (const Outcome& o : finished_) {
    jobs_.record(o.row, record_);
    record_[Field::WallTime] = o.run_s;
    history_->observe(record_);
  }
  ++stats_.retrains;
  stats_.last_train_rows = rows.size();
  finished_at_last_model_ = finished_.size();
  if (stats_.first_model_at_s < 0) stats_.first_model_at_s = t;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stats_.train_seconds += seconds;
  if (progress_) {
    char line[200];
    std::snprintf(line, sizeof line, "simulate: online model %zu trained on %zu finished jobs (%zu epochs, %.1f s)",
                  stats_.retrains, rows.size(), report.train.history.size(), seconds);
    progress_(line);
  }
}

std::optional<EstimateSource::Estimate> OnlineModelEstimates::estimate(std::size_t job, double t) {
  const auto p = model_.predict(job, t);
  if (!p) return std::nullopt;
  return Estimate{p->expected_wall_s, p->safe_ttl_s};
}

void OnlineModelEstimates::finished(std::size_t job, double t, double run_s) { model_.finished(job, t, run_s); }

}  // namespace ttlpred::sim
