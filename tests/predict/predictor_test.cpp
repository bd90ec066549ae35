// The predictor: every refusal of its constructor and of predict(), the bounds it puts on
// each answer, and the promise that ties the service to evaluation: the serving path
// predict() (a record and a live history state) and the evaluation path predict_rows() (a
// table and its leak-free history matrix) give bit-identical answers for the same jobs.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "model/model_file.hpp"
#include "predict/predictor.hpp"

#include "engine/cpu_backend.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

const std::string& model_path() { return test::hour_scale_test_model("predict.model"); }

std::string construction_error(ModelFile m, const PredictorOptions& o) {
  try {
    Predictor p(std::move(m), o, "t.model");
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Predictor, RefusesOptionsOutsideTheirRange) {
  const ModelFile m = load_model_file(model_path());
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (double alpha : {0.0, 1.0, -0.1, nan}) {
    PredictorOptions o;
    o.alpha = alpha;
    EXPECT_NE(construction_error(m, o).find("alpha must be in (0, 1)"), std::string::npos) << alpha;
  }
  for (double min_s : {-1.0, inf, nan}) {
    PredictorOptions o;
    o.min_seconds = min_s;
    EXPECT_NE(construction_error(m, o).find("--min-seconds must be a finite number >= 0"), std::string::npos) << min_s;
  }
  for (double max_s : {-1.0, inf, nan, 30.0}) {  // 30 s is below the 60 s floor
    PredictorOptions o;
    o.max_ttl_s = max_s;
    EXPECT_NE(construction_error(m, o).find("--max-ttl must be 0 (no cap) or a finite number >= --min-seconds"),
              std::string::npos)
        << max_s;
  }
  PredictorOptions no_cap;
  no_cap.max_ttl_s = 0;
  EXPECT_EQ(construction_error(m, no_cap), "(accepted)");
}

TEST(Predictor, RefusesAnEncoderThatDoesNotMatchTheNetwork) {
  ModelFile m = load_model_file(model_path());
  // One more dense input than the encoder writes, the first layer widened to match.
  DenseLayer& first = m.mlp.layers[0];
  const std::uint32_t old_in = first.in;
  std::vector<float> w;
  for (std::uint32_t o = 0; o < first.out; ++o) {
    for (std::uint32_t i = 0; i < old_in; ++i) w.push_back(first.weight[o * old_in + i]);
    w.push_back(0.0f);
  }
  first.weight = std::move(w);
  ++first.in;
  ++m.mlp.dense_inputs;
  const std::string msg = construction_error(std::move(m), {});
  EXPECT_NE(msg.find("t.model: the encoder"), std::string::npos) << msg;
  EXPECT_NE(msg.find("does not match the network"), std::string::npos) << msg;
}

TEST(Predictor, RefusesSafeTtlGroupsByAColumnTheEncoderLacks) {
  ModelFile m = load_model_file(model_path());
  m.safe_ttl.group_column = "queue";  // the test encoder encodes user and job_type only
  EXPECT_EQ(construction_error(m, {}), "t.model: safe-TTL groups by 'queue', which the encoder does not encode");
  m.safe_ttl.group_column = "job_type";
  const Predictor p(std::move(m), {}, "t.model");
  EXPECT_GE(p.group_cat_index(), 0);
  EXPECT_EQ(info(p.encoder().category_columns()[static_cast<std::size_t>(p.group_cat_index())].field).name,
            std::string("job_type"));
}

TEST(Predictor, PredictRefusesAShortOutputAndAForeignHistoryState) {
  const Predictor p = Predictor::load(model_path(), {});
  std::vector<JobRecord> jobs(3);
  std::vector<Prediction> out(2);
  try {
    p.predict(jobs, p.initial_history(), out);
    FAIL() << "a 2-slot output for 3 jobs was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "predict: output span is shorter than the batch");
  }
  HistoryConfig other;
  other.keys = {HistoryKey::All};  // the model's state has All and User keys, with ratios
  const HistoryState foreign(other);
  ASSERT_NE(foreign.width(), p.initial_history().width());
  out.resize(3);
  try {
    p.predict(jobs, foreign, out);
    FAIL() << "a history state of another width was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "predict: history state width does not match the model");
  }
}

TEST(Predictor, VariantFromModelReadsTheMetadataAndFallsBackToFp32Fused) {
  ModelFile m = load_model_file(model_path());
  EXPECT_EQ(model_made_for(m), engine::Variant::Fp32Fused);  // no metadata
  m.meta.metrics_json = R"({"safe_ttl_variant":"fp16"})";
  EXPECT_EQ(model_made_for(m), engine::Variant::Fp16);
  m.meta.metrics_json = R"({"safe_ttl_variant":"fp64-of-the-future"})";
  EXPECT_EQ(model_made_for(m), engine::Variant::Fp32Fused);
  m.meta.metrics_json = R"({"safe_ttl_variant":7})";
  EXPECT_EQ(model_made_for(m), engine::Variant::Fp32Fused);
  m.meta.metrics_json = "not json";
  EXPECT_EQ(model_made_for(m), engine::Variant::Fp32Fused);
  m.meta.metrics_json = R"({"safe_ttl_variant":"bf16"})";
  PredictorOptions o;
  o.variant_from_model = true;
  EXPECT_EQ(Predictor(m, o).options().variant, engine::Variant::Bf16);
  // The typed field, when a file has it, is what counts; it survives the file.
  m.serving_variant = "int8-dynamic";
  EXPECT_EQ(model_made_for(m), engine::Variant::Int8Dynamic);
  const ModelFile back = parse_model_file(model_file_bytes(m), "round trip");
  EXPECT_EQ(back.serving_variant, "int8-dynamic");
  EXPECT_EQ(Predictor(back, o).options().variant, engine::Variant::Int8Dynamic);
  m.serving_variant = "fp64-of-the-future";
  EXPECT_EQ(model_made_for(m), engine::Variant::Fp32Fused);
}

TEST(Predictor, AnOldFileWithTheVariantInItsMetricsStillServesIt) {
  // Written as files were before the serving-variant section: the key in metrics_json.
  ModelFile m = load_model_file(model_path());
  m.serving_variant.clear();
  m.meta.metrics_json = R"({"validation_rmse_hours":1.0,"safe_ttl_variant":"fp16"})";
  const std::vector<std::uint8_t> bytes = model_file_bytes(m);
  const ModelFile old = parse_model_file(bytes, "old file");
  EXPECT_TRUE(old.serving_variant.empty());
  PredictorOptions o;
  o.variant_from_model = true;
  EXPECT_EQ(Predictor(old, o).options().variant, engine::Variant::Fp16);
}

TEST(Predictor, RunsOnTheBackendItIsGiven) {
  PredictorOptions o;
  o.backend = &engine::cpu_backend();
  o.variant = engine::Variant::Fp16;
  const Predictor p(load_model_file(model_path()), o);
  EXPECT_EQ(p.backend().variant(), engine::Variant::Fp16);
  EXPECT_FALSE(p.backend().target().empty());
  EXPECT_EQ(p.backend().kernel_names().size(), p.model().mlp.layers.size());
  EXPECT_TRUE(engine::cpu_backend().runs(engine::Variant::Int8Sparse24));
}

// A backend that runs fewer variants than the CPU engine, as the CUDA backend does (fp32,
// fp16, int8-static), compiled on the CPU so that the test runs anywhere.
std::vector<engine::Variant> gpu_like_variants() {
  return {engine::Variant::Fp32, engine::Variant::Fp16, engine::Variant::Int8Static};
}
const engine::BackendKind& gpu_like_backend() {
  static const engine::BackendKind kind{"gpu-like", gpu_like_variants, engine::cpu_backend().compile};
  return kind;
}

TEST(Predictor, AutoRunsAPlainModelAsFp32WhereTheBackendHasNoFusedPlan) {
  ModelFile m = load_model_file(model_path());
  PredictorOptions o;
  o.variant_from_model = true;
  o.backend = &gpu_like_backend();
  EXPECT_EQ(Predictor(m, o).backend().variant(), engine::Variant::Fp32);
  // The same arithmetic: the fused fp32 plan and plain fp32 agree to float rounding.
  PredictorOptions cpu;
  cpu.variant_from_model = true;
  const Predictor a(m, o), b(m, cpu);
  EXPECT_EQ(b.backend().variant(), engine::Variant::Fp32Fused);
  const std::size_t dw = m.mlp.dense_inputs, cw = m.mlp.embeddings.size();
  std::vector<float> dense(4 * dw), za(4), zb(4);
  for (std::size_t i = 0; i < dense.size(); ++i) dense[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  std::vector<std::uint32_t> cats(4 * cw, 1);
  a.backend().predict(dense.data(), cats.data(), 4, za.data());
  b.backend().predict(dense.data(), cats.data(), 4, zb.data());
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(za[i], zb[i], 1e-5 * std::max(1.0f, std::fabs(zb[i]))) << i;
  // A model made for a variant the backend does not run is refused, naming both: its safe
  // TTL was calibrated on that variant.
  m.serving_variant = "fp16-2:4";
  EXPECT_EQ(construction_error(m, o),
            "t.model: the gpu-like backend does not run variant 'fp16-2:4' (it runs: fp32, fp16, int8-static)");
  m.serving_variant = "fp16";
  EXPECT_EQ(Predictor(m, o).backend().variant(), engine::Variant::Fp16);
  // An explicit fp32-fused is the caller's choice: refused, not replaced.
  PredictorOptions fused;
  fused.backend = &gpu_like_backend();
  fused.variant = engine::Variant::Fp32Fused;
  EXPECT_EQ(construction_error(m, fused),
            "t.model: the gpu-like backend does not run variant 'fp32-fused' (it runs: fp32, fp16, int8-static)");
}

TEST(Predictor, BoundsByHand) {
  PredictorOptions o;  // floor 60 s, cap 72 h
  bool capped = false;
  EXPECT_EQ(bound_seconds(10.0, 0.0, o, capped), 60.0);  // floor
  EXPECT_EQ(bound_seconds(-std::numeric_limits<double>::infinity(), 0.0, o, capped), 60.0);
  EXPECT_FALSE(capped);
  // Not a number, or an overflow: longer than can be told, so the request or the cap, never
  // the floor (a TTL of 60 s would kill the job); with neither, an error.
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(bound_seconds(nan, 7200.0, o, capped), 7200.0);
  EXPECT_EQ(bound_seconds(inf, 7200.0, o, capped), 7200.0);
  EXPECT_FALSE(capped);
  EXPECT_EQ(bound_seconds(nan, 0.0, o, capped), 259200.0);
  EXPECT_TRUE(capped);
  capped = false;
  EXPECT_EQ(bound_seconds(inf, 0.0, o, capped), 259200.0);
  EXPECT_TRUE(capped);
  capped = false;
  {
    PredictorOptions no_cap;
    no_cap.max_ttl_s = 0;
    bool c = false;
    try {
      bound_seconds(nan, 0.0, no_cap, c);
      ADD_FAILURE() << "a NaN without request or cap was answered";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not a finite number"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(bound_seconds(5000.0, 3000.0, o, capped), 3000.0);  // the request
  EXPECT_EQ(bound_seconds(10.0, 30.0, o, capped), 30.0);        // the request wins even below the floor
  EXPECT_FALSE(capped);
  EXPECT_EQ(bound_seconds(400000.0, 500000.0, o, capped), 400000.0);  // a request above the cap stands
  EXPECT_FALSE(capped);
  EXPECT_EQ(bound_seconds(400000.0, 0.0, o, capped), 259200.0);  // no request: the cap
  EXPECT_TRUE(capped);
  o.max_ttl_s = 0;
  capped = false;
  EXPECT_EQ(bound_seconds(400000.0, 0.0, o, capped), 400000.0);
  EXPECT_FALSE(capped);
}

// Jobs 30000 s apart, each finished (wait 30 s + at most 20060 s) before the next is
// submitted: the history a job sees at submission is every earlier job, which is what the
// serving path's state holds when it is updated after each job.
JobTable spaced_jobs(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<std::string> types = {"MC", "USER", "MERGE", "NEVER-SEEN"};
  JobTable t;
  JobRecord r;
  for (std::size_t i = 0; i < n; ++i) {
    r.clear();
    r[Field::JobId] = static_cast<double>(i);
    r[Field::SubmitTime] = 1.8e9 + static_cast<double>(i) * 30000;
    r.text(Field::User) = test::test_users()[static_cast<std::size_t>(u(rng) * 5)];
    r.text(Field::JobType) = types[static_cast<std::size_t>(u(rng) * 4)];
    r[Field::CpuCores] = static_cast<double>(1u << (i % 4));
    if (i % 3) r[Field::RequestedTtl] = std::floor(600 + u(rng) * 80000);  // a third without one
    r[Field::WaitTime] = 30;
    r[Field::WallTime] = std::floor(60 + u(rng) * 20000);
    t.append(r);
  }
  return t;
}

// The test model, and the same with piecewise-linear bins in its encoder.
const std::string& piecewise_model_path() {
  static const std::string path = [] {
    const std::string p = test::temp_dir() + "/predict-bins.model";
    test::write_test_model(p, 1, {HistoryKey::All, HistoryKey::User}, PredictionTime::Submit, false, 4);
    return p;
  }();
  return path;
}

class ServingPath : public ::testing::TestWithParam<bool> {};

TEST_P(ServingPath, EqualsEvaluationPathJobByJob) {
  PredictorOptions no_cap;
  no_cap.max_ttl_s = 0;
  const Predictor p = Predictor::load(GetParam() ? piecewise_model_path() : model_path(), no_cap);
  const JobTable t = spaced_jobs(200, 3);
  HistoryState walked = p.initial_history();
  const HistoryMatrix hm = compute_history(t, walked);
  std::vector<std::size_t> rows(t.rows());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  const std::vector<Prediction> eval = p.predict_rows(t, rows, hm);
  ASSERT_EQ(eval.size(), t.rows());

  HistoryState live = p.initial_history();
  JobRecord r;
  std::size_t differ_from_first = 0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    t.record(i, r);
    Prediction one;
    p.predict(std::span<const JobRecord>(&r, 1), live, std::span<Prediction>(&one, 1));
    EXPECT_EQ(one.expected_wall_s, eval[i].expected_wall_s) << "job " << i;
    EXPECT_EQ(one.safe_ttl_s, eval[i].safe_ttl_s) << "job " << i;
    EXPECT_EQ(one.capped, eval[i].capped) << "job " << i;
    EXPECT_GE(one.expected_wall_s, 60.0);
    EXPECT_GE(one.safe_ttl_s, one.expected_wall_s);
    if (r[Field::RequestedTtl] > 0) {
      EXPECT_LE(one.safe_ttl_s, r[Field::RequestedTtl]);
    }
    differ_from_first += one.expected_wall_s != eval[0].expected_wall_s;
    live.observe(r);
  }
  // The comparison is not between constants: answers vary from job to job.
  EXPECT_GT(differ_from_first, 150u);
  EXPECT_EQ(live.observed(), walked.observed());
}

INSTANTIATE_TEST_SUITE_P(Encoders, ServingPath, ::testing::Bool(),
                         [](const auto& info) { return info.param ? std::string("PiecewiseBins") : std::string("Plain"); });

TEST(Predictor, JobsWithoutSubmitTimeArePredictedFromTheEndStateOnBothPaths) {
  const Predictor p = Predictor::load(model_path(), {});
  JobTable t = spaced_jobs(100, 4);
  JobTable untimed = spaced_jobs(20, 5);
  std::vector<JobRecord> batch(untimed.rows());
  for (std::size_t i = 0; i < untimed.rows(); ++i) {
    untimed.record(i, batch[i]);
    batch[i][Field::SubmitTime] = std::numeric_limits<double>::quiet_NaN();
    batch[i][Field::WallTime] = std::numeric_limits<double>::quiet_NaN();
    t.append(batch[i]);
  }
  HistoryState state = p.initial_history();
  const HistoryMatrix hm = compute_history(t, state);
  std::vector<std::size_t> rows(batch.size());
  std::iota(rows.begin(), rows.end(), std::size_t{100});
  const auto eval = p.predict_rows(t, rows, hm);
  std::vector<Prediction> serve(batch.size());
  p.predict(batch, state, serve);  // one batch of 20 through the service's path
  for (std::size_t i = 0; i < batch.size(); ++i) {
    EXPECT_EQ(serve[i].expected_wall_s, eval[i].expected_wall_s) << i;
    EXPECT_EQ(serve[i].safe_ttl_s, eval[i].safe_ttl_s) << i;
  }
}

TEST(Predictor, GroupIdsComeFromTheNamedColumn) {
  const Predictor p = Predictor::load(model_path(), {});
  const JobTable t = spaced_jobs(40, 6);
  HistoryState s = p.initial_history();
  const HistoryMatrix hm = compute_history(t, s);
  std::vector<std::size_t> rows(t.rows());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  std::vector<std::uint32_t> ids;
  p.predict_rows(t, rows, hm, &ids, "job_type");
  ASSERT_EQ(ids.size(), rows.size());
  const auto& cats = p.encoder().category_columns();
  std::size_t pos = 0;
  while (info(cats[pos].field).name != std::string("job_type")) ++pos;
  JobRecord r;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    t.record(i, r);
    const std::string_view type = r.text(Field::JobType);
    const auto it = cats[pos].index.find(type);
    EXPECT_EQ(ids[i], it == cats[pos].index.end() ? 0u : it->second) << type;  // NEVER-SEEN: 0
  }
  p.predict_rows(t, rows, hm, &ids, "");
  for (std::uint32_t id : ids) EXPECT_EQ(id, kNoGroup);
  EXPECT_THROW(p.predict_rows(t, rows, hm, &ids, "site"), Error);
}

}  // namespace
}  // namespace ttlpred
