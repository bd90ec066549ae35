#include "serve/running_jobs.hpp"

#include <cmath>
#include <unordered_set>

#include "serve/job_json.hpp"
#include "serve/recent_predictions.hpp"

namespace ttlpred::serve {
namespace {

using nlohmann::json;

// The fields job_keys() and HistoryConfig::amounts_of() read (features/history_config.cpp:
// the keys, with the request of the (user, request) key, and the work of the censored work
// rates), and the submit time. A replayed start must have the keys and work it had.
constexpr Field kKeyTexts[] = {Field::User,          Field::Group,   Field::Queue,   Field::Partition,
                               Field::Executable,    Field::ProductionTag, Field::JobType, Field::Package,
                               Field::InteractionType};
constexpr Field kKeyNumbers[] = {Field::MasterJobId, Field::SubmitTime, Field::RequestedTtl, Field::Events,
                                 Field::InputBytes,  Field::InputFiles, Field::HostSpeed};

std::string where(long index) { return index < 0 ? std::string() : " (job " + std::to_string(index) + ")"; }

[[noreturn]] void bad_line(const std::string& field, const std::string& why) {
  throw RequestError(400, "journal field '" + field + "' " + why, field);
}

}  // namespace

void append_started_line(std::string& out, std::string_view job_id_json, const JobRecord& job, double start_s,
                         double received_at) {
  out += "{\"event\":\"started\",\"start_time\":";
  append_number(out, start_s);
  out += ",\"received_at\":";
  append_number(out, received_at);
  out += ",\"job\":{\"job_id\":";
  out += job_id_json;
  for (const Field f : kKeyTexts) {
    const std::string_view text = job.text(f);
    if (text.empty()) continue;
    out += ",\"";
    out += info(f).name;
    out += "\":";
    out += json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
  }
  for (const Field f : kKeyNumbers) {
    if (!job.known(f)) continue;
    out += ",\"";
    out += info(f).name;
    out += "\":";
    append_number(out, job[f]);
  }
  out += "}}\n";
}

bool is_started_line(const json& line) { return line.is_object() && line.contains("event"); }

StartedLine read_started_line(const json& line, JobRecord& job) {
  const auto event = line.find("event");
  if (event == line.end() || !event->is_string() || event->get_ref<const std::string&>() != "started")
    bad_line("event", "must be \"started\"");
  StartedLine s;
  for (const char* key : {"start_time", "received_at"}) {
    const auto it = line.find(key);
    if (it == line.end() || !it->is_number() || !std::isfinite(it->get<double>())) bad_line(key, "must be a finite number");
    (key[0] == 's' ? s.start_s : s.received_at) = it->get<double>();
  }
  const auto it = line.find("job");
  if (it == line.end()) bad_line("job", "is missing");
  job_from_json(*it, JobUse::Predict, -1, job);
  if (!job_key(job)) bad_line("job.job_id", "is missing");
  return s;
}

std::vector<StartedJob> read_started_body(std::string_view body, std::size_t max_batch, double now, double max_age_s) {
  json j = parse_json_batch(body, max_batch, "started jobs", "the body must be a started job object or an array of them");
  const bool single = j.is_object();
  const std::size_t n = single ? 1 : j.size();
  std::vector<StartedJob> out(n);
  std::unordered_set<std::uint64_t> ids;
  for (std::size_t i = 0; i < n; ++i) {
    const long index = single ? -1 : static_cast<long>(i);
    StartedJob& s = out[i];
    s.index = index;
    s.object = std::move(single ? j : j[i]);
    if (!s.object.is_object()) throw RequestError(400, "a started job must be a JSON object" + where(index), {}, index);
    s.start_s = now;
    if (const auto it = s.object.find("start_time"); it != s.object.end()) {
      if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
        throw RequestError(400, "field 'start_time' must be a finite number >= 0 (unix seconds)" + where(index),
                           "start_time", index);
      s.start_s = it->get<double>();
      s.object.erase(it);
    }
    job_from_json(s.object, JobUse::Predict, index, s.record);
    const auto id = job_key(s.record);
    if (!id)
      throw RequestError(400, "missing field 'job_id' (a start is closed by the outcome with its job_id)" + where(index),
                         "job_id", index);
    if (!ids.insert(*id).second)
      throw RequestError(409, "field 'job_id': the job is twice in this body" + where(index), "job_id", index);
    auto refuse = [&](const std::string& why) {
      throw RequestError(400, "field 'start_time' " + why + where(index), "start_time", index);
    };
    if (s.record.known(Field::SubmitTime) && s.start_s < s.record[Field::SubmitTime])
      refuse("is before the job's submit_time");
    if (s.start_s > now + kMaxStartAheadS)
      refuse("is more than " + std::to_string(static_cast<int>(kMaxStartAheadS)) + " s after the service's clock");
    if (s.start_s <= now - max_age_s)
      refuse("is at least --running-max-age before the service's clock: such a job no longer counts as running");
  }
  return out;
}

}  // namespace ttlpred::serve
