#pragma once
// Jobs as the service receives them: JSON objects whose keys are the schema's field names
// (src/data/schema.hpp). Parsing is strict, because a silently ignored typo ("reqested_ttl_s")
// would make the broker trust a prediction made without the field it meant to send.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "data/job_record.hpp"
#include "util/error.hpp"

namespace ttlpred::serve {

// A request the client must fix: the HTTP status to answer, and where the problem is.
class RequestError : public Error {
 public:
  RequestError(int status, std::string message, std::string field = {}, long index = -1)
      : Error(std::move(message)), status_(status), field_(std::move(field)), index_(index) {}
  int status() const { return status_; }
  const std::string& field() const { return field_; }
  long index() const { return index_; }  // job index in a batch; -1 when not about one job

 private:
  int status_;
  std::string field_;
  long index_;
};

// Which fields a job object may carry, by where it appears.
enum class JobUse {
  Predict,    // submit- and match-phase fields (the match ones describe the slot, if known)
  Candidate,  // submit-phase fields only: the slot of /v1/match supplies the match ones
  Slot,       // match-phase fields only
  Outcome,    // any field; wall_s required
};

// Fills `r` (cleared first) from `obj`. Category values are views into `obj`, which must
// outlive `r`. Throws RequestError(400) naming the field and `index` for an unknown key, a
// field not allowed for `use`, a wrong type, or a negative / non-finite number. `null`
// means unknown.
void job_from_json(const nlohmann::json& obj, JobUse use, long index, JobRecord& r);

// The JSON error body: {"error": message, "field": ..., "index": ...} (the last two only
// when known).
std::string error_body(std::string_view message, std::string_view field = {}, long index = -1);

// Appends a number in the shortest form that reads back exactly.
void append_number(std::string& out, double v);

}  // namespace ttlpred::serve
