#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "features/history.hpp"
#include "feature_test_table.hpp"
#include "history_replay.hpp"
#include "test_support.hpp"
#include "util/file_io.hpp"

namespace ttlpred {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kStats = kRatioHistoryStats;

float f(double v) { return static_cast<float>(v); }
float stat(const HistoryMatrix& m, std::size_t row, std::size_t key, HistoryStat s) {
  return m.row(row)[key * kStats + static_cast<std::size_t>(s)];
}

// Key `key` at row `row` has seen `count` finished jobs, the latest of `last` seconds (NaN:
// an empty history, whose last value is unknown).
void expect_count_and_last(const HistoryMatrix& m, std::size_t row, std::size_t key, double count, double last) {
  EXPECT_EQ(stat(m, row, key, HistoryStat::LogCount), f(std::log1p(count))) << "row " << row << ", key " << key;
  const float got = stat(m, row, key, HistoryStat::LogLast);
  if (std::isnan(last))
    EXPECT_TRUE(std::isnan(got)) << "row " << row << ", key " << key << ": " << got;
  else
    EXPECT_EQ(got, f(std::log1p(last))) << "row " << row << ", key " << key;
}

using test::add_timed_job;

// Rows in table order (not submit order). finish = submit + wait + wall.
JobTable hand_table() {
  JobTable t;
  add_timed_job(t, 120, 0, 50, "u1", 100);       // 0 E
  add_timed_job(t, 0, 10, 100, "u1", 200);       // 1 A: finishes at 110
  add_timed_job(t, 50, kNaN, 30, "u1", 60);      // 2 B: unknown wait = 0, finishes at 80
  add_timed_job(t, 60, 0, 1000, "u2", kNaN);     // 3 C: finishes at 1060
  add_timed_job(t, 100, 0, 7, "u1", 14);         // 4 D: finishes at 107
  add_timed_job(t, 5, 0, kNaN, "u1", 100);       // 5 G: unknown wall, never counts
  add_timed_job(t, 100, 0, 0, "u1", kNaN);       // 6 H: finishes at 100, the second D is submitted
  add_timed_job(t, 110, 0, 20, "u1", 40);        // 7 F: A finishes exactly now: it counts
  add_timed_job(t, 2000, 0, 1, "u2", 10);        // 8 I: everything has finished
  return t;
}

HistoryConfig hand_config() {
  HistoryConfig c = test::hand_history_config();
  c.ratio_stats = true;
  return c;
}

TEST(History, HandComputedExample) {
  const JobTable t = hand_table();
  const HistoryMatrix m = compute_history(t, hand_config());
  ASSERT_EQ(m.rows, 9u);
  ASSERT_EQ(m.width, 2 * kStats);

  // Nothing had finished when A, G, B, C were submitted: count 0, values NaN.
  for (std::size_t row : {1, 5, 2, 3})
    for (std::size_t key : {0, 1}) {
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogCount), 0.0f) << row;
      for (std::size_t s = 1; s < kStats; ++s) EXPECT_TRUE(std::isnan(m.row(row)[key * kStats + s])) << row << " " << s;
    }

  // D and H (t=100) see only B (finished 80); H finishes at 100 too, but jobs submitted in the
  // same second never see each other.
  for (std::size_t row : {4, 6})
    for (std::size_t key : {0, 1}) {
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogCount), f(std::log1p(1.0)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogMeanLastK), f(std::log1p(30.0)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogEwma), f(std::log1p(30.0)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogMax), f(std::log1p(30.0)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogLast), f(std::log1p(30.0)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::MeanLog), f(std::log1p(30.0)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::RatioMeanLastK), 0.5f);
    }
  EXPECT_EQ(stat(m, 4, 1, HistoryStat::LogRatioTimesRequest), f(std::log1p(0.5 * 14)));
  EXPECT_TRUE(std::isnan(stat(m, 6, 1, HistoryStat::LogRatioTimesRequest)));  // H has no request

  // F (t=110) and E (t=120): B(80), H(100), D(107), A(110) in finish order; walls 30, 0, 7, 100.
  const double ewma = 0.5 * 100 + 0.5 * (0.5 * 7 + 0.5 * (0.5 * 0 + 0.5 * 30));  // 55.5
  const double mean_log = (((std::log1p(30.0) + std::log1p(0.0)) + std::log1p(7.0)) + std::log1p(100.0)) / 4;
  for (std::size_t row : {7, 0})
    for (std::size_t key : {0, 1}) {
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogCount), f(std::log1p(4.0)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogMeanLastK), f(std::log1p((7.0 + 100.0) / 2)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogEwma), f(std::log1p(ewma)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogMax), f(std::log1p(100.0)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::LogLast), f(std::log1p(100.0)));
      EXPECT_EQ(stat(m, row, key, HistoryStat::MeanLog), f(mean_log));
      EXPECT_EQ(stat(m, row, key, HistoryStat::RatioMeanLastK), 0.5f);  // last two with a request: D, A
    }
  EXPECT_EQ(stat(m, 7, 1, HistoryStat::LogRatioTimesRequest), f(std::log1p(0.5 * 40)));
  EXPECT_EQ(stat(m, 0, 1, HistoryStat::LogRatioTimesRequest), f(std::log1p(0.5 * 100)));

  // I (t=2000): u2 has only C, which had no request: ratio statistics stay NaN.
  EXPECT_EQ(stat(m, 8, 1, HistoryStat::LogCount), f(std::log1p(1.0)));
  EXPECT_EQ(stat(m, 8, 1, HistoryStat::LogMeanLastK), f(std::log1p(1000.0)));
  EXPECT_TRUE(std::isnan(stat(m, 8, 1, HistoryStat::RatioMeanLastK)));
  EXPECT_TRUE(std::isnan(stat(m, 8, 1, HistoryStat::LogRatioTimesRequest)));
  // All: A B C D H E F (G never finished as far as we know).
  EXPECT_EQ(stat(m, 8, 0, HistoryStat::LogCount), f(std::log1p(7.0)));
  EXPECT_EQ(stat(m, 8, 0, HistoryStat::LogMax), f(std::log1p(1000.0)));
}

// Work rates: log(wall / work) with work = field value / host speed, per work field; a job
// whose work is unknown (missing or zero value, missing speed) neither feeds nor gets them.
void add_work(JobTable& t, double submit, double wall, double events, double files, double speed) {
  JobRecord r;
  r[Field::SubmitTime] = submit;
  r[Field::WaitTime] = 0;
  r[Field::WallTime] = wall;
  r[Field::Events] = events;
  r[Field::InputFiles] = files;
  r[Field::HostSpeed] = speed;
  r.text(Field::User) = "u1";
  t.append(r);
}

TEST(History, HandComputedWorkRates) {
  JobTable t;
  add_work(t, 0, 100, 10, 5, 2);         // 0 A: finishes 100; work: 5 events, 2.5 files
  add_work(t, 0, 200, 20, 4, kNaN);      // 1 B: finishes 200; no speed: no work known
  add_work(t, 10, 50, 0, 10, 1);         // 2 C: finishes 60; 0 events: unknown; 10 files
  add_work(t, 5, 0, 4, kNaN, 1);         // 3 D: finishes 5; wall 0 counts as 1 s; 4 events
  add_work(t, 20, 100, 100, kNaN, 1);    // 4 F: finishes 120; 100 events
  add_work(t, 1000, 7, 8, 3, 0.5);       // 5 E: work 16 events, 6 files
  add_work(t, 1000, 7, 8, 3, kNaN);      // 6 G: no speed: no work, so no estimate
  add_work(t, 6, 5000, 8, 3, 1);         // 7: sees only D; finishes after E's submission
  HistoryConfig c;
  c.keys = {HistoryKey::User};
  c.last_k = 2;
  c.work_fields = {Field::Events, Field::InputFiles};
  c.work_per_speed = true;
  ASSERT_EQ(c.stats_per_key(), kBaseHistoryStats + 4);
  const auto names = c.feature_names();
  ASSERT_EQ(names.size(), c.width());
  EXPECT_EQ(names[6], "h_user_log_rate_x_events");
  EXPECT_EQ(names[7], "h_user_rate_x_events_hours");
  EXPECT_EQ(names[8], "h_user_log_rate_x_input_files");
  EXPECT_EQ(names[9], "h_user_rate_x_input_files_hours");

  const HistoryMatrix m = compute_history(t, c);
  auto at = [&](std::size_t row, std::size_t s) { return m.row(row)[s]; };
  for (std::size_t s = 6; s < 10; ++s) EXPECT_TRUE(std::isnan(at(3, s))) << s;  // nothing finished
  // Row 7 (t=6): D only; events rate log(1/4), no file rate yet.
  const double d = std::log(1.0) - std::log(4.0);
  EXPECT_FLOAT_EQ(at(7, 6), f(std::log1p(std::exp(d) * 8)));
  EXPECT_FLOAT_EQ(at(7, 7), f(std::exp(d) * 8 / 3600));
  EXPECT_TRUE(std::isnan(at(7, 8)));
  EXPECT_TRUE(std::isnan(at(7, 9)));
  // E (t=1000): finish order D, C, A, F, B. Events: D, A, F; files: C, A.
  const double a_e = std::log(100.0) - std::log(5.0), f_e = std::log(100.0) - std::log(100.0);
  const double c_f = std::log(50.0) - std::log(10.0), a_f = std::log(100.0) - std::log(2.5);
  EXPECT_EQ(at(5, 0), f(std::log1p(5.0)));
  const double rate_e = std::exp(((d + a_e) + f_e) / 3), rate_f = std::exp((c_f + a_f) / 2);
  EXPECT_FLOAT_EQ(at(5, 6), f(std::log1p(rate_e * 16)));
  EXPECT_FLOAT_EQ(at(5, 7), f(rate_e * 16 / 3600));
  EXPECT_FLOAT_EQ(at(5, 8), f(std::log1p(rate_f * 6)));
  EXPECT_FLOAT_EQ(at(5, 9), f(rate_f * 6 / 3600));
  // By hand: events rates 1/4, 20, 1 (geometric mean 5^(1/3)); file rates 5, 40 (sqrt(200)).
  EXPECT_NEAR(rate_e, std::cbrt(5.0), 1e-12);
  EXPECT_NEAR(rate_f, std::sqrt(200.0), 1e-12);
  // G has history but no known work of its own.
  EXPECT_EQ(at(6, 0), f(std::log1p(5.0)));
  for (std::size_t s = 6; s < 10; ++s) EXPECT_TRUE(std::isnan(at(6, s))) << s;

  // The record path gives the same numbers as the batch walk.
  HistoryState state(c);
  JobRecord r;
  for (std::size_t row : {3, 2, 0, 4, 1}) {
    t.record(row, r);
    ASSERT_TRUE(state.observe(r));
  }
  std::vector<float> out(c.width());
  t.record(5, r);
  state.features(r, out.data());
  EXPECT_TRUE(test::same_bits(out.data(), m.row(5), c.width()));
}

TEST(History, UserRequestKeyJoinsOnlyTheSameUserAndRequest) {
  JobTable t;
  add_timed_job(t, 0, 0, 10, "u1", 100);     // 0: finishes at 10
  add_timed_job(t, 0, 0, 20, "u1", 200);     // 1: finishes at 20
  add_timed_job(t, 0, 0, 30, "u2", 100);     // 2: another user, the same request
  add_timed_job(t, 100, 0, 5, "u1", 100);    // 3: sees 0 only
  add_timed_job(t, 100, 0, 5, "u1", 200);    // 4: sees 1 only
  add_timed_job(t, 100, 0, 5, "u1", kNaN);   // 5: no request, no key: an empty history
  add_timed_job(t, 100, 0, 5, "u1", 100.4);  // 6: the request's integer seconds, like master job ids
  HistoryConfig c = hand_config();
  c.keys = {HistoryKey::User, HistoryKey::UserRequest};
  const HistoryMatrix m = compute_history(t, c);
  ASSERT_EQ(m.width, 2 * kStats);
  EXPECT_EQ(stat(m, 3, 0, HistoryStat::LogCount), f(std::log1p(2.0)));  // the user: 0 and 1
  expect_count_and_last(m, 3, 1, 1, 10.0);
  expect_count_and_last(m, 4, 1, 1, 20.0);
  expect_count_and_last(m, 5, 1, 0, kNaN);
  EXPECT_EQ(stat(m, 6, 1, HistoryStat::LogLast), f(std::log1p(10.0)));
  // The table supports the key (training adds it on request: FitOptions::request_key); a
  // table without requests does not.
  EXPECT_EQ(HistoryConfig::for_table(t).keys, (std::vector<HistoryKey>{HistoryKey::All, HistoryKey::User,
                                                                       HistoryKey::UserRequest}));
  JobTable no_requests;
  add_timed_job(no_requests, 0, 0, 10, "u1", kNaN);
  EXPECT_EQ(HistoryConfig::for_table(no_requests).keys, (std::vector<HistoryKey>{HistoryKey::All, HistoryKey::User}));
}

TEST(History, TypeSystemKeyJoinsOnlyTheSameJobTypeAndCollisionSystem) {
  JobTable t;
  auto add_typed = [&](double submit, double wall, const char* type, const char* system) {
    JobRecord r;
    r[Field::SubmitTime] = submit;
    r[Field::WaitTime] = 0;
    r[Field::WallTime] = wall;
    r.text(Field::User) = "u1";
    r.text(Field::JobType) = type;
    r.text(Field::InteractionType) = system;
    t.append(r);
  };
  add_typed(0, 10, "RAW_RECO", "PbPb");  // 0: finishes at 10
  add_typed(0, 20, "RAW_RECO", "pp");    // 1: another system
  add_typed(0, 30, "MC", "PbPb");        // 2: another type
  add_typed(0, 40, "", "PbPb");          // 3: no type: its own (empty type, PbPb) key
  add_typed(100, 5, "RAW_RECO", "PbPb"); // 4: sees 0 only
  add_typed(100, 5, "MC", "PbPb");       // 5: sees 2 only
  add_typed(100, 5, "RAW_RECO", "");     // 6: no system, no key: an empty history
  HistoryConfig c = hand_config();
  c.keys = {HistoryKey::User, HistoryKey::JobTypeSystem};
  const HistoryMatrix m = compute_history(t, c);
  ASSERT_EQ(m.width, 2 * kStats);
  EXPECT_EQ(stat(m, 4, 0, HistoryStat::LogCount), f(std::log1p(4.0)));  // the user: all four
  expect_count_and_last(m, 4, 1, 1, 10.0);
  expect_count_and_last(m, 5, 1, 1, 30.0);
  expect_count_and_last(m, 6, 1, 0, kNaN);
  // One record at a time (job_keys) groups as the table walk does.
  HistoryState s(c);
  JobRecord r;
  for (std::size_t i = 0; i < 4; ++i) {
    t.record(i, r);
    s.observe(r);
  }
  std::vector<float> row(c.width());
  t.record(4, r);
  s.features(r, row.data());
  EXPECT_EQ(row[kStats + static_cast<std::size_t>(HistoryStat::LogLast)], f(std::log1p(10.0)));
  // The table supports the key where it has collision systems; training adds it on request
  // (FitOptions::system_key).
  EXPECT_EQ(HistoryConfig::for_table(t).keys.back(), HistoryKey::JobTypeSystem);
  EXPECT_EQ(history_key_name(HistoryKey::JobTypeSystem), "type_system");
}

TEST(History, ConfigFollowsTheTableColumns) {
  const JobTable t = test::random_feature_table(100, 1);
  const HistoryConfig c = HistoryConfig::for_table(t);
  // The table has user, queue, master job, job type + package; no group, partition, ...
  EXPECT_EQ(c.keys, (std::vector<HistoryKey>{HistoryKey::All, HistoryKey::User, HistoryKey::Queue,
                                             HistoryKey::MasterJob, HistoryKey::JobTypePackage,
                                             HistoryKey::UserRequest}));
  EXPECT_TRUE(c.ratio_stats);
  EXPECT_EQ(c.work_fields, (std::vector<Field>{Field::Events, Field::InputBytes, Field::InputFiles}));
  EXPECT_TRUE(c.work_per_speed);
  const auto names = c.feature_names();
  ASSERT_EQ(names.size(), c.width());
  ASSERT_EQ(c.stats_per_key(), kStats + 6);
  EXPECT_EQ(names[0], "h_all_log_count");
  EXPECT_EQ(names[kStats + 6 + 1], "h_user_log_mean_k");
  EXPECT_EQ(names[kStats + 6 + kStats], "h_user_log_rate_x_events");
  EXPECT_EQ(names.back(), "h_user_request_rate_x_input_files_hours");

  // A table without work columns (SWF) gets no work statistics.
  JobTable swf = hand_table();
  const HistoryConfig plain = HistoryConfig::for_table(swf);
  EXPECT_TRUE(plain.work_fields.empty());
  EXPECT_FALSE(plain.work_per_speed);
  EXPECT_EQ(plain.stats_per_key(), kStats);

  HistoryConfig bad = c;
  bad.last_k = 0;
  EXPECT_THROW(bad.validate(), Error);
  bad = c;
  bad.ewma_alpha = 1.5;
  EXPECT_THROW(bad.validate(), Error);
  bad = c;
  bad.work_fields = {Field::CpuCores};
  EXPECT_THROW(bad.validate(), Error);
  bad = c;
  bad.work_fields = {Field::Events, Field::Events};
  EXPECT_THROW(bad.validate(), Error);
  bad = c;
  bad.work_fields.clear();
  EXPECT_THROW(bad.validate(), Error);  // work per speed without work fields
}

// The leak-free rule, checked the way the issue states it: a job's features do not change
// when every job submitted after it is removed from the input.
TEST(History, FeaturesDoNotChangeWhenLaterJobsAreRemoved) {
  const JobTable t = test::random_feature_table(1500, 7);
  const HistoryConfig cfg = HistoryConfig::for_table(t);
  const HistoryMatrix full = compute_history(t, cfg);
  const auto submit = t.num(Field::SubmitTime);

  ASSERT_EQ(cfg.work_fields.size(), 3u);
  std::size_t checked = 0, with_history = 0, with_work = 0;
  for (std::size_t j = 0; j < t.rows(); j += 7) {
    if (std::isnan(submit[j])) continue;
    std::vector<std::size_t> kept;  // original order
    std::size_t j_in_kept = 0;
    for (std::size_t i = 0; i < t.rows(); ++i) {
      if (std::isnan(submit[i]) || submit[i] > submit[j]) continue;
      if (i == j) j_in_kept = kept.size();
      kept.push_back(i);
    }
    const JobTable past = t.select(kept);
    const HistoryMatrix m = compute_history(past, cfg);
    ASSERT_TRUE(test::same_bits(full.row(j), m.row(j_in_kept), cfg.width())) << "job " << j;
    ++checked;
    if (full.row(j)[0] > 0) ++with_history;
    // The user key's log-scale work-rate estimates (events, input bytes, input files).
    const float* user_work = full.row(j) + cfg.stats_per_key() + cfg.work_offset();
    if (std::isfinite(user_work[0]) && std::isfinite(user_work[2]) && std::isfinite(user_work[4])) ++with_work;
  }
  EXPECT_GT(checked, 200u);
  EXPECT_GT(with_history, checked / 2);  // the check is not vacuous
  EXPECT_GT(with_work, checked / 3);     // nor for the work rates
}

// Stronger: outcomes that were not known yet (jobs still running at j's submit time) may
// change arbitrarily without changing j's features.
TEST(History, FeaturesIgnoreOutcomesNotYetKnown) {
  const JobTable t = test::random_feature_table(800, 11);
  const HistoryConfig cfg = HistoryConfig::for_table(t);
  const HistoryMatrix full = compute_history(t, cfg);
  const auto submit = t.num(Field::SubmitTime), wait = t.num(Field::WaitTime), wall = t.num(Field::WallTime);
  const std::size_t j = 400;
  ASSERT_FALSE(std::isnan(submit[j]));
  JobTable changed = t.select(std::vector<std::size_t>([&] {
    std::vector<std::size_t> all(t.rows());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    return all;
  }()));
  auto new_wall = changed.num_mut(Field::WallTime);
  std::size_t running = 0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const double w = std::isnan(wait[i]) ? 0.0 : wait[i];
    if (std::isnan(submit[i]) || std::isnan(wall[i]) || submit[i] + w + wall[i] <= submit[j]) continue;
    new_wall[i] = wall[i] * 3 + 1000;  // still finishes after j's submission
    ++running;
  }
  EXPECT_GT(running, 100u);
  const HistoryMatrix m = compute_history(changed, cfg);
  EXPECT_TRUE(test::same_bits(full.row(j), m.row(j), cfg.width()));
}

// The service path (observe finished jobs, then features for a new record) gives exactly the
// numbers of the batch walk.
TEST(History, IncrementalStateMatchesBatch) {
  const JobTable t = test::random_feature_table(600, 3);
  const HistoryConfig cfg = HistoryConfig::for_table(t);
  const HistoryMatrix batch = compute_history(t, cfg);
  const auto submit = t.num(Field::SubmitTime), wait = t.num(Field::WaitTime), wall = t.num(Field::WallTime);

  // Events: finish events, then submissions, ordered by time (submissions first at equal
  // time is wrong: a job finishing at t counts for a job submitted at t).
  std::vector<test::HistoryEvent> events;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (std::isnan(submit[i])) continue;
    events.push_back({submit[i], 1, submit[i], i});
    if (!std::isnan(wall[i])) events.push_back({submit[i] + (std::isnan(wait[i]) ? 0.0 : wait[i]) + wall[i], 0, submit[i], i});
  }
  HistoryState state(cfg);
  const std::size_t compared = test::replay_and_compare(
      t, state, batch, events,
      // A job finishing at the very second it was submitted is fed after its own submission
      // group, as the batch walk does; with integer times and wall > 0 this cannot happen.
      [&](const test::HistoryEvent&, const JobRecord& r) { EXPECT_TRUE(state.observe(r)); },
      [](const test::HistoryEvent&, const JobRecord&) {});
  EXPECT_GT(compared, 500u);
}

TEST(History, SaveRestoreKeepsFeaturesIdenticalAfterMoreObservations) {
  const JobTable t = test::random_feature_table(400, 5);
  const HistoryConfig cfg = HistoryConfig::for_table(t, 4, 0.2);
  const auto half = t.rows() / 2;
  std::vector<std::size_t> first(half), second(t.rows() - half);
  for (std::size_t i = 0; i < half; ++i) first[i] = i;
  for (std::size_t i = half; i < t.rows(); ++i) second[i - half] = i;
  const JobTable a = t.select(first), b = t.select(second);

  HistoryState state(cfg);
  compute_history(a, state);
  ASSERT_GT(state.keys_tracked(), 10u);
  const std::string path = test::temp_dir() + "/history.bin";
  state.save(path);
  HistoryState restored = HistoryState::load(path);
  EXPECT_EQ(restored.config(), cfg);
  EXPECT_EQ(restored.observed(), state.observed());
  EXPECT_EQ(restored.to_bytes(), state.to_bytes());

  // Both continue with the second half: same features for every row, same final state.
  const HistoryMatrix ma = compute_history(b, state);
  const HistoryMatrix mb = compute_history(b, restored);
  ASSERT_EQ(ma.values.size(), mb.values.size());
  EXPECT_TRUE(test::same_bits(ma.values.data(), mb.values.data(), ma.values.size()));
  EXPECT_EQ(state.to_bytes(), restored.to_bytes());

  // Keys are hashed strings, not dictionary codes: the same jobs in a table whose
  // dictionaries were built in another order give the same features from a restored state.
  JobTable fresh;
  JobRecord r;
  b.record(b.rows() / 2, r);  // a job from the middle comes first: its values get code 0
  r[Field::SubmitTime] = kNaN;  // it cannot be placed in time, so it changes no history
  r[Field::WallTime] = kNaN;
  fresh.append(r);
  for (std::size_t i = 0; i < b.rows(); ++i) {
    b.record(i, r);
    fresh.append(r);
  }
  ASSERT_NE(fresh.codes(Field::User)[1], b.codes(Field::User)[0]);
  HistoryState again = HistoryState::load(path);
  const HistoryMatrix mc = compute_history(fresh, again);
  for (std::size_t i = 0; i < b.rows(); ++i)
    ASSERT_TRUE(test::same_bits(mc.row(i + 1), ma.row(i), cfg.width())) << i;
}

TEST(History, RefusesTruncatedOrCorruptedFiles) {
  const JobTable t = test::random_feature_table(100, 9);
  HistoryState state(HistoryConfig::for_table(t));
  compute_history(t, state);
  const auto bytes = state.to_bytes();
  const std::string dir = test::temp_dir();
  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    std::vector<std::uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    write_file_atomic(dir + "/cut.bin", part);
    try {
      HistoryState::load(dir + "/cut.bin");
      FAIL() << "truncated at " << cut << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cut.bin"), std::string::npos) << e.what();
    }
  }
  auto corrupted = bytes;
  corrupted[corrupted.size() / 2] ^= 0x10;
  EXPECT_THROW(HistoryState::from_bytes(corrupted, "corrupted"), Error);
}

// Version 1 files (before the work-rate statistics) still load, as states without work fields.
TEST(History, LoadsVersionOneFiles) {
  const JobTable t = test::random_feature_table(300, 4);
  HistoryConfig cfg = HistoryConfig::for_table(t);
  cfg.work_fields.clear();
  cfg.work_per_speed = false;
  HistoryState state(cfg);
  compute_history(t, state);
  // Version 3 payload: last_k u32, alpha f64, ratio u8, keys (u64 count + bytes), then the
  // work fields (u64 count 0) and the per-speed flag (u8): version 1 stops before those. Per
  // key entry, versions 1 and 2 lack the second-largest run time (the f64 after the maximum),
  // and the section of last updates after the entries.
  auto payload = open_container(state.to_bytes(), "TTLHIST", 3, "v3").payload;
  const std::size_t at = 4 + 8 + 1 + 8 + cfg.keys.size();
  payload.erase(payload.begin() + static_cast<std::ptrdiff_t>(at), payload.begin() + static_cast<std::ptrdiff_t>(at + 9));
  const std::size_t entry = 8 * 7 + 4 + 4 * cfg.last_k + 8 + 4 + 4 * cfg.last_k;  // key .. ratio ring
  const std::size_t first = at + 8 + 8;  // after observed and the key count
  const std::size_t n = state.keys_tracked();
  payload.resize(payload.size() - 8 * n);  // version 3's last-update section
  for (std::size_t i = n; i-- > 0;) {
    const std::size_t max2 = first + i * entry + 8 * 4;  // key, count, ewma, max
    payload.erase(payload.begin() + static_cast<std::ptrdiff_t>(max2), payload.begin() + static_cast<std::ptrdiff_t>(max2 + 8));
  }
  const HistoryState old = HistoryState::from_bytes(seal_container("TTLHIST", 1, payload), "v1 file");
  EXPECT_EQ(old.config(), cfg);
  EXPECT_EQ(old.observed(), state.observed());
  EXPECT_EQ(old.keys_tracked(), state.keys_tracked());
  // The same features, except where the stand-in for the second largest (the recent ring)
  // makes a maximum look like a lone extreme one: never on this table.
  JobRecord probe;
  std::vector<float> a(state.width()), b(state.width());
  state.features(probe, a.data());
  old.features(probe, b.data());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_TRUE(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))) << i;
  // A version 4 file is refused.
  auto future = state.to_bytes();
  future[8] = 4;
  EXPECT_THROW(HistoryState::from_bytes(future, "future"), Error);
}

TEST(History, IgnoresJobsWithoutWallTime) {
  HistoryState state(hand_config());
  JobRecord r;
  r.text(Field::User) = "u";
  EXPECT_FALSE(state.observe(r));  // wall unknown
  r[Field::WallTime] = -5;
  EXPECT_FALSE(state.observe(r));
  EXPECT_EQ(state.observed(), 0u);
  EXPECT_EQ(state.keys_tracked(), 0u);
  r[Field::WallTime] = 5;
  EXPECT_TRUE(state.observe(r));
  EXPECT_EQ(state.keys_tracked(), 2u);  // all + user
}

// A job without a submit time is predicted as of now: the batch walk gives it the features the
// service's state gives the same record after every timed job has finished (the one rule
// that `ttlpred predict` and /v1/predict share), not an empty history.
TEST(History, JobsWithoutSubmitTimeSeeTheStateAfterEveryTimedJob) {
  JobTable t;
  add_timed_job(t, 0, 0, 100, "u1", 1000);
  add_timed_job(t, 10, 0, 300, "u1", 1000);
  add_timed_job(t, 20, 0, 50, "u2", 500);
  add_timed_job(t, kNaN, 0, kNaN, "u1", 2000);  // untimed, no outcome: the job to predict
  const HistoryConfig cfg = HistoryConfig::for_table(t);
  const HistoryMatrix batch = compute_history(t, cfg);

  HistoryState state(cfg);
  JobRecord r;
  for (std::size_t i : {2u, 0u, 1u}) {  // finish order: 70, 100, 310
    t.record(i, r);
    state.observe(r);
  }
  t.record(3, r);
  std::vector<float> expected(cfg.width());
  state.features(r, expected.data());
  EXPECT_TRUE(test::same_bits(expected.data(), batch.row(3), cfg.width()));
  // user u1: two finished jobs (log1p(2) in the count column of the user key); all: three.
  const std::size_t per_key = cfg.stats_per_key();
  EXPECT_FLOAT_EQ(batch.row(3)[0], static_cast<float>(std::log1p(3.0)));
  EXPECT_FLOAT_EQ(batch.row(3)[per_key], static_cast<float>(std::log1p(2.0)));
}

}  // namespace
}  // namespace ttlpred
