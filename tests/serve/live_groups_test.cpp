// Live quality and the drift test per job type / queue group (serve/live_groups.hpp,
// serve/group_drift.hpp; docs/service.md, "Live quality and the drift alarm"): the label set
// is bounded by the model's vocabulary, each group's windows hold the hand-computed figures
// of its own outcomes, a change of the job mix moves no group's test while a drift of one
// group's run times raises it, and the per-group state survives a snapshot, where a snapshot
// written before groups existed still loads.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/group_drift.hpp"
#include "serve/live_groups.hpp"
#include "serve/live_quality.hpp"
#include "serve/journal.hpp"
#include "serve/taught_outcomes.hpp"
#include "serve_test_util.hpp"
#include "util/binary_io.hpp"
#include "util/file_io.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

TEST(LiveGroups, BucketsNameTheFirstFifteenValuesAndTheRestIsOther) {
  EXPECT_EQ(serve::live_group_bucket(1), 1u);
  EXPECT_EQ(serve::live_group_bucket(15), 15u);
  EXPECT_EQ(serve::live_group_bucket(16), 0u);  // rarer than the first 15 in training
  EXPECT_EQ(serve::live_group_bucket(0), 0u);   // a value the model never saw
  EXPECT_EQ(serve::live_group_bucket(kNoGroup), kNoGroup);

  serve::GroupTable<int> t;
  for (int i = 0; i < 20; ++i) {
    std::string name = "g";  // appended, not "g" + ...: g++ 12 warns falsely (-Wrestrict) on that
    name += std::to_string(i);
    t.at(name) += 1;
  }
  t.at("g3") += 10;
  ASSERT_EQ(t.entries().size(), serve::GroupTable<int>::kMaxGroups + 1);  // 16 labels and "other"
  EXPECT_EQ(t.entries().back().first, "other");
  EXPECT_EQ(t.entries().back().second, 4);  // g16 .. g19
  EXPECT_EQ(*t.find("g3"), 11);
  EXPECT_EQ(t.find("g17"), nullptr);
}

TEST(DriftTest, AChangeOfTheJobMixTripsTheTestOverAllOutcomesButNoGroupsTest) {
  // Group A's residuals are -1 +- 0.1, B's +1 +- 0.1: a model that is better for one job type
  // than the other. First only A's jobs arrive, then only B's: no group's run times changed.
  serve::DriftOptions all{0.1, 20, 30, serve::DriftScope::All}, group{0.1, 20, 30, serve::DriftScope::Group};
  serve::DriftTest by_all(all), by_group(group);
  std::size_t all_alarms = 0, group_alarms = 0;
  for (int i = 0; i < 2000; ++i) {
    const bool b = i >= 1000;
    const double r = (b ? 1.0 : -1.0) + (i % 2 ? 0.1 : -0.1);
    all_alarms += by_all.add(b ? "B" : "A", r);
    group_alarms += by_group.add(b ? "B" : "A", r);
  }
  EXPECT_GE(all_alarms, 1u);
  EXPECT_EQ(group_alarms, 0u);
  EXPECT_EQ(by_group.groups().entries().size(), 2u);
  EXPECT_EQ(by_group.up(), std::max(by_group.groups().entries()[0].second.up(), by_group.groups().entries()[1].second.up()));

  // Then A's jobs come back 2x slower (+0.69 in log): A's test fires, and says it was A.
  std::size_t drift_alarms = 0;
  for (int i = 0; i < 200; ++i) {
    by_group.add("B", 1.0 + (i % 2 ? 0.1 : -0.1));
    drift_alarms += by_group.add("A", -1.0 + std::log(2.0) + (i % 2 ? 0.1 : -0.1));
  }
  EXPECT_GE(drift_alarms, 1u);
  EXPECT_EQ(by_group.last_alarm().group, "A");
  EXPECT_GT(by_group.last_alarm().test.up, 20);

  // The state restores: the same statistics per group.
  BinaryWriter w;
  by_group.write_all_state(w);
  by_group.write_group_state(w);
  serve::DriftTest back(group);
  BinaryReader r(w.bytes(), "state");
  back.read_all_state(r);
  back.read_group_state(r);
  ASSERT_EQ(back.groups().entries().size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(back.groups().entries()[k].first, by_group.groups().entries()[k].first);
    EXPECT_EQ(back.groups().entries()[k].second.up(), by_group.groups().entries()[k].second.up());
    EXPECT_EQ(back.groups().entries()[k].second.count(), by_group.groups().entries()[k].second.count());
  }
  EXPECT_EQ(back.all().mean(), by_group.all().mean());
}

// The value of a metric line (name with its labels) in a scrape; NaN when absent.
double metric(const std::string& scrape, const std::string& name) {
  std::istringstream in(scrape);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + " ", 0) == 0) return std::stod(line.substr(name.size() + 1));
  return NAN;
}

// The hour-scale test model with its safe TTL grouped by job type: the encoder's job-type
// vocabulary is MC, MERGE, USER (100 training jobs each; ties by value).
const std::string& grouped_model() {
  static const std::string path = [] {
    const std::string p = test::temp_dir() + "/grouped.model";
    test::write_hour_scale_test_model(p);
    ModelFile m = load_model_file(p);
    m.safe_ttl.group_column = "job_type";
    save_model_file(p, m);
    return p;
  }();
  return path;
}

std::string job(int id, const char* type) {
  return "{\"job_id\":" + std::to_string(id) + ",\"user\":\"alice\",\"job_type\":\"" + type +
         "\",\"requested_ttl_s\":72000}";
}
std::string outcome(int id, const char* type, double wall) {
  return "{\"job_id\":" + std::to_string(id) + ",\"user\":\"alice\",\"job_type\":\"" + type +
         "\",\"requested_ttl_s\":72000,\"wall_s\":" + std::to_string(wall) + "}";
}

json post(httplib::Client& c, const std::string& path, const std::string& body) {
  auto res = c.Post(path, body, "application/json");
  EXPECT_TRUE(res && res->status == 200) << path << " " << body << " -> " << (res ? res->body : "no reply");
  return res ? json::parse(res->body) : json();
}

// The learned-state file of the journal's newest snapshot.
std::string learned_file(const std::string& journal) {
  const auto snap = serve::OutcomeJournal(journal).snapshot_path();
  EXPECT_TRUE(snap);
  return snap ? serve::OutcomeJournal::learned_path(*snap) : std::string();
}

TEST(ServeLiveGroups, EachJobTypeHasItsOwnWindowsAndTheySurviveASnapshot) {
  const std::string journal = test::temp_dir() + "/journal";
  serve::ServiceOptions o = test::options_for(grouped_model());
  o.journal_dir = journal;
  o.clock = [] { return 1.8e9; };
  std::string scrape;
  double mc_expected[2], user_expected = 0, mc_ttl[2], user_ttl = 0;
  {
    test::TestServer server(o);
    httplib::Client c = server.client();
    // Two MC jobs (one killed: it runs 10 s past its TTL; one runs a minute) and a USER job
    // that runs exactly its expected time.
    for (int i = 0; i < 2; ++i) {
      const json p = post(c, "/v1/predict", job(i + 1, "MC"));
      mc_expected[i] = p["expected_wall_s"].get<double>();
      mc_ttl[i] = p["safe_ttl_s"].get<double>();
    }
    const json u = post(c, "/v1/predict", job(3, "USER"));
    user_expected = u["expected_wall_s"].get<double>();
    user_ttl = u["safe_ttl_s"].get<double>();
    ASSERT_LT(mc_ttl[0] + 10, 72000);
    post(c, "/v1/outcomes", outcome(1, "MC", mc_ttl[0] + 10));
    post(c, "/v1/outcomes", outcome(2, "MC", 60));
    post(c, "/v1/outcomes", outcome(3, "USER", user_expected));
    scrape = server.service->metrics_text().body;
    server.service->snapshot_now();
  }
  // By hand: MC killed 1 of 2, covered 1 of 2; squared errors in hours of both; the log
  // errors ln(expected) - ln(wall).
  const double e1 = (mc_expected[0] - (mc_ttl[0] + 10)) / 3600, e2 = (mc_expected[1] - 60) / 3600;
  const double mc_rmse = std::sqrt((e1 * e1 + e2 * e2) / 2);
  const double mc_log = (std::log(mc_expected[0]) - std::log(mc_ttl[0] + 10) + std::log(mc_expected[1]) - std::log(60.0)) / 2;
  auto check = [&](const std::string& s) {
    EXPECT_EQ(metric(s, "ttlpred_live_group_info{column=\"job_type\"}"), 1);
    EXPECT_EQ(metric(s, "ttlpred_live_outcomes{window=\"1000\"}"), 3);
    EXPECT_EQ(metric(s, "ttlpred_live_outcomes{window=\"1000\",group=\"MC\"}"), 2);
    EXPECT_EQ(metric(s, "ttlpred_live_outcomes{window=\"1d\",group=\"MC\"}"), 2);
    EXPECT_EQ(metric(s, "ttlpred_live_kill_rate{window=\"1000\",group=\"MC\"}"), 0.5);
    EXPECT_EQ(metric(s, "ttlpred_live_coverage{window=\"1000\",group=\"MC\"}"), 0.5);
    EXPECT_NEAR(metric(s, "ttlpred_live_rmse_hours{window=\"1000\",group=\"MC\"}"), mc_rmse, 1e-9 * mc_rmse);
    EXPECT_NEAR(metric(s, "ttlpred_live_rmse_seconds{window=\"1000\",group=\"MC\"}"), 3600 * mc_rmse, 1e-9 * 3600 * mc_rmse);
    EXPECT_NEAR(metric(s, "ttlpred_live_mean_log_error{window=\"1000\",group=\"MC\"}"), mc_log, 1e-9);
    EXPECT_NEAR(metric(s, "ttlpred_live_safe_ttl_over_request{window=\"1000\",group=\"MC\"}"),
                (mc_ttl[0] + mc_ttl[1]) / 144000, 1e-12);
    EXPECT_EQ(metric(s, "ttlpred_live_outcomes{window=\"10000\",group=\"USER\"}"), 1);
    EXPECT_EQ(metric(s, "ttlpred_live_kill_rate{window=\"1h\",group=\"USER\"}"), 0);
    EXPECT_EQ(metric(s, "ttlpred_live_coverage{window=\"1h\",group=\"USER\"}"), 1);
    EXPECT_NEAR(metric(s, "ttlpred_live_rmse_hours{window=\"1h\",group=\"USER\"}"), 0, 1e-12);
    EXPECT_NEAR(metric(s, "ttlpred_live_safe_ttl_over_request{window=\"1h\",group=\"USER\"}"), user_ttl / 72000, 1e-12);
    EXPECT_TRUE(std::isnan(metric(s, "ttlpred_live_outcomes{window=\"1000\",group=\"MERGE\"}")))
        << "a group without outcomes has no series";
    EXPECT_EQ(metric(s, "ttlpred_drift_info{scope=\"group\"}"), 1);
    EXPECT_FALSE(std::isnan(metric(s, "ttlpred_drift_statistic{direction=\"longer\",group=\"MC\"}")));
  };
  check(scrape);

  // Restarted on the snapshot (nothing to replay after it): the same per-group figures.
  const std::string learned = learned_file(journal);
  {
    test::TestServer server(o);
    EXPECT_EQ(server.service->replayed_outcomes(), 0u);
    check(server.service->metrics_text().body);
  }

  // A learned state of the first format (no groups, no taught job ids: version 1) still
  // loads, its groups empty.
  const OpenedContainer c = open_container(read_file_bytes(learned), "TTLPLRN1", 3, learned);
  ASSERT_EQ(c.version, 3u);
  BinaryReader r(c.payload, learned);
  r.get_string(64);
  serve::LiveQuality q;
  q.read_state(r);
  serve::PageHinkley ph;
  ph.read_state(r);
  r.get<std::uint8_t>();
  r.get<std::uint64_t>();
  const std::size_t groups_at = r.position();
  serve::GroupQuality gq;
  gq.read_state(r);
  serve::DriftTest dt;
  dt.read_group_state(r);
  serve::TaughtOutcomes taught(100);
  taught.read(r);
  std::vector<std::uint8_t> v1(c.payload.begin(), c.payload.begin() + static_cast<std::ptrdiff_t>(groups_at));
  v1.insert(v1.end(), c.payload.begin() + static_cast<std::ptrdiff_t>(r.position()), c.payload.end());
  write_file_atomic(learned, seal_container("TTLPLRN1", 1, v1));
  {
    test::TestServer server(o);
    const std::string s = server.service->metrics_text().body;
    EXPECT_EQ(metric(s, "ttlpred_live_outcomes{window=\"1000\"}"), 3);
    EXPECT_NEAR(metric(s, "ttlpred_live_kill_rate{window=\"1000\"}"), 1.0 / 3, 1e-15);
    EXPECT_TRUE(std::isnan(metric(s, "ttlpred_live_outcomes{window=\"1000\",group=\"MC\"}")));
  }
}

TEST(ServeLiveGroups, AnUngroupedModelHasNoGroupSeries) {
  serve::ServiceOptions o = test::options_for(test::shared_test_model());
  o.clock = [] { return 1.8e9; };
  test::TestServer server(o);
  httplib::Client c = server.client();
  post(c, "/v1/predict", job(1, "MC"));
  post(c, "/v1/outcomes", outcome(1, "MC", 60));
  const std::string s = server.service->metrics_text().body;
  EXPECT_EQ(metric(s, "ttlpred_live_outcomes{window=\"1000\"}"), 1);
  EXPECT_EQ(s.find("group=\""), std::string::npos);
  EXPECT_EQ(s.find("ttlpred_live_group_info"), std::string::npos);
}

}  // namespace
}  // namespace ttlpred
