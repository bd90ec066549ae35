// `ttlpred pipeline`, the README's main job, end to end at its quick size (`--jobs 50000
// --no-finetune`, the README's "quick one"): every step runs, the model, report.md and
// report.json are written, and their content is checked against what a working job must give
// and against the figures docs/testing.md ("The main job's content") records for this seed
// and size, within bands wide enough for another host's training (AVX2, AMX) and narrow
// enough that a wrong model, a wrong calibration or a dropped variant breaks them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/model_file.hpp"
#include "model/online_calibration.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;

// Recorded (docs/testing.md, "The main job's content", 2026-12-07, AMD EPYC Zen 4, AVX-512):
// trace seed 1, 50 000 jobs, no fine-tunes, 10 000 scored, predicted at match (the main job's
// default), the default quantile heads and calibration (aci-capped, batch guard). fp32 RMSE
// over training seeds 1-3: 1.628, 1.401, 1.469 h, mean 1.499 h (static TTL 14.73 h, oracle
// 0.83 h); kill rate 0.57, 0.58, 0.47 % at alpha 1 %, mean safe TTL 0.44, 0.58, 0.43 of the
// request (15.85 h).
constexpr double kRecordedRmseHours = 1.499;
constexpr double kAlpha = 0.01;

// The cells of a markdown table row ("| a | b |" -> {"a", "b"}).
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream in(row.substr(1));
  std::string cell;
  while (std::getline(in, cell, '|')) {
    const auto first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
    out.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  return out;
}

// Every table of a markdown file: its rows (header first, the --- row dropped), each checked
// to have as many cells as its header.
std::vector<std::vector<std::vector<std::string>>> tables(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::vector<std::string>>> out;
  std::string line;
  bool open = false, separated = false;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] != '|') {
      open = false;
      continue;
    }
    auto row = cells(line);
    if (!open) {  // the header
      out.emplace_back();
      open = true;
      separated = false;
    } else {
      EXPECT_EQ(row.size(), out.back()[0].size()) << path << ":" << number << ": " << line;
      if (!separated) {
        EXPECT_EQ(line.find_first_not_of("|-: "), std::string::npos) << path << ":" << number << ": no separator row";
        separated = true;
        continue;
      }
    }
    out.back().push_back(std::move(row));
  }
  return out;
}

TEST(PipelineCli, TheQuickMainJobReportsWhatAWorkingModelGives) {
  const std::string dir = test::temp_dir() + "/out";
  std::string out, err;
  const int rc = test::run_cli_split("pipeline --out '" + dir + "' --jobs 50000 --no-finetune --bench-seconds 0.01", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  namespace fs = std::filesystem;
  EXPECT_TRUE(fs::exists(dir + "/alice-default.csv.gz"));
  const ModelFile m = load_model_file(dir + "/model.ttlp");
  EXPECT_FALSE(m.int8_calibration.empty());  // step 3 ran
  EXPECT_FALSE(m.safe_ttl.empty());
  EXPECT_EQ(m.provenance.trace_name, "alice-default.csv.gz");
  EXPECT_NE(out.find("skipped (--no-finetune)"), std::string::npos) << out;
  EXPECT_NE(out.find("wrote " + dir + "/report.md and " + dir + "/report.json"), std::string::npos) << out;

  std::ifstream in(dir + "/report.json");
  const json j = json::parse(in);
  EXPECT_EQ(j["model"], dir + "/model.ttlp");
  std::map<std::string, json> variants;
  for (const auto& v : j["variants"]) {
    const std::string name = v["variant"].get<std::string>();
    variants[name] = v;
    EXPECT_EQ(v["trained_as"], "fp32") << name;
    // The split: 80 % of 50 000 trained on, the rest scored.
    EXPECT_EQ(v["rows_scored"], 10000) << name;
    EXPECT_EQ(v["train_rows"], 40000) << name;
    EXPECT_EQ(v["alpha"], kAlpha) << name;
    const double kill = v["kill_rate"].get<double>(), rmse = v["rmse_hours"].get<double>();
    EXPECT_DOUBLE_EQ(kill, v["killed"].get<double>() / 10000) << name;
    EXPECT_EQ(v["kill_rate_above_alpha"].get<bool>(), kill > kAlpha) << name;
    // The safe TTL never exceeds the request; the model sits between the noise floor and
    // the static TTL, far from the latter (a model that learned nothing is near it).
    EXPECT_LE(v["mean_safe_ttl_hours"].get<double>(), v["mean_requested_ttl_hours"].get<double>()) << name;
    EXPECT_GE(rmse, v["oracle_rmse_hours"].get<double>()) << name;
    EXPECT_LT(rmse, v["baseline_rmse_hours"].get<double>() / 5) << name;
    EXPECT_GT(v["serve_one_median_us"].get<double>(), 0.0) << name;
  }
  ASSERT_EQ(variants.size(), 8u) << j["variants"].dump();
  for (const char* name : {"fp32", "fp32-fused", "fp16", "bf16", "int8-dynamic", "int8-static", "fp16-2:4", "int8-2:4"})
    ASSERT_TRUE(variants.count(name)) << name;

  const json& fp32 = variants["fp32"];
  const double rmse = fp32["rmse_hours"].get<double>();
  // Another host trains another model from the same seed: 20 % either way of the training
  // seeds' mean holds their spread (1.628, 1.401, 1.469 h) and trace seeds 2-3 (1.622,
  // 1.372 h), and refuses a model a third worse.
  EXPECT_NEAR(rmse, kRecordedRmseHours, 0.2 * kRecordedRmseHours);
  // A working calibration: the kill rate is bounded and the TTL buys something. The bound is
  // 10 alpha, what a missing or inverted calibration breaks (a TTL at the expected run time
  // kills about half the jobs). Trace seeds 1-3 put the kill rate at 0.57 %, 0.00 %, 0.53 %
  // and the TTL at 0.44, 0.82, 0.48 of the request (trace seed 2: the batch guard's cost on a
  // short trace of long bursts, docs/ACCURACY.md); 0.7 holds training seeds 1-3 of trace seed 1.
  EXPECT_LE(fp32["kill_rate"].get<double>(), 10 * kAlpha);
  EXPECT_LT(fp32["mean_safe_ttl_hours"].get<double>(), 0.7 * fp32["mean_requested_ttl_hours"].get<double>());
  // The variants compute the same model: fused is fp32 reordered; the reduced precisions and
  // int8 stay within 2 % (recorded within 0.8 % on trace seeds 1-3). Pruning to 2:4 without
  // retraining costs what the weights lose (+1.3 %, +78 %, +44 % on trace seeds 1-3): only
  // the bound against the static TTL above holds it.
  EXPECT_NEAR(variants["fp32-fused"]["rmse_hours"].get<double>(), rmse, 1e-4 * rmse);
  for (const char* name : {"fp16", "bf16", "int8-dynamic", "int8-static"})
    EXPECT_NEAR(variants[name]["rmse_hours"].get<double>(), rmse, 0.02 * rmse) << name;

  // The simulation: static, the model twice (the default calibration, aci-log at 0.35 alpha),
  // the oracle; every scored job done in each, the oracle never killed, the model's kills
  // resubmitted, aci-log killing no more than the default (30 against 59 recorded).
  std::vector<std::string> policies;
  for (const auto& s : j["simulation"]) {
    std::string policy = s["policy"].get<std::string>();
    if (s.contains("calibration")) policy.append("/").append(s["calibration"].get<std::string>());
    policies.push_back(policy);
    EXPECT_EQ(s["jobs"], 10000) << s.dump();
    EXPECT_EQ(s["completed"], 10000) << s.dump();
    EXPECT_EQ(s["jobs_killed"], s["resubmissions"]) << s.dump();
  }
  EXPECT_EQ(policies, (std::vector<std::string>{"static", "model/" + std::string(kDefaultCalibration), "model/aci-log",
                                                "oracle"}));
  EXPECT_EQ(j["simulation"][3]["kills"], 0);
  EXPECT_LE(j["simulation"][2]["kills"].get<int>(), j["simulation"][1]["kills"].get<int>());

  // report.md: its tables parse, one row per variant and per TTL policy, saying the numbers
  // report.json holds.
  const auto md = tables(dir + "/report.md");
  ASSERT_EQ(md.size(), 2u);
  ASSERT_EQ(md[0].size(), 1u + 8u);
  EXPECT_EQ(md[0][0][0], "variant");
  EXPECT_EQ(md[0][1][0], "fp32");
  char fp32_rmse[32];
  std::snprintf(fp32_rmse, sizeof fp32_rmse, "%.3f", rmse);
  EXPECT_EQ(md[0][1][3], fp32_rmse);
  ASSERT_EQ(md[1].size(), 1u + 4u);
  EXPECT_EQ(md[1][0][0], "TTL policy");
  EXPECT_EQ(md[1][4][0], "oracle");
}

}  // namespace
}  // namespace ttlpred
