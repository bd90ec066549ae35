// `ttlpred bench --serving`: the serving path timed stage by stage, through the built program
// on the committed CLI trace and the hour-scale test model.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "golden.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

TEST(BenchServingCli, JsonHasEveryStageOfEveryVariantInPathOrder) {
  const std::string model = test::temp_dir() + "/serving.model";
  test::write_hour_scale_test_model(model);
  std::string out, err;
  const int rc = test::run_cli_split("bench --serving '" + test::golden_path("cli-trace.csv") + "' --model '" + model +
                                         "' --variants fp32-fused,int8-dynamic --seconds 0.002 --json",
                                     &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  const auto j = nlohmann::json::parse(out);
  const auto& rows = j.at("serving");
  const char* stages[] = {"history", "encode", "network", "safe_ttl", "whole"};
  ASSERT_EQ(rows.size(), 10u);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    EXPECT_EQ(r.at("variant"), i < 5 ? "fp32-fused" : "int8-dynamic");
    EXPECT_EQ(r.at("stage"), stages[i % 5]);
    EXPECT_GT(r.at("median_us").get<double>(), 0.0) << r.dump();
    EXPECT_GE(r.at("p99_us").get<double>(), r.at("median_us").get<double>()) << r.dump();
    EXPECT_TRUE(r.contains("isa"));
  }
}

TEST(BenchServingCli, NeedsAModelFile) {
  std::string out, err;
  const int rc = test::run_cli_split("bench --serving '" + test::golden_path("cli-trace.csv") + "' --seconds 0.002", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("--serving needs --model FILE"), std::string::npos) << err;
}

}  // namespace
}  // namespace ttlpred
