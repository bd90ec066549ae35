// The serving hot path must not touch the heap: encode_one and HistoryState::features are
// run here under a global operator new that counts.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <numeric>

#include "features/encoder.hpp"
#include "counting_new.hpp"
#include "feature_test_table.hpp"

namespace ttlpred {
namespace {

TEST(HotPath, EncodeOneAndHistoryFeaturesDoNotAllocate) {
  const JobTable t = test::random_feature_table(500, 12);
  HistoryState state(HistoryConfig::for_table(t));
  const HistoryMatrix history = compute_history(t, state);
  std::vector<std::size_t> rows(t.rows());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  const auto enc = FeatureEncoder::fit(t, rows, &history, &state.config());

  std::vector<JobRecord> records(t.rows());
  for (std::size_t i = 0; i < t.rows(); ++i) t.record(i, records[i]);
  // Unknown values take the out-of-vocabulary path; it must not allocate either.
  records[0].text(Field::User) = "a user name long enough to defeat the small string optimization";
  std::vector<float> hist(state.width()), dense(enc.dense_width());
  std::vector<std::uint32_t> cats(enc.cat_width());

  double checksum = 0;
  EXPECT_EQ(test::counting_new::allocations_during([&] {
              for (const auto& r : records) {
                state.features(r, hist.data());
                enc.encode_one(r, hist.data(), dense.data(), cats.data());
                checksum += dense[0] + static_cast<double>(cats[0]);
              }
            }),
            0u);
  EXPECT_TRUE(std::isfinite(checksum));

  // The counter works: observing a new key allocates a map node.
  JobRecord fresh = records[1];
  fresh.text(Field::User) = "brand-new-user";
  EXPECT_GT(test::counting_new::allocations_during([&] { state.observe(fresh); }), 0u);
}

}  // namespace
}  // namespace ttlpred
