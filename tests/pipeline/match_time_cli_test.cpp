// `train --at match` and `--censored on` as scripts call them: the model records its
// prediction time, `eval` and `predict` default to it and print the same answer for every
// scored job, a match-time model is refused at submit time, and a bad value names --at.
#include <gtest/gtest.h>

#include <vector>
#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace ttlpred {
namespace {

nlohmann::json json_of(const std::string& out) { return nlohmann::json::parse(out.substr(out.find('{'))); }

TEST(MatchTimeCommand, AMatchTimeModelIsScoredAndPredictedAtMatchTime) {
  const std::string dir = test::temp_dir();
  const std::string trace = "'" + dir + "/t.csv'", model = "'" + dir + "/m.ttlp'";
  if (!test::generate_trace(trace, 3000, 7)) GTEST_SKIP() << "build the ttlpred target to run this test";
  std::string out;
  ASSERT_EQ(test::run_cli("train --data " + trace + " --split 0.8 --epochs 3 --quiet --at match --censored on --out " + model,
                          &out),
            0)
      << out;
  ASSERT_EQ(test::run_cli("model info " + model + " --json", &out), 0) << out;
  const auto metrics = json_of(out).at("metrics");
  EXPECT_EQ(metrics.at("prediction_time"), "match");
  EXPECT_EQ(metrics.at("censored_training"), true);
  // 4 of these 3000 jobs were killed (ERROR_E), none of them among the fit rows.
  EXPECT_EQ(metrics.at("censored_fit_rows").get<int>(), 0);

  ASSERT_EQ(test::run_cli("eval --model " + model + " --data " + trace + " --split 0.8 --json --per-job '" + dir +
                              "/eval.csv'",
                          &out),
            0)
      << out;
  const auto e = json_of(out);
  EXPECT_GT(e.at("rows_scored").get<int>(), 500);
  EXPECT_LT(e.at("rmse_hours").get<double>(), e.at("baseline_rmse_hours").get<double>());
  // The default is the model's time: --at match scores the same.
  ASSERT_EQ(test::run_cli("eval --model " + model + " --data " + trace + " --split 0.8 --json --at match", &out), 0) << out;
  EXPECT_EQ(json_of(out).at("rmse_hours"), e.at("rmse_hours"));
  // Its running-job statistics mean nothing at submit time: refused, saying why.
  EXPECT_NE(test::run_cli("eval --model " + model + " --data " + trace + " --split 0.8 --at submit", &out), 0);
  EXPECT_NE(out.find("match time"), std::string::npos) << out;
  EXPECT_NE(test::run_cli("predict --model " + model + " --data " + trace + " --at later", &out), 0);
  EXPECT_NE(out.find("--at"), std::string::npos) << out;

  // predict prints eval's line for every scored job (the same walk, at match time).
  ASSERT_EQ(test::run_cli("predict --model " + model + " --data " + trace + " --out '" + dir + "/p.csv'", &out), 0) << out;
  // job_id, expected_wall_s, safe_ttl_s, capped: the first four columns of both files.
  const auto scored = test::line_prefixes(dir + "/eval.csv", 4), predicted = test::line_prefixes(dir + "/p.csv", 4);
  ASSERT_GT(scored.size(), 500u);
  EXPECT_EQ(test::lines_found(scored, predicted), scored.size() - 1);
}

}  // namespace
}  // namespace ttlpred
