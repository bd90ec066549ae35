// `ttlpred export --model M --onnx OUT.onnx` and `ttlpred import --onnx IN.onnx --encoder
// ENC.json --out M`: ttlpred's network to and from ONNX, with the JSON sidecar that carries
// the encoder, target transform and safe-TTL table (docs/interop.md).
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "interop/onnx_files.hpp"
#include "model/model_file.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {

namespace {

struct ExportOptions {
  std::string model, onnx, sidecar;
  bool int8 = false;
};

struct ImportOptions {
  std::string onnx, encoder, out;
};

}  // namespace

void add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportOptions>();
  auto* cmd = app.add_subcommand("export",
                                 "Write a model's network as an ONNX graph (fp32) and a JSON sidecar with its feature "
                                 "encoder, target transform and safe-TTL table, for ONNX Runtime or Triton");
  cmd->add_option("--model", o->model, "model file")->required();
  cmd->add_option("--onnx", o->onnx, "ONNX file to write (atomically)")->required();
  cmd->add_option("--sidecar", o->sidecar, "sidecar JSON to write (default: the ONNX path with .json)");
  cmd->add_flag("--int8", o->int8,
                "the int8-static variant as a QDQ graph (needs the model's int8 calibration: ttlpred quantize)");
  cmd->callback([o] {
    const ModelFile m = load_model_file(o->model);
    const std::string side = o->sidecar.empty() ? interop::sidecar_path_for(o->onnx) : o->sidecar;
    interop::export_onnx(m, o->onnx, side, o->int8);
    std::printf("wrote %s (opset 13, %s) and %s\n", o->onnx.c_str(), o->int8 ? "int8 QDQ" : "fp32", side.c_str());
  });
}

void add_import_command(CLI::App& app) {
  auto o = std::make_shared<ImportOptions>();
  auto* cmd = app.add_subcommand("import",
                                 "Make a ttlpred model file from an ONNX MLP trained elsewhere and the JSON sidecar of "
                                 "its encoder (from `ttlpred export`)");
  cmd->add_option("--onnx", o->onnx, "ONNX model: Gemm/MatMul+Add layers, Relu/LeakyRelu, Gather embeddings")->required();
  cmd->add_option("--encoder", o->encoder, "sidecar JSON with the feature encoder, target and safe-TTL calibration")->required();
  cmd->add_option("--out", o->out, "model file to write (atomically)")->required();
  cmd->callback([o] {
    const ModelFile m = interop::import_onnx(o->onnx, o->encoder);
    save_model_file(o->out, m);
    std::size_t params = 0;
    for (const auto& l : m.mlp.layers) params += l.weight.size() + l.bias.size();
    for (const auto& e : m.mlp.embeddings) params += e.table.size();
    std::fprintf(stderr,
                 "import: the safe-TTL calibration is the sidecar's, made on the residuals of the network it was exported "
                 "with; check the kill rate with `ttlpred eval` before serving\n");
    std::printf("imported %s: %zu layers, %zu embeddings, %zu parameters\nwrote %s\n", o->onnx.c_str(), m.mlp.layers.size(),
                m.mlp.embeddings.size(), params, o->out.c_str());
  });
}

}  // namespace ttlpred::cli
