// History features at match time (PredictionTime::Match): outcomes known at a job's start
// (submit + wait) and the jobs of its keys running then. Hand-computed values, the leak-free
// rule as the issue states it (removing every job that starts after j and hiding the end of
// every job running at j's start leaves j's features bit for bit), the incremental path
// against the batch walk, and the file formats (submit-time files keep their old bytes).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "features/censored_mean.hpp"
#include "features/encoder.hpp"
#include "features/history.hpp"
#include "feature_test_table.hpp"
#include "history_replay.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kPerKey = kBaseHistoryStats + kRunningStats;  // no ratio or work statistics

float f(double v) { return static_cast<float>(v); }

using test::add_timed_job;

// Rows in table order. start = submit + wait (unknown wait: 0), finish = start + wall.
JobTable hand_table() {
  JobTable t;
  add_timed_job(t, 0, 10, 100, "u1");    // 0 A: start 10, finish 110
  add_timed_job(t, 5, 0, 20, "u1");      // 1 B: start 5, finish 25
  add_timed_job(t, 20, 30, 1000, "u1");  // 2 C: start 50, finish 1050
  add_timed_job(t, 40, 60, 5, "u2");     // 3 D: start 100, finish 105
  add_timed_job(t, 30, 90, 50, "u1");    // 4 E: start 120, finish 170
  add_timed_job(t, 120, 0, 30, "u1");    // 5 F: start 120 (tied with E), finish 150
  add_timed_job(t, 200, kNaN, kNaN, "u1");  // 6 G: start 200, run time never known: running from then on
  add_timed_job(t, 300, 0, 10, "u1");    // 7 H: start 300
  return t;
}

HistoryConfig hand_config() {
  HistoryConfig c = test::hand_history_config();
  c.at = PredictionTime::Match;
  return c;
}

float stat(const HistoryMatrix& m, std::size_t row, std::size_t key, std::size_t s) { return m.row(row)[key * kPerKey + s]; }
float run(const HistoryMatrix& m, std::size_t row, std::size_t key, RunningStat s) {
  return m.row(row)[key * kPerKey + kBaseHistoryStats + static_cast<std::size_t>(s)];
}
constexpr auto kCount = static_cast<std::size_t>(HistoryStat::LogCount);
constexpr auto kMean = static_cast<std::size_t>(HistoryStat::LogMeanLastK);
constexpr auto kLast = static_cast<std::size_t>(HistoryStat::LogLast);

TEST(HistoryMatch, HandComputedExample) {
  const JobTable t = hand_table();
  const HistoryConfig cfg = hand_config();
  ASSERT_EQ(cfg.width(), 2 * kPerKey);
  const HistoryMatrix m = compute_history(t, cfg);
  constexpr std::size_t kAll = 0, kUser = 1;

  // B starts first: nothing finished, nothing running.
  EXPECT_EQ(stat(m, 1, kUser, kCount), 0.0f);
  EXPECT_EQ(run(m, 1, kUser, RunningStat::LogCount), 0.0f);
  EXPECT_TRUE(std::isnan(run(m, 1, kUser, RunningStat::LogMaxElapsed)));
  // A at 10: B is running (started 5): elapsed 5.
  EXPECT_EQ(run(m, 0, kUser, RunningStat::LogCount), f(std::log1p(1.0)));
  EXPECT_EQ(run(m, 0, kUser, RunningStat::LogMaxElapsed), f(std::log1p(5.0)));
  EXPECT_EQ(run(m, 0, kUser, RunningStat::LogMedianElapsed), f(std::log1p(5.0)));

  // E at 120 (submitted at 30, when only B had finished): B (25) and A (110) finished for u1,
  // and D (105) too for All; C (started 50) is running, elapsed 70; F starts in the same
  // second and is not seen.
  for (std::size_t row : {4u, 5u}) {
    EXPECT_EQ(stat(m, row, kUser, kCount), f(std::log1p(2.0))) << row;
    EXPECT_EQ(stat(m, row, kUser, kMean), f(std::log1p(60.0))) << row;
    EXPECT_EQ(stat(m, row, kUser, kLast), f(std::log1p(100.0))) << row;
    EXPECT_EQ(stat(m, row, kAll, kCount), f(std::log1p(3.0))) << row;
    EXPECT_EQ(run(m, row, kUser, RunningStat::LogCount), f(std::log1p(1.0))) << row;
    EXPECT_EQ(run(m, row, kUser, RunningStat::LogMaxElapsed), f(std::log1p(70.0))) << row;
    EXPECT_EQ(run(m, row, kUser, RunningStat::LogMedianElapsed), f(std::log1p(70.0))) << row;
  }

  // H at 300: B, A, F (150), E (170) finished for u1 (last two: 30 and 50); C (elapsed 250)
  // and G (elapsed 100, no run time ever) are running: median elapsed (250 + 100) / 2.
  EXPECT_EQ(stat(m, 7, kUser, kCount), f(std::log1p(4.0)));
  EXPECT_EQ(stat(m, 7, kUser, kMean), f(std::log1p(40.0)));
  EXPECT_EQ(stat(m, 7, kAll, kCount), f(std::log1p(5.0)));
  for (std::size_t key : {kAll, kUser}) {
    EXPECT_EQ(run(m, 7, key, RunningStat::LogCount), f(std::log1p(2.0)));
    EXPECT_EQ(run(m, 7, key, RunningStat::LogMaxElapsed), f(std::log1p(250.0)));
    EXPECT_EQ(run(m, 7, key, RunningStat::LogMedianElapsed), f(std::log1p(175.0)));
  }
  // D at 100, u2's only job: All has B finished (25) and A, C running (elapsed 90 and 50,
  // median 70); u2 has nothing.
  EXPECT_EQ(stat(m, 3, kAll, kCount), f(std::log1p(1.0)));
  EXPECT_EQ(run(m, 3, kAll, RunningStat::LogCount), f(std::log1p(2.0)));
  EXPECT_EQ(run(m, 3, kAll, RunningStat::LogMaxElapsed), f(std::log1p(90.0)));
  EXPECT_EQ(run(m, 3, kAll, RunningStat::LogMedianElapsed), f(std::log1p(70.0)));
  EXPECT_EQ(stat(m, 3, kUser, kCount), 0.0f);
  EXPECT_EQ(run(m, 3, kUser, RunningStat::LogCount), 0.0f);
}

TEST(HistoryMatch, ASubmitTimeConfigurationWalkedAtMatchSeesTheOutcomesKnownAtTheStart) {
  const JobTable t = hand_table();
  HistoryConfig cfg = hand_config();
  cfg.at = PredictionTime::Submit;
  constexpr std::size_t kSubmitPerKey = kBaseHistoryStats;
  const HistoryMatrix at_submit = compute_history(t, cfg);
  const HistoryMatrix at_match = compute_history(t, cfg, PredictionTime::Match);
  ASSERT_EQ(at_match.width, 2 * kSubmitPerKey);
  // E: submitted at 30 (only B finished), started at 120 (B and A finished for u1).
  EXPECT_EQ(at_submit.row(4)[kSubmitPerKey + kCount], f(std::log1p(1.0)));
  EXPECT_EQ(at_match.row(4)[kSubmitPerKey + kCount], f(std::log1p(2.0)));
  // A configuration made for match time has no meaning at submit time.
  EXPECT_THROW(compute_history(t, hand_config(), PredictionTime::Submit), Error);
}

TEST(HistoryMatch, ARunningJobCountsUntilTheLongestRunTimeTheStatisticsAccept) {
  HistoryConfig cfg = hand_config();
  HistoryState s(cfg);
  JobRecord r;
  r.text(Field::User) = "u1";
  const JobKeys keys = job_keys(r);
  ASSERT_TRUE(s.start_running(1, keys, 1000.0));
  EXPECT_FALSE(s.start_running(1, keys, 2000.0));  // already running
  EXPECT_FALSE(s.start_running(2, keys, kNaN));
  std::vector<float> out(cfg.width());
  const std::size_t count_at = kPerKey + kBaseHistoryStats;  // user key's running count
  s.features(keys, cfg.amounts_of(r), out.data(), 1000.0);
  EXPECT_EQ(out[count_at], 0.0f);  // same second: not seen
  s.features(keys, cfg.amounts_of(r), out.data(), 1000.0 + kMaxHistoryWallS - 1);
  EXPECT_EQ(out[count_at], f(std::log1p(1.0)));
  s.features(keys, cfg.amounts_of(r), out.data(), 1000.0 + kMaxHistoryWallS);
  EXPECT_EQ(out[count_at], 0.0f);
  EXPECT_TRUE(s.stop_running(1));
  EXPECT_FALSE(s.stop_running(1));
  EXPECT_EQ(s.running(), 0u);
}

double start_of(std::span<const double> submit, std::span<const double> wait, std::size_t i) {
  return submit[i] + (std::isnan(wait[i]) || wait[i] < 0 ? 0.0 : wait[i]);
}

// The leak-free rule at match time, as the issue states it: j's features do not change when
// every job that starts after it is removed and the end of every job running at its start
// is hidden (its run time unknown).
class HistoryMatchBoth : public ::testing::TestWithParam<bool> {};  // param: censored_rates
INSTANTIATE_TEST_SUITE_P(CensoredRates, HistoryMatchBoth, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "with" : "without"; });

// How many rows of `m` (made with cfg.censored_rates) have a work-rate estimate that the
// running jobs moved: one that differs from the plain estimate of the same table.
std::size_t rows_moved_by_censoring(const JobTable& t, const HistoryMatrix& m, const HistoryConfig& cfg) {
  HistoryConfig plain_cfg = cfg;
  plain_cfg.censored_rates = false;
  const HistoryMatrix plain = compute_history(t, plain_cfg);
  std::size_t n = 0;
  for (std::size_t r = 0; r < m.rows; ++r) {
    bool moved = false;
    for (std::size_t k = 0; k < cfg.keys.size(); ++k)
      for (std::size_t w = 0; w < cfg.work_fields.size(); ++w) {
        const std::size_t c = k * cfg.stats_per_key() + cfg.work_offset() + kWorkStatsPerField * w +
                              static_cast<std::size_t>(WorkStat::RateTimesWorkHours);
        moved = moved || m.row(r)[c] != plain.row(r)[c];
      }
    n += moved ? 1 : 0;
  }
  return n;
}

TEST_P(HistoryMatchBoth, FeaturesDoNotChangeWhenLaterStartsAreRemovedAndRunningEndsHidden) {
  const JobTable t = test::random_feature_table(1500, 7);
  const HistoryConfig cfg = test::match_time_config(t, GetParam());
  const HistoryMatrix full = compute_history(t, cfg);
  const auto submit = t.num(Field::SubmitTime), wait = t.num(Field::WaitTime), wall = t.num(Field::WallTime);
  const std::size_t all_running = cfg.running_offset() + static_cast<std::size_t>(RunningStat::LogCount);

  std::size_t checked = 0, with_running = 0, with_history = 0;
  for (std::size_t j = 0; j < t.rows(); j += 7) {
    if (std::isnan(submit[j])) continue;
    const double s_j = start_of(submit, wait, j);
    std::vector<std::size_t> kept;
    std::size_t j_in_kept = 0;
    for (std::size_t i = 0; i < t.rows(); ++i) {
      if (std::isnan(submit[i]) || start_of(submit, wait, i) > s_j) continue;
      if (i == j) j_in_kept = kept.size();
      kept.push_back(i);
    }
    JobTable past = t.select(kept);
    auto past_wall = past.num_mut(Field::WallTime);
    std::size_t hidden = 0;
    for (std::size_t k = 0; k < kept.size(); ++k) {
      const std::size_t i = kept[k];
      if (!std::isnan(wall[i]) && start_of(submit, wait, i) + wall[i] <= s_j) continue;  // known by then
      past_wall[k] = kNaN;
      ++hidden;
    }
    const HistoryMatrix m = compute_history(past, cfg);
    ASSERT_TRUE(test::same_bits(full.row(j), m.row(j_in_kept), cfg.width())) << "job " << j << ", " << hidden << " hidden";
    ++checked;
    if (full.row(j)[0] > 0) ++with_history;
    if (full.row(j)[all_running] > 0) ++with_running;
  }
  EXPECT_GT(checked, 200u);
  EXPECT_GT(with_history, checked / 2);  // the check is not vacuous
  EXPECT_GT(with_running, checked / 2);  // nor for the running statistics
  if (GetParam()) {
    EXPECT_GT(rows_moved_by_censoring(t, full, cfg), t.rows() / 4);  // nor for the censored rates
  }
}

// The service's path (start events, finished jobs, then features for the job being matched)
// gives the batch walk's numbers bit for bit.
TEST_P(HistoryMatchBoth, IncrementalStateMatchesBatch) {
  const JobTable t = test::random_feature_table(600, 3);
  const HistoryConfig cfg = test::match_time_config(t, GetParam());
  const HistoryMatrix batch = compute_history(t, cfg);
  const auto submit = t.num(Field::SubmitTime), wait = t.num(Field::WaitTime), wall = t.num(Field::WallTime);
  std::vector<test::HistoryEvent> events;  // predictions at each job's start
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (std::isnan(submit[i])) continue;
    const double s = start_of(submit, wait, i);
    events.push_back({s, 1, s, i});
    events.push_back({std::isnan(wall[i]) ? s + kMaxHistoryWallS : s + wall[i], 0, s, i});
  }
  HistoryState state(cfg);
  const std::size_t compared = test::replay_and_compare(
      t, state, batch, events,
      [&](const test::HistoryEvent& e, const JobRecord& r) {
        EXPECT_TRUE(state.stop_running(e.row));
        state.observe(r);
      },
      // Features as of the job's prediction time, its start; then it runs.
      [&](const test::HistoryEvent& e, const JobRecord& r) {
        EXPECT_TRUE(state.start_running(e.row, job_keys(r), e.at, cfg.amounts_of(r)));
      });
  EXPECT_GT(compared, 500u);
  if (GetParam()) {
    EXPECT_GT(rows_moved_by_censoring(t, batch, cfg), t.rows() / 4);
  }
  EXPECT_EQ(state.running(), 0u);
}

TEST_P(HistoryMatchBoth, TheRunningSetSurvivesSaveAndRestore) {
  const JobTable t = test::random_feature_table(300, 9);
  const HistoryConfig cfg = test::match_time_config(t, GetParam());
  const std::uint32_t version = GetParam() ? 5 : 4;
  HistoryState state(cfg);
  compute_history(t, state);
  JobRecord r;
  for (std::size_t i = 0; i < 40; ++i) {
    t.record(i, r);
    ASSERT_TRUE(state.start_running(1000 + i, job_keys(r), 1e6 + static_cast<double>(i % 7), cfg.amounts_of(r)));
  }
  const auto bytes = state.to_bytes();
  EXPECT_EQ(open_container(bytes, "TTLHIST", 5, "state").version, version);
  const HistoryState restored = HistoryState::from_bytes(bytes, "state");
  EXPECT_EQ(restored.running(), 40u);
  EXPECT_TRUE(restored.is_running(1005));
  EXPECT_EQ(restored.config(), cfg);
  EXPECT_EQ(restored.to_bytes(), bytes);
  std::vector<float> a(cfg.width()), b(cfg.width());
  for (std::size_t i = 0; i < 60; ++i) {
    t.record(i, r);
    state.features(r, 1e6 + 500, a.data());
    restored.features(r, 1e6 + 500, b.data());
    ASSERT_TRUE(test::same_bits(a.data(), b.data(), cfg.width())) << i;
  }
  // A damaged running set is refused, naming the file.
  auto payload = open_container(bytes, "TTLHIST", 5, "state").payload;
  payload.push_back(0);
  EXPECT_THROW(HistoryState::from_bytes(seal_container("TTLHIST", version, payload), "padded"), Error);
}

TEST(HistoryMatch, SubmitTimeFilesKeepTheirFormatVersions) {
  const JobTable t = test::random_feature_table(200, 4);
  HistoryConfig cfg = HistoryConfig::for_table(t);
  HistoryState submit_state(cfg);
  compute_history(t, submit_state);
  EXPECT_EQ(open_container(submit_state.to_bytes(), "TTLHIST", 4, "s").version, 3u);
  cfg.at = PredictionTime::Match;
  HistoryState match_state(cfg);
  compute_history(t, match_state);
  EXPECT_EQ(open_container(match_state.to_bytes(), "TTLHIST", 4, "m").version, 4u);
  EXPECT_EQ(HistoryState::from_bytes(match_state.to_bytes(), "m").config().at, PredictionTime::Match);
  EXPECT_EQ(HistoryState::from_bytes(submit_state.to_bytes(), "s").config().at, PredictionTime::Submit);
}

TEST(HistoryMatch, FeatureNamesEndEachKeyWithTheRunningStatistics) {
  HistoryConfig cfg = hand_config();
  const auto names = cfg.feature_names();
  ASSERT_EQ(names.size(), cfg.width());
  EXPECT_EQ(names[kBaseHistoryStats], "h_all_run_log_count");
  EXPECT_EQ(names[kPerKey - 1], "h_all_run_log_median_elapsed");
  EXPECT_EQ(names[2 * kPerKey - 2], "h_user_run_log_max_elapsed");
  EXPECT_EQ(prediction_time_by_name("match"), PredictionTime::Match);
  EXPECT_EQ(prediction_time_by_name("submit"), PredictionTime::Submit);
  EXPECT_FALSE(prediction_time_by_name("later").has_value());
}

// A hand-made case: u0's 12 finished jobs (log rates 0 and 1 in turn) give the User pool its
// degrees of freedom; u1 has two finished jobs and three running ones. The work-rate
// estimate, exp(mu + sigma^2 / 2) x work with sigma^2 the shrunk spread and mu the censored
// MLE, is recomputed here from the definitions in history.hpp.
TEST(HistoryMatch, HandComputedCensoredWorkRate) {
  HistoryConfig cfg;
  cfg.keys = {HistoryKey::User};
  cfg.work_fields = {Field::Events};
  cfg.at = PredictionTime::Match;
  cfg.censored_rates = true;
  HistoryState state(cfg);
  auto keys_of = [](const char* user, const char* type) {
    JobRecord r;
    r.text(Field::User) = user;
    r.text(Field::JobType) = type;
    return job_keys(r);
  };
  auto amounts = [](double work) {
    JobAmounts a;
    a.work[0] = work;
    return a;
  };
  // u0: wall 100 s or 100 e s on work 100: log rates 0 and 1 in turn.
  std::vector<double> u0;
  for (int i = 0; i < 12; ++i) {
    const double wall = i % 2 == 0 ? 100.0 : 100.0 * std::exp(1.0);
    ASSERT_TRUE(state.observe(keys_of("u0", "MC"), wall, amounts(100.0)));
    u0.push_back(std::log(wall) - std::log(100.0));
  }
  // u1: finished runs of 50 s and 80 s on work 10; running: started at 900, 950 (work 10)
  // and 990 (work unknown: not a bound).
  ASSERT_TRUE(state.observe(keys_of("u1", "MC"), 50.0, amounts(10.0)));
  ASSERT_TRUE(state.observe(keys_of("u1", "MC"), 80.0, amounts(10.0)));
  ASSERT_TRUE(state.start_running(1, keys_of("u1", "MC"), 900.0, amounts(10.0)));
  ASSERT_TRUE(state.start_running(2, keys_of("u1", "MC"), 950.0, amounts(10.0)));
  ASSERT_TRUE(state.start_running(3, keys_of("u1", "MC"), 990.0, amounts(kMissingNumber)));

  auto sq_dev = [](const std::vector<double>& x) {
    double mean = 0, s = 0;
    for (double v : x) mean += v / static_cast<double>(x.size());
    for (double v : x) s += (v - mean) * (v - mean);
    return s;
  };
  const std::vector<double> u1{std::log(5.0), std::log(8.0)};
  // Pool: every key's increments, u0's 11 and u1's 1 degrees of freedom.
  const double pooled = (sq_dev(u0) + sq_dev(u1)) / 12.0;
  const double var = (sq_dev(u1) + kSpreadPriorWeight * pooled) / (1.0 + kSpreadPriorWeight);
  const double now = 1000.0, work = 20.0;
  const std::vector<double> bounds{std::log(100.0 / 10.0), std::log(50.0 / 10.0)};
  const double mu = censored_normal_mean((u1[0] + u1[1]) / 2, 2, bounds, std::sqrt(var));
  EXPECT_GT(mu, (u1[0] + u1[1]) / 2);

  const std::size_t hours = cfg.work_offset() + static_cast<std::size_t>(WorkStat::RateTimesWorkHours);
  const std::size_t log = cfg.work_offset() + static_cast<std::size_t>(WorkStat::LogRateTimesWork);
  std::vector<float> out(cfg.width());
  state.features(keys_of("u1", "MC"), amounts(work), out.data(), now);
  const double want_s = std::exp(mu + var / 2) * work;
  EXPECT_NEAR(out[hours], want_s / 3600.0, 1e-6 * out[hours]);
  EXPECT_NEAR(out[log], std::log1p(want_s), 1e-6);
  // Another type's pool is young (no degrees of freedom): the kind's pool of all types stands in.
  std::vector<float> other(cfg.width());
  state.features(keys_of("u1", "RAW_RECO"), amounts(work), other.data(), now);
  EXPECT_EQ(other[hours], out[hours]);
  // Without running jobs (before the first start) mu is the plain mean of the log rates.
  state.features(keys_of("u1", "MC"), amounts(work), out.data(), 800.0);
  EXPECT_NEAR(out[hours], std::exp((u1[0] + u1[1]) / 2 + var / 2) * work / 3600.0, 1e-6 * out[hours]);
  // Unknown work: unknown statistic; a key that never finished: unknown.
  state.features(keys_of("u1", "MC"), amounts(kMissingNumber), out.data(), now);
  EXPECT_TRUE(std::isnan(out[hours]));
  state.features(keys_of("u9", "MC"), amounts(work), out.data(), now);
  EXPECT_TRUE(std::isnan(out[hours]));
  EXPECT_EQ(cfg.feature_names()[hours], "h_user_cens_rate_x_events_hours");
  EXPECT_EQ(cfg.feature_names()[log], "h_user_log_cens_rate_x_events");
  // Only at match time.
  cfg.at = PredictionTime::Submit;
  EXPECT_THROW(cfg.validate(), Error);
}

TEST(HistoryMatch, EncodersRecordThePredictionTimeAndSubmitTimeOnesKeepVersionTwo) {
  const JobTable t = test::random_feature_table(400, 6);
  std::vector<std::size_t> rows(t.rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  for (int variant = 0; variant < 3; ++variant) {  // submit, match, match with censored rates
    HistoryConfig cfg = HistoryConfig::for_table(t);
    cfg.at = variant > 0 ? PredictionTime::Match : PredictionTime::Submit;
    cfg.censored_rates = variant == 2;
    const HistoryMatrix h = compute_history(t, cfg);
    const FeatureEncoder e = FeatureEncoder::fit(t, rows, &h, &cfg, EncoderOptions{});
    const auto bytes = e.to_bytes();
    EXPECT_EQ(open_container(bytes, "TTLENC", 4, "e").version, static_cast<std::uint32_t>(2 + variant));
    const FeatureEncoder back = FeatureEncoder::from_bytes(bytes, "e");
    EXPECT_EQ(back.history_config(), cfg);
    EXPECT_EQ(back.to_bytes(), bytes);
  }
}

}  // namespace
}  // namespace ttlpred
