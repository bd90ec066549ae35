// A history snapshot that cannot be written (disk full, I/O error) must not fail the request
// whose outcomes are already journaled: it is logged to stderr and retried with the next
// batch while the journal grows, and nothing acknowledged is lost on restart.
//
// The failure is forced without a fault hook and without permissions (the tests may run as
// root): once the service has listed its journal folder, the next snapshot's name is made a
// non-empty directory, so the atomic write's final rename onto it fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "serve_test_util.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// `n` outcomes of the test users, distinct per batch `b`.
std::string outcome_batch(int n, int b) {
  json a = json::array();
  for (int i = 0; i < n; ++i)
    a.push_back({{"user", test::test_users()[static_cast<std::size_t>(i) % test::test_users().size()]},
                 {"wall_s", 200 + 50 * i + 7 * b}, {"requested_ttl_s", 20000}, {"status", "DONE"}});
  return a.dump();
}

serve::ServiceOptions snapshot_every(const std::string& dir, std::uint64_t every) {
  serve::ServiceOptions o = test::options_for(test::shared_test_model());
  o.journal_dir = dir;
  o.snapshot_every = every;
  return o;
}

// The value of an unlabelled metric in the Prometheus text.
double metric(const std::string& text, const std::string& name) {
  const std::size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

std::vector<std::string> folder_listing(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ServeSnapshotFailure, IsLoggedRetriedWithTheNextBatchAndLosesNothingOnRestart) {
  const std::string dir = test::temp_dir() + "/journal";
  const std::string body = R"([{"user":"alice"},{"user":"bob"},{"user":"zed"}])";
  std::string before;
  {
    serve::Service s(snapshot_every(dir, 3));  // lists the folder: journal-1 only
    const std::string blocker = dir + "/snapshot-2.hist";
    fs::create_directories(blocker + "/in-the-way");

    for (int b = 0; b < 2; ++b) {
      testing::internal::CaptureStderr();
      const serve::Reply r = s.outcomes(outcome_batch(4, b));  // each batch reaches --snapshot-every
      const std::string log = testing::internal::GetCapturedStderr();
      ASSERT_EQ(r.status, 200) << r.body;
      EXPECT_EQ(json::parse(r.body)["accepted"], 4);
      EXPECT_EQ(json::parse(r.body)["durable"], true);
      EXPECT_NE(log.find("\"level\":\"error\",\"event\":\"snapshot_failed\""), std::string::npos) << log;
      EXPECT_NE(log.find("history snapshot failed (will retry): "), std::string::npos) << log;
      EXPECT_NE(log.find("snapshot-2.hist"), std::string::npos) << log;  // names what could not be written
      // Not written, so the journal keeps every outcome and a restart would replay them all.
      EXPECT_EQ(metric(s.metrics_text().body, "ttlpred_journal_outcomes_since_snapshot"), 4.0 * (b + 1));
      EXPECT_EQ(metric(s.metrics_text().body, "ttlpred_snapshot_failures_total"), b + 1.0);
    }
    EXPECT_EQ(s.history_observed(), 8u);
    // The half-written snapshot's temp file is gone, and so is the learned state written
    // before it; the journal is where it was.
    EXPECT_EQ(folder_listing(dir), (std::vector<std::string>{"journal-1.jsonl", "lock", "snapshot-2.hist"}));
    before = s.predict(body).body;
  }
  fs::remove_all(dir + "/snapshot-2.hist");  // the disk has room again
  {
    serve::Service s(snapshot_every(dir, 3));
    EXPECT_EQ(s.replayed_outcomes(), 8u);
    EXPECT_EQ(s.history_observed(), 8u);
    EXPECT_EQ(s.predict(body).body, before);  // the same state, bit for bit

    // The retry succeeds once the obstacle is gone: the journal rotates and is cut back.
    testing::internal::CaptureStderr();
    ASSERT_EQ(s.outcomes(outcome_batch(4, 2)).status, 200);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
    EXPECT_EQ(metric(s.metrics_text().body, "ttlpred_journal_outcomes_since_snapshot"), 0.0);
    EXPECT_EQ(folder_listing(dir),
              (std::vector<std::string>{"journal-2.jsonl", "lock", "snapshot-2.hist", "snapshot-2.learn"}));
    before = s.predict(body).body;
  }
  serve::Service again(snapshot_every(dir, 3));
  EXPECT_EQ(again.replayed_outcomes(), 0u);  // all 12 are in the snapshot
  EXPECT_EQ(again.history_observed(), 12u);
  EXPECT_EQ(again.predict(body).body, before);
}

}  // namespace
}  // namespace ttlpred
