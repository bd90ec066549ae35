// `ttlpred pipeline`, the README's main job, end to end on a small trace: every step runs,
// the model, report.md and report.json are written, and the report has every engine
// variant with a kill rate and RMSE that are numbers in range. Small (2000 jobs, 2 epochs,
// no fine-tunes) so that it stays a test; the full job's numbers live in docs/ACCURACY.md.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "model/model_file.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

TEST(PipelineCli, SmallRunWritesModelAndBothReports) {
  const std::string dir = test::temp_dir() + "/out";
  std::string out, err;
  const int rc = test::run_cli_split(
      "pipeline --out '" + dir + "' --jobs 2000 --epochs 2 --no-finetune --bench-seconds 0.01", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  namespace fs = std::filesystem;
  EXPECT_TRUE(fs::exists(dir + "/alice-default.csv.gz"));
  EXPECT_TRUE(fs::exists(dir + "/report.md"));
  const ModelFile m = load_model_file(dir + "/model.ttlp");
  EXPECT_FALSE(m.int8_calibration.empty());  // step 3 ran
  EXPECT_FALSE(m.safe_ttl.empty());
  EXPECT_EQ(m.provenance.trace_name, "alice-default.csv.gz");
  EXPECT_NE(out.find("skipped (--no-finetune)"), std::string::npos) << out;
  EXPECT_NE(out.find("wrote " + dir + "/report.md and " + dir + "/report.json"), std::string::npos) << out;

  std::ifstream in(dir + "/report.json");
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["model"], dir + "/model.ttlp");
  std::set<std::string> variants;
  for (const auto& v : j["variants"]) {
    variants.insert(v["variant"].get<std::string>());
    EXPECT_EQ(v["trained_as"], "fp32");
    const double kill = v["kill_rate"].get<double>(), rmse = v["rmse_hours"].get<double>();
    EXPECT_GE(kill, 0.0) << v.dump();
    EXPECT_LE(kill, 1.0) << v.dump();
    EXPECT_GT(rmse, 0.0) << v.dump();
    EXPECT_GT(v["serve_one_median_us"].get<double>(), 0.0) << v.dump();
  }
  EXPECT_EQ(variants, (std::set<std::string>{"fp32", "fp32-fused", "fp16", "bf16", "int8-dynamic", "int8-static",
                                             "fp16-2:4", "int8-2:4"}));
}

}  // namespace
}  // namespace ttlpred
