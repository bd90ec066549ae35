#include "pipeline/model_cache.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/schema.hpp"
#include "features/history.hpp"
#include "model/request_aware_ttl.hpp"
#include "train/train_config.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"
#include "util/version.hpp"

namespace ttlpred {
namespace {

// The settings a model was saved under; empty when there are none.
std::string saved_settings(const std::filesystem::path& p) {
  if (!std::filesystem::exists(p)) return {};
  const std::vector<std::uint8_t> bytes = read_file_bytes(p.string());
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace

std::string fit_settings_json(const FitOptions& o) {
  if (o.init || o.compression.any())
    throw Error("a model folder keeps models trained from scratch without compression");
  nlohmann::json fields = nlohmann::json::array();
  for (Field f : o.encoder.fields) fields.push_back(std::string(info(f).name));
  const RequestAwareOptions& r = o.safe_ttl.request;
  nlohmann::json j = {
      {"train", nlohmann::json::parse(train_config_json(o.train))},
      {"ensemble", o.ensemble},
      {"encoder",
       {{"min_category_count", o.encoder.min_category_count},
        {"cyclic_time", o.encoder.cyclic_time},
        {"max_phase", static_cast<int>(o.encoder.max_phase)},
        {"fields", fields}}},
      {"calibration_fraction", o.calibration_fraction},
      {"group_column", o.group_column},
      {"safe_ttl",
       {{"min_group_rows", o.safe_ttl.min_group_rows},
        {"max_stored_global", o.safe_ttl.max_stored_global},
        {"max_stored_group", o.safe_ttl.max_stored_group},
        {"floor_s", o.safe_ttl.floor_s},
        {"request_aware", o.safe_ttl.request_aware},
        {"request",
         {{"max_bins", r.max_bins},
          {"min_bin_rows", r.min_bin_rows},
          {"alpha_scale", r.alpha_scale},
          {"min_saving_per_kill", r.min_saving_per_kill},
          {"max_exponent", r.max_exponent},
          {"floor_s", r.floor_s},
          {"budget", kill_budget_name(r.budget)}}}}},
      {"prediction_time", std::string(prediction_time_name(o.at))},
      {"censored", o.censored}};
  // Only when on, so that the settings of models cached before these options existed still match.
  if (o.residual) j["residual"] = true;
  if (o.request_key) j["request_key"] = true;
  if (o.system_key) j["system_key"] = true;
  if (o.censored_rates) j["censored_rates"] = true;
  if (o.safe_ttl.request_by_group) j["safe_ttl"]["request_by_group"] = true;
  if (o.encoder.piecewise_bins > 0) j["encoder"]["piecewise_bins"] = o.encoder.piecewise_bins;
  return j.dump();
}

CachedFit fit_or_reuse_model(const ChronologicalSplit& split, const FitOptions& options, const std::string& dir,
                             const std::string& trace_digest) {
  CachedFit out;
  if (dir.empty()) {
    out.model = fit_model(split, options, ProgressFn{});
    return out;
  }
  char name[64];
  std::snprintf(name, sizeof name, "split-%.6g", split.fraction);
  const std::filesystem::path base = std::filesystem::path(dir) / name;
  const std::filesystem::path model_path = base.string() + ".model", settings_path = base.string() + ".json";
  const nlohmann::json settings = {{"trace_digest", trace_digest},
                                   {"split", split.fraction},
                                   {"eligible_rows", split.jobs.rows()},
                                   {"train_rows", split.train_rows},
                                   {"fit", nlohmann::json::parse(fit_settings_json(options))},
                                   {"ttlpred_version", kVersion}};
  const std::string text = settings.dump(2) + "\n";
  if (std::filesystem::exists(model_path) && saved_settings(settings_path) == text) {
    out.model = load_model_file(model_path.string());
    out.reused = true;
    return out;
  }
  out.model = fit_model(split, options, ProgressFn{});
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create the model folder: " + ec.message());
  // Settings go last: a run stopped while the model is written leaves none that match it.
  std::filesystem::remove(settings_path, ec);
  save_model_file(model_path.string(), out.model);
  write_file_atomic(settings_path.string(), std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  return out;
}

}  // namespace ttlpred
