// Choosing the residual base on the training rows (train/residual_choice.hpp) on hand-built
// rows whose best estimate is known per group, and a residual training run whose base is
// the truth itself: the network is left nothing to learn but zero.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "model/residual_base.hpp"
#include "train/mlp_trainer.hpp"
#include "train/residual_choice.hpp"
#include "train_test_data.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// Two hours-valued dense columns (mean 0, std 1: the stored value is the hours), grouped by
// one categorical column of 5 values. Group 1's run times equal column 0, group 2's column
// 1, group 3's sit around 5 h far from both; group 4 (with `fallback`) is group 1 plus three
// rows that do not know column 0 (an encoded 0) and run for column 1's value. The unknown
// bucket has no rows.
struct Rows {
  EncodedBatch x;
  std::vector<float> wall_s;
};

Rows grouped_rows(bool fallback) {
  Rows r;
  r.x.dense_width = 2;
  r.x.cat_width = 1;
  r.x.cat_cardinality = {5};
  auto add = [&](float a, float b, std::uint32_t g, double wall_h) {
    r.x.dense.insert(r.x.dense.end(), {a, b});
    r.x.cats.push_back(g);
    r.wall_s.push_back(static_cast<float>(wall_h * 3600.0));
    ++r.x.rows;
  };
  for (int i = 0; i < 6; ++i) {
    const float a = 1.0f + static_cast<float>(i), b = 10.0f - static_cast<float>(i);
    add(a, b, 1, a);
    add(a, b, 2, b);
    add(a, b, 3, 5.0 + (i % 2 ? 0.1 : -0.1));
    if (fallback) add(a, b, 4, a);
  }
  if (fallback)
    for (float b : {4.0f, 6.0f, 8.0f}) add(0.0f, b, 4, b);
  return r;
}

std::vector<BaseColumn> hour_columns() {
  return {{0, 0.0, 1.0, BaseScale::Hours, "a_hours"}, {1, 0.0, 1.0, BaseScale::Hours, "b_hours"}};
}

TEST(ResidualChoice, EachGroupTakesTheEstimatesThatFitItOrNone) {
  const Rows r = grouped_rows(true);
  TargetTransform tt;  // hours, mean 0, std 1
  const auto cands = hour_columns();
  const ResidualBase b = choose_residual_base(r.x, r.wall_s, r.x.rows, tt, cands, 0);
  ASSERT_EQ(b.columns.size(), 2u);
  EXPECT_EQ(b.columns[0].name, "a_hours");
  EXPECT_EQ(b.columns[1].name, "b_hours");
  // Group 3's own mean (squared error 6 x 0.01) beats both columns: no base. Group 4 takes
  // column 0 first (its three unknown rows left around their mean: 8 h², against 166 h² for
  // column 1 and 38 h² for the group's mean), then column 1 for those three (0 h²).
  EXPECT_EQ(b.by_group, (std::vector<std::vector<std::uint32_t>>{{}, {0}, {1}, {}, {0, 1}}));
  EXPECT_EQ(b.group_cat, 0);
  // And the base of a group-4 row that does not know column 0 is column 1's value.
  const float unknown_a[2] = {0.0f, 6.0f};
  const std::uint32_t g4 = 4;
  EXPECT_DOUBLE_EQ(b.base_hours(unknown_a, &g4), 6.0);

  // Without a group column one base must serve every row of groups 1-3: column 0 leaves
  // squared errors of 166 h² (group 2) + about 30 h² (group 3), column 1 166 + 55, and the
  // 18 rows' own mean 84 h²: no base at all.
  const Rows plain = grouped_rows(false);
  EXPECT_TRUE(choose_residual_base(plain.x, plain.wall_s, plain.x.rows, tt, cands, -1).empty());
}

TEST(ResidualChoice, RefusesColumnsOutsideTheBatch) {
  const Rows r = grouped_rows(false);
  TargetTransform tt;
  EXPECT_THROW(choose_residual_base(r.x, r.wall_s, r.x.rows, tt, hour_columns(), 1), Error);
  std::vector<BaseColumn> wide = hour_columns();
  wide[1].dense = 2;
  EXPECT_THROW(choose_residual_base(r.x, r.wall_s, r.x.rows, tt, wide, 0), Error);
}

TEST(ResidualChoice, ATrainingWhoseBaseIsTheTruthPredictsIt) {
  // Run time = 1 + 3 x column 0's value hours, given to the trainer as a candidate through
  // column 4 (a copy of the truth in hours): the chosen base is that column, and the model
  // predicts the truth within minutes though its network only learns the (zero) residual.
  test::Problem p = test::noisy_function(4000, 0.0, 3);
  EncodedBatch x;
  x.rows = p.x.rows;
  x.dense_width = 5;
  x.cat_width = 1;
  x.cat_cardinality = p.x.cat_cardinality;
  x.cats = p.x.cats;
  for (std::size_t i = 0; i < x.rows; ++i) {
    const float* d = p.x.dense_row(i);
    const double h = std::max(0.0, 1.0 + 3.0 * std::abs(static_cast<double>(d[0])));
    p.wall_s[i] = static_cast<float>(h * 3600.0);
    x.dense.insert(x.dense.end(), d, d + 4);
    x.dense.push_back(static_cast<float>((h - 3.0) / 2.0));  // standardized: mean 3, std 2
  }
  TrainConfig c = test::small_train_config();
  c.residual_candidates = {{4, 3.0, 0.5, BaseScale::Hours, "truth_hours"}};
  const TrainResult r = train_mlp(x, p.wall_s, c);
  ASSERT_FALSE(r.target.residual.empty());
  EXPECT_EQ(r.target.residual.columns[0].name, "truth_hours");
  std::vector<float> pred(x.rows);
  predict_mlp(r.model, r.target, x, pred, 2);
  double sse = 0.0;
  for (std::size_t i = 0; i < x.rows; ++i) sse += std::pow((pred[i] - p.wall_s[i]) / 3600.0, 2);
  EXPECT_LT(std::sqrt(sse / static_cast<double>(x.rows)), 0.1);
}

}  // namespace
}  // namespace ttlpred
