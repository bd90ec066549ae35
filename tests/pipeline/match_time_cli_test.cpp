// `train --at match`, `--censored on`, `--residual on`, `--request-key on`, `--system-key on`
// and `--censored-rates on` as scripts call them: the model records its prediction time (a
// residual model the history estimates its output is relative to, a request-key or
// system-key model its extra history key, a censored-rates model its flag), `eval` and
// `predict` default to it and print the same answer for every scored job, a match-time
// model is refused at submit time, a fine-tune keeps a residual model's base, and a bad
// value names its option.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "features/encoder.hpp"
#include "model/model_file.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

nlohmann::json json_of(const std::string& out) { return nlohmann::json::parse(out.substr(out.find('{'))); }

// A 3000-job trace in a fresh folder and a model trained on it at match time with `flags`;
// false where the program is not built (the caller skips).
struct Trained {
  std::string dir, trace, model;  // trace and model shell-quoted
};
bool train_at_match(Trained& t, const std::string& flags) {
  t.dir = test::temp_dir();
  t.trace = "'" + t.dir + "/t.csv'";
  t.model = "'" + t.dir + "/m.ttlp'";
  if (!test::generate_trace(t.trace, 3000, 7)) return false;
  std::string out;
  EXPECT_EQ(test::run_cli("train --data " + t.trace + " --split 0.8 --epochs 3 --quiet --at match " + flags + " --out " +
                              t.model,
                          &out),
            0)
      << out;
  return true;
}

// `train` on the trace with `flags` fails, and its message names `named` (the option, or
// what it needs).
void expect_train_refused_naming(const Trained& t, const std::string& flags, const std::string& named) {
  std::string out;
  EXPECT_NE(test::run_cli("train --data " + t.trace + " " + flags + " --out '" + t.dir + "/x.ttlp'", &out), 0) << flags;
  EXPECT_NE(out.find(named), std::string::npos) << out;
}

// `eval --split 0.8 --json --per-job` of the model, checked to beat the static TTLs, and
// `predict` over the whole trace, which must print eval's line (job_id, expected_wall_s,
// safe_ttl_s, capped: the first four columns of both files) for every scored job: the
// same walk. Scored through the static calibration, the one `predict` answers with (the
// default follows outcomes). Returns eval's JSON.
nlohmann::json eval_agrees_with_predict(const Trained& t) {
  std::string out;
  EXPECT_EQ(test::run_cli("eval --model " + t.model + " --data " + t.trace + " --split 0.8 --json --calibration static "
                              "--per-job '" + t.dir + "/eval.csv'",
                          &out),
            0)
      << out;
  const auto e = json_of(out);
  EXPECT_GT(e.at("rows_scored").get<int>(), 500);
  EXPECT_LT(e.at("rmse_hours").get<double>(), e.at("baseline_rmse_hours").get<double>());
  EXPECT_EQ(test::run_cli("predict --model " + t.model + " --data " + t.trace + " --out '" + t.dir + "/p.csv'", &out), 0)
      << out;
  const auto scored = test::line_prefixes(t.dir + "/eval.csv", 4), predicted = test::line_prefixes(t.dir + "/p.csv", 4);
  EXPECT_GT(scored.size(), 500u);
  EXPECT_EQ(test::lines_found(scored, predicted), scored.size() - 1);
  return e;
}

TEST(MatchTimeCommand, AMatchTimeModelIsScoredAndPredictedAtMatchTime) {
  Trained t;
  if (!train_at_match(t, "--censored on")) GTEST_SKIP() << "build the ttlpred target to run this test";
  std::string out;
  ASSERT_EQ(test::run_cli("model info " + t.model + " --json", &out), 0) << out;
  const auto metrics = json_of(out).at("metrics");
  EXPECT_EQ(metrics.at("prediction_time"), "match");
  EXPECT_EQ(metrics.at("censored_training"), true);
  // 4 of these 3000 jobs were killed (ERROR_E), none of them among the fit rows.
  EXPECT_EQ(metrics.at("censored_fit_rows").get<int>(), 0);

  const auto e = eval_agrees_with_predict(t);
  // The default is the model's time: --at match scores the same.
  ASSERT_EQ(test::run_cli("eval --model " + t.model + " --data " + t.trace + " --split 0.8 --json --at match", &out), 0)
      << out;
  EXPECT_EQ(json_of(out).at("rmse_hours"), e.at("rmse_hours"));
  // Its running-job statistics mean nothing at submit time: refused, saying why.
  EXPECT_NE(test::run_cli("eval --model " + t.model + " --data " + t.trace + " --split 0.8 --at submit", &out), 0);
  EXPECT_NE(out.find("match time"), std::string::npos) << out;
  EXPECT_NE(test::run_cli("predict --model " + t.model + " --data " + t.trace + " --at later", &out), 0);
  EXPECT_NE(out.find("--at"), std::string::npos) << out;
}

TEST(MatchTimeCommand, AResidualModelIsScoredAndPredictedThroughItsBase) {
  Trained t;
  if (!train_at_match(t, "--residual on")) GTEST_SKIP() << "build the ttlpred target to run this test";
  const ModelFile m = load_model_file(t.dir + "/m.ttlp");
  ASSERT_FALSE(m.target.residual.empty());
  const auto keys = FeatureEncoder::from_bytes(m.encoder, "test").history_config().keys;
  EXPECT_EQ(std::find(keys.begin(), keys.end(), HistoryKey::UserRequest), keys.end());  // --request-key is off
  EXPECT_EQ(m.target.residual.group_cat, 1);  // the job type, the safe TTL's "auto" group column
  std::string out;
  ASSERT_EQ(test::run_cli("model info " + t.model + " --json", &out), 0) << out;
  const auto bases = json_of(out).at("metrics").at("residual_base");
  ASSERT_TRUE(bases.is_object());
  EXPECT_FALSE(bases.empty());
  for (const auto& [job_type, columns] : bases.items()) {
    ASSERT_TRUE(columns.is_array() && !columns.empty()) << job_type;
    for (const auto& c : columns) EXPECT_EQ(c.get<std::string>().rfind("h_", 0), 0u) << job_type;
  }
  eval_agrees_with_predict(t);

  // A fine-tune for the int8 variant keeps the base its starting model learned against.
  ASSERT_EQ(test::run_cli("train --data " + t.trace + " --split 0.8 --init " + t.model +
                              " --qat int8 --epochs 1 --quiet --out '" + t.dir + "/q.ttlp'",
                          &out),
            0)
      << out;
  EXPECT_EQ(load_model_file(t.dir + "/q.ttlp").target.residual, m.target.residual);

  expect_train_refused_naming(t, "--residual yes", "--residual");
}

TEST(MatchTimeCommand, ARequestKeyModelReadsTheUserAndRequestHistory) {
  Trained t;
  if (!train_at_match(t, "--request-key on")) GTEST_SKIP() << "build the ttlpred target to run this test";
  const HistoryConfig h = FeatureEncoder::from_bytes(load_model_file(t.dir + "/m.ttlp").encoder, "test").history_config();
  EXPECT_EQ(h.keys.back(), HistoryKey::UserRequest);
  EXPECT_EQ(h.at, PredictionTime::Match);
  eval_agrees_with_predict(t);
  expect_train_refused_naming(t, "--request-key 1", "--request-key");
}

TEST(MatchTimeCommand, ASystemKeyModelReadsTheTypeAndSystemHistory) {
  Trained t;
  if (!train_at_match(t, "--system-key on --residual on")) GTEST_SKIP() << "build the ttlpred target to run this test";
  const HistoryConfig h = FeatureEncoder::from_bytes(load_model_file(t.dir + "/m.ttlp").encoder, "test").history_config();
  EXPECT_EQ(h.keys.back(), HistoryKey::JobTypeSystem);
  EXPECT_EQ(std::count(h.keys.begin(), h.keys.end(), HistoryKey::UserRequest), 0);
  eval_agrees_with_predict(t);
  expect_train_refused_naming(t, "--system-key maybe", "--system-key");
}

TEST(MatchTimeCommand, ACensoredRatesModelRecordsItAndNeedsMatchTime) {
  Trained t;
  if (!train_at_match(t, "--censored-rates on --residual on")) GTEST_SKIP() << "build the ttlpred target to run this test";
  const ModelFile m = load_model_file(t.dir + "/m.ttlp");
  const HistoryConfig h = FeatureEncoder::from_bytes(m.encoder, "test").history_config();
  EXPECT_TRUE(h.censored_rates);
  EXPECT_EQ(h.at, PredictionTime::Match);
  // The residual bases are censored rates where the type has work (names say so).
  EXPECT_NE(nlohmann::json::parse(m.meta.metrics_json).at("residual_base").dump().find("cens_rate_x_"), std::string::npos);
  eval_agrees_with_predict(t);
  expect_train_refused_naming(t, "--censored-rates on", "--at match");
  expect_train_refused_naming(t, "--at match --censored-rates yes", "--censored-rates");
}

}  // namespace
}  // namespace ttlpred
