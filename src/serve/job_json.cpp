#include "serve/job_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <simdjson.h>

namespace ttlpred::serve {

bool field_allowed(Phase phase, JobUse use) {
  switch (use) {
    case JobUse::Predict: return phase != Phase::Outcome;
    case JobUse::Candidate: return phase == Phase::Submit;
    case JobUse::Slot: return phase == Phase::Match;
    case JobUse::Outcome: return true;
  }
  return false;
}

// An unknown key as errors show it: whole up to 64 bytes, else its start and its length. A
// 3 MB key used to be echoed twice (message and field) in a 6 MB error reply.
std::string shown_key(const std::string& key) {
  if (key.size() <= 64) return key;
  return key.substr(0, 64) + "... (" + std::to_string(key.size()) + " bytes)";
}

namespace {

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

std::string number_refusal(Field f, double v) {
  if (f == Field::RequestedTtl && !(v > 0 && v <= kMaxRequestedTtlS))
    return "must be a number of seconds in (0, " + std::to_string(static_cast<long long>(kMaxRequestedTtlS)) +
           "]; leave it out (or null) for a job without a request";
  if (!std::isfinite(v) || v < 0) return "must be a finite number >= 0";
  return {};
}

void job_from_json(const nlohmann::json& obj, JobUse use, long index, JobRecord& r) {
  r.clear();
  if (!obj.is_object()) throw RequestError(400, "a job must be a JSON object" + where(index), {}, index);
  for (const auto& [key, value] : obj.items()) {
    const auto field = field_by_name(key);
    if (!field) throw RequestError(400, "unknown field '" + shown_key(key) + "'" + where(index), shown_key(key), index);
    const FieldInfo& fi = info(*field);
    if (!field_allowed(fi.phase, use))
      throw RequestError(400, "field '" + key + "' " + refusal(fi.phase, use) + where(index), key, index);
    if (value.is_null()) continue;
    if (*field == Field::JobId) {
      // An identifier, echoed by /v1/match exactly as sent: an integer (any 64-bit one; a
      // double would turn 9007199254740993 into ...992) or a string. A fraction or an exponent
      // is no identifier.
      if (value.is_string()) {
        r.text(*field) = value.get_ref<const std::string&>();
        continue;
      }
      if (!value.is_number_unsigned())
        throw RequestError(400, "field 'job_id' must be an integer >= 0 or a string" + where(index), key, index);
      r[*field] = value.get<double>();
      continue;
    }
    if (fi.kind == FieldKind::Category) {
      if (!value.is_string())
        throw RequestError(400, "field '" + key + "' must be a string" + where(index), key, index);
      r.text(*field) = value.get_ref<const std::string&>();
    } else {
      if (!value.is_number())
        throw RequestError(400, "field '" + key + "' must be a number" + where(index), key, index);
      const double v = value.get<double>();
      if (const std::string why = number_refusal(*field, v); !why.empty())
        throw RequestError(400, "field '" + key + "' " + why + where(index), key, index);
      r[*field] = v;
    }
  }
  if (use == JobUse::Outcome && !r.known(Field::WallTime))
    throw RequestError(400, "missing field 'wall_s' (an outcome needs its wall time)" + where(index), "wall_s", index);
}

namespace {
// The SAX pass of parse_json_body: the bounds and the shape of a body, nothing built.
struct BodyScan {
  using number_integer_t = nlohmann::json::number_integer_t;
  using number_unsigned_t = nlohmann::json::number_unsigned_t;
  using number_float_t = nlohmann::json::number_float_t;
  using string_t = nlohmann::json::string_t;
  using binary_t = nlohmann::json::binary_t;

  std::size_t open = 0;    // containers open now
  std::size_t values = 0;  // primitive values so far
  bool root_array = false, root_object = false;
  std::size_t elements = 0;  // elements of the root array so far
  std::string error;       // the first problem, once parsing stopped on it

  bool primitive() {
    if (++values > kMaxJsonValues) return stop("malformed JSON: more than " + std::to_string(kMaxJsonValues) + " values");
    if (root_array && open == 1) ++elements;
    return true;
  }
  bool start(bool array) {
    if (open >= kMaxJsonDepth) return stop("malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    if (open == 0) (array ? root_array : root_object) = true;
    ++open;
    return true;
  }
  bool end() {
    if (--open == 1 && root_array) ++elements;
    return true;
  }
  bool stop(std::string why) {
    error = std::move(why);
    return false;
  }

  bool null() { return primitive(); }
  bool boolean(bool) { return primitive(); }
  bool number_integer(number_integer_t) { return primitive(); }
  bool number_unsigned(number_unsigned_t) { return primitive(); }
  bool number_float(number_float_t, const string_t&) { return primitive(); }
  bool string(string_t&) { return primitive(); }
  bool binary(binary_t&) { return primitive(); }
  bool start_object(std::size_t) { return start(false); }
  bool key(string_t&) { return true; }
  bool end_object() { return end(); }
  bool start_array(std::size_t) { return start(true); }
  bool end_array() { return end(); }
  bool parse_error(std::size_t byte, const std::string&, const nlohmann::detail::exception& e) {
    // The lexer's syntax errors are parse_error (id 1xx); a number beyond double's range is
    // the parser's out_of_range (406).
    if (dynamic_cast<const nlohmann::json::parse_error*>(&e) != nullptr)
      return stop("malformed JSON at byte " + std::to_string(byte));
    return stop("malformed JSON: a number beyond the range of a double");
  }
};

BodyScan scan_json_body(std::string_view body) {
  BodyScan scan;
  if (!nlohmann::json::sax_parse(body, &scan)) throw RequestError(400, scan.error);
  return scan;
}

}  // namespace

nlohmann::json parse_json_body(std::string_view body) {
  scan_json_body(body);
  return nlohmann::json::parse(body);  // cannot fail: the scan read the same bytes
}

nlohmann::json parse_json_batch(std::string_view body, std::size_t max_batch, std::string_view what,
                                std::string_view not_a_batch) {
  const BodyScan scan = scan_json_body(body);
  if (!scan.root_object && !scan.root_array) throw RequestError(400, std::string(not_a_batch));
  if (scan.root_array && scan.elements > max_batch)
    throw RequestError(413, "batch of " + std::to_string(scan.elements) + " " + std::string(what) +
                                " exceeds the limit of " + std::to_string(max_batch) + " (--max-batch)");
  return nlohmann::json::parse(body);
}

JobReader::Jobs read_jobs_nlohmann(std::string_view body, JobUse use, std::size_t max_batch,
                                   std::vector<JobRecord>& records, nlohmann::json& doc) {
  const bool outcomes = use == JobUse::Outcome;
  doc = parse_json_batch(body, max_batch, outcomes ? "outcomes" : "jobs",
                         outcomes ? "the body must be an outcome object or an array of them"
                                  : "the body must be a job object or an array of jobs");
  const bool single = doc.is_object();
  const std::size_t n = single ? 1 : doc.size();
  if (records.size() < n) records.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    job_from_json(single ? doc : doc[i], use, single ? -1 : static_cast<long>(i), records[i]);
  return {n, single, false};
}

JobReader::Match read_match_nlohmann(std::string_view body, std::size_t max_batch, std::vector<JobRecord>& records,
                                     nlohmann::json& j) {
  JobReader::Match m;
  j = parse_json_body(body);
  if (!j.is_object()) throw RequestError(400, "the body must be an object {\"slot\": {...}, \"jobs\": [...]}");
  for (const auto& [key, value] : j.items())
    if (key != "slot" && key != "jobs" && key != "order" && key != "limit")
      throw RequestError(400, "unknown field '" + shown_key(key) + "' (expected slot, jobs, order, limit)", shown_key(key));
  const auto slot_it = j.find("slot");
  if (slot_it == j.end()) throw RequestError(400, "missing field 'slot'", "slot");
  try {
    job_from_json(*slot_it, JobUse::Slot, -1, m.slot);
  } catch (const RequestError& e) {
    throw RequestError(400, std::string("slot: ") + e.what(), e.field().empty() ? "slot" : "slot." + e.field());
  }
  if (!m.slot.known(Field::SlotTimeLeft))
    throw RequestError(400, "missing field 'slot_time_left_s' in the slot", "slot.slot_time_left_s");
  const auto jobs_it = j.find("jobs");
  if (jobs_it == j.end() || !jobs_it->is_array()) throw RequestError(400, "'jobs' must be an array of jobs", "jobs");
  const std::size_t n = jobs_it->size();
  if (n > max_batch)
    throw RequestError(413, "batch of " + std::to_string(n) + " jobs exceeds the limit of " + std::to_string(max_batch) +
                                " (--max-batch)");
  if (const auto it = j.find("order"); it != j.end()) {
    if (!it->is_string()) throw RequestError(400, "field 'order' must be a string", "order");
    const std::string& order = it->get_ref<const std::string&>();
    if (order != "input" && order != "price" && order != "age")
      throw RequestError(400, "field 'order' must be \"input\", \"price\" or \"age\"", "order");
    m.order = order == "price" ? "price" : order == "age" ? "age" : "input";
  }
  m.limit = n;
  if (const auto it = j.find("limit"); it != j.end()) {
    if (!it->is_number_unsigned()) throw RequestError(400, "field 'limit' must be an integer >= 0", "limit");
    m.limit = std::min<std::size_t>(m.limit, it->get<std::size_t>());
  }
  if (records.size() < n) records.resize(n);
  for (std::size_t i = 0; i < n; ++i) job_from_json((*jobs_it)[i], JobUse::Candidate, static_cast<long>(i), records[i]);
  m.count = n;
  return m;
}

namespace {

// job_from_json's rules on a simdjson element; false where job_from_json would throw (or
// where simdjson's view of a number is not a double's), so that the caller falls back.
bool job_from_dom(simdjson::dom::element e, JobUse use, JobRecord& r) {
  r.clear();
  simdjson::dom::object obj;
  if (e.get(obj)) return false;
  for (const simdjson::dom::key_value_pair kv : obj) {
    const auto field = field_by_name(kv.key);
    if (!field) return false;
    const FieldInfo& fi = info(*field);
    if (!field_allowed(fi.phase, use)) return false;
    const bool category = fi.kind == FieldKind::Category;
    if (*field == Field::JobId) {  // job_from_json's rule: an unsigned integer or a string
      switch (kv.value.type()) {
        case simdjson::dom::element_type::NULL_VALUE:
          r[*field] = std::numeric_limits<double>::quiet_NaN();
          r.text(*field) = {};
          continue;
        case simdjson::dom::element_type::STRING:
          r[*field] = std::numeric_limits<double>::quiet_NaN();
          r.text(*field) = kv.value.get_string().value_unsafe();
          continue;
        case simdjson::dom::element_type::INT64: {
          const std::int64_t i = kv.value.get_int64().value_unsafe();
          if (i <= 0) return false;  // nlohmann reads "-0" as a signed integer: its answer
          r[*field] = static_cast<double>(i);
          r.text(*field) = {};
          continue;
        }
        case simdjson::dom::element_type::UINT64:
          r[*field] = static_cast<double>(kv.value.get_uint64().value_unsafe());
          r.text(*field) = {};
          continue;
        default:
          return false;
      }
    }
    double v;
    switch (kv.value.type()) {
      case simdjson::dom::element_type::NULL_VALUE:
        // Unknown. A repeated key counts as its last value (as in nlohmann's object), so
        // `null` must undo an earlier one.
        if (category) {
          r.text(*field) = {};
        } else {
          r[*field] = std::numeric_limits<double>::quiet_NaN();
        }
        continue;
      case simdjson::dom::element_type::STRING:
        if (!category) return false;
        r.text(*field) = kv.value.get_string().value_unsafe();
        continue;
      case simdjson::dom::element_type::INT64:
        v = static_cast<double>(kv.value.get_int64().value_unsafe());
        break;
      case simdjson::dom::element_type::UINT64:
        v = static_cast<double>(kv.value.get_uint64().value_unsafe());
        break;
      case simdjson::dom::element_type::DOUBLE:
        v = kv.value.get_double().value_unsafe();
        break;
      default:  // object, array, bool
        return false;
    }
    if (category || !number_refusal(*field, v).empty()) return false;
    r[*field] = v;
  }
  return use != JobUse::Outcome || r.known(Field::WallTime);
}


// The jobs of a DOM array into records[0, n), n = its size; false on any problem.
bool jobs_from_dom(simdjson::dom::array jobs, JobUse use, std::size_t n, std::vector<JobRecord>& records) {
  if (records.size() < n) records.resize(n);
  std::size_t i = 0;
  for (const simdjson::dom::element job : jobs) {
    // (size() saturates at 2^24 - 1: never trust it to bound the writes.)
    if (i == n || !job_from_dom(job, use, records[i])) return false;
    ++i;
  }
  return i == n;
}

}  // namespace

struct JobReader::Impl {
  simdjson::dom::parser parser;
  std::string padded;  // the body and simdjson's padding
  simdjson::dom::element root;
  Match match;
  nlohmann::json fallback;
  std::vector<std::string> job_ids;  // of the last read_match, as JSON text ("" when absent)
};

namespace {

// A job_id as JSON text, exactly as it was sent: the integer's digits or the string quoted.
std::string id_text(std::uint64_t v) { return std::to_string(v); }
std::string id_text(std::string_view s) {
  return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The candidates' job_ids from whichever document the match was read from (the last of a
// repeated key, as the records hold it).
void ids_from_dom(simdjson::dom::element root, std::vector<std::string>& out) {
  simdjson::dom::object top;
  simdjson::dom::array jobs;
  if (root.get(top)) return;
  for (const simdjson::dom::key_value_pair kv : top)
    if (kv.key == "jobs" && kv.value.get(jobs)) return;
  for (const simdjson::dom::element job : jobs) {
    std::string id;
    simdjson::dom::object fields;
    if (job.get(fields)) return;
    for (const simdjson::dom::key_value_pair kv : fields) {
      if (kv.key != "job_id") continue;
      switch (kv.value.type()) {
        case simdjson::dom::element_type::INT64: id = id_text(static_cast<std::uint64_t>(kv.value.get_int64().value_unsafe())); break;
        case simdjson::dom::element_type::UINT64: id = id_text(kv.value.get_uint64().value_unsafe()); break;
        case simdjson::dom::element_type::STRING: id = id_text(kv.value.get_string().value_unsafe()); break;
        default: id.clear(); break;
      }
    }
    out.push_back(std::move(id));
  }
}

void ids_from_json(const nlohmann::json& doc, std::vector<std::string>& out) {
  for (const auto& job : doc.at("jobs")) {
    const auto it = job.find("job_id");
    if (it == job.end() || it->is_null()) {
      out.emplace_back();
    } else if (it->is_string()) {
      out.push_back(id_text(it->get_ref<const std::string&>()));
    } else {
      out.push_back(id_text(it->get<std::uint64_t>()));
    }
  }
}

}  // namespace

const std::string& JobReader::job_id_json(std::size_t i) const { return impl_->job_ids.at(i); }

JobReader::JobReader() : impl_(std::make_unique<Impl>()) {}
JobReader::~JobReader() = default;

void JobReader::release_if_large(std::size_t keep_bytes) {
  Impl& m = *impl_;
  if (m.padded.capacity() <= keep_bytes && m.parser.capacity() <= keep_bytes) {
    m.fallback = nullptr;
    return;
  }
  m.parser = simdjson::dom::parser{};
  std::string().swap(m.padded);
  m.fallback = nullptr;
  std::vector<std::string>().swap(m.job_ids);
}

bool JobReader::parse(std::string_view body) {
  Impl& m = *impl_;
  m.padded.assign(body);
  m.padded.resize(body.size() + simdjson::SIMDJSON_PADDING, ' ');
  return !m.parser.parse(m.padded.data(), body.size(), false).get(m.root);
}

JobReader::Jobs JobReader::read(std::string_view body, JobUse use, std::size_t max_batch,
                                std::vector<JobRecord>& records) {
  if (parse(body)) {
    const simdjson::dom::element root = impl_->root;
    simdjson::dom::array jobs;
    if (root.is_object()) {
      if (records.empty()) records.resize(1);
      if (job_from_dom(root, use, records[0])) return {1, true, true};
    } else if (!root.get(jobs) && jobs.size() <= max_batch) {
      if (jobs_from_dom(jobs, use, jobs.size(), records)) return {jobs.size(), false, true};
    }
  }
  return read_jobs_nlohmann(body, use, max_batch, records, impl_->fallback);
}

JobReader::Match JobReader::read_match(std::string_view body, std::size_t max_batch, std::vector<JobRecord>& records) {
  impl_->job_ids.clear();
  if (parse(body) && read_match_dom(max_batch, records)) {
    ids_from_dom(impl_->root, impl_->job_ids);
    return impl_->match;
  }
  Match m = read_match_nlohmann(body, max_batch, records, impl_->fallback);
  ids_from_json(impl_->fallback, impl_->job_ids);
  return m;
}

bool JobReader::read_match_dom(std::size_t max_batch, std::vector<JobRecord>& records) {
  Match& m = impl_->match;
  m = Match{};
  simdjson::dom::object obj;
  if (impl_->root.get(obj)) return false;
  simdjson::dom::element slot, jobs, order, limit;  // a repeated key counts as its last value
  bool has_slot = false, has_jobs = false, has_order = false, has_limit = false;
  for (const simdjson::dom::key_value_pair kv : obj) {
    if (kv.key == "slot") {
      slot = kv.value, has_slot = true;
    } else if (kv.key == "jobs") {
      jobs = kv.value, has_jobs = true;
    } else if (kv.key == "order") {
      order = kv.value, has_order = true;
    } else if (kv.key == "limit") {
      limit = kv.value, has_limit = true;
    } else {
      return false;
    }
  }
  simdjson::dom::array candidates;
  if (!has_slot || !job_from_dom(slot, JobUse::Slot, m.slot) || !m.slot.known(Field::SlotTimeLeft) || !has_jobs ||
      jobs.get(candidates) || candidates.size() > max_batch)
    return false;
  const std::size_t n = candidates.size();
  if (has_order) {
    std::string_view o;
    if (order.get(o)) return false;
    if (o == "input" || o == "price" || o == "age") {
      m.order = o == "price" ? "price" : o == "age" ? "age" : "input";
    } else {
      return false;
    }
  }
  m.limit = n;
  if (has_limit) {
    // nlohmann's unsigned integers: no sign, fraction or exponent. simdjson reads "-0" as
    // INT64 0, so 0 is left to nlohmann.
    std::uint64_t v;
    if (limit.type() == simdjson::dom::element_type::INT64) {
      const std::int64_t i = limit.get_int64().value_unsafe();
      if (i <= 0) return false;
      v = static_cast<std::uint64_t>(i);
    } else if (limit.type() == simdjson::dom::element_type::UINT64) {
      v = limit.get_uint64().value_unsafe();
    } else {
      return false;
    }
    m.limit = std::min<std::size_t>(m.limit, v);
  }
  if (!jobs_from_dom(candidates, JobUse::Candidate, n, records)) return false;
  m.count = n;
  m.fast = true;
  return true;
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
