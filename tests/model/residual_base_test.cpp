// The residual base a residual target is measured from (model/residual_base.hpp): its value
// per row and group on hand-computed rows, the offset it gives the network's output, its
// bytes in a model file (format version 2 only where a model has one) and the refusals of a
// base that does not fit its network.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_file.hpp"
#include "model/residual_base.hpp"
#include "model/target_transform.hpp"
#include "model_test_util.hpp"
#include "util/binary_io.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// Two candidate columns of a 3-wide dense row: column 0 in hours (mean 2, std 0.5), column 2
// in log1p seconds (mean log1p(3600), std 1); grouped by categorical column 0 of 4 values:
// the unknown bucket and value 3 take no base, value 1 column 0, else column 2, value 2
// column 2.
ResidualBase two_column_base() {
  ResidualBase b;
  b.group_cat = 0;
  b.columns.push_back({0, 2.0, 2.0, BaseScale::Hours, "h_rate_x_events_hours"});
  b.columns.push_back({2, std::log1p(3600.0), 1.0, BaseScale::Log1pSeconds, "h_user_log_ewma"});
  b.by_group = {{}, {0, 1}, {1}, {}};
  return b;
}

TEST(ResidualBase, ReadsEachColumnInHoursAndPicksByGroup) {
  const ResidualBase b = two_column_base();
  const float dense[3] = {1.0f, 9.0f, std::log(2.0f)};
  // Column 0: 1.0 / 2.0 + 2.0 = 2.5 h. Column 2: expm1(log1p(3600) + log 2) s = 7201 s.
  EXPECT_DOUBLE_EQ(b.columns[0].hours(dense), 2.5);
  EXPECT_NEAR(b.columns[1].hours(dense), 7201.0 / 3600.0, 1e-6);
  const std::uint32_t g1 = 1, g2 = 2, g3 = 3, oov = 0;
  EXPECT_DOUBLE_EQ(b.base_hours(dense, &g1), 2.5);
  EXPECT_NEAR(b.base_hours(dense, &g2), 7201.0 / 3600.0, 1e-6);
  EXPECT_TRUE(std::isnan(b.base_hours(dense, &g3)));
  EXPECT_TRUE(std::isnan(b.base_hours(dense, &oov)));
  // An hours estimate below zero (an extrapolated rate) reads as zero, a log one past e^30 s
  // as e^30 s: the inverse transform never sees a negative or an infinite base.
  const float low[3] = {-10.0f, 0.0f, 100.0f};
  EXPECT_EQ(b.base_hours(low, &g1), 0.0);
  EXPECT_NEAR(b.base_hours(low, &g2), std::expm1(30.0) / 3600.0, 1e-6 * std::expm1(30.0));
  // A row that does not know column 0 (an encoded 0: the encoder's unknown) falls back to
  // column 2 in group 1; in group 2 a row that knows neither has no base.
  const float no_rate[3] = {0.0f, 9.0f, std::log(2.0f)};
  EXPECT_NEAR(b.base_hours(no_rate, &g1), 7201.0 / 3600.0, 1e-6);
  const float nothing[3] = {0.0f, 9.0f, 0.0f};
  EXPECT_TRUE(std::isnan(b.base_hours(nothing, &g2)));
  // The safe TTL calibrates apart the rows that do not take their group's first column: a
  // fallback or none, but not the rows of a group without a list.
  EXPECT_EQ(b.source(dense, &g1), 0);
  EXPECT_EQ(b.source(no_rate, &g1), 1);
  EXPECT_EQ(b.source(nothing, &g2), -1);
  EXPECT_FALSE(b.falls_back(dense, &g1));
  EXPECT_TRUE(b.falls_back(no_rate, &g1));
  EXPECT_TRUE(b.falls_back(nothing, &g2));
  EXPECT_FALSE(b.falls_back(nothing, &g3));
  EXPECT_FALSE(ResidualBase{}.falls_back(nothing, &g1));
  EXPECT_EQ(b.names_by_group(), (std::vector<std::vector<std::string>>{
                                    {}, {"h_rate_x_events_hours", "h_user_log_ewma"}, {"h_user_log_ewma"}, {}}));
}

TEST(ResidualBase, OffsetIsTheStandardizedTargetOfTheBase) {
  TargetTransform t;
  t.kind = TargetKind::Log1p;
  t.mean = 0.5;
  t.stddev = 0.25;
  const float dense[3] = {1.0f, 0.0f, 0.0f};
  const std::uint32_t g1 = 1, g3 = 3;
  EXPECT_EQ(t.offset_z(dense, &g1), 0.0f);  // no base: the network's output is the target itself
  t.residual = two_column_base();
  // Base 2.5 h: z = (log1p(2.5) - 0.5) / 0.25.
  EXPECT_NEAR(t.offset_z(dense, &g1), (std::log1p(2.5) - 0.5) / 0.25, 1e-6);
  EXPECT_EQ(t.offset_z(dense, &g3), 0.0f);
  // Adding the offset to a zero output decodes to the base itself (no smearing set).
  EXPECT_NEAR(t.decode_seconds(0.0f + t.offset_z(dense, &g1)), 2.5 * 3600.0, 1e-2);

  EncodedBatch x;
  x.rows = 3;
  x.dense_width = 3;
  x.cat_width = 1;
  x.cat_cardinality = {4};
  x.dense = {1.0f, 0, 0, 3.0f, 0, 0, 1.0f, 0, 0};
  x.cats = {1, 1, 3};
  std::vector<float> z = {0.1f, 0.2f};  // rows 1 and 2
  add_offsets(t, x, 1, z);
  EXPECT_NEAR(z[0], 0.1 + (std::log1p(3.5) - 0.5) / 0.25, 1e-5);  // 3.0 / 2 + 2 = 3.5 h
  EXPECT_FLOAT_EQ(z[1], 0.2f);
}

TEST(ResidualBase, BytesRoundTripAndBadIndicesAreRefused) {
  const ResidualBase b = two_column_base();
  BinaryWriter w;
  b.write(w);
  BinaryReader r(w.bytes(), "base");
  EXPECT_EQ(ResidualBase::read(r), b);

  ResidualBase bad = b;
  bad.by_group[2] = {2};  // there are two columns
  BinaryWriter wb;
  bad.write(wb);
  BinaryReader rb(wb.bytes(), "base");
  try {
    ResidualBase::read(rb);
    FAIL() << "a group naming a third column was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("residual base names column 2 of 2"), std::string::npos) << e.what();
  }
}

TEST(ResidualBase, RefusesABaseThatDoesNotFitTheEncoder) {
  const ResidualBase b = two_column_base();
  EXPECT_NO_THROW(b.check_fits(3, {4}, "m"));
  auto message = [&](std::size_t dense, std::vector<std::uint32_t> card) {
    try {
      b.check_fits(dense, card, "m.ttlp");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(message(2, {4}), "m.ttlp: residual base column 'h_user_log_ewma' is dense column 2, past the encoder's 2");
  EXPECT_EQ(message(3, {}), "m.ttlp: residual base groups by categorical column 0, past the encoder's 0");
  EXPECT_EQ(message(3, {5}), "m.ttlp: residual base has 4 groups, its column has 5 values");
}

TEST(ResidualBase, OnlyAResidualModelIsAVersion2File) {
  ModelFile m;
  m.mlp = test::tiny_model();  // 3 dense inputs, one categorical column of 4 values
  m.target.mean = 1.0;
  m.target.stddev = 2.0;
  const auto plain = model_file_bytes(m);
  EXPECT_EQ(plain[8], 1);  // the version follows the 8-byte magic
  EXPECT_TRUE(parse_model_file(plain, "plain.ttlp").target.residual.empty());

  m.target.residual = two_column_base();
  const auto residual = model_file_bytes(m);
  EXPECT_EQ(residual[8], 2);
  EXPECT_EQ(parse_model_file(residual, "residual.ttlp").target.residual, m.target.residual);

  // A base past the network's inputs is refused on load, naming the file.
  m.target.residual.columns[1].dense = 7;
  EXPECT_EQ(test::model_file_refusal(model_file_bytes(m), "wide.ttlp"),
            "wide.ttlp: residual base column 'h_user_log_ewma' is dense column 7, past the encoder's 3");
}

}  // namespace
}  // namespace ttlpred
