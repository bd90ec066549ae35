// The parts the service learns with, on hand-made inputs: the recent-predictions table's
// eviction, the live quality windows, the Page-Hinkley drift test, the journal record's
// served prediction and the structured log line.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "serve/drift_alarm.hpp"
#include "serve/event_log.hpp"
#include "serve/job_json.hpp"
#include "serve/live_quality.hpp"
#include "serve/outcome_record.hpp"
#include "serve/recent_predictions.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;
using serve::RecentPredictions;

RecentPredictions::Entry entry(std::uint64_t key, double ttl) {
  RecentPredictions::Entry e;
  e.key = key;
  e.served.decision.ttl_s = ttl;
  return e;
}

TEST(RecentPredictions, OldestAnswerGoesFirstAndARepeatedJobKeepsItsLatestAnswer) {
  RecentPredictions t(3);
  const std::vector<RecentPredictions::Entry> first = {entry(1, 10), entry(2, 20), entry(3, 30)};
  t.record(first);
  EXPECT_EQ(t.size(), 3u);
  const std::vector<RecentPredictions::Entry> fourth = {entry(4, 40)};
  t.record(fourth);  // overwrites job 1's slot
  EXPECT_FALSE(t.find(1));
  EXPECT_EQ(t.evicted(), 1u);
  EXPECT_EQ(t.find(4)->decision.ttl_s, 40);
  const std::vector<RecentPredictions::Entry> again = {entry(3, 33)};  // slot of job 2
  t.record(again);
  EXPECT_FALSE(t.find(2));
  EXPECT_EQ(t.evicted(), 2u);
  EXPECT_EQ(t.find(3)->decision.ttl_s, 33);  // the latest answer
  EXPECT_EQ(t.size(), 2u);                   // jobs 3 and 4; job 3's first answer holds a dead slot
  const std::vector<RecentPredictions::Entry> next = {entry(5, 50)};  // the dead slot: no eviction
  t.record(next);
  EXPECT_EQ(t.evicted(), 2u);
  EXPECT_EQ(t.size(), 3u);
  t.erase(3);
  EXPECT_FALSE(t.find(3));
  EXPECT_EQ(t.size(), 2u);

  RecentPredictions none(0);
  none.record(next);
  EXPECT_FALSE(none.find(5));
}

TEST(RecentPredictions, JobKeysTellIntegersFromStringsAndJobsWithoutAnId) {
  JobRecord a, b, c;
  a[Field::JobId] = 17;
  b.text(Field::JobId) = "17";
  EXPECT_EQ(serve::job_key(a), std::optional<std::uint64_t>(17));
  ASSERT_TRUE(serve::job_key(b));
  EXPECT_NE(*serve::job_key(b), 17u);
  EXPECT_FALSE(serve::job_key(c));
}

serve::ScoredOutcome scored(double at, double wall, double expected, double safe, double req) {
  return {at, wall, expected, safe, req};
}

TEST(LiveQuality, WindowsGiveTheHandComputedFigures) {
  serve::LiveQuality q;
  const double t0 = 1.8e9;  // a whole minute
  q.add(scored(t0, 100, 100, 200, 0));              // covered
  q.add(scored(t0 + 5, 7200, 3600, 5000, 10000));   // killed
  q.add(scored(t0 + 3600, 12000, 3600, 5000, 10000));  // outran its request: not killed, not covered
  q.add(scored(t0 + 7200, 1800, 3600, 7200, 14400));   // covered
  const serve::QualityFigures f = q.last(1000);
  EXPECT_EQ(f.outcomes, 4u);
  EXPECT_EQ(f.kill_rate, 0.25);
  EXPECT_EQ(f.coverage, 0.5);
  EXPECT_NEAR(f.rmse_h, std::sqrt((0 + 1 + (8400.0 / 3600) * (8400.0 / 3600) + 0.25) / 4), 1e-12);
  EXPECT_NEAR(f.mean_log_error, std::log(0.3) / 4, 1e-12);
  EXPECT_EQ(f.safe_over_request, 0.5);  // 17200 / 34400
  // The last hour at t0 + 7200 holds the fourth only; at t0 + 3630 the third only; the day all.
  EXPECT_EQ(q.within(t0 + 7200, 3600).outcomes, 1u);
  EXPECT_EQ(q.within(t0 + 7200, 3600).coverage, 1.0);
  EXPECT_EQ(q.within(t0 + 3630, 3600).outcomes, 1u);
  EXPECT_EQ(q.within(t0 + 3630, 3600).kill_rate, 0.0);
  EXPECT_EQ(q.within(t0 + 7200, 86400).outcomes, 4u);
  EXPECT_EQ(q.within(t0 + 86400 + 60, 86400).outcomes, 2u);  // the first minute (two outcomes) has left the day
  EXPECT_EQ(q.last(2).outcomes, 2u);
  EXPECT_EQ(q.last(2).kill_rate, 0.0);
  EXPECT_TRUE(std::isnan(serve::LiveQuality().last(1000).safe_over_request));
}

TEST(LiveQuality, TheThousandWindowForgetsWhatTheTenThousandKeeps) {
  serve::LiveQuality q;
  q.add(scored(0, 200, 100, 150, 0));  // killed
  for (int i = 0; i < 1000; ++i) q.add(scored(0, 100, 100, 150, 0));
  EXPECT_EQ(q.last(1000).kill_rate, 0.0);
  EXPECT_EQ(q.last(10000).outcomes, 1001u);
  EXPECT_EQ(q.last(10000).kill_rate, 1.0 / 1001);
  // Its state restores to the same figures.
  BinaryWriter w;
  q.write_state(w);
  serve::LiveQuality back;
  BinaryReader r(w.bytes(), "state");
  back.read_state(r);
  EXPECT_EQ(back.last(10000).kill_rate, 1.0 / 1001);
  EXPECT_EQ(back.last(1000).outcomes, 1000u);
}

TEST(PageHinkley, RaisesOnTheHandComputedStepAndRestarts) {
  serve::PageHinkley ph({0.1, 1.0, 1});
  EXPECT_FALSE(ph.add(0));
  EXPECT_FALSE(ph.add(0));
  EXPECT_FALSE(ph.add(1));  // mean 1/3: up = 1 - 1/3 - 0.1
  EXPECT_NEAR(ph.up(), 1 - 1.0 / 3 - 0.1, 1e-12);
  EXPECT_EQ(ph.down(), 0.0);
  EXPECT_FALSE(ph.add(1));  // mean 1/2: up += 1 - 0.5 - 0.1
  EXPECT_NEAR(ph.up(), 1 - 1.0 / 3 - 0.1 + 0.4, 1e-12);
  EXPECT_TRUE(ph.add(1));  // mean 0.6: up = 0.9667 + 0.3 > 1
  EXPECT_NEAR(ph.last_alarm().up, 1 - 1.0 / 3 - 0.1 + 0.4 + 0.3, 1e-12);
  EXPECT_EQ(ph.last_alarm().count, 5u);
  EXPECT_EQ(ph.count(), 0u);
  EXPECT_EQ(ph.up(), 0.0);
  // Downwards alike; and no alarm before min_outcomes.
  serve::PageHinkley down({0.1, 1.0, 1, serve::DriftScope::Group, serve::DriftDirection::Both});
  EXPECT_FALSE(down.add(0));
  EXPECT_FALSE(down.add(-1));  // mean -0.5: down = -0.5 + 1 - 0.1
  EXPECT_NEAR(down.down(), 0.4, 1e-12);
  EXPECT_FALSE(down.add(-1));  // mean -2/3: down += -2/3 + 1 - 0.1
  EXPECT_NEAR(down.down(), 0.4 + 1.0 / 3 - 0.1, 1e-12);
  // Then + 1/4, 1/5, 1/6, 1/7 (each less 0.1): 0.9929 after the seventh, 1.0179 after the eighth.
  for (int i = 4; i <= 7; ++i) EXPECT_FALSE(down.add(-1)) << i;
  EXPECT_TRUE(down.add(-1));
  // Watching the longer direction alone (the default), the same residuals raise nothing.
  serve::PageHinkley longer({0.1, 1.0, 1});
  for (int i = 1; i <= 8; ++i) EXPECT_FALSE(longer.add(i == 1 ? 0 : -1)) << i;
  EXPECT_NEAR(longer.down(), 1.0179, 1e-4);
}

TEST(PageHinkley, NeedsItsMinimumOfOutcomes) {
  serve::PageHinkley ph({0.1, 1.0, 10});
  for (int i = 0; i < 9; ++i) EXPECT_FALSE(ph.add(i < 2 ? 0 : 5)) << i;
  EXPECT_TRUE(ph.add(5));
}

TEST(OutcomeRecord, ServedPredictionRoundTripsBitForBitAndOldLinesReadAsUnmatched) {
  serve::ServedPrediction s;
  s.predicted_at = 1764621845.123;
  const std::string v = "0123456789abcdef";
  std::copy(v.begin(), v.end(), s.model_version.begin());
  s.method = OnlineMethod::MultiAci;
  s.decision.job.pred_s = 1234.5678901234567;
  s.decision.job.requested_s = 72000;
  s.decision.job.group = 3;
  s.decision.job.key = 77;
  s.decision.ttl_s = 4321.0987654321;
  s.decision.level = 0.005515;
  for (std::size_t k = 0; k < s.decision.expert_ttl_s.size(); ++k) s.decision.expert_ttl_s[k] = 1000.0 / 3 + k;
  std::string line;
  serve::append_outcome_line(line, json::parse(R"({"job_id":5,"wall_s":60})"), 1764621900.5, v, s);
  ASSERT_EQ(line.back(), '\n');
  const serve::OutcomeRecord r = serve::read_outcome_record(json::parse(line));
  EXPECT_EQ(r.outcome, json::parse(R"({"job_id":5,"wall_s":60})"));
  EXPECT_EQ(*r.received_at, 1764621900.5);
  EXPECT_EQ(r.model_version, v);
  ASSERT_TRUE(r.served);
  EXPECT_EQ(r.served->method, OnlineMethod::MultiAci);
  EXPECT_EQ(r.served->decision.job.pred_s, s.decision.job.pred_s);
  EXPECT_EQ(r.served->decision.ttl_s, s.decision.ttl_s);
  EXPECT_EQ(r.served->decision.level, s.decision.level);
  EXPECT_EQ(r.served->decision.job.group, 3u);
  EXPECT_EQ(r.served->decision.job.key, 77u);
  EXPECT_EQ(r.served->decision.expert_ttl_s, s.decision.expert_ttl_s);
  EXPECT_EQ(r.served->predicted_at, s.predicted_at);

  line.clear();
  serve::append_outcome_line(line, json::parse("{}"), 1, v, std::nullopt);
  EXPECT_EQ(line, "{\"received_at\":1,\"model_version\":\"0123456789abcdef\",\"served\":null}\n");
  const serve::OutcomeRecord old = serve::read_outcome_record(json::parse(R"({"user":"a","wall_s":5})"));
  EXPECT_FALSE(old.served);
  EXPECT_FALSE(old.received_at);
  EXPECT_EQ(old.outcome, json::parse(R"({"user":"a","wall_s":5})"));
  try {
    serve::read_outcome_record(json::parse(R"({"wall_s":5,"served":{"model_version":"x"}})"));
    FAIL() << "a malformed served prediction was read";
  } catch (const serve::RequestError& e) {
    EXPECT_EQ(e.field(), "served.model_version");
  }
}

TEST(EventLog, LineHasTimestampLevelEventAndFields) {
  EXPECT_EQ(serve::event_line(1764621845.123, "info", "reload", {{"path", "/m"}}),
            R"({"ts":"2025-12-01T20:44:05.123Z","level":"info","event":"reload","path":"/m"})");
}

}  // namespace
}  // namespace ttlpred
