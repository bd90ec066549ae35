#include "learn/replay.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>

#include "learn/duration.hpp"
#include "learn/window_table.hpp"
#include "pipeline/online_scoring.hpp"
#include "pipeline/split.hpp"
#include "pipeline/split_history.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// Sums of one side over some rows, turned into figures by finish().
struct SideSums {
  std::size_t rows = 0, killed = 0;
  double squared_error_h2 = 0, ttl_s = 0;
  void add(double wall_s, double pred_s, double ttl, int killed_now) {
    ++rows;
    killed += static_cast<std::size_t>(killed_now);
    const double e = (pred_s - wall_s) / 3600.0;
    squared_error_h2 += e * e;
    ttl_s += ttl;
  }
  ReplaySide finish() const {
    ReplaySide s;
    s.rows = rows;
    s.killed = killed;
    if (rows == 0) return s;
    const auto n = static_cast<double>(rows);
    s.rmse_hours = std::sqrt(squared_error_h2 / n);
    s.kill_rate = static_cast<double>(killed) / n;
    s.mean_safe_ttl_hours = ttl_s / n / 3600.0;
    return s;
  }
};

// Predictions and static-calibration groups of rows [first, last) of split.jobs by `model`.
struct Answers {
  std::vector<Prediction> preds;
  std::vector<std::uint32_t> groups;
  std::vector<std::uint32_t> models;  // which model answered (its index in the replay's list)
};

class HistoryCache {
 public:
  explicit HistoryCache(const ChronologicalSplit& split) : split_(split) {}
  const HistoryMatrix& get(const HistoryConfig& cfg) {
    for (const auto& [c, m] : cache_)
      if (c == cfg) return *m;
    cache_.emplace_back(cfg, std::make_unique<HistoryMatrix>(split_history(split_, cfg)));
    return *cache_.back().second;
  }

 private:
  const ChronologicalSplit& split_;
  std::vector<std::pair<HistoryConfig, std::unique_ptr<HistoryMatrix>>> cache_;
};

void answer(const ModelFile& model, const PredictorOptions& popts, const ChronologicalSplit& split,
            HistoryCache& histories, std::size_t first, std::size_t last, std::uint32_t model_index, Answers& out) {
  if (first >= last) return;
  const Predictor predictor(model, popts);
  std::vector<std::size_t> rows(last - first);
  std::iota(rows.begin(), rows.end(), first);
  std::vector<std::uint32_t> groups;
  const auto preds = predictor.predict_rows(split.jobs, rows, histories.get(predictor.encoder().history_config()),
                                            &groups, model.safe_ttl.group_column);
  out.preds.insert(out.preds.end(), preds.begin(), preds.end());
  out.groups.insert(out.groups.end(), groups.begin(), groups.end());
  out.models.insert(out.models.end(), preds.size(), model_index);
}

void check_options(const ReplayOptions& o) {
  if (!(o.initial_fraction > 0 && o.initial_fraction < 1))
    throw Error("--initial must be in (0, 1), got " + std::to_string(o.initial_fraction));
  if (!(o.retrain_every_s >= 0)) throw Error("--retrain-every must not be negative");
  if (o.retrain_every_s > 0 && o.retrain_every_s < 3600)
    throw Error("--retrain-every " + duration_text(o.retrain_every_s) + " is shorter than an hour; a replay retrains on days of outcomes");
  if (!(o.week_s > 0)) throw Error("--window-days must be > 0");
  if (!(o.kill_margin_s >= 0) || !std::isfinite(o.kill_margin_s)) throw Error("--kill-margin must be a finite number of seconds >= 0");
}

}  // namespace

const char* killed_as_name(ReplayOptions::Killed k) {
  return k == ReplayOptions::Killed::Censored ? "censored" : "run-time";
}

ReplayOptions::Killed killed_as_from_name(const std::string& name) {
  if (name == "censored") return ReplayOptions::Killed::Censored;
  if (name == "run-time") return ReplayOptions::Killed::RunTime;
  throw Error("--killed-as: expected censored or run-time, got '" + name + "'");
}

ReplayResult run_replay(const JobTable& trace, const ReplayOptions& o, const ReplayProgress& progress) {
  check_options(o);
  ReplayResult res;
  res.options = o;
  const ChronologicalSplit split = chronological_split(trace, o.initial_fraction);
  const JobTable& jobs = split.jobs;
  const std::size_t begin = split.train_rows, n = jobs.rows();
  if (begin < 1 || begin >= n) throw Error("--initial leaves no job to train on or none to replay");
  auto say = [&](const char* fmt, auto... args) {
    if (!progress) return;
    char line[320];
    std::snprintf(line, sizeof line, fmt, args...);
    progress(line);
  };
  say("replay: first model on %zu jobs, replaying %zu", begin, n - begin);
  std::vector<std::shared_ptr<const ModelFile>> models{std::make_shared<const ModelFile>(fit_model(split, o.initial_fit, {}))};
  res.initial_rows = begin;
  const auto submit = jobs.num(Field::SubmitTime);
  res.scored_start_s = submit[begin];

  std::vector<std::size_t> rows(n - begin);
  std::iota(rows.begin(), rows.end(), begin);
  const auto keys = key_codes(jobs, rows, o.key_column);
  HistoryCache histories(split);
  const PredictorOptions& popts = o.predictor;
  auto policy = [&] { return TtlPolicy(models[0]->safe_ttl, popts, o.online); };
  // The retrained side: rows [begin, answered) answered so far, by the model serving when each
  // was submitted; a swap at row k rebases the policy onto the new model's calibration.
  Answers live;
  std::vector<CalibrationSwap> swaps;
  std::size_t answered = begin, serving = 0;
  auto answer_to = [&](std::size_t upto) {
    answer(*models[serving], popts, split, histories, answered, upto, static_cast<std::uint32_t>(serving), live);
    answered = std::max(answered, upto);
  };
  if (o.retrain_every_s > 0) {
    for (double t = res.scored_start_s + o.retrain_every_s; t <= submit[n - 1]; t += o.retrain_every_s) {
      ReplayRetrain rr;
      rr.at_s = t;
      const auto row_t = static_cast<std::size_t>(std::lower_bound(submit.begin(), submit.end(), t) - submit.begin());
      try {
        const OutcomeWindow window{t, o.retrain.window_s};
        JobTable known;
        if (o.killed_as == ReplayOptions::Killed::Censored) {
          // The TTLs served so far decide which jobs were killed: answer up to t, then run the
          // online calibration over them as the service did (it only looks back in time).
          answer_to(row_t);
          const std::size_t m = row_t - begin;
          TtlPolicy cal = policy();
          const auto ttl = score_online(jobs, std::span(rows).first(m), std::span(live.preds).first(m),
                                        std::span(live.groups).first(m), std::span(keys).first(m), cal, {}, swaps);
          known = delivered_outcomes(jobs, std::span(rows).first(m), ttl, o.kill_margin_s, window, &rr.killed_rows);
        } else {
          known = jobs.select(rows_in_window(jobs, window));
        }
        RetrainResult r = retrain(known, *models[serving], o.retrain);
        rr.ran = true;
        rr.accepted = r.accepted;
        rr.reason = r.reason;
        rr.window_rows = r.window_rows;
        rr.train_rows = r.train_rows;
        rr.holdout_rows = r.holdout_rows;
        rr.current = r.current;
        rr.candidate = r.candidate;
        rr.seconds = r.seconds;
        if (r.accepted) {
          answer_to(row_t);  // the model serving until now answers every job submitted before t
          models.push_back(std::make_shared<const ModelFile>(std::move(r.model)));
          serving = models.size() - 1;
          swaps.push_back({row_t - begin, &models[serving]->safe_ttl});
          ++res.swaps;
        }
      } catch (const Error& e) {
        rr.reason = std::string("skipped: ") + e.what();
      }
      say("replay: day %.1f: %s (%zu killed outcomes known)", (t - res.scored_start_s) / 86400.0, rr.reason.c_str(),
          rr.killed_rows);
      res.retrains.push_back(std::move(rr));
    }
  }
  answer_to(n);
  Answers frozen;
  answer(*models[0], popts, split, histories, begin, n, 0, frozen);

  TtlPolicy live_cal = policy(), frozen_cal = policy();
  const auto live_ttl = score_online(jobs, rows, live.preds, live.groups, keys, live_cal, {}, swaps);
  const auto frozen_ttl = score_online(jobs, rows, frozen.preds, frozen.groups, keys, frozen_cal);

  const auto wall = jobs.num(Field::WallTime), req = jobs.num(Field::RequestedTtl);
  const bool has_req = jobs.has_values(Field::RequestedTtl);
  SideSums all_live, all_frozen;
  std::vector<std::pair<SideSums, SideSums>> weeks;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::size_t r = rows[i];
    const double requested = has_req ? req[r] : 0.0;
    const auto w = static_cast<std::size_t>(std::floor((submit[r] - res.scored_start_s) / o.week_s));
    if (weeks.size() <= w) weeks.resize(w + 1);
    const int kl = killed_by(wall[r], live_ttl[i], requested), kf = killed_by(wall[r], frozen_ttl[i], requested);
    all_live.add(wall[r], live.preds[i].expected_wall_s, live_ttl[i], kl);
    all_frozen.add(wall[r], frozen.preds[i].expected_wall_s, frozen_ttl[i], kf);
    weeks[w].first.add(wall[r], live.preds[i].expected_wall_s, live_ttl[i], kl);
    weeks[w].second.add(wall[r], frozen.preds[i].expected_wall_s, frozen_ttl[i], kf);
  }
  if (o.keep_outcomes) {
    const bool censored = o.killed_as == ReplayOptions::Killed::Censored;
    auto side = [&](std::size_t i, const Answers& a, double ttl) {
      const std::size_t r = rows[i];
      const double limit = ttl + o.kill_margin_s;
      const bool cut = censored && killed_by(wall[r], limit, has_req ? req[r] : 0.0);
      return ReplayOutcome::Side{a.preds[i].expected_wall_s, cut ? limit : wall[r], a.groups[i], a.models[i]};
    };
    res.outcomes.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
      res.outcomes.push_back({outcome_known_at(jobs, rows[i]), wall[rows[i]], side(i, frozen, frozen_ttl[i]),
                              side(i, live, live_ttl[i])});
    std::stable_sort(res.outcomes.begin(), res.outcomes.end(),
                     [](const ReplayOutcome& a, const ReplayOutcome& b) { return a.known_at_s < b.known_at_s; });
  }
  res.retrained = all_live.finish();
  res.frozen = all_frozen.finish();
  for (std::size_t w = 0; w < weeks.size(); ++w) {
    if (weeks[w].first.rows == 0) continue;
    ReplayWeek week;
    week.start_s = res.scored_start_s + static_cast<double>(w) * o.week_s;
    week.retrained = weeks[w].first.finish();
    week.frozen = weeks[w].second.finish();
    if (week.retrained.rows >= o.min_window_rows) {
      ++res.weeks_counted;
      res.weeks_within_limit_retrained += week.retrained.kill_rate <= o.kill_limit;
      res.weeks_within_limit_frozen += week.frozen.kill_rate <= o.kill_limit;
    }
    res.weeks.push_back(week);
  }
  return res;
}

}  // namespace ttlpred
