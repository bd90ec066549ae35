#pragma once
// The jobs the service knows to be running, as JSON in and out: a model made for match time
// reads, at every match, how many jobs of each key are running and for how long
// (features/history.hpp, RunningStat). The service learns a start from its own /v1/match
// answer (the first match is the job the pilot takes) or from a /v1/started event, and an
// outcome with the job's job_id closes it (docs/service.md, "Running jobs").
//
// A start is journaled before it is acknowledged, one line per job, beside the outcomes and
// in the same order, so that a replay rebuilds the running set exactly:
//   {"event":"started","start_time":T,"received_at":R,"job":{"job_id":...,<key fields>}}
// The job object holds only what the running set keeps (its job_id and the fields that make
// its history keys: user, group, queue, partition, executable, production_tag,
// master_job_id, job_type, package) and its submit_time; "event" is no job field, so no
// outcome line has it.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/job_record.hpp"

namespace ttlpred::serve {

// Appends the journal line (with its '\n') of a start. `job_id_json` is the job's job_id as
// JSON text, exactly as the client sent it (an integer's digits, or a quoted string).
void append_started_line(std::string& out, std::string_view job_id_json, const JobRecord& job, double start_s,
                         double received_at);

// Whether a journal line's object is a start (else it is an outcome).
bool is_started_line(const nlohmann::json& line);

// A journaled start: its job (category values are views into `line`, which must outlive `job`).
struct StartedLine {
  double start_s = 0;
  double received_at = 0;
};
// Throws RequestError (400) naming the malformed key.
StartedLine read_started_line(const nlohmann::json& line, JobRecord& job);

// One job of a /v1/started body.
struct StartedJob {
  nlohmann::json object;  // the job's fields (start_time removed): `record`'s views point into it
  JobRecord record;
  double start_s = 0;
  long index = -1;  // its position in the body's array; -1 for a body of one object
};

// Reads a /v1/started body: one object or an array of them, each a job's submit- and
// match-phase fields with its job_id (required) and "start_time" (unix seconds; default
// `now`). Throws RequestError naming the field and index: 400 for a malformed job, a missing
// job_id, a start_time that is not a finite number >= 0, earlier than the job's submit_time,
// later than now + kMaxStartAheadS, or at least `max_age_s` before now (it would not count,
// and would be forgotten at once); 409 for a job_id twice in the body; 413 past `max_batch`.
inline constexpr double kMaxStartAheadS = 3600;  // clocks of broker and service may differ, not by hours
std::vector<StartedJob> read_started_body(std::string_view body, std::size_t max_batch, double now, double max_age_s);

}  // namespace ttlpred::serve
