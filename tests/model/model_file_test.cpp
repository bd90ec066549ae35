#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "model/mlp_io.hpp"
#include "model/model_file.hpp"
#include "model_test_util.hpp"
#include "test_support.hpp"
#include "util/file_io.hpp"

namespace ttlpred {
namespace {

ModelFile sample_file() {
  ModelFile f;
  f.mlp = test::tiny_model();
  f.target.kind = TargetKind::Power;
  f.target.lambda = 0.25;
  f.target.mean = 1.5;
  f.target.stddev = 0.75;
  f.target.smear = {-0.5f, 0.f, 0.5f};
  const std::vector<float> wall = {100, 200, 400, 800, 1600, 3200};
  const std::vector<float> pred = {150, 150, 300, 900, 1000, 3000};
  const std::vector<std::uint32_t> grp = {1, 1, 2, 2, 2, kNoGroup};
  f.safe_ttl = calibrate_safe_ttl(wall, pred, grp, {}, "job_type");
  f.encoder = {1, 2, 3, 4};
  f.history = {9, 8};
  f.int8_calibration = {7};
  f.meta = {"abc123", "2026-11-29T20:00:00Z", R"({"rmse_hours":1.5})", R"({"epochs":3})", "0.1.0"};
  return f;
}

void expect_same(const ModelFile& a, const ModelFile& b) {
  ASSERT_EQ(a.mlp.dense_inputs, b.mlp.dense_inputs);
  ASSERT_EQ(a.mlp.embeddings.size(), b.mlp.embeddings.size());
  EXPECT_EQ(a.mlp.embeddings[0].table, b.mlp.embeddings[0].table);
  ASSERT_EQ(a.mlp.layers.size(), b.mlp.layers.size());
  for (std::size_t l = 0; l < a.mlp.layers.size(); ++l) {
    EXPECT_EQ(a.mlp.layers[l].weight, b.mlp.layers[l].weight);
    EXPECT_EQ(a.mlp.layers[l].bias, b.mlp.layers[l].bias);
    EXPECT_EQ(a.mlp.layers[l].act, b.mlp.layers[l].act);
  }
  EXPECT_EQ(a.target.kind, b.target.kind);
  EXPECT_EQ(a.target.lambda, b.target.lambda);
  EXPECT_EQ(a.target.mean, b.target.mean);
  EXPECT_EQ(a.target.stddev, b.target.stddev);
  EXPECT_EQ(a.target.smear, b.target.smear);
  EXPECT_EQ(a.safe_ttl.group_column, b.safe_ttl.group_column);
  EXPECT_EQ(a.safe_ttl.global.values, b.safe_ttl.global.values);
  EXPECT_EQ(a.safe_ttl.group_ids, b.safe_ttl.group_ids);
  EXPECT_EQ(a.encoder, b.encoder);
  EXPECT_EQ(a.history, b.history);
  EXPECT_EQ(a.int8_calibration, b.int8_calibration);
  EXPECT_EQ(a.meta.data_hash, b.meta.data_hash);
  EXPECT_EQ(a.meta.created_utc, b.meta.created_utc);
  EXPECT_EQ(a.meta.metrics_json, b.meta.metrics_json);
  EXPECT_EQ(a.meta.config_json, b.meta.config_json);
  EXPECT_EQ(a.meta.ttlpred_version, b.meta.ttlpred_version);
}

TEST(ModelFile, RoundTripsThroughDisk) {
  const auto f = sample_file();
  const std::string path = test::temp_dir() + "/m.ttlpred";
  save_model_file(path, f);
  const auto g = load_model_file(path);
  expect_same(f, g);
  EXPECT_DOUBLE_EQ(g.safe_ttl.safe_ttl(1000, 2, 0.5), f.safe_ttl.safe_ttl(1000, 2, 0.5));
}

TEST(ModelFile, OptionalSectionsMayBeAbsent) {
  auto f = sample_file();
  f.safe_ttl = {};
  f.encoder.clear();
  f.int8_calibration.clear();
  const auto g = parse_model_file(model_file_bytes(f), "mem");
  EXPECT_TRUE(g.safe_ttl.empty());
  EXPECT_TRUE(g.encoder.empty());
  EXPECT_EQ(g.history, f.history);
}

std::string load_error(const std::vector<std::uint8_t>& bytes) { return test::model_file_refusal(bytes, "bad.model"); }

// What read_mlp says when it refuses the network `m` as written by write_mlp.
std::string mlp_refusal(const MlpModel& m) {
  BinaryWriter s;
  write_mlp(s, m);
  BinaryReader r(s.bytes(), "crafted");
  try {
    read_mlp(r);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ModelFile, RefusesTruncatedFile) {
  auto bytes = model_file_bytes(sample_file());
  bytes.resize(bytes.size() - 10);
  const auto msg = load_error(bytes);
  EXPECT_NE(msg.find("bad.model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(ModelFile, RefusesCorruptedByte) {
  auto bytes = model_file_bytes(sample_file());
  bytes[bytes.size() / 2] ^= 0x40;
  EXPECT_NE(load_error(bytes).find("checksum mismatch"), std::string::npos);
}

TEST(ModelFile, RefusesFutureVersion) {
  auto bytes = model_file_bytes(sample_file());
  bytes[8] = static_cast<std::uint8_t>(kModelFileVersion + 1);  // version follows the 8-byte magic
  EXPECT_NE(load_error(bytes).find("newer than this build"), std::string::npos);
}

TEST(ModelFile, RefusesOtherFiles) {
  std::vector<std::uint8_t> bytes(64, 'x');
  EXPECT_NE(load_error(bytes).find("wrong magic"), std::string::npos);
}

TEST(ModelFile, RefusesLayersThatDoNotChain) {
  auto f = sample_file();
  f.mlp.layers[1].in = 6;  // previous layer has 5 outputs
  f.mlp.layers[1].weight.resize(6 * f.mlp.layers[1].out, 0.f);
  EXPECT_THROW(model_file_bytes(f), Error);  // refused on save already
  // And on load: craft the payload by hand with the same bad shape.
  const std::string msg = mlp_refusal(f.mlp);
  EXPECT_NE(msg.find("(previous layer's out)"), std::string::npos) << msg;
}

TEST(ModelFile, RefusesNaNWeight) {
  auto m = test::tiny_model();
  m.layers[2].weight[1] = std::numeric_limits<float>::quiet_NaN();
  const std::string msg = mlp_refusal(m);
  EXPECT_NE(msg.find("non-finite"), std::string::npos) << msg;
  EXPECT_NE(msg.find("layers[2]"), std::string::npos) << msg;
}

TEST(ModelFile, RefusesWrongLastLayer) {
  auto m = test::tiny_model();
  m.layers.back().act = Activation::Relu;
  EXPECT_THROW(validate_mlp(m, "m"), Error);
}

TEST(ModelFile, RefusesMissingFile) {
  EXPECT_THROW(load_model_file(test::temp_dir() + "/absent.model"), Error);
}

TEST(ModelFile, CountsParameters) {
  // embedding 4x2 + (5x5+5) + (4x5+4) + (1x4+1)
  EXPECT_EQ(mlp_parameter_count(test::tiny_model()), 8u + 30u + 24u + 5u);
}

}  // namespace
}  // namespace ttlpred
