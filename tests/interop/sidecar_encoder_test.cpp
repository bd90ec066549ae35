// The sidecar's encoder in plain numbers for a model with piecewise-linear bins: a serving
// stack outside ttlpred builds the graph's dense input from the dense columns and then the
// bins (docs/interop.md, "The sidecar"), so the two together must be the graph's width.
#include <gtest/gtest.h>

#include <string>

#include "features/encoder.hpp"
#include "interop/sidecar.hpp"
#include "model/model_file.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

TEST(SidecarEncoder, PiecewiseBinsAreWrittenWithTheirEdges) {
  const std::string path = test::temp_dir() + "/bins.model";
  test::write_test_model(path, 3, {HistoryKey::All, HistoryKey::User}, PredictionTime::Submit, false, 4);
  const ModelFile m = load_model_file(path);
  const FeatureEncoder enc = FeatureEncoder::from_bytes(m.encoder, "test model");
  ASSERT_FALSE(enc.piecewise_columns().empty());
  const nlohmann::json side = interop::sidecar_json(m, "m.onnx")["encoder"];
  const auto& pw = side["piecewise"];
  ASSERT_EQ(pw.size(), enc.piecewise_columns().size());
  std::size_t width = side["dense"].size();
  for (std::size_t i = 0; i < pw.size(); ++i) {
    EXPECT_EQ(pw[i]["dense_index"].get<std::uint32_t>(), enc.piecewise_columns()[i].column);
    EXPECT_EQ(pw[i]["edges"].get<std::vector<float>>(), enc.piecewise_columns()[i].edges);
    width += pw[i]["edges"].size() - 1;
  }
  EXPECT_EQ(width, m.mlp.dense_inputs);

  // Without bins the key is absent (other sidecars keep their bytes).
  const std::string plain = test::temp_dir() + "/plain.model";
  test::write_test_model(plain, 3);
  EXPECT_FALSE(interop::sidecar_json(load_model_file(plain), "m.onnx")["encoder"].contains("piecewise"));
}

}  // namespace
}  // namespace ttlpred
