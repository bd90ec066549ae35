// The safe-TTL sections' guards, each met by a hostile section in a model file sealed with a
// correct checksum: the calibration's own (model/safe_ttl.cpp), its residual tables
// (model/residual_quantiles.cpp), its request-aware tables (model/request_aware_ttl.cpp), and
// the per-job safe TTL of a model with quantile heads (model/quantile_ttl.cpp). The writers
// serialize whatever a calibration holds, so most hostile sections are a real calibration with
// one field broken, written by the real writer; a count or flag no calibration can hold is
// written as bytes. Each refusal must name the section and the guard: `serve --model` and
// /admin/reload read these sections, and anyone can recompute a checksum.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "model/model_file.hpp"
#include "model/residual_quantiles.hpp"
#include "model/safe_ttl.hpp"
#include "model_test_util.hpp"
#include "request_jobs.hpp"
#include "section_bytes.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {
namespace {

using ::testing::HasSubstr;

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The tiny network with a second output, for one quantile head at level 0.9; its safe TTL is
// calibrated on 2000 jobs with requests in two groups: residuals global and per group, the
// shared request-aware table and a copy of it per group (the calibrator makes tables of their
// own only from thousands of rows a group), and the per-job rule with both groups.
ModelFile calibrated_model() {
  ModelFile m;
  m.mlp = test::tiny_model();
  DenseLayer& last = m.mlp.layers.back();
  last.out = 2;
  last.weight.resize(std::size_t{last.in} * 2, 0.05f);
  last.bias.resize(2, 0.0f);
  m.target.kind = TargetKind::Log1p;
  m.target.mean = 7.0;
  m.target.stddev = 1.0;
  m.target.quantiles.levels = {0.9f};

  const test::Jobs jobs = test::draw_jobs(2000, 3, [](std::size_t, double req, auto& u, auto& n01) {
    const double pred = req * (0.1 + 0.8 * u());
    return std::pair{pred, pred * std::exp(0.4 * n01())};
  });
  std::vector<std::uint32_t> group;
  std::vector<float> upper;
  for (std::size_t i = 0; i < jobs.wall.size(); ++i) {
    group.push_back(1 + static_cast<std::uint32_t>(i % 2));
    upper.push_back(1.5f * jobs.pred[i]);
  }
  SafeTtlCalibration& c = m.safe_ttl;
  c = calibrate_safe_ttl(jobs.wall, jobs.pred, group, {}, "job_type");
  calibrate_request_tables(c, jobs.wall, jobs.pred, jobs.req, group, true, {});
  c.request_keys = {1, 2};
  c.request_tables = {c.request, c.request};
  QuantileTtlOptions qo;
  qo.min_group_rows = 100;
  const std::vector<float> levels = m.target.quantiles.levels;
  c.quantile = calibrate_quantile_ttl(jobs.wall, jobs.pred, jobs.req, upper, 1, levels, group, qo);
  return m;
}

const ModelFile& real_model() {
  static const ModelFile m = calibrated_model();
  return m;
}

std::string refusal(const std::vector<std::uint8_t>& model_bytes) {
  return test::model_file_refusal(model_bytes, "hostile.model");
}

TEST(SafeTtlSections, TheCalibratedModelHasEveryPartTheGuardsRead) {
  const SafeTtlCalibration& c = real_model().safe_ttl;
  EXPECT_EQ(c.group_ids, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_FALSE(c.request.empty());
  EXPECT_GE(c.request.edges.size(), 2u);
  EXPECT_GE(c.request.alphas.size(), 2u);
  EXPECT_EQ(c.quantile.group_ids, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_GE(c.global.values.size(), 2u);
  EXPECT_EQ(refusal(model_file_bytes(real_model())), "(accepted)");
}

// Broken fields of the safe-TTL calibration, written by its own writer.
const test::Mutation<SafeTtlCalibration> kCalibrationMutations[] = {
    {"NaN floor", [](SafeTtlCalibration& c) { c.floor_s = kNaN; }, "safe-TTL floor must be a positive number"},
    {"zero floor", [](SafeTtlCalibration& c) { c.floor_s = 0; }, "safe-TTL floor must be a positive number"},
    {"group ids out of order", [](SafeTtlCalibration& c) { std::swap(c.group_ids[0], c.group_ids[1]); },
     "safe-TTL group ids are not strictly increasing"},
    {"group id twice", [](SafeTtlCalibration& c) { c.group_ids[1] = c.group_ids[0]; },
     "safe-TTL group ids are not strictly increasing"},
    {"more residuals stored than counted", [](SafeTtlCalibration& c) { c.global.n = c.global.values.size() - 1; },
     "safe-TTL residual table stores"},
    {"one residual stored of many", [](SafeTtlCalibration& c) { c.global.values.resize(1); },
     "safe-TTL residual table stores 1 values for"},
    {"NaN residual", [](SafeTtlCalibration& c) { c.group_residuals[1].values[0] = kNaNf; },
     "safe-TTL residual is not finite"},
    {"residuals out of order", [](SafeTtlCalibration& c) { std::swap(c.global.values.front(), c.global.values.back()); },
     "safe-TTL residuals are not sorted"},
    {"request-aware tables without the shared one", [](SafeTtlCalibration& c) { c.request = {}; },
     "safe-TTL request-aware tables without the shared one"},
    {"request-table keys out of order", [](SafeTtlCalibration& c) { c.request_keys = {2, 1}; },
     "safe-TTL request-table keys are not strictly increasing"},
    {"NaN request-aware floor", [](SafeTtlCalibration& c) { c.request.floor_s = kNaN; },
     "request-aware safe-TTL floor must be a positive number"},
    {"request-aware bin edges out of order",
     [](SafeTtlCalibration& c) { c.request.edges.front() = c.request.edges.back() + 1.0f; },
     "request-aware safe-TTL bin edges are not finite and ascending"},
    {"infinite request-aware bin edge",
     [](SafeTtlCalibration& c) { c.request_tables[1].edges.back() = std::numeric_limits<float>::infinity(); },
     "request-aware safe-TTL bin edges are not finite and ascending"},
    {"request-aware alpha of 1", [](SafeTtlCalibration& c) { c.request.alphas.back() = 1.0; },
     "request-aware safe-TTL alphas are not strictly ascending in (0, 1)"},
    {"request-aware alphas out of order",
     [](SafeTtlCalibration& c) { std::swap(c.request.alphas.front(), c.request.alphas.back()); },
     "request-aware safe-TTL alphas are not strictly ascending in (0, 1)"},
    {"request-aware row of too few bins", [](SafeTtlCalibration& c) { c.request.q[0].pop_back(); },
     "request-aware safe-TTL table has the wrong number of bins"},
    {"request-aware exponent above 1", [](SafeTtlCalibration& c) { c.request.q[0][0] = 1.5f; },
     "request-aware safe-TTL exponent is not a finite number <= 1"},
    {"NaN request-aware exponent", [](SafeTtlCalibration& c) { c.request_tables[0].q[0][0] = kNaNf; },
     "request-aware safe-TTL exponent is not a finite number <= 1"},
};

TEST(SafeTtlSections, EachCalibrationGuardRefusesItsHostileSection) {
  const auto with_calibration = [](const SafeTtlCalibration& c) {
    ModelFile model = real_model();
    model.safe_ttl = c;
    return refusal(model_file_bytes(model));
  };
  test::expect_each_refused(kCalibrationMutations, real_model().safe_ttl, with_calibration,
                            "hostile.model (safe-TTL calibration section): ");
}

// Counts and flags that no calibration holds, so its writer cannot write them: the bytes up to
// the field, then the field.
std::string calibration_refusal(const std::vector<std::uint8_t>& body) {
  return refusal(test::with_section_body(model_file_bytes(real_model()), test::section_tag::kSafeTtl, body));
}

// The calibration without its request-aware tables: its last byte is the request-aware flag.
SafeTtlCalibration without_request_tables() {
  SafeTtlCalibration c = real_model().safe_ttl;
  c.request = {};
  c.request_keys.clear();
  c.request_tables.clear();
  return c;
}

TEST(SafeTtlSections, CountsAndFlagsNoCalibrationHoldsAreRefused) {
  const SafeTtlCalibration& c = real_model().safe_ttl;
  BinaryWriter groups;  // the fields before the group count, as write() puts them
  groups.put_string(c.group_column);
  groups.put<double>(c.floor_s);
  groups.put<std::uint64_t>(c.min_group_rows);
  write_residual_quantiles(groups, c.global);
  groups.put<std::uint64_t>((1u << 20) + 1);
  EXPECT_THAT(calibration_refusal(groups.bytes()), HasSubstr("safe-TTL calibration claims 1048577 groups"));

  std::vector<std::uint8_t> flag = test::written(without_request_tables());
  flag.back() = 2;
  EXPECT_THAT(calibration_refusal(flag), HasSubstr("safe-TTL request-aware flag is not 0 or 1"));

  SafeTtlCalibration shared_only = c;  // then the keying flag and the count of tables
  shared_only.request_keys.clear();
  shared_only.request_tables.clear();
  std::vector<std::uint8_t> keying = test::written(shared_only);
  keying.push_back(2);
  EXPECT_THAT(calibration_refusal(keying), HasSubstr("safe-TTL request-table keying is not 0 or 1"));
  BinaryWriter no_tables;
  no_tables.put<std::uint8_t>(1);
  no_tables.put<std::uint64_t>(0);
  std::vector<std::uint8_t> none = test::written(shared_only);
  none.insert(none.end(), no_tables.bytes().begin(), no_tables.bytes().end());
  EXPECT_THAT(calibration_refusal(none), HasSubstr("safe-TTL calibration claims 0 request-aware tables"));
}

// Broken fields of the per-job safe TTL, written by its own writer.
const test::Mutation<QuantileTtlCalibration> kPerJobMutations[] = {
    {"head level of 1", [](QuantileTtlCalibration& c) { c.level = 1.0f; },
     "per-job safe TTL: head level 1.000000 is not in (0, 1)"},
    {"NaN head level", [](QuantileTtlCalibration& c) { c.level = kNaNf; }, "is not in (0, 1)"},
    {"head the model does not have", [](QuantileTtlCalibration& c) { c.head = 1; },
     "per-job safe TTL: head 1 of a model with 1 heads"},
    {"negative group shrinkage", [](QuantileTtlCalibration& c) { c.group_shrink_rows = -1; },
     "per-job safe TTL: bad group shrinkage"},
    {"infinite group shrinkage",
     [](QuantileTtlCalibration& c) { c.group_shrink_rows = std::numeric_limits<double>::infinity(); },
     "per-job safe TTL: bad group shrinkage"},
    {"group ids out of order", [](QuantileTtlCalibration& c) { std::swap(c.group_ids[0], c.group_ids[1]); },
     "per-job safe TTL: group ids are not strictly increasing"},
    {"NaN calibration score", [](QuantileTtlCalibration& c) { c.global.values.back() = kNaNf; },
     "safe-TTL residual is not finite"},
};

std::string per_job_refusal(const std::vector<std::uint8_t>& body) {
  return refusal(test::with_section_body(model_file_bytes(real_model()), test::section_tag::kQuantileTtl, body));
}

TEST(SafeTtlSections, EachPerJobGuardRefusesItsHostileSection) {
  test::expect_each_refused(kPerJobMutations, real_model().safe_ttl.quantile,
                            [](const QuantileTtlCalibration& c) { return per_job_refusal(test::written(c)); },
                            "hostile.model (per-job safe TTL section): ");
  // An empty rule is never written, so its emptiness is a hostile section too.
  QuantileTtlCalibration no_scores = real_model().safe_ttl.quantile;
  no_scores.global = {};
  EXPECT_THAT(per_job_refusal(test::written(no_scores)), HasSubstr("per-job safe TTL: no calibration scores"));
  const QuantileTtlCalibration& c = real_model().safe_ttl.quantile;
  BinaryWriter groups;  // the fields before the group count, as write() puts them
  groups.put<float>(c.level);
  groups.put<std::uint32_t>(c.head);
  groups.put<std::uint64_t>(c.min_group_rows);
  groups.put<double>(c.group_shrink_rows);
  write_residual_quantiles(groups, c.global);
  groups.put<std::uint64_t>((1u << 20) + 1);
  EXPECT_THAT(per_job_refusal(groups.bytes()), HasSubstr("per-job safe TTL claims 1048577 groups"));
}

}  // namespace
}  // namespace ttlpred
