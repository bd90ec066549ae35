// `ttlpred train --init M --qat int8 --sparsity 2:4` and `eval --variant V` as scripts call
// them (the fine-tune interface for the compressed variants).
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace ttlpred {
namespace {

TEST(TrainCommand, FineTunesForCompressedVariantsThatEvalScores) {
  const std::string dir = test::temp_dir();
  const std::string trace = "'" + dir + "/t.csv'", base = "'" + dir + "/base.ttlp'";
  if (!test::generate_trace(trace, 3000, 5)) GTEST_SKIP() << "build the ttlpred target to run this test";
  std::string out;
  ASSERT_EQ(test::run_cli("train --data " + trace + " --split 0.8 --epochs 6 --quiet --out " + base, &out), 0) << out;

  ASSERT_NE(test::run_cli("train --data " + trace + " --init " + base + " --sparsity 3:8 --out '" + dir + "/x.ttlp'", &out), 0);
  EXPECT_NE(out.find("--sparsity"), std::string::npos) << out;

  const std::string tuned = "'" + dir + "/qat24.ttlp'";
  ASSERT_EQ(test::run_cli("train --data " + trace + " --split 0.8 --init " + base +
                              " --qat int8 --sparsity 2:4 --sparsity-method sr-ste --epochs 2 --out " + tuned,
                          &out),
            0)
      << out;
  EXPECT_NE(out.find("compressed for the int8-2:4 variant"), std::string::npos) << out;
  ASSERT_EQ(test::run_cli("eval --model " + tuned + " --data " + trace + " --split 0.8 --variant int8-2:4 --json", &out), 0)
      << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_GT(j.at("rows_scored").get<int>(), 500);
  EXPECT_LT(j.at("rmse_hours").get<double>(), 0.5 * j.at("baseline_rmse_hours").get<double>());
  // Without --variant, eval runs the variant the model was made for.
  ASSERT_EQ(test::run_cli("eval --model " + tuned + " --data " + trace + " --split 0.8 --json", &out), 0) << out;
  EXPECT_EQ(nlohmann::json::parse(out.substr(out.find('{'))).at("variant"), "int8-2:4");
  ASSERT_EQ(test::run_cli("eval --model " + base + " --data " + trace + " --split 0.8 --json", &out), 0) << out;
  EXPECT_EQ(nlohmann::json::parse(out.substr(out.find('{'))).at("variant"), "fp32-fused");
}

}  // namespace
}  // namespace ttlpred
