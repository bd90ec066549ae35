// End to end on a small synthetic ALICE trace: split, fit (network, encoder, history, safe-TTL
// calibration), evaluate. Small enough to run in seconds, large enough that the numbers mean
// something.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "data/schema.hpp"
#include "features/encoder.hpp"
#include "model/model_file.hpp"
#include "pipeline/evaluate.hpp"
#include "pipeline/fit_model.hpp"
#include "pipeline/split.hpp"
#include "predict/predictor.hpp"
#include "synth/generator.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// The synthetic trace is ALICE's, asked where its broker asks: at match, with the pilot's site
// and host known (a model asked at submit reads only the Submit phase, and this trace's run
// time divides by the host's speed).
FitOptions small_fit() {
  FitOptions o;
  o.at = PredictionTime::Match;
  o.train.hidden = {64, 64};
  o.train.max_epochs = 12;
  o.train.seed = 7;
  return o;
}

// A fine-tune of `base` for compressed inference: kind 0 int8 QAT, 1 2:4 sparsity, 2 both.
FitOptions compressed_fine_tune(const ModelFile& base, int kind, std::uint32_t epochs) {
  FitOptions o = small_fit();
  o.init = &base;
  o.train.max_epochs = epochs;
  o.train.learning_rate = 3e-4f;
  o.train.dropout = 0.0f;
  o.compression.qat_int8 = kind != 1;
  o.compression.sparse_2_4 = kind != 0;
  return o;
}

const ChronologicalSplit& small_split() {
  static const ChronologicalSplit split = [] {
    synth::GeneratorConfig g;
    g.jobs = 6000;
    g.seed = 3;
    return chronological_split(synth::generate_table(g), 0.8);
  }();
  return split;
}

TEST(Pipeline, FitThenEvaluateBeatsTheStaticTtlAndKillsAboutAlpha) {
  const auto& split = small_split();
  ASSERT_GT(split.scored_rows(), 1000u);
  FitReport report;
  const ModelFile m = fit_model(split, small_fit(), {}, &report);
  EXPECT_EQ(report.fit_rows + report.calibration_rows, split.train_rows);
  EXPECT_FALSE(m.safe_ttl.request.empty());  // the synthetic trace has requested TTLs

  const Predictor predictor(m, PredictorOptions{});
  const Evaluation e = evaluate(predictor, split);
  EXPECT_EQ(e.metrics.rows, split.scored_rows());
  ASSERT_TRUE(std::isfinite(e.baseline_rmse_hours));
  ASSERT_TRUE(std::isfinite(e.oracle_rmse_hours));
  // The requested TTL (hours to days) is a poor run-time estimate; the model is not.
  EXPECT_LT(e.metrics.rmse_hours, 0.5 * e.baseline_rmse_hours);
  EXPECT_GT(e.metrics.rmse_hours, 0.9 * e.oracle_rmse_hours);  // nothing beats the generator's own mean by much
  // Safe TTL at alpha 1%: a few kills at most, and far below what jobs asked for.
  EXPECT_LE(e.metrics.kill_rate, 0.03);
  EXPECT_LT(e.metrics.mean_safe_ttl_hours, 0.8 * e.metrics.mean_requested_ttl_hours);
  for (const auto& p : e.predictions) {
    ASSERT_TRUE(std::isfinite(p.expected_wall_s) && std::isfinite(p.safe_ttl_s));
    EXPECT_GT(p.safe_ttl_s, 0.0);
  }

  // No job's safe TTL below its expected wall time, whichever way the safe-TTL policy
  // follows outcomes (both are cut by the request alike, so a short request gives equality).
  for (const OnlineMethod m : {OnlineMethod::Static, OnlineMethod::Aci, OnlineMethod::AciCapped, OnlineMethod::MultiAci,
                               OnlineMethod::Mondrian}) {
    EvaluationCalibration c;
    c.online.method = m;
    c.online.gamma = 0.05;  // large, so that the level travels far from alpha in both directions
    const Evaluation online = evaluate(predictor, split, nullptr, c);
    std::size_t below = 0;
    for (const auto& p : online.predictions) below += p.safe_ttl_s < p.expected_wall_s ? 1 : 0;
    EXPECT_EQ(below, 0u) << online_method_name(m) << ": of " << online.predictions.size() << " scored jobs";
  }
}

// Equal information: a model asked at submission reads nothing a job gets only when it is
// matched (the trace's site, CE, host CPU, host speed, slot), neither as an input nor as the
// host speed its work rates divide by; one asked at match reads them.
TEST(Pipeline, AModelAskedAtSubmitReadsOnlyWhatSubmissionKnows) {
  const auto& split = small_split();
  for (const PredictionTime at : {PredictionTime::Submit, PredictionTime::Match}) {
    FitOptions o = small_fit();
    o.at = at;
    o.train.max_epochs = 1;
    const ModelFile m = fit_model(split, o, {});
    const FeatureEncoder encoder = FeatureEncoder::from_bytes(m.encoder, "fitted");
    std::vector<std::string> match_fields;
    for (const DenseColumn& c : encoder.dense_columns())
      if ((c.source == DenseSource::Field || c.source == DenseSource::Missing) && info(c.field).phase == Phase::Match)
        match_fields.emplace_back(info(c.field).name);
    for (const CategoryColumn& c : encoder.category_columns())
      if (info(c.field).phase == Phase::Match) match_fields.emplace_back(info(c.field).name);
    const std::string_view name = prediction_time_name(at);
    EXPECT_EQ(encoder.history_config().at, at) << name;
    if (at == PredictionTime::Submit) {
      EXPECT_EQ(match_fields, std::vector<std::string>{});
      EXPECT_FALSE(encoder.history_config().work_per_speed);
    } else {
      EXPECT_FALSE(match_fields.empty());
      EXPECT_NE(std::find(match_fields.begin(), match_fields.end(), "site"), match_fields.end());
      EXPECT_TRUE(encoder.history_config().work_per_speed);
    }
  }
}

// The compressed-variant recipe end to end: train fp32, fine-tune for each compressed variant, score
// that variant. Each stays close to the fp32 model (the 1 % goal is for the full traces;
// this 6 k-job trace moves by more between any two trainings).
TEST(Pipeline, CompressedFineTunesKeepTheFp32Accuracy) {
  const auto& split = small_split();
  const ModelFile base = fit_model(split, small_fit(), {});
  const double fp32 = evaluate(Predictor(base, PredictorOptions{}), split).metrics.rmse_hours;
  for (int kind = 0; kind < 3; ++kind) {
    const FitOptions o = compressed_fine_tune(base, kind, 4);
    const ModelFile m = fit_model(split, o, {});
    EXPECT_EQ(m.encoder, base.encoder);  // the starting model's features, not refitted
    EXPECT_EQ(m.int8_calibration.empty(), !o.compression.qat_int8);
    PredictorOptions po;
    po.variant = compressed_variant(o.compression);
    const Evaluation e = evaluate(Predictor(m, po), split);
    EXPECT_LT(e.metrics.rmse_hours, 1.08 * fp32) << compression_label(o.compression) << " vs fp32 " << fp32;
    EXPECT_LE(e.metrics.kill_rate, 0.03) << compression_label(o.compression);
  }
  // Without a starting model: fp32 training, then the fine-tune, in one call.
  FitOptions no_start = small_fit();
  no_start.compression.qat_int8 = true;
  FitReport report;
  const ModelFile m = fit_model(split, no_start, {}, &report);
  EXPECT_FALSE(m.int8_calibration.empty());
  EXPECT_LE(report.train.history.size(), 7u);  // the fine-tune's epochs (start + at most 6)
  PredictorOptions po;
  po.variant = engine::Variant::Int8Static;
  EXPECT_LT(evaluate(Predictor(m, po), split).metrics.rmse_hours, 1.08 * fp32);
}

TEST(Pipeline, PlainLogRatioCalibrationIsStillAvailable) {
  const auto& split = small_split();
  FitOptions o = small_fit();
  o.safe_ttl.request_aware = false;
  const ModelFile m = fit_model(split, o, {});
  EXPECT_TRUE(m.safe_ttl.request.empty());
  const Evaluation e = evaluate(Predictor(m, PredictorOptions{}), split);
  EXPECT_LT(e.metrics.rmse_hours, 0.5 * e.baseline_rmse_hours);
  // One log-ratio margin for every job drifts on this small trace: kills at alpha 1% depend on
  // the trained model (5.75% measured on one host; 0.67% here with the
  // trainer portable and native, each on OpenBLAS's AVX-512 and AVX2 kernels, 2026-12-01,
  // scripts/numerics-check.sh), which is why the bound is a drift allowance and not alpha,
  // and why the request-aware calibration is the default. The exact guarantee on
  // calibration rows is asserted in tests/model/safe_ttl_guarantees_test.cpp.
  EXPECT_GT(e.metrics.kill_rate, 0.0);
  EXPECT_LE(e.metrics.kill_rate, 0.1);
}

TEST(Pipeline, RefusesTooFewJobs) {
  synth::GeneratorConfig g;
  g.jobs = 60;
  const auto split = chronological_split(synth::generate_table(g), 0.8);
  EXPECT_THROW(fit_model(split, small_fit(), {}), Error);
}

}  // namespace
}  // namespace ttlpred

namespace ttlpred {
namespace {

// A model with quantile heads end to end: each job's safe TTL is its own calibrated quantile,
// never below its expected wall time (a request below both caps both), on the fp32 model and
// on its compressed fine-tunes (the wider last layer runs on every variant), and the file
// keeps the heads and the rule.
TEST(Pipeline, QuantileHeadsGiveEachJobItsOwnSafeTtlOnEveryVariant) {
  const auto& split = small_split();
  FitOptions o = small_fit();
  o.train.quantile_levels = {0.5f, 0.9f, 0.99f};
  const ModelFile m = parse_model_file(model_file_bytes(fit_model(split, o, {})), "round trip");
  ASSERT_EQ(m.target.quantiles.size(), 3u);
  ASSERT_EQ(m.mlp.layers.back().out, 4u);
  ASSERT_FALSE(m.safe_ttl.quantile.empty());
  {
    // Cold starts: a job of a production with no finished job, or without a production, of a
    // user with fewer than five; the trace's busiest production and user are warm.
    const Predictor p(m, PredictorOptions{});
    const HistoryState state = p.initial_history();
    std::map<std::string, std::size_t> per_production, per_user;
    JobRecord r;
    for (std::size_t i = 0; i < split.train_rows; ++i) {
      split.jobs.record(i, r);
      if (r.known(Field::ProductionTag)) ++per_production[std::string(r.text(Field::ProductionTag))];
      ++per_user[std::string(r.text(Field::User))];
    }
    auto busiest = [](const std::map<std::string, std::size_t>& m) {
      return std::max_element(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
    };
    ASSERT_FALSE(per_production.empty());
    const std::string production = busiest(per_production), user = busiest(per_user);
    auto cold_for = [&](std::string_view prod, std::string_view usr) {
      split.jobs.record(split.train_rows, r);
      r.text(Field::ProductionTag) = prod;
      r.text(Field::User) = usr;
      Prediction one;
      p.predict(std::span<const JobRecord>(&r, 1), state, std::span<Prediction>(&one, 1));
      return one.cold;
    };
    EXPECT_FALSE(cold_for(production, user));
    EXPECT_TRUE(cold_for("a-production-never-seen", user));
    EXPECT_FALSE(cold_for("", user));
    EXPECT_TRUE(cold_for("", "a-user-never-seen"));
  }
  for (int kind = -1; kind < 3; ++kind) {
    const ModelFile* serve = &m;
    ModelFile tuned;
    PredictorOptions po;
    if (kind >= 0) {
      tuned = fit_model(split, compressed_fine_tune(m, kind, 2), {});
      ASSERT_EQ(tuned.target.quantiles.levels, m.target.quantiles.levels);
      ASSERT_FALSE(tuned.safe_ttl.quantile.empty());
      serve = &tuned;
      po.variant_from_model = true;
    }
    const Evaluation e = evaluate(Predictor(*serve, po), split);
    EXPECT_LE(e.metrics.kill_rate, 0.03) << "variant kind " << kind;
    EXPECT_LT(e.metrics.mean_safe_ttl_hours, 0.8 * e.metrics.mean_requested_ttl_hours) << "variant kind " << kind;
    std::size_t below = 0;
    for (const auto& p : e.predictions) {
      ASSERT_TRUE(std::isfinite(p.upper_s) && p.upper_s >= 0.0);
      below += p.safe_ttl_s < p.expected_wall_s ? 1 : 0;
    }
    EXPECT_EQ(below, 0u) << "variant kind " << kind;
    // Each head's coverage of the scored jobs, ascending with its level (monotone heads).
    ASSERT_EQ(e.quantile_coverage.size(), 3u);
    for (std::size_t h = 0; h < 3; ++h) {
      EXPECT_FLOAT_EQ(static_cast<float>(e.quantile_coverage[h].level), m.target.quantiles.levels[h]);
      if (h > 0) {
        EXPECT_GE(e.quantile_coverage[h].covered, e.quantile_coverage[h - 1].covered);
      }
    }
    // The median head is a median within what 1 200 jobs and a short training allow, on the
    // fp32 model and its int8 QAT fine-tune: 0.77 here for fp32. The head runs high (it
    // covers 0.64-0.69 of the scored jobs of a 50 000-job trace, with or without the bins:
    // docs/ACCURACY.md, "Piecewise-linear bins"), so the band is wider above. The 2:4
    // fine-tunes' two epochs after pruning leave it at 0.81-0.84 here: their safe TTL rests
    // on the conformal margin (checked above).
    if (kind <= 0) {
      EXPECT_GT(e.quantile_coverage[0].covered, 0.3) << "variant kind " << kind;
      EXPECT_LT(e.quantile_coverage[0].covered, 0.82) << "variant kind " << kind;
    }
  }
}

}  // namespace
}  // namespace ttlpred
