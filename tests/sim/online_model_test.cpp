// The service's learning loop inside the simulation (sim/online_model.hpp): when it trains,
// on what, and that simulated time never goes back (no outcome from after a job's submission
// is known when it is predicted).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"
#include "sim/online_model.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {
namespace {

// n jobs, one a minute, of four users whose jobs run 600, 1200, 2400 and 4800 s.
JobTable trace(std::size_t n) {
  JobTable t;
  const char* users[] = {"a", "b", "c", "d"};
  for (std::size_t i = 0; i < n; ++i) {
    JobRecord j;
    j.text(Field::User) = users[i % 4];
    j[Field::SubmitTime] = 60.0 * static_cast<double>(i);
    j[Field::WallTime] = 600.0 * static_cast<double>(1 << (i % 4));
    j[Field::RequestedTtl] = 20000;
    t.append(j);
  }
  return t;
}

OnlineModelOptions small(std::size_t min_outcomes, double every_s) {
  OnlineModelOptions o;
  o.min_outcomes = min_outcomes;
  o.retrain_every_s = every_s;
  o.fit.train.hidden = {8, 8};
  o.fit.train.max_epochs = 2;
  o.fit.train.threads = 1;
  return o;
}

TEST(OnlineModel, TimeNeverGoesBack) {
  const JobTable t = trace(10);
  OnlineModel m(t, 0, small(200, 3600));
  EXPECT_FALSE(m.predict(0, 0));
  m.finished(0, 600, 600);
  EXPECT_THROW(m.predict(1, 500), Error);  // an outcome at 600 is known: asking at 500 would see the future
  EXPECT_THROW(m.finished(1, 599, 10), Error);
  EXPECT_THROW(m.finished(1, 700, -1), Error);
  EXPECT_THROW(m.predict(10, 800), Error);  // past the trace
  EXPECT_FALSE(m.predict(1, 800));
  EXPECT_EQ(m.stats().fallbacks, 2u);
  EXPECT_EQ(m.stats().retrains, 0u);
}

// The first model once min_outcomes jobs have finished, trained on exactly those; the next
// retrain_every_s later or once the finished jobs have doubled, on every job finished by
// then; with retraining off, never.
TEST(OnlineModel, TrainsOnTheFinishedJobsOnSchedule) {
  const JobTable t = trace(700);
  OnlineModel m(t, 0, small(200, 3600));
  for (std::size_t i = 0; i < 199; ++i) m.finished(i, 1000, 600);
  EXPECT_FALSE(m.predict(400, 1000));  // 199 finished: not yet
  m.finished(199, 1000, 600);
  const auto p = m.predict(401, 1000);
  ASSERT_TRUE(p);
  EXPECT_GT(p->expected_wall_s, 0);
  EXPECT_GE(p->safe_ttl_s, p->expected_wall_s);
  EXPECT_EQ(m.stats().retrains, 1u);
  EXPECT_EQ(m.stats().last_train_rows, 200u);
  EXPECT_DOUBLE_EQ(m.stats().first_model_at_s, 1000);
  for (std::size_t i = 200; i < 250; ++i) m.finished(i, 2000, 600);
  ASSERT_TRUE(m.predict(402, 4599));  // due at 1000 + 3600
  EXPECT_EQ(m.stats().retrains, 1u);
  ASSERT_TRUE(m.predict(403, 4600));
  EXPECT_EQ(m.stats().retrains, 2u);
  EXPECT_EQ(m.stats().last_train_rows, 250u);
  // Twice the finished jobs of the last model (250): retrained before the period is out.
  for (std::size_t i = 250; i < 499; ++i) m.finished(i, 5000, 600);
  ASSERT_TRUE(m.predict(500, 5000));
  EXPECT_EQ(m.stats().retrains, 2u);
  m.finished(499, 5000, 600);
  ASSERT_TRUE(m.predict(501, 5000));
  EXPECT_EQ(m.stats().retrains, 3u);
  EXPECT_EQ(m.stats().last_train_rows, 500u);
  EXPECT_EQ(m.stats().predicted, 5u);
  EXPECT_EQ(m.stats().fallbacks, 1u);

  OnlineModel off(t, 0, small(200, 0));
  for (std::size_t i = 0; i < 300; ++i) off.finished(i, 1000, 600);
  EXPECT_FALSE(off.predict(500, 1e9));
  EXPECT_EQ(off.stats().retrains, 0u);
}

// With a split, the jobs before it are known once they ended as recorded (submit + run
// time): at 13,200 s (row 220's submission) rows r with 60 r + 600 x 2^(r mod 4) <= 13,200 of
// the 220, 183 of them, below the 200 a first model needs; by 18,000 s all 220.
TEST(OnlineModel, JobsBeforeTheSplitAreKnownOnceTheyEnded) {
  const JobTable t = trace(500);
  OnlineModel m(t, 220, small(200, 3600));
  EXPECT_FALSE(m.predict(0, 220 * 60.0));
  ASSERT_TRUE(m.predict(1, 18000));
  EXPECT_EQ(m.stats().last_train_rows, 220u);
}

TEST(OnlineModel, RefusesOptionsOutOfRange) {
  const JobTable t = trace(10);
  EXPECT_THROW(OnlineModel(t, 0, small(199, 3600)), Error);
  EXPECT_THROW(OnlineModel(t, 0, small(200, -1)), Error);
  EXPECT_THROW(OnlineModel(t, 11, small(200, 3600)), Error);
  OnlineModelOptions o = small(200, 3600);
  o.max_outcomes = 150;
  EXPECT_THROW(OnlineModel(t, 0, o), Error);
}

}  // namespace
}  // namespace ttlpred::sim
