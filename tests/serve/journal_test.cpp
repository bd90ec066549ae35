// Durable outcomes: journal replay across a restart, snapshots, torn tails, and the real
// program killed with SIGKILL; SIGHUP reload of the real program.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "serve/journal.hpp"
#include "serve_test_util.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::string& model_path(int which = 1) {
  static const std::string dir = test::temp_dir();
  static const std::string a = [] { test::write_test_model(dir + "/a.model", 1); return dir + "/a.model"; }();
  static const std::string b = [] { test::write_test_model(dir + "/b.model", 2); return dir + "/b.model"; }();
  return which == 1 ? a : b;
}

std::string outcomes_body(int n, int salt) {
  json a = json::array();
  for (int i = 0; i < n; ++i)
    a.push_back({{"user", test::test_users()[static_cast<std::size_t>(i + salt) % 5]},
                 {"wall_s", 100 + 37 * (i + salt)}, {"requested_ttl_s", 20000}, {"status", "DONE"}});
  return a.dump();
}

serve::ServiceOptions journaled(const std::string& dir, std::uint64_t snapshot_every = 0) {
  serve::ServiceOptions o;
  o.model_path = model_path();
  o.journal_dir = dir;
  o.snapshot_every = snapshot_every;
  return o;
}

std::string predict_body() { return R"([{"user":"alice"},{"user":"bob"},{"user":"zed"}])"; }

TEST(ServeJournal, RestartReplaysEveryAcknowledgedOutcome) {
  const std::string dir = test::temp_dir();
  std::string before;
  std::uint64_t observed = 0;
  {
    serve::Service s(journaled(dir));
    for (int b = 0; b < 5; ++b) {
      const serve::Reply r = s.outcomes(outcomes_body(7, b));
      ASSERT_EQ(r.status, 200) << r.body;
      EXPECT_EQ(json::parse(r.body)["durable"], true);
    }
    observed = s.history_observed();
    before = s.predict(predict_body()).body;
  }
  serve::Service again(journaled(dir));
  EXPECT_EQ(again.replayed_outcomes(), 35u);
  EXPECT_EQ(again.history_observed(), observed);
  EXPECT_EQ(again.predict(predict_body()).body, before);  // the same state, bit for bit
}

TEST(ServeJournal, SnapshotsBoundTheReplayAndLoseNothing) {
  const std::string dir = test::temp_dir();
  std::string before;
  {
    serve::Service s(journaled(dir, 10));
    for (int b = 0; b < 5; ++b) ASSERT_EQ(s.outcomes(outcomes_body(4, b)).status, 200);  // 20 in all: a snapshot at 12
    before = s.predict(predict_body()).body;
    EXPECT_EQ(s.history_observed(), 20u);
  }
  std::size_t snapshots = 0, journals = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    snapshots += e.path().extension() == ".hist";
    journals += e.path().extension() == ".jsonl";
  }
  EXPECT_EQ(snapshots, 1u);  // older generations are removed
  EXPECT_EQ(journals, 1u);
  serve::Service again(journaled(dir, 10));
  EXPECT_EQ(again.replayed_outcomes(), 8u);  // the 12 before the last snapshot are in it
  EXPECT_EQ(again.history_observed(), 20u);
  EXPECT_EQ(again.predict(predict_body()).body, before);
}

TEST(ServeJournal, TornLastLineIsDroppedAndABadLineNamesFileAndLine) {
  const std::string dir = test::temp_dir();
  {
    serve::Service s(journaled(dir));
    ASSERT_EQ(s.outcomes(outcomes_body(3, 0)).status, 200);
  }
  const std::string journal = dir + "/journal-1.jsonl";
  ASSERT_TRUE(fs::exists(journal));
  { std::ofstream(journal, std::ios::app) << R"({"user":"alice","wal)"; }  // a crash mid-write
  {
    serve::Service s(journaled(dir));
    EXPECT_EQ(s.history_observed(), 3u);
    ASSERT_EQ(s.outcomes(outcomes_body(1, 9)).status, 200);  // appends on a clean line
  }
  EXPECT_EQ(serve::Service(journaled(dir)).history_observed(), 4u);
  { std::ofstream(journal, std::ios::app) << "{\"user\":\"alice\"}\n"; }  // complete but invalid
  try {
    serve::Service s(journaled(dir));
    FAIL() << "a bad journal line must refuse the start";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(journal + ":5:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("wall_s"), std::string::npos) << e.what();
  }
}

using Child = test::ServeChild;

// The value of one metric line (name and labels as printed, e.g. `x{result="ok"}`);
// ~0 when the server did not answer or the line is absent.
std::uint64_t metric_value(httplib::Client& c, const std::string& name_and_labels) {
  auto m = c.Get("/metrics");
  if (!m) return ~0ull;
  const std::string key = "\n" + name_and_labels + " ";
  const auto at = m->body.find(key);
  return at == std::string::npos ? ~0ull : std::stoull(m->body.substr(at + key.size()));
}

std::uint64_t observed_from_metrics(httplib::Client& c) { return metric_value(c, "ttlpred_history_observed_jobs"); }

TEST(ServeProcess, KillNineLosesNoAcknowledgedOutcome) {
  if (!fs::exists(test::cli_binary())) GTEST_SKIP() << "build the ttlpred target first";
  const std::string journal = test::temp_dir();
  std::uint64_t acknowledged = 0;
  {
    Child c(model_path(), journal);
    ASSERT_GT(c.port, 0);
    auto http = c.client();
    for (int b = 0; b < 10; ++b) {
      auto res = http.Post("/v1/outcomes", outcomes_body(5, b), "application/json");
      ASSERT_TRUE(res);
      ASSERT_EQ(res->status, 200) << res->body;
      acknowledged += 5;
    }
    EXPECT_EQ(observed_from_metrics(http), acknowledged);
    const int status = c.signal_and_wait(SIGKILL);
    EXPECT_TRUE(WIFSIGNALED(status));
  }
  Child again(model_path(), journal);
  ASSERT_GT(again.port, 0);
  auto http = again.client();
  EXPECT_EQ(observed_from_metrics(http), acknowledged);
  EXPECT_EQ(WEXITSTATUS(again.signal_and_wait(SIGTERM)), 0);  // and a clean stop exits 0
}

TEST(ServeProcess, SighupReloadsTheModelFileAndRefusesABrokenOne) {
  if (!fs::exists(test::cli_binary())) GTEST_SKIP() << "build the ttlpred target first";
  const std::string dir = test::temp_dir();
  const std::string live = dir + "/live.model";
  fs::copy_file(model_path(1), live);
  Child c(live, dir + "/journal");
  ASSERT_GT(c.port, 0);
  auto http = c.client();
  auto version = [&] {
    auto r = http.Get("/readyz");
    return r ? json::parse(r->body)["model_version"].get<std::string>() : std::string();
  };
  const std::string v1 = version();
  fs::copy_file(model_path(2), live, fs::copy_options::overwrite_existing);
  kill(c.pid, SIGHUP);
  const std::string ok = "ttlpred_model_reloads_total{result=\"ok\"}";
  const std::string refused = "ttlpred_model_reloads_total{result=\"refused\"}";
  // The counter moves just after the new model is in place: wait for it, not the version.
  std::uint64_t reloads = 0;
  for (int i = 0; i < 2000 && reloads != 1; ++i) {  // up to 20 s on a slow host
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    reloads = metric_value(http, ok);
  }
  EXPECT_EQ(reloads, 1u);
  const std::string v2 = version();
  EXPECT_NE(v2, v1);
  EXPECT_EQ(metric_value(http, refused), 0u);
  { std::ofstream(live, std::ios::trunc) << "garbage"; }
  kill(c.pid, SIGHUP);
  // The refused-reload counter says the reload was attempted and refused; a version that
  // merely stays the same would also hold if the signal were never acted on. Polled, so a
  // slow (sanitized, loaded) host only waits longer: up to 20 s.
  std::uint64_t refusals = 0;
  for (int i = 0; i < 2000 && refusals != 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    refusals = metric_value(http, refused);
  }
  EXPECT_EQ(refusals, 1u);
  EXPECT_EQ(metric_value(http, ok), 1u);
  EXPECT_EQ(version(), v2);  // still serving the last good model
  auto r = http.Post("/v1/predict", R"({"user":"alice"})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(ServeProcess, StartupErrorsExitOneNamingTheProblem) {
  if (!fs::exists(test::cli_binary())) GTEST_SKIP() << "build the ttlpred target first";
  std::string out;
  EXPECT_EQ(test::run_cli("serve --model /no/such.model --listen 127.0.0.1:0", &out), 1);
  EXPECT_NE(out.find("/no/such.model"), std::string::npos) << out;
  EXPECT_EQ(test::run_cli("serve --model '" + model_path() + "' --listen 127.0.0.1", &out), 1);
  EXPECT_NE(out.find("--listen must be HOST:PORT"), std::string::npos) << out;
  EXPECT_EQ(test::run_cli("serve --model '" + model_path() + "' --listen 127.0.0.1:0 --alpha 2", &out), 1);
  EXPECT_NE(out.find("alpha"), std::string::npos) << out;
}

}  // namespace
}  // namespace ttlpred
