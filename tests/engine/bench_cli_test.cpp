// `ttlpred bench` end to end, through the built program (skipped where it is not built).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "engine/isa.hpp"
#include "model/model_file.hpp"
#include "test_models.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

TEST(BenchCli, JsonHasOneResultPerVariantAndBatchAndBothPeers) {
  std::string out;
  const int rc = test::run_cli(
      "bench --variants fp32-fused,int8-static,int8-2:4 --batch 1,3 --shape 8,17,1 --seconds 0.002 --json", &out);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  ASSERT_EQ(j.at("results").size(), 6u);
  const auto& r = j["results"][1];
  EXPECT_EQ(r.at("variant"), "fp32-fused");
  EXPECT_EQ(r.at("batch"), 3);
  EXPECT_EQ(r.at("threads"), 1);
  EXPECT_GT(r.at("median_us").get<double>(), 0.0);
  EXPECT_GE(r.at("p99_us").get<double>(), r.at("median_us").get<double>());
  EXPECT_NEAR(r.at("per_sample_us").get<double>(), r.at("median_us").get<double>() / 3, 1e-9);
  EXPECT_TRUE(r.contains("isa"));
  EXPECT_EQ(r.size(), 7u);
  ASSERT_EQ(j.at("peers").size(), 4u);
  EXPECT_EQ(j["peers"][0].at("name"), "onednn_fp32");
  EXPECT_EQ(j["peers"][3].at("name"), "onednn_int8");
  EXPECT_EQ(j["peers"][3].at("batch"), 3);
  EXPECT_EQ(j["peers"][0].size(), 4u);
}

TEST(BenchCli, BadOptionsAreUserErrors) {
  std::string out;
  int rc = test::run_cli("bench --variants fp8 --seconds 0.001", &out);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("unknown variant 'fp8'"), std::string::npos) << out;
  rc = test::run_cli("bench --batch 1,x --seconds 0.001", &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("--batch: 'x' is not an integer in 1.."), std::string::npos) << out;
  rc = test::run_cli("bench --model /nonexistent/some.model", &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("/nonexistent/some.model"), std::string::npos) << out;
  if (!engine::host_supports(engine::Isa::Avx512Bf16)) {
    rc = test::run_cli("bench --isa avx512-bf16 --seconds 0.001", &out);
    EXPECT_EQ(rc, 1) << out;
    EXPECT_NE(out.find("'avx512-bf16' is not supported by this CPU"), std::string::npos) << out;
  }
}

TEST(BenchCli, RunsAModelFileWithEmbeddingsWithoutPeers) {
  ModelFile f;
  f.mlp = test::random_model(6, {{5, 3}}, {24}, 1, 31);
  const std::string path = test::temp_dir() + "/bench.model";
  save_model_file(path, f);
  std::string out;
  const int rc = test::run_cli("bench --model '" + path + "' --variants fp16,int8-static --batch 2 --seconds 0.002 --json", &out);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("peers skipped: the model has embeddings"), std::string::npos) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  EXPECT_EQ(j.at("results").size(), 2u);
  EXPECT_EQ(j.at("peers").size(), 0u);
}

}  // namespace
}  // namespace ttlpred
