#include "interop/sidecar.hpp"

#include <algorithm>

#include "features/encoder.hpp"
#include "interop/base64.hpp"
#include "interop/onnx_graph.hpp"
#include "util/binary_io.hpp"
#include "util/error.hpp"

namespace ttlpred::interop {

namespace {

// The safe TTL of a job is pred_s * exp(margin) at a chosen alpha; these alphas cover the
// kill rates operators pick (ttlpred's default is 0.01).
constexpr double kTableAlphas[] = {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1};

const char* source_name(DenseSource s) {
  switch (s) {
    case DenseSource::Field: return "field";
    case DenseSource::HourSin: return "hour_sin";
    case DenseSource::HourCos: return "hour_cos";
    case DenseSource::WeekSin: return "week_sin";
    case DenseSource::WeekCos: return "week_cos";
    case DenseSource::Missing: return "missing";
    case DenseSource::History: return "history";
  }
  return "?";
}

// A request-aware table in plain numbers (model/request_aware_ttl.hpp; docs/interop.md
// says how a job's safe TTL follows from it), so that a serving stack outside ttlpred can
// reproduce the safe TTL of a job with a request.
nlohmann::json request_table_json(const RequestAwareCalibration& t) {
  nlohmann::json exponents = nlohmann::json::array();
  for (const auto& row : t.q) exponents.push_back(row);
  return {{"floor_s", t.floor_s}, {"ratio_edges", t.edges}, {"alphas", t.alphas}, {"exponents", exponents}};
}

nlohmann::json encoder_json(const FeatureEncoder& enc) {
  using nlohmann::json;
  json dense = json::array();
  const auto names = enc.dense_names();
  for (std::size_t i = 0; i < enc.dense_columns().size(); ++i) {
    const auto& c = enc.dense_columns()[i];
    json d = {{"name", names[i]}, {"source", source_name(c.source)}, {"mean", c.mean}, {"inv_std", c.inv_std}};
    if (c.source == DenseSource::Field || c.source == DenseSource::Missing) d["field"] = std::string(info(c.field).name);
    if (c.source == DenseSource::Field) d["transform"] = c.transform == NumericTransform::Log1p ? "log1p" : "identity";
    if (c.source == DenseSource::History) d["history_index"] = c.index;
    dense.push_back(d);
  }
  json cats = json::array();
  for (const auto& c : enc.category_columns()) cats.push_back({{"field", std::string(info(c.field).name)}, {"vocabulary", c.vocabulary}});
  nlohmann::json out = {{"dense", dense}, {"categories", cats}, {"history_width", enc.history_width()}};
  // Only when the encoder has bins, so that other sidecars keep their bytes.
  if (!enc.piecewise_columns().empty()) {
    json piecewise = json::array();
    for (const PiecewiseColumn& pc : enc.piecewise_columns()) piecewise.push_back({{"dense_index", pc.column}, {"edges", pc.edges}});
    out["piecewise"] = piecewise;
  }
  return out;
}

// The per-job rule of a model with quantile heads (model/quantile_ttl.hpp) in plain numbers:
// the margins log_margin() gives at each table alpha, per group where the group has its own
// (already shrunk toward the global one) and for cold starts.
nlohmann::json quantile_ttl_json(const QuantileTtlCalibration& q) {
  using nlohmann::json;
  // As QuantileTtlCalibration::safe_ttl reads a margin among the never-killed scores.
  const auto margin = [&](std::uint32_t group, double a, bool is_cold) { return std::max(q.log_margin(group, a, is_cold), -50.0); };
  json global = json::array(), cold = json::array();
  for (double a : kTableAlphas) {
    global.push_back(margin(kNoGroup, a, false));
    cold.push_back(margin(kNoGroup, a, true));
  }
  json groups = json::array();
  for (std::size_t i = 0; i < q.group_ids.size(); ++i) {
    if (q.group_scores[i].n < q.min_group_rows) continue;  // it answers with the global margin
    const std::uint32_t id = q.group_ids[i];
    json row = json::array();
    for (double a : kTableAlphas) row.push_back(margin(id, a, false));
    groups.push_back({{"group", group_category(id)}, {"log_margin", row}});
    if (in_fallback_stratum(id)) groups.back()["fallback"] = true;
  }
  return {{"head", q.head}, {"level", q.level}, {"alphas", kTableAlphas}, {"global_log_margin", global},
          {"groups", groups}, {"cold_log_margin", cold}};
}

template <class T>
std::string sealed(const T& section) {
  BinaryWriter w;
  section.write(w);
  return base64_encode(w.bytes());
}

const nlohmann::json& key(const nlohmann::json& j, const char* name, const std::string& what, const std::string& path) {
  if (!j.is_object() || !j.contains(name)) throw Error(what + ": sidecar key " + path + name + " is missing");
  return j[name];
}

std::vector<std::uint8_t> unbase64(const nlohmann::json& j, const char* name, const std::string& what) {
  const auto& v = key(j, name, what, "ttlpred.");
  if (!v.is_string()) throw Error(what + ": sidecar key ttlpred." + name + " must be a base64 string");
  auto b = base64_decode(v.get<std::string>());
  if (!b) throw Error(what + ": sidecar key ttlpred." + name + " is not valid base64");
  return *b;
}

}  // namespace

nlohmann::json sidecar_json(const ModelFile& m, const std::string& onnx_file) {
  using nlohmann::json;
  const FeatureEncoder enc = FeatureEncoder::from_bytes(m.encoder, "model encoder");
  json j;
  j["format"] = kSidecarFormat;
  // Version 2 only where it matters: a residual model decodes wrong in a reader that does not
  // add its base, and readers of version 1 refuse version 2.
  j["version"] = !m.target.quantiles.empty() ? 3 : !m.target.residual.empty() ? 2 : 1;
  j["onnx_file"] = onnx_file;
  j["graph"] = {{"dense_input", kDenseInput},
                {"dense_width", m.mlp.dense_inputs},
                {"categories_input", m.mlp.embeddings.empty() ? json(nullptr) : json(kCategoriesInput)},
                {"categories_width", m.mlp.embeddings.size()},
                {"output", kOutput},
                {"opset", kOpset}};
  j["encoder"] = encoder_json(enc);
  j["target"] = {{"kind", target_kind_name(m.target.kind)},
                 {"lambda", m.target.lambda},
                 {"mean", m.target.mean},
                 {"stddev", m.target.stddev},
                 {"smear", m.target.smear}};
  if (!m.target.residual.empty()) {
    const ResidualBase& b = m.target.residual;
    json cols = json::array();
    for (const auto& c : b.columns)
      cols.push_back({{"name", c.name},
                      {"dense_index", c.dense},
                      {"mean", c.mean},
                      {"inv_std", c.inv_std},
                      {"scale", c.scale == BaseScale::Hours ? "hours" : "log1p_seconds"}});
    j["target"]["residual"] = {{"group_categories_index", b.group_cat < 0 ? json(nullptr) : json(b.group_cat)},
                               {"columns_by_group", b.by_group},
                               {"columns", cols}};
  }
  if (!m.target.quantiles.empty()) j["target"]["quantiles"] = {{"levels", m.target.quantiles.levels}};
  json st;
  st["calibrated"] = !m.safe_ttl.empty();
  if (!m.safe_ttl.empty()) {
    st["group_column"] = m.safe_ttl.group_column;
    st["floor_s"] = m.safe_ttl.floor_s;
    st["alphas"] = kTableAlphas;
    json global = json::array();
    for (double a : kTableAlphas) global.push_back(m.safe_ttl.log_margin(kNoGroup, a));
    st["global_log_margin"] = global;
    json groups = json::array();
    for (auto id : m.safe_ttl.group_ids) {
      json row = json::array();
      for (double a : kTableAlphas) row.push_back(m.safe_ttl.log_margin(id, a));
      groups.push_back({{"group", group_category(id)}, {"log_margin", row}});
      if (in_fallback_stratum(id)) groups.back()["fallback"] = true;
    }
    st["groups"] = groups;
    st["request_aware"] = !m.safe_ttl.request.empty();
    if (!m.safe_ttl.request.empty()) st["request_aware_table"] = request_table_json(m.safe_ttl.request);
    // Which jobs have request-aware tables of their own, and the tables.
    if (!m.safe_ttl.request_keys.empty()) {
      st["request_aware_tables"] = m.safe_ttl.request_by_group ? "group" : "fallback";
      json own = json::array();
      for (std::size_t i = 0; i < m.safe_ttl.request_keys.size(); ++i) {
        const std::uint32_t key = m.safe_ttl.request_keys[i];
        json entry = {{"fallback", in_fallback_stratum(key)}, {"table", request_table_json(m.safe_ttl.request_tables[i])}};
        if (m.safe_ttl.request_by_group) entry["group"] = group_category(key);
        own.push_back(entry);
      }
      st["request_aware_by_key"] = own;
    }
    if (!m.safe_ttl.quantile.empty()) st["quantile"] = quantile_ttl_json(m.safe_ttl.quantile);
  }
  j["safe_ttl"] = st;
  const auto& p = m.provenance;
  json fields = json::array();
  for (const auto& f : p.fields) fields.push_back({{"name", f.name}, {"known_share", f.known_share}});
  j["training"] = {{"data_hash", m.meta.data_hash},     {"created_utc", m.meta.created_utc},
                   {"ttlpred_version", m.meta.ttlpred_version}, {"trace_format", p.trace_format},
                   {"trace_name", p.trace_name},         {"split", p.split},
                   {"eligible_rows", p.eligible_rows},   {"train_rows", p.train_rows},
                   {"data_hash_all", p.data_hash_all},   {"last_train_submit", p.last_train_submit},
                   {"fields", fields}};
  j["ttlpred"] = {{"encoder", base64_encode(m.encoder)},
                  {"history", base64_encode(m.history)},
                  {"target", sealed(m.target)},
                  {"safe_ttl", m.safe_ttl.empty() ? std::string() : sealed(m.safe_ttl)}};
  if (!m.target.residual.empty()) j["ttlpred"]["residual"] = sealed(m.target.residual);
  if (!m.target.quantiles.empty()) {
    j["ttlpred"]["quantile_heads"] = sealed(m.target.quantiles);
    j["ttlpred"]["quantile_ttl"] = m.safe_ttl.quantile.empty() ? std::string() : sealed(m.safe_ttl.quantile);
  }
  return j;
}

void apply_sidecar(const nlohmann::json& j, ModelFile& m, const std::string& what) {
  try {
    if (!j.is_object() || j.value("format", std::string()) != kSidecarFormat)
      throw Error(what + ": not a ttlpred ONNX sidecar (key format must be \"" + kSidecarFormat + "\")");
    const int version = j.value("version", 0);
    if (version < 1 || version > kSidecarVersion)
      throw Error(what + ": sidecar version " + key(j, "version", what, "").dump() + " is not 1 to " +
                  std::to_string(kSidecarVersion));
    const auto& t = key(j, "ttlpred", what, "");
    m.encoder = unbase64(t, "encoder", what);
    m.history = unbase64(t, "history", what);
    FeatureEncoder::from_bytes(m.encoder, what + ": ttlpred.encoder");  // validates
    const auto target = unbase64(t, "target", what);
    BinaryReader tr(target, what + ": ttlpred.target");
    m.target = TargetTransform::read(tr);
    // Version 2 is written for a residual model alone; version 3 for a model with heads, with
    // or without a residual base.
    if (version == 2 || (version >= 3 && t.is_object() && t.contains("residual"))) {
      const auto residual = unbase64(t, "residual", what);
      BinaryReader rr(residual, what + ": ttlpred.residual");
      m.target.residual = ResidualBase::read(rr);
      if (m.target.residual.empty()) throw Error(what + ": ttlpred.residual is empty");
    }
    if (version >= 3) {
      const auto heads = unbase64(t, "quantile_heads", what);
      BinaryReader hr(heads, what + ": ttlpred.quantile_heads");
      m.target.quantiles = QuantileHeads::read(hr);
      if (!hr.at_end()) hr.fail("unexpected trailing bytes");
      if (m.target.quantiles.empty()) throw Error(what + ": a version 3 sidecar needs ttlpred.quantile_heads");
    }
    const auto safe = unbase64(t, "safe_ttl", what);
    if (!safe.empty()) {
      BinaryReader sr(safe, what + ": ttlpred.safe_ttl");
      m.safe_ttl = SafeTtlCalibration::read(sr);
    }
    if (version >= 3) {
      const auto rule = unbase64(t, "quantile_ttl", what);
      if (!rule.empty()) {
        if (safe.empty()) throw Error(what + ": ttlpred.quantile_ttl without ttlpred.safe_ttl");
        BinaryReader qr(rule, what + ": ttlpred.quantile_ttl");
        m.safe_ttl.quantile = QuantileTtlCalibration::read(qr, m.target.quantiles.size());
        if (!qr.at_end()) qr.fail("unexpected trailing bytes");
      }
    }
    const auto& tr_json = key(j, "training", what, "");
    m.meta.data_hash = tr_json.value("data_hash", std::string());
    auto& p = m.provenance;
    p.trace_format = tr_json.value("trace_format", std::string());
    p.trace_name = tr_json.value("trace_name", std::string());
    p.split = tr_json.value("split", 0.0);
    p.eligible_rows = tr_json.value("eligible_rows", std::uint64_t{0});
    p.train_rows = tr_json.value("train_rows", std::uint64_t{0});
    p.data_hash_all = tr_json.value("data_hash_all", std::string());
    p.last_train_submit = tr_json.value("last_train_submit", 0.0);
    p.fields.clear();
    if (tr_json.contains("fields"))
      for (const auto& f : tr_json["fields"]) p.fields.push_back({f.at("name").get<std::string>(), f.at("known_share").get<float>()});
  } catch (const nlohmann::json::exception& e) {
    throw Error(what + ": malformed sidecar: " + e.what());
  }
}

}  // namespace ttlpred::interop
