// `ttlpred model info MODEL [--json]`: what a model file holds, without running it: the
// network's shape, the variant it was made for, its calibrations, and what it was trained
// on (data hash, trace, split, metrics, date). For an operator deciding which model to serve.
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "model/model_file.hpp"
#include "predict/predictor.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {

namespace {

struct ModelInfoOptions {
  std::string model;
  bool json = false;
};

// Metadata strings hold JSON written by the trainer; an older or foreign file may hold
// anything, which is shown as text rather than refused.
nlohmann::json json_or_text(const std::string& s) {
  if (s.empty()) return nullptr;
  auto j = nlohmann::json::parse(s, nullptr, false);
  return j.is_discarded() ? nlohmann::json(s) : j;
}

nlohmann::json model_info_json(const std::string& path, const ModelFile& m) {
  using nlohmann::json;
  json arch;
  arch["dense_inputs"] = m.mlp.dense_inputs;
  json emb = json::array();
  std::uint64_t params = 0;
  for (const auto& e : m.mlp.embeddings) {
    emb.push_back({{"cardinality", e.cardinality}, {"dim", e.dim}});
    params += e.table.size();
  }
  arch["embeddings"] = emb;
  json layers = json::array();
  for (const auto& l : m.mlp.layers) {
    layers.push_back({{"in", l.in}, {"out", l.out}, {"activation", activation_name(l.act)}});
    params += l.weight.size() + l.bias.size();
  }
  arch["layers"] = layers;
  arch["parameters"] = params;

  json calib;
  calib["safe_ttl"] = !m.safe_ttl.empty();
  if (!m.safe_ttl.empty()) {
    calib["group_column"] = m.safe_ttl.group_column;
    calib["groups"] = m.safe_ttl.group_ids.size();
    calib["calibration_rows"] = m.safe_ttl.global.n;
    calib["request_aware_alphas"] = m.safe_ttl.request.alphas;
    // Request-aware tables of their own (model/safe_ttl.hpp): per group, or for the jobs of a
    // residual model that fall back; 0 when one table serves every job.
    calib["request_aware_tables"] = m.safe_ttl.request_keys.size();
    if (!m.safe_ttl.request_keys.empty()) calib["request_aware_tables_by"] = m.safe_ttl.request_by_group ? "group" : "fallback";
  }
  calib["int8_activation_ranges"] = !m.int8_calibration.empty();

  json training;
  training["data_hash"] = m.meta.data_hash;
  training["created_utc"] = m.meta.created_utc;
  training["ttlpred_version"] = m.meta.ttlpred_version;
  const auto& p = m.provenance;
  if (!p.empty()) {
    training.update({{"trace_format", p.trace_format}, {"trace_name", p.trace_name}, {"split", p.split}});
    training.update({{"eligible_rows", p.eligible_rows}, {"train_rows", p.train_rows}});
    training.update({{"data_hash_all", p.data_hash_all}, {"last_train_submit", p.last_train_submit}});
    json fields = json::array();
    for (const auto& f : p.fields) fields.push_back({{"name", f.name}, {"known_share", f.known_share}});
    training["fields"] = fields;
  }

  struct stat st {};
  json out;
  out["file"] = path;
  if (::stat(path.c_str(), &st) == 0) out["bytes"] = static_cast<std::uint64_t>(st.st_size);
  out["variant"] = std::string(engine::variant_name(model_made_for(m)));
  out["architecture"] = arch;
  out["target"] = {{"kind", target_kind_name(m.target.kind)}, {"mean", m.target.mean}, {"stddev", m.target.stddev}};
  if (m.target.kind == TargetKind::Power) out["target"]["lambda"] = m.target.lambda;
  if (!m.target.residual.empty()) {
    json bases = json::array();
    for (const auto& c : m.target.residual.columns) bases.push_back(c.name);
    out["target"]["residual_base_columns"] = bases;  // per group: metrics.residual_base
  }
  out["calibration"] = calib;
  out["training"] = training;
  out["metrics"] = json_or_text(m.meta.metrics_json);
  out["config"] = json_or_text(m.meta.config_json);
  return out;
}

std::string widths(const nlohmann::json& arch) {
  std::string s = std::to_string(arch["layers"].empty() ? 0 : arch["layers"][0]["in"].get<unsigned>());
  for (const auto& l : arch["layers"]) s += " -> " + std::to_string(l["out"].get<unsigned>());
  return s;
}

void run_model_info(const ModelInfoOptions& o) {
  const ModelFile m = load_model_file(o.model);
  const nlohmann::json j = model_info_json(o.model, m);
  if (o.json) {
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  const auto& a = j["architecture"];
  std::printf("model %s\n", o.model.c_str());
  std::printf("  variant       %s\n", j["variant"].get<std::string>().c_str());
  std::printf("  architecture  %u dense inputs + %zu embeddings; layers %s; %llu parameters\n",
              a["dense_inputs"].get<unsigned>(), a["embeddings"].size(), widths(a).c_str(),
              static_cast<unsigned long long>(a["parameters"].get<std::uint64_t>()));
  std::printf("  target        %s (mean %.4g, stddev %.4g)\n", j["target"]["kind"].get<std::string>().c_str(),
              m.target.mean, m.target.stddev);
  if (!m.target.residual.empty())
    std::printf("  residual of   %zu history estimates (metrics.residual_base lists them per group)\n",
                m.target.residual.columns.size());
  const auto& c = j["calibration"];
  if (c["safe_ttl"].get<bool>())
    std::printf("  safe TTL      calibrated on %llu jobs, groups: %s (%zu), request-aware: %s\n",
                static_cast<unsigned long long>(c["calibration_rows"].get<std::uint64_t>()),
                m.safe_ttl.group_column.empty() ? "none" : m.safe_ttl.group_column.c_str(), m.safe_ttl.group_ids.size(),
                m.safe_ttl.request.empty()            ? "no"
                : m.safe_ttl.request_keys.empty()     ? "yes"
                : m.safe_ttl.request_by_group         ? "yes, a table per large group"
                                                      : "yes, fallback jobs apart");
  else
    std::printf("  safe TTL      not calibrated\n");
  std::printf("  int8 ranges   %s\n", m.int8_calibration.empty() ? "none" : "present (int8-static)");
  std::printf("  data hash     %s\n", m.meta.data_hash.empty() ? "-" : m.meta.data_hash.c_str());
  const auto& p = m.provenance;
  if (!p.empty())
    std::printf("  trained on    %s (%s): first %llu of %llu eligible jobs, split %.3g\n", p.trace_name.c_str(),
                p.trace_format.empty() ? "?" : p.trace_format.c_str(), static_cast<unsigned long long>(p.train_rows),
                static_cast<unsigned long long>(p.eligible_rows), p.split);
  else
    std::printf("  trained on    (no provenance section: a model file from before it existed)\n");
  std::printf("  created       %s by ttlpred %s\n", m.meta.created_utc.empty() ? "-" : m.meta.created_utc.c_str(),
              m.meta.ttlpred_version.empty() ? "?" : m.meta.ttlpred_version.c_str());
  if (!j["metrics"].is_null()) std::printf("  metrics       %s\n", j["metrics"].dump().c_str());
}

}  // namespace

void add_model_command(CLI::App& app) {
  auto* model = app.add_subcommand("model", "Look into model files");
  model->require_subcommand(1);
  auto o = std::make_shared<ModelInfoOptions>();
  auto* info = model->add_subcommand("info",
                                     "What a model file holds: architecture, variant, calibration, training data hash, "
                                     "split, metrics, date");
  info->add_option("model", o->model, "model file")->required();
  info->add_flag("--json", o->json, "print one JSON object instead of text");
  info->callback([o] { run_model_info(*o); });
}

}  // namespace ttlpred::cli
