#include "serve/job_json.hpp"

#include <charconv>
#include <cmath>

namespace ttlpred::serve {
namespace {

bool allowed(Phase phase, JobUse use) {
  switch (use) {
    case JobUse::Predict: return phase != Phase::Outcome;
    case JobUse::Candidate: return phase == Phase::Submit;
    case JobUse::Slot: return phase == Phase::Match;
    case JobUse::Outcome: return true;
  }
  return false;
}

const char* refusal(Phase phase, JobUse use) {
  if (use == JobUse::Slot) return "is not a slot field (the slot takes match-phase fields only)";
  if (use == JobUse::Candidate && phase == Phase::Match) return "describes the slot: put it in \"slot\"";
  return "is an outcome, not known before the job runs";
}

std::string where(long index) {
  if (index < 0) return {};
  std::string s = " (job ";
  s += std::to_string(index);
  s += ')';
  return s;
}

}  // namespace

void job_from_json(const nlohmann::json& obj, JobUse use, long index, JobRecord& r) {
  r.clear();
  if (!obj.is_object()) throw RequestError(400, "a job must be a JSON object" + where(index), {}, index);
  for (const auto& [key, value] : obj.items()) {
    const auto field = field_by_name(key);
    if (!field) throw RequestError(400, "unknown field '" + key + "'" + where(index), key, index);
    const FieldInfo& fi = info(*field);
    if (!allowed(fi.phase, use))
      throw RequestError(400, "field '" + key + "' " + refusal(fi.phase, use) + where(index), key, index);
    if (value.is_null()) continue;
    if (fi.kind == FieldKind::Category) {
      if (!value.is_string())
        throw RequestError(400, "field '" + key + "' must be a string" + where(index), key, index);
      r.text(*field) = value.get_ref<const std::string&>();
    } else {
      if (!value.is_number())
        throw RequestError(400, "field '" + key + "' must be a number" + where(index), key, index);
      const double v = value.get<double>();
      if (!std::isfinite(v) || v < 0)
        throw RequestError(400, "field '" + key + "' must be a finite number >= 0" + where(index), key, index);
      r[*field] = v;
    }
  }
  if (use == JobUse::Outcome && !r.known(Field::WallTime))
    throw RequestError(400, "missing field 'wall_s' (an outcome needs its wall time)" + where(index), "wall_s", index);
}

std::string error_body(std::string_view message, std::string_view field, long index) {
  nlohmann::json j;
  j["error"] = message;
  if (!field.empty()) j["field"] = field;
  if (index >= 0) j["index"] = index;
  // Replace rather than throw on invalid UTF-8: the message may quote what the client sent.
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void append_number(std::string& out, double v) {
  char buf[32];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

}  // namespace ttlpred::serve
