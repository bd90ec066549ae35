// `ttlpred backtest` end to end on a small generated trace: the windows follow each other
// without a gap or an overlap, every method is scored at every alpha, the JSON figures agree
// with each other, and bad options are refused with a message naming them.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "test_support.hpp"

namespace ttlpred {
namespace {

std::string small_trace() {
  static const std::string path = [] {
    const std::string p = test::temp_dir() + "/bt.csv";
    std::string out;
    if (test::run_cli("generate --jobs 3000 --days 6 --out '" + p + "'", &out) != 0) return std::string();
    return p;
  }();
  return path;
}

TEST(BacktestCommand, ScoresEachWindowOnceWithEveryMethod) {
  const std::string trace = small_trace();
  if (trace.empty()) GTEST_SKIP() << "build the ttlpred target to run this test";
  std::string out;
  ASSERT_EQ(test::run_cli("backtest --data '" + trace + "' --splits 0.6,0.8 --alphas 0.01,0.05 --epochs 2 --json", &out), 0)
      << out;
  const auto start = out.find("{\n");
  ASSERT_NE(start, std::string::npos) << out;
  const auto j = nlohmann::json::parse(out.substr(start));
  ASSERT_EQ(j["splits"].size(), 2u);
  const auto& a = j["splits"][0];
  const auto& b = j["splits"][1];
  EXPECT_DOUBLE_EQ(a["end"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(b["end"].get<double>(), 1.0);
  // The second window starts where the first ends, and the last runs to the end.
  EXPECT_EQ(b["train_rows"].get<std::size_t>(), a["train_rows"].get<std::size_t>() + a["rows_scored"].get<std::size_t>());
  const std::size_t eligible = b["train_rows"].get<std::size_t>() + b["rows_scored"].get<std::size_t>();
  EXPECT_EQ(a["train_rows"].get<std::size_t>(), static_cast<std::size_t>(std::floor(0.6 * static_cast<double>(eligible))));
  EXPECT_DOUBLE_EQ(b["rmse_hours"].get<double>(), b["rmse_to_end_hours"].get<double>());
  for (const auto& s : {a, b}) {
    ASSERT_EQ(s["scores"].size(), 12u);  // 6 methods x 2 alphas
    for (const auto& m : s["scores"]) {
      const double rate = m["killed"].get<double>() / s["rows_scored"].get<double>();
      EXPECT_DOUBLE_EQ(m["kill_rate"].get<double>(), rate);
      EXPECT_EQ(m["kill_rate_above_1_5_alpha"].get<bool>(), rate > 1.5 * m["alpha"].get<double>());
      EXPECT_GT(m["mean_safe_ttl_hours"].get<double>(), 0.0);
    }
    ASSERT_EQ(s["simple_rule"].size(), 4u);
    // The deployable rule's margin is fixed on the calibration tail: one of the margins
    // scored on the window (the same figures), or the request.
    const auto& d = s["simple_rule_deployed"];
    if (d["margin"].is_null()) {
      EXPECT_DOUBLE_EQ(d["mean_ttl_hours"].get<double>(), s["mean_requested_ttl_hours"].get<double>());
    } else {
      bool found = false;
      for (const auto& r : s["simple_rule"])
        if (r["margin"] == d["margin"]) {
          found = true;
          EXPECT_DOUBLE_EQ(d["kill_rate"].get<double>(), r["kill_rate"].get<double>());
          EXPECT_DOUBLE_EQ(d["mean_ttl_hours"].get<double>(), r["mean_ttl_hours"].get<double>());
        }
      EXPECT_TRUE(found) << d.dump();
    }
  }
  EXPECT_EQ(j["summary"].size(), 12u);
  EXPECT_EQ(j["default_method"], "aci-capped");
}

// Scores of every split, as text, for comparing two runs.
std::string scores_of(const std::string& cli_out) {
  const auto j = nlohmann::json::parse(cli_out.substr(cli_out.find("{\n")));
  std::string text;
  for (const auto& s : j["splits"]) text += s["scores"].dump() + s["rmse_to_end_hours"].dump();
  return text;
}

TEST(BacktestCommand, ModelsDirReusesASplitsModelOnlyUnderTheSameSettings) {
  const std::string trace = small_trace();
  if (trace.empty()) GTEST_SKIP() << "build the ttlpred target to run this test";
  const std::string dir = test::temp_dir() + "/bt-models";
  const std::string base = "backtest --data '" + trace + "' --splits 0.6,0.8 --alphas 0.01 --epochs 1 --json --methods static,aci-capped ";
  std::string trained, reused, other, plain;
  ASSERT_EQ(test::run_cli(base + "--models-dir '" + dir + "'", &trained), 0) << trained;
  ASSERT_EQ(test::run_cli(base + "--models-dir '" + dir + "'", &reused), 0) << reused;
  ASSERT_EQ(test::run_cli(base, &plain), 0) << plain;
  const auto reused_json = nlohmann::json::parse(reused.substr(reused.find("{\n")));
  for (const auto& s : reused_json["splits"]) EXPECT_TRUE(s["model_reused"].get<bool>());
  EXPECT_NE(reused.find("model reused from"), std::string::npos);
  // A reused model answers what it answered when it was trained, and what no folder gives.
  EXPECT_EQ(scores_of(reused), scores_of(trained));
  EXPECT_EQ(scores_of(plain), scores_of(trained));
  std::ifstream settings(dir + "/split-0.6.json");
  ASSERT_TRUE(settings);
  EXPECT_TRUE(std::ifstream(dir + "/split-0.8.model").good());
  // Another training seed is another model: retrained, and the folder now holds that one.
  ASSERT_EQ(test::run_cli(base + "--seed 2 --models-dir '" + dir + "'", &other), 0) << other;
  const auto other_json = nlohmann::json::parse(other.substr(other.find("{\n")));
  for (const auto& s : other_json["splits"]) EXPECT_FALSE(s["model_reused"].get<bool>());
  EXPECT_NE(scores_of(other), scores_of(trained));
}

// --log-step runs the online methods as serve --calibration aci-log does, and the JSON says
// with which settings the online methods ran.
TEST(BacktestCommand, LogStepAndTheOnlineSettingsAreRecorded) {
  const std::string trace = small_trace();
  if (trace.empty()) GTEST_SKIP() << "build the ttlpred target to run this test";
  const std::string dir = test::temp_dir() + "/bt-log-models";
  const std::string base = "backtest --data '" + trace + "' --splits 0.6,0.8 --alphas 0.01 --epochs 1 --json --methods aci "
                           "--models-dir '" + dir + "' ";
  std::string additive, log_step;
  ASSERT_EQ(test::run_cli(base, &additive), 0) << additive;
  ASSERT_EQ(test::run_cli(base + "--log-step --target-scale 0.35", &log_step), 0) << log_step;
  const auto a = nlohmann::json::parse(additive.substr(additive.find("{\n")));
  const auto l = nlohmann::json::parse(log_step.substr(log_step.find("{\n")));
  EXPECT_FALSE(a["online"]["log_step"].get<bool>());
  EXPECT_DOUBLE_EQ(a["online"]["target_scale"].get<double>(), 0.75);
  EXPECT_TRUE(l["online"]["log_step"].get<bool>());
  EXPECT_DOUBLE_EQ(l["online"]["target_scale"].get<double>(), 0.35);
  EXPECT_DOUBLE_EQ(l["online"]["gamma"].get<double>(), 0.002);
  // The text report says so too.
  std::string text;
  ASSERT_EQ(test::run_cli("backtest --data '" + trace + "' --splits 0.6,0.8 --alphas 0.01 --epochs 1 --methods aci "
                          "--models-dir '" + dir + "' --log-step --target-scale 0.35", &text), 0) << text;
  EXPECT_NE(text.find("online levels: gamma 0.002, target 0.35 x alpha (aci-capped 0.6, held at or below 1.5 x alpha), "
                      "stepped in log space (--log-step)"),
            std::string::npos)
      << text;
  // Aimed at a third of the kills, the log-step level answers no tighter than the additive one.
  for (std::size_t s = 0; s < a["splits"].size(); ++s)
    EXPECT_GE(l["splits"][s]["scores"][0]["mean_safe_ttl_hours"].get<double>(),
              a["splits"][s]["scores"][0]["mean_safe_ttl_hours"].get<double>() - 1e-9)
        << "split " << s;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(BacktestCommand, OutWritesTheReportPage) {
  const std::string trace = small_trace();
  if (trace.empty()) GTEST_SKIP() << "build the ttlpred target to run this test";
  const std::string dir = test::temp_dir() + "/bt-report";
  std::string out;
  ASSERT_EQ(test::run_cli("backtest --data '" + trace + "' --splits 0.6,0.8 --epochs 1 --window-days 2 --min-window-rows 50 "
                          "--methods static,aci --out '" + dir + "'", &out), 0)
      << out;
  std::ifstream in(dir + "/report.html");
  ASSERT_TRUE(in) << out;
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string html = ss.str();
  EXPECT_EQ(count_of(html, "<svg"), 3u);
  // Each title twice: the drawn heading and the SVG's <title> (what a screen reader says).
  EXPECT_EQ(count_of(html, ">Kill rate per 2-day window<"), 2u);
  EXPECT_EQ(count_of(html, ">Kill rate per split<"), 2u);
  EXPECT_EQ(count_of(html, ">Run-time error per split<"), 2u);
  EXPECT_EQ(count_of(html, ">0.60-0.80<"), 2u);  // a category of both per-split charts
  EXPECT_EQ(count_of(html, ">aci<"), 2u);        // legend of the window and per-split kill-rate charts
  EXPECT_EQ(count_of(html, "<script"), 0u);
}

// --per-job writes one line per scored job whose TTLs are the ones the JSON scored: each
// method's kill rate recomputed from the file is the JSON's, and the static calibration at
// the headline alpha is the static method's answer.
TEST(BacktestCommand, PerJobHoldsTheTtlsTheKillRatesCameFrom) {
  const std::string trace = small_trace();
  if (trace.empty()) GTEST_SKIP() << "build the ttlpred target to run this test";
  const std::string csv = test::temp_dir() + "/bt-per-job.csv";
  std::string out;
  ASSERT_EQ(test::run_cli("backtest --data '" + trace + "' --splits 0.6,0.8 --alphas 0.01 --epochs 1 --json "
                          "--methods static,aci-capped --per-job '" + csv + "'", &out), 0) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find("{\n")));
  std::ifstream in(csv);
  ASSERT_TRUE(in) << csv;
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("split,submit_s,wait_s,wall_s,requested_s,user_q99_s,pred_s,ttl_static,ttl_aci-capped,"
                         "static_ttl_0.0005,", 0), 0u) << header;
  std::map<std::string, std::size_t> rows, killed_static, killed_capped;
  std::size_t same_as_static = 0, lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) f.push_back(cell);
    // upper_s is the quantile of the head the rule reads (the default model has heads), cold
    // is 0 or 1.
    ASSERT_EQ(f.size(), 9u + 15u + 2u) << line;
    EXPECT_GT(std::stod(f[24]), 0.0) << line;
    EXPECT_TRUE(f[25] == "0" || f[25] == "1") << line;
    const double wall = std::stod(f[3]), req = std::stod(f[4]);
    ++rows[f[0]];
    killed_static[f[0]] += wall > std::stod(f[7]) && (req <= 0 || wall <= req);
    killed_capped[f[0]] += wall > std::stod(f[8]) && (req <= 0 || wall <= req);
    same_as_static += f[7] == f[9 + 6];  // static_ttl_0.01
  }
  EXPECT_EQ(same_as_static, lines);
  for (const auto& s : j["splits"]) {
    const std::string split = s["split"].get<double>() == 0.6 ? "0.6" : "0.8";
    ASSERT_EQ(rows[split], s["rows_scored"].get<std::size_t>()) << split;
    for (const auto& m : s["scores"]) {
      const auto killed = m["method"] == "static" ? killed_static[split] : killed_capped[split];
      EXPECT_EQ(killed, m["killed"].get<std::size_t>()) << split << " " << m["method"];
    }
  }
}

TEST(BacktestCommand, RefusesBadOptionsNamingThem) {
  const std::string trace = small_trace();
  if (trace.empty()) GTEST_SKIP() << "build the ttlpred target to run this test";
  const struct {
    const char* options;
    const char* says;
  } refused[] = {{"--splits 0.8,0.6", "--splits must be strictly ascending"},
                 {"--splits 0.5,x", "--splits: 'x' is not a number"},
                 {"--methods static,magic", "unknown calibration method 'magic'"},
                 {"--alphas 0.01,1.5", "--alphas"}};
  for (const auto& r : refused) {
    std::string out;
    EXPECT_NE(test::run_cli("backtest --data '" + trace + "' " + r.options, &out), 0) << r.options;
    EXPECT_NE(out.find(r.says), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace ttlpred
