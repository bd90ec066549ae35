#include "interop/onnx_files.hpp"


#include "features/encoder.hpp"
#include "interop/onnx_graph.hpp"
#include "interop/sidecar.hpp"
#include "model/creation_time.hpp"
#include "quant/activation_ranges_io.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/version.hpp"

namespace ttlpred::interop {

std::string sidecar_path_for(const std::string& onnx_path) {
  const std::string ext = ".onnx";
  if (onnx_path.size() > ext.size() && onnx_path.compare(onnx_path.size() - ext.size(), ext.size(), ext) == 0)
    return onnx_path.substr(0, onnx_path.size() - ext.size()) + ".json";
  return onnx_path + ".json";
}

void export_onnx(const ModelFile& m, const std::string& onnx_path, const std::string& sidecar_path, bool int8) {
  const std::string base = onnx_path.substr(onnx_path.rfind('/') + 1);
  const std::string doc = std::string("ttlpred run-time model (") + (int8 ? "int8-static, QDQ" : "fp32") +
                          "). Inputs and output are described by the sidecar " + sidecar_path.substr(sidecar_path.rfind('/') + 1) +
                          " (docs/interop.md).";
  onnx::ModelProto proto;
  if (int8) {
    if (m.int8_calibration.empty())
      throw Error("ONNX export --int8: the model has no int8 calibration (run `ttlpred quantize`, or train with --qat int8)");
    const quant::ActivationRanges table = quant::parse_activation_ranges(m.int8_calibration, "model int8 calibration");
    Int8Layers q;
    for (const auto& r : table.layer_inputs) {
      q.act_lo.push_back(r.lo);
      q.act_hi.push_back(r.hi);
    }
    q.act_qmax = table.act_qmax > 0 ? table.act_qmax : 255.0f;
    proto = mlp_to_onnx_int8(m.mlp, q, doc);
  } else {
    proto = mlp_to_onnx(m.mlp, doc);
  }
  std::string bytes;
  if (!proto.SerializeToString(&bytes)) throw Error(onnx_path + ": could not serialize the ONNX graph");
  const std::string side = sidecar_json(m, base).dump(2) + "\n";
  // The sidecar first: a graph on disk is never without the file that explains it.
  write_file_atomic(sidecar_path, std::span(reinterpret_cast<const std::uint8_t*>(side.data()), side.size()));
  write_file_atomic(onnx_path, std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

ModelFile import_onnx(const std::string& onnx_path, const std::string& sidecar_path) {
  const std::vector<std::uint8_t> raw = read_file_bytes(onnx_path);
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(raw.data(), static_cast<int>(raw.size())))
    throw Error(onnx_path + ": not an ONNX model (the protobuf does not parse)");
  ModelFile m;
  m.mlp = mlp_from_onnx(proto, onnx_path);
  const std::vector<std::uint8_t> side = read_file_bytes(sidecar_path);
  const auto j = nlohmann::json::parse(side.begin(), side.end(), nullptr, false);
  if (j.is_discarded()) throw Error(sidecar_path + ": not JSON");
  apply_sidecar(j, m, sidecar_path);
  if (m.mlp.layers.back().out != m.target.outputs())
    throw Error(onnx_path + ": the graph outputs " + std::to_string(m.mlp.layers.back().out) + " values per job, the target of " +
                sidecar_path + " decodes " + std::to_string(m.target.outputs()) + " (the run time and " +
                std::to_string(m.target.quantiles.size()) + " quantile heads)");

  // The network must read exactly what the sidecar's encoder writes.
  const FeatureEncoder enc = FeatureEncoder::from_bytes(m.encoder, sidecar_path);
  if (m.mlp.dense_inputs != enc.dense_width())
    throw Error(onnx_path + ": the graph reads " + std::to_string(m.mlp.dense_inputs) + " dense features, the encoder of " +
                sidecar_path + " writes " + std::to_string(enc.dense_width()));
  const auto card = enc.cat_cardinality();
  if (m.mlp.embeddings.size() != card.size())
    throw Error(onnx_path + ": the graph embeds " + std::to_string(m.mlp.embeddings.size()) + " category columns, the encoder of " +
                sidecar_path + " has " + std::to_string(card.size()));
  for (std::size_t i = 0; i < card.size(); ++i)
    if (m.mlp.embeddings[i].cardinality != card[i])
      throw Error(onnx_path + ": embedding " + std::to_string(i) + " (" + enc.cat_names()[i] + ") has " +
                  std::to_string(m.mlp.embeddings[i].cardinality) + " rows, the encoder's vocabulary " + std::to_string(card[i]) +
                  " (unknown bucket included)");

  m.meta.created_utc = model_creation_time_utc();
  m.meta.ttlpred_version = kVersion;
  m.meta.config_json = nlohmann::json{{"imported_onnx", onnx_path.substr(onnx_path.rfind('/') + 1)},
                                      {"sidecar", sidecar_path.substr(sidecar_path.rfind('/') + 1)},
                                      {"producer", proto.producer_name()}}
                           .dump();
  // The safe-TTL calibration came with the sidecar, made on the residuals of the network it
  // was exported from; said here so `ttlpred model info` shows it.
  m.serving_variant = "fp32-fused";
  m.meta.metrics_json = nlohmann::json{{"safe_ttl_calibrated_on", "the network the sidecar was exported with"}}.dump();
  return m;
}

}  // namespace ttlpred::interop
