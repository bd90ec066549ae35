// The service learns from outcomes (docs/service.md, "Served predictions", "Online
// calibration", "Live quality"): an outcome matched by job_id to the answer served moves the
// ACI level by its rule, an unmatched one does not; the journal holds what was served; a
// restart answers bit for bit as before it; an old journal still reads.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve_test_util.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;

json post(httplib::Client& c, const std::string& path, const std::string& body, int expect = 200) {
  auto res = c.Post(path, body, "application/json");
  EXPECT_TRUE(res) << path;
  if (!res) return {};
  EXPECT_EQ(res->status, expect) << path << " " << body << " -> " << res->body;
  return json::parse(res->body);
}

// The value of an unlabelled (or exactly labelled) metric in a scrape.
double metric(const std::string& scrape, const std::string& name) {
  std::istringstream in(scrape);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  ADD_FAILURE() << name << " not in the scrape";
  return NAN;
}

const std::string& hour_model() {
  static const std::string path = [] {
    const std::string p = test::temp_dir() + "/hour.model";
    test::write_hour_scale_test_model(p);
    return p;
  }();
  return path;
}

serve::ServiceOptions aci_options(const std::string& journal) {
  serve::ServiceOptions o = test::options_for(hour_model());
  o.calibration.method = OnlineMethod::Aci;
  o.journal_dir = journal;
  o.clock = [] { return 1.8e9; };
  return o;
}

std::vector<json> journal_lines(const std::string& dir) {
  std::vector<json> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".jsonl") continue;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) out.push_back(json::parse(line));
  }
  return out;
}

const char* kJob = R"("user":"alice","job_type":"MC","requested_ttl_s":72000)";
std::string job(int id) { return std::string("{\"job_id\":") + std::to_string(id) + "," + kJob + "}"; }
std::string outcome(int id, double wall) {
  return std::string("{\"job_id\":") + std::to_string(id) + "," + kJob + ",\"wall_s\":" + std::to_string(wall) + "}";
}

// The answer the model's calibration gives at `level`, bounded as every answer is.
double ttl_at(const Predictor& p, double expected, double level) {
  bool capped = false;
  const double raw = p.model().safe_ttl.safe_ttl(expected, kNoGroup, level, 72000);
  return bound_seconds(raw, 72000, p.options(), capped);
}

TEST(ServeLearning, AciLevelFollowsItsRuleThroughTheHttpApiAndUnmatchedOutcomesLeaveIt) {
  const std::string dir = test::temp_dir() + "/journal";
  test::TestServer server(aci_options(dir));
  httplib::Client c = server.client();
  const Predictor& p = server.service->model()->predictor;
  ASSERT_TRUE(p.model().safe_ttl.group_column.empty());

  // Before any outcome: the level is 0.75 alpha, the answer the calibration gives there
  // (what eval --calibration aci gives a job decided before any outcome is known).
  // The level to 4 ulps (EXPECT_DOUBLE_EQ): the avx512 preset lets g++ contract a + g * (t - e)
  // into an FMA in the service or here, one rounding apart.
  double level = 0.01 * 0.75;
  const double target = 0.01 * 0.75;
  const json first = post(c, "/v1/predict", job(1));
  const double expected = first["expected_wall_s"].get<double>();
  ASSERT_LT(expected, 20000) << "the hour-scale model answers about an hour";
  EXPECT_EQ(first["safe_ttl_s"].get<double>(), ttl_at(p, expected, level));
  EXPECT_DOUBLE_EQ(metric(c.Get("/metrics")->body, "ttlpred_calibration_level"), level);

  // Job 1 runs 1 s past its TTL (inside its request): killed, a_t += gamma (target - 1).
  const double ttl1 = first["safe_ttl_s"].get<double>();
  ASSERT_LT(ttl1 + 1, 72000);
  post(c, "/v1/outcomes", outcome(1, ttl1 + 1));
  level += 0.002 * (target - 1);
  EXPECT_DOUBLE_EQ(metric(c.Get("/metrics")->body, "ttlpred_calibration_level"), level);

  // Job 2 answered at the new level, runs a minute: not killed, a_t += gamma * target.
  const json second = post(c, "/v1/predict", job(2));
  EXPECT_EQ(second["safe_ttl_s"].get<double>(), ttl_at(p, expected, level));
  EXPECT_GT(second["safe_ttl_s"].get<double>(), ttl1);  // a lower level: a looser TTL
  post(c, "/v1/outcomes", outcome(2, 60));
  level += 0.002 * target;
  EXPECT_DOUBLE_EQ(metric(c.Get("/metrics")->body, "ttlpred_calibration_level"), level);

  // Unmatched: an unknown job_id, no job_id, and job 1 again (its answer was used up).
  post(c, "/v1/outcomes", outcome(99, 50000));
  post(c, "/v1/outcomes", std::string("{") + kJob + ",\"wall_s\":50000}");
  post(c, "/v1/outcomes", outcome(1, 50000));
  const std::string scrape = c.Get("/metrics")->body;
  EXPECT_DOUBLE_EQ(metric(scrape, "ttlpred_calibration_level"), level);
  EXPECT_EQ(metric(scrape, "ttlpred_calibration_outcomes_total"), 2);
  EXPECT_EQ(metric(scrape, "ttlpred_outcomes_matched_total"), 2);
  EXPECT_EQ(metric(scrape, "ttlpred_outcomes_unmatched_total{reason=\"unknown_job_id\"}"), 2);
  EXPECT_EQ(metric(scrape, "ttlpred_outcomes_unmatched_total{reason=\"no_job_id\"}"), 1);
  // Every outcome of a new job updates the history; job 1's second one is a repeat.
  EXPECT_EQ(metric(scrape, "ttlpred_history_observed_jobs"), 4);
  EXPECT_EQ(metric(scrape, "ttlpred_outcomes_repeated_total"), 1);
  // Live quality over the two matched outcomes: one killed, one covered.
  EXPECT_EQ(metric(scrape, "ttlpred_live_outcomes{window=\"1000\"}"), 2);
  EXPECT_EQ(metric(scrape, "ttlpred_live_kill_rate{window=\"1000\"}"), 0.5);
  EXPECT_EQ(metric(scrape, "ttlpred_live_coverage{window=\"1h\"}"), 0.5);
  EXPECT_NEAR(metric(scrape, "ttlpred_live_safe_ttl_over_request{window=\"1d\"}"),
              (ttl1 + second["safe_ttl_s"].get<double>()) / 144000, 1e-15);

  // The journal: what was served, when, by which model; null where nothing was known.
  const std::vector<json> lines = journal_lines(dir);
  ASSERT_EQ(lines.size(), 5u);
  const std::string version = server.service->model_version();
  EXPECT_EQ(lines[0]["received_at"], 1.8e9);
  EXPECT_EQ(lines[0]["model_version"], version);
  EXPECT_EQ(lines[0]["served"]["model_version"], version);
  EXPECT_EQ(lines[0]["served"]["safe_ttl_s"].get<double>(), ttl1);
  EXPECT_EQ(lines[0]["served"]["expected_wall_s"].get<double>(), expected);
  EXPECT_EQ(lines[0]["served"]["level"].get<double>(), 0.01 * 0.75);
  EXPECT_EQ(lines[0]["served"]["calibration"], "aci");
  EXPECT_EQ(lines[0]["served"]["requested_ttl_s"], 72000);
  EXPECT_EQ(lines[0]["job_id"], 1);
  EXPECT_EQ(lines[1]["served"]["safe_ttl_s"], second["safe_ttl_s"]);
  for (std::size_t i = 2; i < 5; ++i) EXPECT_TRUE(lines[i]["served"].is_null()) << lines[i].dump();
}

// serve --calibration aci-log --target-scale 0.35 (the broker simulation's recommendation,
// docs/SIMULATION.md): the level starts at its target and a kill scales it by
// exp(gamma (target - 1)); the metrics name the method with its log step.
TEST(ServeLearning, AciLogScalesTheLevelAndIsNamedInTheMetrics) {
  serve::ServiceOptions o = aci_options("");
  o.calibration.log_level = true;
  o.calibration.target_scale = 0.35;
  test::TestServer server(o);
  httplib::Client c = server.client();
  const double target = 0.01 * 0.35;
  double level = target;
  const json first = post(c, "/v1/predict", job(1));
  EXPECT_EQ(first["safe_ttl_s"].get<double>(), ttl_at(server.service->model()->predictor, first["expected_wall_s"].get<double>(), level));
  post(c, "/v1/outcomes", outcome(1, first["safe_ttl_s"].get<double>() + 1));
  level *= std::exp(0.002 * (target - 1));
  const std::string scrape = c.Get("/metrics")->body;
  EXPECT_DOUBLE_EQ(metric(scrape, "ttlpred_calibration_level"), level);
  EXPECT_EQ(metric(scrape, "ttlpred_calibration_info{method=\"aci-log\"}"), 1) << scrape;
}

TEST(ServeLearning, MatchRecordsOnlyTheJobsItMatched) {
  test::TestServer server(aci_options(""));
  httplib::Client c = server.client();
  const json m = post(c, "/v1/match",
                      std::string(R"({"slot":{"slot_time_left_s":200000},"jobs":[)") + job(7) + "," + job(8) +
                          R"(],"limit":1})");
  ASSERT_EQ(m["matches"].size(), 1u);
  post(c, "/v1/outcomes", outcome(7, 60));
  post(c, "/v1/outcomes", outcome(8, 60));  // considered, not matched: given no TTL
  const std::string scrape = c.Get("/metrics")->body;
  EXPECT_EQ(metric(scrape, "ttlpred_outcomes_matched_total"), 1);
  EXPECT_EQ(metric(scrape, "ttlpred_outcomes_unmatched_total{reason=\"unknown_job_id\"}"), 1);
}

// N outcomes, restart (journal replay alone, then snapshot + replay): the same TTLs.
TEST(ServeLearning, RestartAnswersBitForBitAsBeforeIt) {
  const std::string dir = test::temp_dir() + "/journal";
  std::vector<std::string> probes;
  for (int i = 0; i < 4; ++i)
    probes.push_back(std::string(R"({"user":")") + test::test_users()[static_cast<std::size_t>(i)] +
                     R"(","requested_ttl_s":)" + std::to_string(20000 + 10000 * i) + "}");
  auto answers = [&](serve::Service& s) {
    std::vector<std::string> out;
    for (const auto& b : probes) out.push_back(s.predict(b).body);
    return out;
  };
  auto feed = [&](serve::Service& s, int from, int to) {
    for (int i = from; i < to; ++i) {
      const std::string id = std::to_string(i);
      const std::string user = test::test_users()[static_cast<std::size_t>(i) % test::test_users().size()];
      const json a = json::parse(s.predict(R"({"job_id":)" + id + R"(,"user":")" + user + R"(","requested_ttl_s":72000})").body);
      // Every third job is killed by its TTL.
      const double wall = i % 3 == 0 ? a["safe_ttl_s"].get<double>() * 1.5 : a["expected_wall_s"].get<double>() * 0.5;
      ASSERT_EQ(s.outcomes(R"({"job_id":)" + id + R"(,"user":")" + user + R"(","requested_ttl_s":72000,"wall_s":)" +
                           std::to_string(wall) + "}")
                    .status,
                200);
    }
  };
  std::vector<std::string> before;
  double level = 0;
  {
    serve::Service s(aci_options(dir));
    const std::vector<std::string> fresh = answers(s);
    feed(s, 0, 30);
    before = answers(s);
    level = s.calibration_level();
    EXPECT_NE(before, fresh);  // the level moved
    EXPECT_LT(level, 0.0075);
  }
  {
    serve::Service s(aci_options(dir));
    EXPECT_EQ(s.replayed_outcomes(), 30u);
    EXPECT_EQ(s.calibration_level(), level);
    EXPECT_EQ(answers(s), before);
    s.snapshot_now();
    feed(s, 30, 45);
    before = answers(s);
    level = s.calibration_level();
  }
  EXPECT_TRUE(std::filesystem::exists(dir + "/snapshot-2.learn"));
  serve::Service s(aci_options(dir));
  EXPECT_EQ(s.replayed_outcomes(), 15u);
  EXPECT_EQ(s.calibration_level(), level);
  EXPECT_EQ(answers(s), before);
}

TEST(ServeLearning, AJournalFromBeforeServedPredictionsStillReplays) {
  const std::string dir = test::temp_dir() + "/old";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/journal-1.jsonl") << R"({"job_id":1,"user":"alice","wall_s":3600,"status":"DONE"})" << "\n"
                                          << R"({"user":"bob","requested_ttl_s":7200,"wall_s":60})" << "\n";
  serve::Service s(aci_options(dir));
  EXPECT_EQ(s.replayed_outcomes(), 2u);
  EXPECT_EQ(s.history_observed(), 2u);
  EXPECT_EQ(s.calibration_level(), 0.01 * 0.75);  // nothing served: the level has not moved
}

TEST(ServeLearning, StaticAnswersAsThePredictorAndAnOlderModelsAnswerIsUnmatched) {
  serve::ServiceOptions o = test::options_for(hour_model());
  test::TestServer server(o);
  httplib::Client c = server.client();
  const json a = post(c, "/v1/predict", job(1));
  Prediction p;
  JobRecord r;
  r[Field::JobId] = 1;
  r.text(Field::User) = "alice";
  r.text(Field::JobType) = "MC";
  r[Field::RequestedTtl] = 72000;
  const auto model = server.service->model();
  model->predictor.predict(std::span<const JobRecord>(&r, 1), model->predictor.initial_history(),
                           std::span<Prediction>(&p, 1));
  EXPECT_EQ(a["safe_ttl_s"].get<double>(), p.safe_ttl_s);
  EXPECT_EQ(metric(c.Get("/metrics")->body, "ttlpred_calibration_level"), 0.01);

  // Another model serves now: job 1's answer came from the old one's calibration.
  const std::string other = test::temp_dir() + "/other.model";
  test::write_test_model(other, 1);
  post(c, "/admin/reload", json{{"path", other}}.dump());
  post(c, "/v1/outcomes", outcome(1, 60));
  const std::string scrape = c.Get("/metrics")->body;
  EXPECT_EQ(metric(scrape, "ttlpred_outcomes_unmatched_total{reason=\"older_model\"}"), 1);
  EXPECT_EQ(metric(scrape, "ttlpred_live_outcomes{window=\"1000\"}"), 0);
  // No outcome in the window: no kill rate, no error (NaN), rather than a healthy-looking 0.
  EXPECT_NE(scrape.find("\nttlpred_live_kill_rate{window=\"1000\"} NaN\n"), std::string::npos) << scrape;
  EXPECT_NE(scrape.find("\nttlpred_live_rmse_seconds{window=\"1000\"} NaN\n"), std::string::npos) << scrape;
  EXPECT_NE(scrape.find("\nttlpred_live_coverage{window=\"1000\"} NaN\n"), std::string::npos) << scrape;
}

TEST(ServeLearning, DriftRaisesTheGaugeAndLogsAJsonLine) {
  serve::ServiceOptions o = aci_options("");
  o.drift = {0.1, 5.0, 5};
  test::TestServer server(o);
  httplib::Client c = server.client();
  testing::internal::CaptureStderr();
  for (int i = 0; i < 20; ++i) {
    const json a = post(c, "/v1/predict", job(i));
    // The first five as expected, then every job runs 8x longer (ln 8 = 2.08 per outcome).
    const double wall = a["expected_wall_s"].get<double>() * (i < 5 ? 1.0 : 8.0);
    post(c, "/v1/outcomes", outcome(i, std::min(wall, 70000.0)));
  }
  const std::string err = testing::internal::GetCapturedStderr();
  const std::string scrape = c.Get("/metrics")->body;
  EXPECT_EQ(metric(scrape, "ttlpred_drift_alarm"), 1);
  EXPECT_GE(metric(scrape, "ttlpred_drift_alarms_total"), 1);
  const auto at = err.find("\"event\":\"drift_alarm\"");
  ASSERT_NE(at, std::string::npos) << err;
  const std::string line = err.substr(err.rfind('\n', at) + 1, err.find('\n', at) - err.rfind('\n', at) - 1);
  const json j = json::parse(line);
  EXPECT_EQ(j["level"], "warn");
  EXPECT_EQ(j["direction"], "longer");
  EXPECT_EQ(j["ts"].get<std::string>().size(), 24u);  // 2026-12-01T21:04:05.123Z
  // A reload answers the alarm: the gauge falls back.
  post(c, "/admin/reload", "");
  EXPECT_EQ(metric(c.Get("/metrics")->body, "ttlpred_drift_alarm"), 0);
}

// The journal replay re-raises an alarm the journaled residuals raised, but only under the
// model they were the residuals of: a restart with another model restarts the tests and
// clears the alarm, as a reload to it would have.
TEST(ServeLearning, ARestartUnderAnotherModelClearsTheReplayedDriftAlarm) {
  const std::string journal = test::temp_dir() + "/drift-restart-journal";
  std::filesystem::remove_all(journal);
  serve::ServiceOptions o = aci_options(journal);
  o.drift = {0.1, 5.0, 5};
  {
    test::TestServer server(o);
    httplib::Client c = server.client();
    for (int i = 0; i < 20; ++i) {
      const json a = post(c, "/v1/predict", job(i));
      post(c, "/v1/outcomes", outcome(i, std::min(a["expected_wall_s"].get<double>() * (i < 5 ? 1.0 : 8.0), 70000.0)));
    }
    EXPECT_EQ(metric(c.Get("/metrics")->body, "ttlpred_drift_alarm"), 1);
  }
  {
    test::TestServer same(o);
    EXPECT_EQ(metric(same.client().Get("/metrics")->body, "ttlpred_drift_alarm"), 1);
  }
  ModelFile other = load_model_file(hour_model());
  other.target.mean += 0.01;  // another file, another version, the same history configuration
  o.model_path = test::temp_dir() + "/hour-other.model";
  save_model_file(o.model_path, other);
  test::TestServer restarted(o);
  EXPECT_EQ(metric(restarted.client().Get("/metrics")->body, "ttlpred_drift_alarm"), 0);
}

}  // namespace
}  // namespace ttlpred
