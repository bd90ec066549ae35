#include "serve/outcome_record.hpp"

#include <algorithm>
#include <cmath>

#include "serve/job_json.hpp"

namespace ttlpred::serve {
namespace {

using nlohmann::json;

void key_number(std::string& out, const char* key, double v) {
  out += key;
  append_number(out, v);
}

void append_served(std::string& out, const ServedPrediction& s) {
  const OnlineDecision& d = s.decision;
  out += "{\"model_version\":\"";
  out.append(s.model_version.data(), s.model_version.size());
  out += '"';
  key_number(out, ",\"predicted_at\":", s.predicted_at);
  out += ",\"calibration\":\"";
  out += online_method_name(s.method);
  out += '"';
  key_number(out, ",\"expected_wall_s\":", d.job.pred_s);
  key_number(out, ",\"safe_ttl_s\":", d.ttl_s);
  if (d.job.requested_s > 0) {
    key_number(out, ",\"requested_ttl_s\":", d.job.requested_s);
  } else {
    out += ",\"requested_ttl_s\":null";
  }
  key_number(out, ",\"level\":", d.level);
  out += ",\"group\":";
  out += d.job.group == kNoGroup ? "null" : std::to_string(d.job.group);
  out += ",\"key\":";
  out += std::to_string(d.job.key);
  if (s.method == OnlineMethod::MultiAci) {
    out += ",\"expert_ttl_s\":[";
    for (std::size_t k = 0; k < d.expert_ttl_s.size(); ++k) {
      if (k) out += ',';
      append_number(out, d.expert_ttl_s[k]);
    }
    out += ']';
  }
  out += '}';
}

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw RequestError(400, "journal field '" + field + "' " + why, field);
}

double number_at(const json& o, const char* key, const std::string& where) {
  const auto it = o.find(key);
  if (it == o.end() || !it->is_number()) bad(where + "." + key, "must be a number");
  const double v = it->get<double>();
  if (!std::isfinite(v)) bad(where + "." + key, "must be finite");
  return v;
}

ServedPrediction served_from_json(const json& o) {
  if (!o.is_object()) bad("served", "must be an object or null");
  ServedPrediction s;
  const auto version = o.find("model_version");
  if (version == o.end() || !version->is_string() || version->get_ref<const std::string&>().size() != s.model_version.size())
    bad("served.model_version", "must be a string of 16 hex digits");
  std::copy_n(version->get_ref<const std::string&>().data(), s.model_version.size(), s.model_version.begin());
  const auto method = o.find("calibration");
  if (method == o.end() || !method->is_string()) bad("served.calibration", "must be a method name");
  try {
    s.method = online_method_from_name(method->get<std::string>());
  } catch (const std::exception& e) {
    bad("served.calibration", e.what());
  }
  s.predicted_at = number_at(o, "predicted_at", "served");
  OnlineDecision& d = s.decision;
  d.job.pred_s = number_at(o, "expected_wall_s", "served");
  d.ttl_s = number_at(o, "safe_ttl_s", "served");
  const auto req = o.find("requested_ttl_s");
  if (req == o.end()) bad("served.requested_ttl_s", "is missing (null: none)");
  d.job.requested_s = req->is_null() ? 0.0 : number_at(o, "requested_ttl_s", "served");
  d.level = number_at(o, "level", "served");
  const auto group = o.find("group");
  if (group == o.end() || !(group->is_null() || group->is_number_unsigned())) bad("served.group", "must be an integer or null");
  d.job.group = group->is_null() ? kNoGroup : group->get<std::uint32_t>();
  const auto key = o.find("key");
  if (key == o.end() || !key->is_number_unsigned()) bad("served.key", "must be an integer >= 0");
  d.job.key = key->get<std::uint32_t>();
  if (s.method == OnlineMethod::MultiAci) {
    const auto experts = o.find("expert_ttl_s");
    if (experts == o.end() || !experts->is_array() || experts->size() != d.expert_ttl_s.size())
      bad("served.expert_ttl_s", "must be an array of " + std::to_string(d.expert_ttl_s.size()) + " numbers");
    for (std::size_t k = 0; k < d.expert_ttl_s.size(); ++k) {
      if (!(*experts)[k].is_number()) bad("served.expert_ttl_s", "must hold numbers");
      d.expert_ttl_s[k] = (*experts)[k].get<double>();
    }
  }
  return s;
}

}  // namespace

void append_outcome_line(std::string& out, const json& outcome, double received_at, const std::string& model_version,
                         const std::optional<ServedPrediction>& served) {
  std::string body = outcome.dump(-1, ' ', false, json::error_handler_t::replace);
  body.pop_back();  // the closing brace: the added keys join the object
  out += body;
  out += body.size() > 1 ? ",\"received_at\":" : "\"received_at\":";
  append_number(out, received_at);
  out += ",\"model_version\":";
  out += json(model_version).dump();
  out += ",\"served\":";
  if (served) {
    append_served(out, *served);
  } else {
    out += "null";
  }
  out += "}\n";
}

OutcomeRecord read_outcome_record(json line) {
  OutcomeRecord r;
  if (line.is_object()) {
    if (const auto it = line.find("received_at"); it != line.end()) {
      if (!it->is_number() || !std::isfinite(it->get<double>())) bad("received_at", "must be a number");
      r.received_at = it->get<double>();
      line.erase(it);
    }
    if (const auto it = line.find("model_version"); it != line.end()) {
      if (!it->is_string()) bad("model_version", "must be a string");
      r.model_version = it->get<std::string>();
      line.erase(it);
    }
    if (const auto it = line.find("served"); it != line.end()) {
      if (!it->is_null()) r.served = served_from_json(*it);
      line.erase(it);
    }
  }
  r.outcome = std::move(line);
  return r;
}

}  // namespace ttlpred::serve
