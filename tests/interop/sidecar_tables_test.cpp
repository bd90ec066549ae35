// The sidecar's safe-TTL tables in plain numbers: the request-aware table every job with a
// request uses, and the tables of their own that groups (train --ttl-by-group) or the
// fallback stratum carry, each under the key that picks it (docs/interop.md, "The sidecar").
#include <gtest/gtest.h>

#include <string>

#include "interop/sidecar.hpp"
#include "model/model_file.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

RequestAwareCalibration table(float low_bin, float high_bin) {
  RequestAwareCalibration t;
  t.floor_s = 1.0;
  t.edges = {0.25f};
  t.alphas = {0.01, 0.05};
  t.q = {{low_bin, high_bin}, {low_bin / 2, high_bin / 2}};
  return t;
}

TEST(SidecarTables, EveryRequestAwareTableIsWrittenUnderItsKey) {
  const std::string path = test::temp_dir() + "/m.model";
  test::write_test_model(path, 3);
  ModelFile m = load_model_file(path);
  ASSERT_FALSE(m.safe_ttl.empty());
  m.safe_ttl.request = table(0.5f, 0.9f);
  m.safe_ttl.request_by_group = true;
  m.safe_ttl.request_keys = {2, 3 | kFallbackStratum};
  m.safe_ttl.request_tables = {table(0.25f, 0.75f), table(0.125f, 0.625f)};
  const nlohmann::json st = interop::sidecar_json(m, "m.onnx")["safe_ttl"];
  EXPECT_TRUE(st["request_aware"].get<bool>());
  EXPECT_EQ(st["request_aware_table"]["ratio_edges"], nlohmann::json::array({0.25}));
  EXPECT_EQ(st["request_aware_table"]["alphas"], nlohmann::json::array({0.01, 0.05}));
  // The exponents are the table's floats, widened exactly.
  EXPECT_EQ(st["request_aware_table"]["exponents"],
            nlohmann::json::array({nlohmann::json::array({0.5, static_cast<double>(0.9f)}),
                                   nlohmann::json::array({0.25, static_cast<double>(0.9f / 2)})}));
  EXPECT_EQ(st["request_aware_table"]["floor_s"], 1.0);
  EXPECT_EQ(st["request_aware_tables"], "group");
  ASSERT_EQ(st["request_aware_by_key"].size(), 2u);
  EXPECT_EQ(st["request_aware_by_key"][0]["group"], 2);
  EXPECT_FALSE(st["request_aware_by_key"][0]["fallback"].get<bool>());
  EXPECT_EQ(st["request_aware_by_key"][0]["table"]["exponents"][0], nlohmann::json::array({0.25, 0.75}));
  EXPECT_EQ(st["request_aware_by_key"][1]["group"], 3);
  EXPECT_TRUE(st["request_aware_by_key"][1]["fallback"].get<bool>());
  EXPECT_EQ(st["request_aware_by_key"][1]["table"]["exponents"][0], nlohmann::json::array({0.125, 0.625}));

  // Tables by stratum only (a residual model without --ttl-by-group): no group key.
  m.safe_ttl.request_by_group = false;
  m.safe_ttl.request_keys = {kFallbackStratum};
  m.safe_ttl.request_tables = {table(0.25f, 0.75f)};
  const nlohmann::json by_stratum = interop::sidecar_json(m, "m.onnx")["safe_ttl"];
  EXPECT_EQ(by_stratum["request_aware_tables"], "fallback");
  ASSERT_EQ(by_stratum["request_aware_by_key"].size(), 1u);
  EXPECT_FALSE(by_stratum["request_aware_by_key"][0].contains("group"));
  EXPECT_TRUE(by_stratum["request_aware_by_key"][0]["fallback"].get<bool>());

  // Without a request-aware calibration there is no table to write.
  m.safe_ttl.request = {};
  m.safe_ttl.request_keys.clear();
  m.safe_ttl.request_tables.clear();
  const nlohmann::json none = interop::sidecar_json(m, "m.onnx")["safe_ttl"];
  EXPECT_FALSE(none["request_aware"].get<bool>());
  EXPECT_FALSE(none.contains("request_aware_table"));
  EXPECT_FALSE(none.contains("request_aware_by_key"));
}

}  // namespace
}  // namespace ttlpred
