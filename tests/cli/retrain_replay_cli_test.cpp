// `ttlpred retrain` and `ttlpred replay` as scripts call them: the JSON decision, the model
// written only when accepted, the error for a window without outcomes, and the replay's
// JSON, on a small generated drift trace with tiny networks.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "model/model_file.hpp"
#include "model/online_calibration.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct DriftFiles {
  std::string trace, model;
};

const DriftFiles& drift_files() {
  static const DriftFiles f = [] {
    const std::string dir = test::temp_dir();
    DriftFiles d{dir + "/drift.csv", dir + "/current.model"};
    std::string out;
    EXPECT_EQ(test::run_cli("generate --jobs 4000 --days 12 --seed 7 --drift-version-day 6 --drift-version-factor 2 --out " + d.trace, &out), 0) << out;
    EXPECT_EQ(test::run_cli("train --data " + d.trace + " --split 0.4 --hidden 16,16 --epochs 4 --threads 1 --quiet --out " + d.model, &out), 0) << out;
    return d;
  }();
  return f;
}

TEST(RetrainCli, WritesTheCandidateOnlyWhenItWins) {
  const DriftFiles& f = drift_files();
  const std::string out_model = test::temp_dir() + "/new.model";
  std::string out, err;
  const int rc = test::run_cli_split("retrain --journal " + f.trace + " --model " + f.model + " --out " + out_model +
                                         " --window 0 --json",
                                     &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  const json j = json::parse(out);
  for (const char* key : {"accepted", "reason", "from", "window", "current", "candidate", "seconds", "model", "out"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j["from"], "fine-tune");
  EXPECT_EQ(j["window"]["train_rows"].get<std::size_t>() + j["window"]["holdout_rows"].get<std::size_t>(),
            j["window"]["outcomes"].get<std::size_t>());
  EXPECT_EQ(j["candidate"]["rows"], j["window"]["holdout_rows"]);
  // The decision follows the rule on the printed numbers, and only an accepted candidate is
  // written. (Measured on this trace: the fine-tune's RMSE is lower, 6.07 h against 6.48 h,
  // but its safe TTL kills 3.5% of the held-out jobs against 0%: refused.)
  const double cur_rmse = j["current"]["rmse_hours"], new_rmse = j["candidate"]["rmse_hours"];
  const double cur_kill = j["current"]["kill_rate"], new_kill = j["candidate"]["kill_rate"];
  EXPECT_EQ(j["accepted"].get<bool>(), new_rmse < cur_rmse && (new_kill <= cur_kill || new_kill <= 0.01)) << j["reason"];
  EXPECT_EQ(fs::exists(out_model), j["accepted"].get<bool>());
  EXPECT_EQ(j["out"].is_null(), !j["accepted"].get<bool>());
  if (j["accepted"].get<bool>()) {
    EXPECT_FALSE(load_model_file(out_model).safe_ttl.empty());
  }
}

TEST(RetrainCli, AWindowWithoutOutcomesIsAnErrorNamingTheWindow) {
  const DriftFiles& f = drift_files();
  std::string out, err;
  const int rc = test::run_cli_split(
      "retrain --journal " + f.trace + " --model " + f.model + " --out " + test::temp_dir() + "/x.model --window 10m", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.find("no outcome was submitted in the --window of 10m"), std::string::npos) << err;
  EXPECT_EQ(test::run_cli_split("retrain --journal " + f.trace + " --model " + f.model + " --out x --window 7y", &out, &err), 1);
  EXPECT_NE(err.find("--window: '7y' is not a duration"), std::string::npos) << err;
}

TEST(ReplayCli, JsonHasBothSidesPerWeekAndTheRetrainLog) {
  const DriftFiles& f = drift_files();
  std::string out, err;
  const int rc = test::run_cli_split("replay --data " + f.trace +
                                         " --initial 0.4 --retrain-every 2d --window 5d --hidden 16,16 --epochs 4 "
                                         "--window-days 3 --min-window-rows 300 --drift-grid --json",
                                     &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  const json j = json::parse(out);
  std::size_t rows = 0;
  for (const auto& w : j["weeks"]) {
    rows += w["retrained"]["rows"].get<std::size_t>();
    EXPECT_EQ(w["retrained"]["rows"], w["frozen"]["rows"]);
  }
  EXPECT_EQ(rows, j["retrained"]["rows"].get<std::size_t>());
  EXPECT_EQ(j["retrain_log"].size(), j["retrains"].get<std::size_t>());
  EXPECT_EQ(j["options"]["retrain_every"], "2d");
  EXPECT_EQ(j["options"]["calibration"], kDefaultCalibration);
  EXPECT_EQ(j["drift_grid"].size(), 120u);  // 2 directions x 2 scopes x 5 deltas x 6 thresholds
  EXPECT_EQ(j["options"]["killed_as"], "censored");
  for (const auto& t : j["retrain_log"]) {
    if (t["ran"].get<bool>()) {
      EXPECT_LE(t["killed_outcomes"].get<std::size_t>(), t["outcomes"].get<std::size_t>());
    }
  }
  std::size_t swaps = 0;
  for (const auto& t : j["retrain_log"]) swaps += t["accepted"].get<bool>();
  EXPECT_EQ(swaps, j["swaps"].get<std::size_t>());
}

}  // namespace
}  // namespace ttlpred
