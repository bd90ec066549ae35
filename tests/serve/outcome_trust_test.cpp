// Who may teach the history, and how much (docs/service.md, "Who may write outcomes"): without
// a token outcomes are refused unless a loopback test setup opens them, and an outcome
// repeated under one job_id teaches the shared history keys once, across a restart too.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "serve/taught_outcomes.hpp"
#include "serve/write_rate.hpp"
#include "serve_test_util.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;

using test::post_json;

TEST(TaughtOutcomes, RemembersTheLastCapacityIdsOldestForgottenFirst) {
  serve::TaughtOutcomes t(3);
  for (std::uint64_t id : {1, 2, 3, 2, 1}) t.remember(id);  // repeats take no room
  EXPECT_EQ(t.size(), 3u);
  t.remember(4);  // forgets 1, the oldest
  EXPECT_FALSE(t.contains(1));
  EXPECT_TRUE(t.contains(2) && t.contains(3) && t.contains(4));
  BinaryWriter w;
  t.write(w);
  serve::TaughtOutcomes back(2);  // a restart with a smaller capacity keeps the newest
  BinaryReader r(w.bytes(), "taught ids");
  back.read(r);
  EXPECT_TRUE(r.at_end());
  EXPECT_FALSE(back.contains(2));
  EXPECT_TRUE(back.contains(3) && back.contains(4));
  back.remember(5);  // and forgets in the order written
  EXPECT_FALSE(back.contains(3));
  serve::TaughtOutcomes none(0);
  none.remember(1);
  EXPECT_FALSE(none.contains(1));
  const std::vector<std::uint8_t> cut(w.bytes().begin(), w.bytes().end() - 3);
  BinaryReader truncated(cut, "taught ids");
  EXPECT_THROW(back.read(truncated), Error);
}

// A token bucket per client address: a request is let in while its bucket holds an outcome and
// charged what it carried, so a batch may take it into debt that the refill pays back.
TEST(WriteRateLimit, LetsInWhileTheBucketHoldsAndChargesWhatWasSent) {
  serve::WriteRateLimit limit(10, 5);  // 10 a second, 5 at once
  EXPECT_TRUE(limit.admit("a", 0));
  limit.charge("a", 5, 0);
  EXPECT_FALSE(limit.admit("a", 0));
  EXPECT_TRUE(limit.admit("b", 0));  // another client has its own bucket
  EXPECT_FALSE(limit.admit("a", 0.05));  // half an outcome refilled: not yet one
  EXPECT_TRUE(limit.admit("a", 0.15));
  limit.charge("a", 100, 0.15);          // a batch of 100: 98.5 in debt
  EXPECT_FALSE(limit.admit("a", 9.9));   // one outcome again at 10 a second: at 10.1 s
  EXPECT_TRUE(limit.admit("a", 10.2));
  EXPECT_EQ(limit.refused(), 3u);
  // Full buckets carry nothing and make room for new clients; past kMaxPeers clients in debt
  // at once, the newcomers share one bucket.
  for (std::size_t i = 0; i < serve::WriteRateLimit::kMaxPeers; ++i) {
    const std::string peer = "10.0." + std::to_string(i);
    ASSERT_TRUE(limit.admit(peer, 20)) << peer;
    limit.charge(peer, 50, 20);
  }
  EXPECT_FALSE(limit.admit("10.0.0", 20));
  EXPECT_TRUE(limit.admit("newcomer", 20));  // the shared bucket, full
  limit.charge("newcomer", 50, 20);
  EXPECT_FALSE(limit.admit("another newcomer", 20));  // shares its debt
  serve::WriteRateLimit off(0, 0);
  off.charge("a", 1e9, 0);
  EXPECT_TRUE(off.admit("a", 0));
  EXPECT_THROW(serve::WriteRateLimit(10, 0.5), Error);
}

TEST(OutcomeTrust, AWriterOverTheRateGets429AndACounterWhileReadersGoOn) {
  serve::HttpOptions ho;
  ho.outcome_rate = 0.001;  // no refill within the test
  ho.outcome_burst = 3;
  test::TestServer s(test::options_for(test::shared_test_model()), ho);
  auto c = s.client();
  post_json(c, "/v1/outcomes", R"([{"job_id":1,"wall_s":5},{"job_id":2,"wall_s":6},{"job_id":3,"wall_s":7}])", 200);
  const json refused = post_json(c, "/v1/outcomes", R"({"job_id":4,"wall_s":8})", 429);
  EXPECT_NE(refused["error"].get<std::string>().find("--outcome-rate"), std::string::npos) << refused;
  post_json(c, "/v1/started", R"({"job_id":5,"user":"a"})", 429);
  EXPECT_EQ(s.service->history_observed(), 3u);
  post_json(c, "/v1/predict", R"({"user":"a"})", 200);
  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("ttlpred_outcomes_rate_limited_total 2\n"), std::string::npos) << metrics;
}

TEST(OutcomeTrust, WithoutATokenOutcomesNeedAnOpenLoopbackSetup) {
  test::TestServer s(test::options_for(test::shared_test_model()), {}, /*open_outcomes=*/false);
  auto c = s.client();
  const json refused = post_json(c, "/v1/outcomes", R"({"user":"a","wall_s":10})", 403);
  EXPECT_NE(refused["error"].get<std::string>().find("--open-outcomes"), std::string::npos) << refused;
  post_json(c, "/v1/started", R"({"job_id":1,"user":"a"})", 403);
  EXPECT_EQ(s.service->history_observed(), 0u);
  post_json(c, "/v1/predict", R"({"user":"a"})", 200);  // predictions stay open
}

TEST(OutcomeTrust, OpenOutcomesAreRefusedOffLoopback) {
  std::string out;
  EXPECT_EQ(test::run_cli("serve --model '" + test::shared_test_model() + "' --listen 0.0.0.0:0 --open-outcomes", &out),
            1);
  EXPECT_NE(out.find("--open-outcomes is for a test setup on loopback"), std::string::npos) << out;
}

// 50 replays of one outcome teach the history once; the other 49 are journaled, counted and
// answered as repeated. A batch that names one job twice teaches it once too.
TEST(OutcomeTrust, AnOutcomeTeachesTheHistoryOncePerJobId) {
  test::TestServer s(test::options_for(test::shared_test_model()));
  auto c = s.client();
  const std::string evil = R"({"job_id":7,"user":"evil","partition":"4","wall_s":0})";
  const std::string victim = R"({"user":"u481","partition":"4","requested_ttl_s":86400})";
  EXPECT_EQ(post_json(c, "/v1/outcomes", evil, 200)["repeated"], 0);
  // The victim's answer after the job's outcome once is its answer after fifty.
  const json once = post_json(c, "/v1/predict", victim, 200);
  for (int i = 0; i < 49; ++i) EXPECT_EQ(post_json(c, "/v1/outcomes", evil, 200)["repeated"], 1);
  EXPECT_EQ(s.service->history_observed(), 1u);
  EXPECT_EQ(post_json(c, "/v1/predict", victim, 200), once);
  const json batch = post_json(c, "/v1/outcomes", R"([{"job_id":"a","wall_s":5},{"job_id":"a","wall_s":6},{"wall_s":7}])", 200);
  EXPECT_EQ(batch["accepted"], 3);
  EXPECT_EQ(batch["repeated"], 1);
  EXPECT_EQ(s.service->history_observed(), 3u);  // "a" once, and the outcome without a job_id
  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("ttlpred_outcomes_repeated_total 50\n"), std::string::npos);
}

// What the history learnt survives a restart: a repeat after the snapshot (and one after a
// journal replay without a snapshot) is still recognized.
TEST(OutcomeTrust, RepeatsAreRecognizedAfterARestart) {
  const std::string dir = test::temp_dir() + "/journal";
  serve::ServiceOptions o = test::options_for(test::shared_test_model());
  o.journal_dir = dir;
  o.snapshot_every = 0;
  {
    serve::Service first(o);
    ASSERT_EQ(first.outcomes(R"({"job_id":1,"user":"a","wall_s":10})").status, 200);
    first.snapshot_now();
    ASSERT_EQ(first.outcomes(R"({"job_id":2,"user":"a","wall_s":20})").status, 200);  // in the journal only
    EXPECT_EQ(first.history_observed(), 2u);
  }
  serve::Service second(o);
  EXPECT_EQ(second.history_observed(), 2u);
  for (const char* again : {R"({"job_id":1,"user":"a","wall_s":10})", R"({"job_id":2,"user":"a","wall_s":20})"}) {
    const auto reply = second.outcomes(again);
    ASSERT_EQ(reply.status, 200);
    EXPECT_EQ(json::parse(reply.body)["repeated"], 1) << again;
  }
  EXPECT_EQ(second.history_observed(), 2u);
  EXPECT_EQ(json::parse(second.outcomes(R"({"job_id":3,"user":"a","wall_s":30})").body)["repeated"], 0);
}

}  // namespace
}  // namespace ttlpred
