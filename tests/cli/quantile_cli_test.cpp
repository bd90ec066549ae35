// `--quantiles`: a model with quantile heads through the built program: trained, evaluated
// (each head's coverage), and timed on the serving path, whose buffers must hold every output.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "golden.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

TEST(QuantileCli, TrainEvalAndServingBenchOnAModelWithHeads) {
  const std::string dir = test::temp_dir();
  const std::string trace = dir + "/heads-trace.csv";
  const std::string model = dir + "/heads.model";
  std::string out, err;
  int rc = test::run_cli_split("generate --jobs 3000 --days 10 --seed 5 --out '" + trace + "'", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  rc = test::run_cli_split("train --data '" + trace + "' --split 0.8 --hidden 16,16 --epochs 4 --threads 1 --quiet " +
                                   "--quantiles 0.5,0.9,0.99 --out '" + model + "'",
                               &out, &err);
  ASSERT_EQ(rc, 0) << err;

  rc = test::run_cli_split("eval --model '" + model + "' --data '" + trace + "' --split 0.8 --json --per-job '" +
                               dir + "/heads-eval.csv'",
                           &out, &err);
  ASSERT_EQ(rc, 0) << err;
  const auto e = nlohmann::json::parse(out);
  ASSERT_EQ(e.at("quantile_coverage").size(), 3u);
  EXPECT_NEAR(e.at("quantile_coverage")[2].at("level").get<double>(), 0.99, 1e-6);
  for (std::size_t h = 1; h < 3; ++h)
    EXPECT_GE(e.at("quantile_coverage")[h].at("covered").get<double>(),
              e.at("quantile_coverage")[h - 1].at("covered").get<double>());

  // `predict` over the whole trace prints eval's line (job_id, expected, safe TTL, capped) for
  // every scored job, scored through the static calibration predict answers with: the
  // serving path and the evaluation path give each job the same per-job safe TTL, cold
  // starts included.
  rc = test::run_cli_split("eval --model '" + model + "' --data '" + trace + "' --split 0.8 --calibration static "
                           "--per-job '" + dir + "/heads-eval.csv'",
                           &out, &err);
  ASSERT_EQ(rc, 0) << err;
  rc = test::run_cli_split("predict --model '" + model + "' --data '" + trace + "' --out '" + dir + "/heads-predict.csv'",
                           &out, &err);
  ASSERT_EQ(rc, 0) << err;
  const auto scored = test::line_prefixes(dir + "/heads-eval.csv", 4);
  const auto predicted = test::line_prefixes(dir + "/heads-predict.csv", 4);
  EXPECT_GT(scored.size(), 500u);
  EXPECT_EQ(test::lines_found(scored, predicted), scored.size() - 1);

  // The serving bench runs the network into buffers of every output (it once held one per
  // job and wrote past it for a model with heads).
  rc = test::run_cli_split("bench --serving '" + trace + "' --model '" + model +
                               "' --variants fp32-fused,int8-dynamic --seconds 0.002 --json",
                           &out, &err);
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(nlohmann::json::parse(out).at("serving").size(), 10u);

  // ONNX export writes its heads and their rule (tests/interop: the sidecar's rule and the
  // import answer as predict does).
  rc = test::run_cli_split("export --model '" + model + "' --onnx '" + dir + "/heads.onnx'", &out, &err);
  EXPECT_EQ(rc, 0) << err;
  std::ifstream side(dir + "/heads.json");
  EXPECT_EQ(nlohmann::json::parse(side).at("target").at("quantiles").at("levels").size(), 3u);
}

TEST(QuantileCli, BadLevelsNameTheOption) {
  std::string out, err;
  const int rc = test::run_cli_split("train --data '" + test::golden_path("cli-trace.csv") +
                                         "' --split 0.8 --quantiles 0.9,0.5 --out /nonexistent/x.model",
                                     &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("--quantiles"), std::string::npos) << err;
}

}  // namespace
}  // namespace ttlpred
