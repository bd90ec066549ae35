// A service's journal folder read as a trace (docs/data-format.md, "Service journals"): the
// outcome records of journal-<g>.jsonl, in generation order, one job per line.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/trace_readers.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// journal-<g>.jsonl under the journal's naming rule (decimal g from 1, no leading zeros).
std::optional<std::uint64_t> journal_generation(const std::string& name) {
  constexpr std::string_view prefix = "journal-", suffix = ".jsonl";
  if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix)) return {};
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 || digits[0] == '0' || digits.find_first_not_of("0123456789") != std::string::npos) return {};
  return std::stoull(digits);
}

// What the service adds to each outcome (serve/outcome_record.hpp): no job fields.
bool service_key(const std::string& key) { return key == "received_at" || key == "model_version" || key == "served"; }

}  // namespace

void read_journal_folder(const std::string& dir, JobTable& out, ReadReport& rep) {
  rep.format = "journal";
  rep.path = dir;
  std::vector<std::pair<std::uint64_t, std::string>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (const auto g = journal_generation(e.path().filename().string())) files.emplace_back(*g, e.path().string());
  if (ec) throw InputError(dir, 0, "cannot list the journal folder: " + ec.message());
  if (files.empty()) throw InputError(dir, 0, "a folder read as a trace must be a service journal (journal-<g>.jsonl); none here");
  std::sort(files.begin(), files.end());
  std::size_t inferred_submit = 0, unknown_keys = 0, repeated = 0;
  std::unordered_set<std::string> seen_ids;
  std::string unknown_example;
  JobRecord r;
  for (const auto& [gen, path] : files) {
    rep.path = path;  // examples name the journal file and line
    LineSource src(path);
    std::string_view line;
    while (src.next(line)) {
      ++rep.lines;
      const std::size_t ln = src.line_number();
      if (src.line_truncated()) {
        rep.skip(SkipReason::LineTooLong, ln, "", "line too long");
        continue;
      }
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
        ++rep.comment_lines;
        continue;
      }
      const json j = json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        rep.skip(SkipReason::MalformedRecord, ln, "", "not a JSON object");
        continue;
      }
      // A service event other than an outcome (a job's start, serve/running_jobs.hpp): no
      // finished job, so no row.
      if (j.contains("event")) {
        ++rep.comment_lines;
        continue;
      }
      r.clear();
      bool ok = true;
      for (const auto& [key, value] : j.items()) {
        if (service_key(key) || value.is_null()) continue;
        const auto f = field_by_name(key);
        if (!f) {
          if (unknown_keys++ == 0) unknown_example = key;
          continue;
        }
        if (info(*f).kind == FieldKind::Category) {
          if (!value.is_string()) {
            rep.skip(SkipReason::MalformedRecord, ln, key, "not a string");
            ok = false;
            break;
          }
          r.text(*f) = value.get_ref<const std::string&>();
          continue;
        }
        if (*f == Field::JobId && value.is_string()) continue;  // a string id: no number
        if (!value.is_number()) {
          rep.skip(SkipReason::NotANumber, ln, key, "not a number");
          ok = false;
          break;
        }
        const double v = value.get<double>();
        if (!std::isfinite(v) || std::fabs(v) > kMaxStoredNumber) {
          rep.skip(SkipReason::NotFinite, ln, key, "out of range");
          ok = false;
          break;
        }
        if (v < 0) {
          rep.skip(SkipReason::Negative, ln, key, "negative");
          ok = false;
          break;
        }
        r[*f] = v;
      }
      if (!ok) continue;
      // A broker's outcome often says when the job ended, not when it was submitted: the
      // service received it as the job finished, so it was submitted wait + wall before.
      if (!r.known(Field::SubmitTime) && r.known(Field::WallTime)) {
        const auto at = j.find("received_at");
        if (at != j.end() && at->is_number()) {
          const double wait = r.known(Field::WaitTime) ? r[Field::WaitTime] : 0.0;
          r[Field::SubmitTime] = std::max(0.0, at->get<double>() - wait - r[Field::WallTime]);
          ++inferred_submit;
        }
      }
      // The service teaches a job's outcome once (serve/taught_outcomes.hpp): a retrain that
      // reads its journal learns it once too, from the first, as the service did.
      if (const auto id = j.find("job_id"); id != j.end() && !id->is_null() && !seen_ids.insert(id->dump()).second) {
        ++repeated;
        ++rep.comment_lines;  // no row of its own, like a start event
        continue;
      }
      out.append(r);
      ++rep.rows;
    }
  }
  rep.path = dir;
  if (inferred_submit > 0)
    rep.notes.push_back(std::to_string(inferred_submit) +
                        " outcomes without submit_time: submitted at received_at - wait_s - wall_s");
  if (repeated > 0)
    rep.notes.push_back(std::to_string(repeated) + " repeated outcomes of a job_id read once (the first of each)");
  if (unknown_keys > 0)
    rep.warnings.push_back(std::to_string(unknown_keys) + " values of keys that are no job field (e.g. '" +
                           unknown_example + "') were ignored");
}

}  // namespace ttlpred
