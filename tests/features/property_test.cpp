// Properties of the feature code over many random cases (tests/property.hpp), beyond the
// fixed-seed examples of encoder_test and history_test:
//  - the encoder survives to_bytes/from_bytes unchanged, whatever table and options it was
//    fitted with, and encodes every row bit-identically afterwards;
//  - a job's history features depend only on outcomes known at its submission: making any
//    job that had not finished by then finish later, or removing every later job, changes
//    nothing; changing a finished job's run time does change them (the check bites).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "feature_test_table.hpp"
#include "features/encoder.hpp"
#include "features/history.hpp"
#include "property.hpp"

namespace ttlpred {
namespace {

std::vector<std::size_t> iota_rows(std::size_t n, std::size_t from = 0) {
  std::vector<std::size_t> r(n);
  std::iota(r.begin(), r.end(), from);
  return r;
}

TEST(FeatureProperties, EncoderRoundTripsForAnyTableAndOptions) {
  test::for_each_seed(1, 25, [](std::mt19937_64& rng, std::uint64_t seed) {
    const std::size_t rows = 50 + test::below(rng, 400);
    const JobTable t = test::random_feature_table(rows, static_cast<unsigned>(seed));
    HistoryConfig cfg = HistoryConfig::for_table(t);
    cfg.ratio_stats = rng() % 2;
    const HistoryMatrix hm = compute_history(t, cfg);
    EncoderOptions o;
    o.min_category_count = static_cast<std::uint32_t>(1 + test::below(rng, 8));
    o.cyclic_time = rng() % 2;
    const auto train = iota_rows(rows * (3 + test::below(rng, 7)) / 10);
    const bool with_history = rng() % 2;
    const FeatureEncoder e = FeatureEncoder::fit(t, train, with_history ? &hm : nullptr, with_history ? &cfg : nullptr, o);
    const auto bytes = e.to_bytes();
    const FeatureEncoder back = FeatureEncoder::from_bytes(bytes, "encoder");
    ASSERT_EQ(back.to_bytes(), bytes);
    ASSERT_EQ(back.dense_names(), e.dense_names());
    ASSERT_EQ(back.cat_cardinality(), e.cat_cardinality());
    const auto all = iota_rows(rows);
    const EncodedBatch a = e.encode_batch(t, all, with_history ? &hm : nullptr);
    const EncodedBatch b = back.encode_batch(t, all, with_history ? &hm : nullptr);
    ASSERT_EQ(a.dense.size(), b.dense.size());
    EXPECT_TRUE(test::same_bits(a.dense.data(), b.dense.data(), a.dense.size()));
    EXPECT_EQ(a.cats, b.cats);
    // And a single flipped byte anywhere in the sealed bytes is refused, never misread.
    auto damaged = bytes;
    damaged[test::below(rng, damaged.size())] ^= static_cast<std::uint8_t>(1 + test::below(rng, 255));
    EXPECT_THROW(FeatureEncoder::from_bytes(damaged, "encoder"), Error);
  });
}

TEST(FeatureProperties, HistorySeesOnlyOutcomesKnownAtSubmission) {
  std::size_t bites = 0, cases = 0;
  test::for_each_seed(100, 30, [&](std::mt19937_64& rng, std::uint64_t seed) {
    const std::size_t rows = 100 + test::below(rng, 300);
    const JobTable t = test::random_feature_table(rows, static_cast<unsigned>(seed));
    const HistoryConfig cfg = HistoryConfig::for_table(t);
    const HistoryMatrix full = compute_history(t, cfg);
    const auto submit = t.num(Field::SubmitTime), wait = t.num(Field::WaitTime), wall = t.num(Field::WallTime);
    std::size_t j = test::below(rng, rows);
    while (std::isnan(submit[j])) j = (j + 1) % rows;
    const auto finish = [&](std::size_t i) { return submit[i] + (std::isnan(wait[i]) ? 0.0 : wait[i]) + wall[i]; };

    // Later for every job still running (or not yet submitted) at j's submission.
    JobTable later = t.select(iota_rows(rows));
    auto later_wall = later.num_mut(Field::WallTime);
    for (std::size_t i = 0; i < rows; ++i) {
      if (std::isnan(submit[i]) || std::isnan(wall[i]) || (finish(i) <= submit[j] && submit[i] < submit[j])) continue;
      later_wall[i] = wall[i] * test::uniform(rng, 1.0, 5.0) + test::uniform(rng, 1.0, 1e5);
    }
    ASSERT_TRUE(test::same_bits(full.row(j), compute_history(later, cfg).row(j), cfg.width())) << "job " << j;

    // Every job submitted after j removed.
    std::vector<std::size_t> kept;
    std::size_t j_kept = 0;
    for (std::size_t i = 0; i < rows; ++i) {
      if (!std::isnan(submit[i]) && submit[i] > submit[j]) continue;
      if (i == j) j_kept = kept.size();
      kept.push_back(i);
    }
    ASSERT_TRUE(test::same_bits(full.row(j), compute_history(t.select(kept), cfg).row(j_kept), cfg.width()));

    // The converse: a job that had finished is seen, so changing its run time changes j's
    // features (when j shares its key "all", i.e. always, and the change is large).
    JobTable changed = t.select(iota_rows(rows));
    auto changed_wall = changed.num_mut(Field::WallTime);
    bool any_known = false;
    for (std::size_t i = 0; i < rows; ++i)
      if (!std::isnan(submit[i]) && !std::isnan(wall[i]) && submit[i] < submit[j] && finish(i) <= submit[j]) {
        changed_wall[i] = wall[i] * 0.5;  // finishes even earlier: still known
        any_known = true;
      }
    ++cases;
    if (any_known && !test::same_bits(full.row(j), compute_history(changed, cfg).row(j), cfg.width())) ++bites;
  });
  EXPECT_GE(bites, cases * 2 / 3) << "known outcomes rarely changed the features: the property would be vacuous";
}

}  // namespace
}  // namespace ttlpred
