// Predictor::predict is the service's hot path: after a thread's first call with a given
// batch size it must not touch the heap (its scratch is thread-local and only grows). Run
// here under a global operator new that counts; this replacement applies to the whole
// test_predict binary but counts only while a test switches it on.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "predict/predictor.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"
#include "counting_new.hpp"

namespace ttlpred {
namespace {

// A plain encoder and one with piecewise-linear bins (their columns are written in place).
class PredictHotPath : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(PredictHotPath, NoHeapAllocationAfterTheFirstCallOfABatchSize) {
  const std::string path = test::temp_dir() + "/alloc-" + std::to_string(GetParam()) + ".model";
  test::write_test_model(path, 2, {HistoryKey::All, HistoryKey::User}, PredictionTime::Submit, false, GetParam());
  const Predictor p = Predictor::load(path, {});
  const HistoryState history = p.initial_history();
  std::vector<JobRecord> jobs(8);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i][Field::SubmitTime] = 1.8e9 + static_cast<double>(i);
    jobs[i].text(Field::User) = test::test_users()[i % 5];
    jobs[i].text(Field::JobType) = i % 2 ? "MC" : "a job type long enough to defeat the small string optimization";
    jobs[i][Field::CpuCores] = 8;
    if (i % 2) jobs[i][Field::RequestedTtl] = 7200;
  }
  std::vector<Prediction> out(jobs.size());
  p.predict(jobs, history, out);  // first call: the thread's scratch grows to 8 jobs

  double checksum = 0;
  EXPECT_EQ(test::counting_new::allocations_during([&] {
              for (int round = 0; round < 100; ++round) {
                p.predict(jobs, history, out);
                p.predict(std::span<const JobRecord>(jobs.data(), 3), history, std::span<Prediction>(out.data(), 3));
                checksum += out[0].safe_ttl_s;
              }
            }),
            0u);
  EXPECT_GT(checksum, 0.0);

  // The counter works: a larger batch grows the scratch once.
  std::vector<JobRecord> more(64, jobs[1]);
  std::vector<Prediction> more_out(more.size());
  EXPECT_GT(test::counting_new::allocations_during([&] { p.predict(more, history, more_out); }), 0u);
}

INSTANTIATE_TEST_SUITE_P(Encoders, PredictHotPath, ::testing::Values(0u, 4u),
                         [](const auto& info) { return info.param == 0 ? std::string("Plain") : std::string("PiecewiseBins"); });

}  // namespace
}  // namespace ttlpred
