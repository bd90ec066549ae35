#pragma once
// Jobs as the service receives them: JSON objects whose keys are the schema's field names
// (src/data/schema.hpp). Parsing is strict, because a silently ignored typo ("reqested_ttl_s")
// would make the broker trust a prediction made without the field it meant to send.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/job_record.hpp"
#include "features/history.hpp"
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

// Whether a field of `phase` may appear in a job object used as `use`.
bool field_allowed(Phase phase, JobUse use);

// Fills `r` (cleared first) from `obj`. Category values are views into `obj`, which must
// outlive `r`. Throws RequestError(400) naming the field and `index` for an unknown key, a
// field not allowed for `use`, a wrong type, or a negative / non-finite number. `null`
// means unknown. `job_id` is an identifier: an integer >= 0 (its value, rounded to a double,
// in the number) or a string (in the text; the number stays unknown); a fraction or an
// exponent is refused.
void job_from_json(const nlohmann::json& obj, JobUse use, long index, JobRecord& r);

// Reads request bodies of jobs (one job object, or an array of them; and /v1/match bodies)
// into JobRecords: the service's hot path. simdjson (DOM) parses the body and checks each job by the
// rules of job_from_json. Anything it does not accept (malformed JSON, a wrong type, an
// unknown key, too many jobs, but also what only simdjson refuses: numbers beyond 64-bit
// integers, nesting deeper than 1024, a byte-order mark) is read again by nlohmann-json and
// job_from_json, whose answer is the answer: records, or the RequestError with its exact
// wording, field, index and precedence. So the service answers as the nlohmann path always
// did, and only valid requests take the fast path (docs/service.md, "JSON library").
// One reader per thread: not thread-safe. Category values in the records are views into the
// reader, valid until its next read.
class JobReader {
 public:
  struct Jobs {
    std::size_t count = 0;  // jobs read into records[0, count)
    bool single = false;    // the body was one job object, not an array
    bool fast = false;      // read by simdjson; false: by the nlohmann fallback
  };
  JobReader();
  ~JobReader();
  JobReader(const JobReader&) = delete;
  JobReader& operator=(const JobReader&) = delete;

  // Fills records[0, count), growing `records` when it is shorter. Throws RequestError: 400
  // for malformed JSON, a body that is neither an object nor an array, or a bad job (field
  // and index named); 413 for more than `max_batch` jobs. The wording says "outcomes" for
  // JobUse::Outcome and "jobs" otherwise.
  Jobs read(std::string_view body, JobUse use, std::size_t max_batch, std::vector<JobRecord>& records);

  // A /v1/match body, {"slot": {...}, "jobs": [...], "order": "...", "limit": N}: the slot
  // and the candidates, read by simdjson or, failing that, by read_match_nlohmann.
  struct Match {
    JobRecord slot;                     // match-phase fields; slot_time_left_s known
    std::size_t count = 0;              // candidates read into records[0, count)
    std::string_view order = "input";   // "input", "price" or "age"
    std::size_t limit = 0;              // at most this many matches (count when not given)
    bool fast = false;
  };
  // Throws RequestError as /v1/match answers: 400 naming the field (`slot.<field>` for one
  // in the slot, the index for a candidate), 413 for more than `max_batch` candidates.
  Match read_match(std::string_view body, std::size_t max_batch, std::vector<JobRecord>& records);
  // Frees what the last read left behind (the nlohmann fallback document always; simdjson's
  // parser and the padded copy when they grew past `keep_bytes`), so that one large body
  // does not pin tens of MiB per thread. The records' views die with it: call it once they
  // are no longer needed.
  void release_if_large(std::size_t keep_bytes);
  // Candidate i's job_id of the last read_match as JSON text, exactly as sent (the integer's
  // digits, or the string quoted); "" when it had none. The record's number is a double,
  // which cannot hold every 64-bit identifier.
  const std::string& job_id_json(std::size_t i) const;

 private:
  bool parse(std::string_view body);  // simdjson; false where it refuses the body
  bool read_match_dom(std::size_t max_batch, std::vector<JobRecord>& records);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What JobReader falls back to, and what it must always agree with: `body` parsed by
// nlohmann-json (into `doc`, which the records' category views point into), then each job
// checked by job_from_json.
JobReader::Jobs read_jobs_nlohmann(std::string_view body, JobUse use, std::size_t max_batch,
                                   std::vector<JobRecord>& records, nlohmann::json& doc);

// The same for /v1/match.
JobReader::Match read_match_nlohmann(std::string_view body, std::size_t max_batch, std::vector<JobRecord>& records,
                                     nlohmann::json& doc);

// Bounds of any JSON body the service parses (no request needs more: a job is 2 levels deep
// in a batch, 3 in a match body, and has at most a few dozen values). Past them the parse
// stops at once, before the document grows.
inline constexpr std::size_t kMaxJsonDepth = 64;
inline constexpr std::size_t kMaxJsonValues = 1u << 20;

// The longest requested_ttl_s a job may carry: the history's own ceiling on a run time
// (kMaxHistoryWallS, features/history.hpp: about 116 days, past any batch queue's limit). A
// request is the job's hard limit, so 0 would be a TTL no job survives and 1e300 an answer
// no broker can use: both are refused. A job without a request leaves the field out (or null).
inline constexpr double kMaxRequestedTtlS = kMaxHistoryWallS;

// Why a number `v` may not be the value of numeric field `f` ("must be ..."), or empty when
// it may: every number finite and >= 0, requested_ttl_s in (0, kMaxRequestedTtlS]. The one
// rule of both readers (job_from_json and the simdjson path).
std::string number_refusal(Field f, double v);

// nlohmann::json::parse, with its errors (and numbers beyond double's range), nesting deeper
// than kMaxJsonDepth and more than kMaxJsonValues values as a 400 "malformed JSON: ..."
// RequestError in the service's own words (the byte position of a syntax error; never the
// library's message, which names its internals).
//
// Two passes: a SAX pass that builds nothing checks the syntax and the bounds, in document
// order (the first problem is the one named), then the plain parser builds the document.
// nlohmann's filtering parser, which checked the bounds before, searches its parent array at
// the end of every object (quadratic in a batch's length): a 4 MiB body of 250 000 tiny jobs
// took 10 s of a server thread to be refused.
nlohmann::json parse_json_body(std::string_view body);

// A batch body (an object, or an array of objects) for an endpoint that takes at most
// `max_batch` of them: its document, or a 413 "batch of N <what> exceeds the limit of
// max_batch (--max-batch)" decided in the SAX pass, before an oversized document is built;
// a body that is neither an object nor an array is a 400 `not_a_batch`.
nlohmann::json parse_json_batch(std::string_view body, std::size_t max_batch, std::string_view what,
                                std::string_view not_a_batch);

// The JSON error body: {"error": message, "field": ..., "index": ...} (the last two only
// when known).
std::string error_body(std::string_view message, std::string_view field = {}, long index = -1);

// A key as error replies name it: whole up to 64 bytes, else cut, with its length.
std::string shown_key(const std::string& key);

// Appends a number in the shortest form that reads back exactly.
void append_number(std::string& out, double v);

}  // namespace ttlpred::serve
