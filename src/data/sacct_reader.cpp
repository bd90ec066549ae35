// Slurm accounting reader: the output of `sacct --parsable2 --format=...` (fields separated
// by '|', no trailing '|', one header line of field names). The fields and how each lands in
// the schema are in docs/data-format.md ("Slurm sacct"). sacct prints instants in the local
// time of the machine that ran it without a zone; they are read as UTC, so export with
// TZ=UTC. Durations are the difference of two instants of the same clock either way.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "data/field_parse.hpp"
#include "data/timestamp_parse.hpp"
#include "data/trace_readers.hpp"
#include "util/error.hpp"

namespace ttlpred {

namespace {

// The sacct fields this reader understands (lower-cased; sacct's own names are CamelCase).
enum class SacctField : unsigned char {
  JobId, JobIdRaw, User, Group, Account, Partition, Qos, JobName, Cluster, Submit, Start, End, Elapsed, ElapsedRaw,
  Timelimit, TimelimitRaw, ReqCpus, AllocCpus, NCpus, ReqMem, MaxRss, TotalCpu, State, NNodes
};

struct Known {
  std::string_view name;  // lower case
  SacctField field;
};
constexpr Known kKnown[] = {
    {"jobid", SacctField::JobId},       {"jobidraw", SacctField::JobIdRaw},     {"user", SacctField::User},
    {"group", SacctField::Group},       {"account", SacctField::Account},       {"partition", SacctField::Partition},
    {"qos", SacctField::Qos},           {"jobname", SacctField::JobName},       {"cluster", SacctField::Cluster},
    {"submit", SacctField::Submit},     {"start", SacctField::Start},           {"end", SacctField::End},
    {"elapsed", SacctField::Elapsed},   {"elapsedraw", SacctField::ElapsedRaw}, {"timelimit", SacctField::Timelimit},
    {"timelimitraw", SacctField::TimelimitRaw}, {"reqcpus", SacctField::ReqCpus}, {"alloccpus", SacctField::AllocCpus},
    {"ncpus", SacctField::NCpus},       {"reqmem", SacctField::ReqMem},         {"maxrss", SacctField::MaxRss},
    {"totalcpu", SacctField::TotalCpu}, {"state", SacctField::State},           {"nnodes", SacctField::NNodes}};
constexpr std::size_t kNumKnown = sizeof kKnown / sizeof kKnown[0];

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && parse::is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && parse::is_blank(s.back())) s.remove_suffix(1);
  return s;
}

void split_bars(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::size_t start = 0;
  for (;;) {
    const auto bar = line.find('|', start);
    if (bar == std::string_view::npos) {
      out.push_back(line.substr(start));
      return;
    }
    out.push_back(line.substr(start, bar - start));
    start = bar + 1;
  }
}

// Values sacct prints where it has none.
bool is_unknown(std::string_view v) { return v.empty() || v == "Unknown" || v == "None" || v == "N/A"; }

// States of jobs that have not finished: their Elapsed is time so far, not a run time.
bool unfinished(std::string_view state) {
  return state == "PENDING" || state == "RUNNING" || state == "REQUEUED" || state == "SUSPENDED" ||
         state == "RESIZING" || state == "REQUEUE_HOLD" || state == "REQUEUE_FED" || state == "SIGNALING" ||
         state == "STAGE_OUT" || state == "STOPPED" || state == "COMPLETING" || state == "CONFIGURING";
}

// A non-negative amount with an optional K/M/G/T suffix, in MB; `bare_unit` is the MB of
// an amount without a suffix.
bool parse_megabytes(std::string_view v, double bare_unit, double& mb) {
  double unit = bare_unit;
  if (!v.empty() && std::isalpha(static_cast<unsigned char>(v.back()))) {
    switch (v.back()) {
      case 'K': unit = 1.0 / 1024; break;
      case 'M': unit = 1; break;
      case 'G': unit = 1024; break;
      case 'T': unit = 1024.0 * 1024; break;
      default: return false;
    }
    v.remove_suffix(1);
  }
  double x = 0;
  if (parse::number(v, x) != parse::NumberStatus::Ok || x < 0) return false;
  mb = x * unit;
  return true;
}

// "4000M", "4G", "2000Mc" (per CPU, Slurm before 21.08), "16Gn" (per node) -> MB in total.
bool parse_req_mem(std::string_view v, double cpus, double nodes, double& mb) {
  if (v.empty()) return false;
  double per = 1;  // multiplier for per-CPU / per-node requests
  if (v.back() == 'c' || v.back() == 'n') {
    per = v.back() == 'c' ? cpus : nodes;
    v.remove_suffix(1);
  }
  if (!parse_megabytes(v, 1, mb)) return false;  // sacct's default unit is MB
  if (std::isnan(per)) per = 1;
  mb *= per;
  return true;
}

// MaxRSS: a number of bytes with an optional K/M/G/T suffix (sacct prints "1234K").
bool parse_rss(std::string_view v, double& mb) { return parse_megabytes(v, 1.0 / (1024.0 * 1024.0), mb); }

// Only the digits of a JobID: "1234" -> 1234; "1234_7" (array task) and "1234+1"
// (heterogeneous component) give their parent's 1234 as `base` and no id of their own.
bool split_job_id(std::string_view v, double& id, double& base) {
  const auto sep = v.find_first_of("_+");
  double x = 0;
  if (parse::number(v.substr(0, sep), x) != parse::NumberStatus::Ok || x < 0) return false;
  if (sep == std::string_view::npos) {
    id = x;
  } else {
    base = x;
  }
  return true;
}

}  // namespace

void read_sacct(LineSource& src, JobTable& out, ReadReport& rep) {
  rep.begin("sacct", src.name());
  std::vector<std::optional<SacctField>> columns;
  std::array<std::size_t, kNumKnown> at{};  // by SacctField: its 1-based column, 0 = absent
  bool have_header = false;
  std::size_t steps = 0, timeouts = 0, unfinished_jobs = 0;
  std::string_view line;
  std::vector<std::string_view> f;
  JobRecord r;
  auto col = [&](SacctField which) -> std::size_t { return at[static_cast<std::size_t>(which)]; };

  while (src.next(line)) {
    ++rep.lines;
    const std::size_t ln = src.line_number();
    if (src.line_truncated()) {
      if (!have_header) throw InputError(rep.path, ln, "sacct header line longer than " + std::to_string(LineSource::kMaxLine) + " bytes");
      rep.skip(SkipReason::LineTooLong, ln, "", "line longer than " + std::to_string(LineSource::kMaxLine) + " bytes");
      continue;
    }
    if (trim(line).empty()) {
      ++rep.comment_lines;
      continue;
    }
    if (!have_header) {
      std::string_view h = line;
      if (h.substr(0, 3) == "\xEF\xBB\xBF") h.remove_prefix(3);
      split_bars(h, f);
      for (std::size_t i = 0; i < f.size(); ++i) {
        const std::string name = lower(trim(f[i]));
        std::optional<SacctField> which;
        for (std::size_t k = 0; k < kNumKnown; ++k)
          if (kKnown[k].name == name) {
            which = kKnown[k].field;
            auto& slot = at[static_cast<std::size_t>(kKnown[k].field)];
            if (slot)
              throw InputError(rep.path, ln, "sacct field " + std::string(trim(f[i])) + " appears twice (columns " +
                                                 std::to_string(slot) + " and " + std::to_string(i + 1) + ")");
            slot = i + 1;
          }
        if (!which)
          rep.warnings.push_back("unknown sacct field " + quote_for_message(trim(f[i])) + " (column " + std::to_string(i + 1) + ") ignored");
        columns.push_back(which);
      }
      if (!col(SacctField::JobId) && !col(SacctField::JobIdRaw))
        throw InputError(rep.path, ln, "no sacct header: the first line has no JobID field (expected the output of "
                                       "sacct --parsable2, e.g. JobID|User|Submit|Start|End|Elapsed|Timelimit|State), "
                                       "first line is " + quote_for_message(line));
      have_header = true;
      ++rep.comment_lines;
      continue;
    }
    if (const auto c = parse::find_control_byte(line.back() == '\r' ? line.substr(0, line.size() - 1) : line);
        c != std::string_view::npos) {
      char tmp[64];
      std::snprintf(tmp, sizeof tmp, "control or binary byte 0x%02X at column %zu",
                    static_cast<unsigned>(static_cast<unsigned char>(line[c])), c + 1);
      rep.skip(SkipReason::ControlBytes, ln, "", tmp);
      continue;
    }
    split_bars(line, f);
    if (f.size() != columns.size()) {
      rep.skip(SkipReason::ColumnCount, ln, "", std::to_string(f.size()) + " fields, header has " + std::to_string(columns.size()) +
                                                    (f.size() > columns.size() ? " (a '|' inside a value?)" : ""));
      continue;
    }
    auto value = [&](SacctField which) -> std::string_view {
      const std::size_t c = col(which);
      return c ? trim(f[c - 1]) : std::string_view{};
    };
    // Steps (1234.batch, 1234.extern, 1234.0) are parts of their job, not jobs.
    const std::string_view id_text = col(SacctField::JobId) ? value(SacctField::JobId) : value(SacctField::JobIdRaw);
    if (id_text.find('.') != std::string_view::npos) {
      ++steps;
      ++rep.comment_lines;
      continue;
    }

    r.clear();
    bool ok = true;
    auto bad = [&](SkipReason why, std::string_view field, const std::string& problem) {
      if (ok) rep.skip(why, ln, field, problem);
      ok = false;
    };
    auto text_field = [&](SacctField which, std::string_view name, Field to) {
      const std::string_view v = value(which);
      if (v.empty()) return;
      if (!parse::valid_utf8(v)) return bad(SkipReason::InvalidUtf8, name, "not UTF-8: " + quote_for_message(v));
      r.text(to) = v;
    };
    auto number_field = [&](SacctField which, std::string_view name, double& outv) {
      const std::string_view v = value(which);
      if (is_unknown(v)) return;
      double x = 0;
      const auto st = parse::number(v, x);
      if (st != parse::NumberStatus::Ok) return bad(SkipReason::NotANumber, name, "not a number: " + quote_for_message(v));
      if (x < 0) return bad(SkipReason::Negative, name, "negative value " + quote_for_message(v));
      outv = x;
    };
    auto instant_field = [&](SacctField which, std::string_view name, double& outv) {
      const std::string_view v = value(which);
      if (is_unknown(v)) return;
      if (!parse::iso8601_seconds(v, outv))
        bad(SkipReason::NotANumber, name, "not a sacct timestamp (YYYY-MM-DDTHH:MM:SS): " + quote_for_message(v));
    };
    auto duration_field = [&](SacctField which, std::string_view name, double& outv) {
      const std::string_view v = value(which);
      if (is_unknown(v)) return;
      if (!parse::slurm_duration_seconds(v, outv))
        bad(SkipReason::NotANumber, name, "not a Slurm duration ([D-]HH:MM:SS): " + quote_for_message(v));
    };

    // Job id: JobIDRaw is unique for array tasks too; JobID's digits otherwise.
    if (col(SacctField::JobIdRaw)) number_field(SacctField::JobIdRaw, "JobIDRaw", r[Field::JobId]);
    if (col(SacctField::JobId)) {
      double id = kMissingNumber, base = kMissingNumber;
      const std::string_view v = value(SacctField::JobId);
      if (!split_job_id(v, id, base)) {
        bad(SkipReason::NotANumber, "JobID", "not a Slurm job id (1234, 1234_7, 1234+1): " + quote_for_message(v));
      } else {
        if (std::isnan(r[Field::JobId])) r[Field::JobId] = id;
        if (!std::isnan(base)) r[Field::MasterJobId] = base;
      }
    }
    text_field(SacctField::User, "User", Field::User);
    text_field(SacctField::Group, "Group", Field::Group);
    // Accounts are Slurm's grouping of users for fair share: the group when no Group is given.
    if (!col(SacctField::Group)) text_field(SacctField::Account, "Account", Field::Group);
    text_field(SacctField::Partition, "Partition", Field::Partition);
    text_field(SacctField::Qos, "QOS", Field::Queue);
    text_field(SacctField::JobName, "JobName", Field::Executable);
    text_field(SacctField::Cluster, "Cluster", Field::Site);

    // "CANCELLED by 1234" -> CANCELLED: the uid says who, not what happened.
    std::string_view state = value(SacctField::State);
    state = state.substr(0, state.find(' '));
    if (!state.empty()) {
      if (!parse::valid_utf8(state)) bad(SkipReason::InvalidUtf8, "State", "not UTF-8: " + quote_for_message(state));
      else r.text(Field::Status) = state;
    }
    const bool running = unfinished(state);

    double submit = kMissingNumber, start = kMissingNumber, end = kMissingNumber;
    instant_field(SacctField::Submit, "Submit", submit);
    instant_field(SacctField::Start, "Start", start);
    instant_field(SacctField::End, "End", end);
    r[Field::SubmitTime] = submit;
    if (ok && !std::isnan(submit) && !std::isnan(start)) {
      if (start < submit) bad(SkipReason::Negative, "Start", "before Submit");
      else r[Field::WaitTime] = start - submit;
    }
    if (!running) {
      double wall = kMissingNumber;
      if (col(SacctField::ElapsedRaw)) number_field(SacctField::ElapsedRaw, "ElapsedRaw", wall);
      if (std::isnan(wall) && col(SacctField::Elapsed)) duration_field(SacctField::Elapsed, "Elapsed", wall);
      if (ok && std::isnan(wall) && !std::isnan(start) && !std::isnan(end)) {
        if (end < start) bad(SkipReason::Negative, "End", "before Start");
        else wall = end - start;
      }
      // A job cancelled while pending has Elapsed 00:00:00 and no Start: it never ran.
      if (!(std::isnan(start) && wall == 0)) r[Field::WallTime] = wall;
      if (col(SacctField::TotalCpu)) duration_field(SacctField::TotalCpu, "TotalCPU", r[Field::CpuTime]);
      if (const std::string_view v = value(SacctField::MaxRss); !is_unknown(v)) {
        double mb = 0;
        if (!parse_rss(v, mb)) bad(SkipReason::NotANumber, "MaxRSS", "not a size (1234K, 2G): " + quote_for_message(v));
        else r[Field::MaxRss] = mb;
      }
    } else {
      ++unfinished_jobs;
    }

    // Time limit: minutes in TimelimitRaw, Slurm's duration grammar in Timelimit;
    // UNLIMITED and Partition_Limit say the job asked for nothing of its own.
    if (col(SacctField::TimelimitRaw)) {
      const std::string_view v = value(SacctField::TimelimitRaw);
      double minutes = kMissingNumber;
      if (v != "UNLIMITED" && v != "Partition_Limit") number_field(SacctField::TimelimitRaw, "TimelimitRaw", minutes);
      if (!std::isnan(minutes)) r[Field::RequestedTtl] = minutes * 60;
    }
    if (std::isnan(r[Field::RequestedTtl]) && col(SacctField::Timelimit)) {
      const std::string_view v = value(SacctField::Timelimit);
      if (v != "UNLIMITED" && v != "Partition_Limit") duration_field(SacctField::Timelimit, "Timelimit", r[Field::RequestedTtl]);
    }
    number_field(SacctField::ReqCpus, "ReqCPUS", r[Field::CpuCores]);
    double nodes = kMissingNumber;
    number_field(SacctField::NNodes, "NNodes", nodes);
    if (col(SacctField::AllocCpus)) number_field(SacctField::AllocCpus, "AllocCPUS", r[Field::SlotCores]);
    if (std::isnan(r[Field::SlotCores]) && col(SacctField::NCpus)) number_field(SacctField::NCpus, "NCPUS", r[Field::SlotCores]);
    if (const std::string_view v = value(SacctField::ReqMem); !is_unknown(v)) {
      const double cpus = std::isnan(r[Field::CpuCores]) ? r[Field::SlotCores] : r[Field::CpuCores];
      double mb = 0;
      if (!parse_req_mem(v, cpus, nodes, mb))
        bad(SkipReason::NotANumber, "ReqMem", "not a memory request (4000M, 4G, 2000Mc, 16Gn): " + quote_for_message(v));
      else r[Field::MemoryMb] = mb;
    }
    for (Field nf : {Field::WallTime, Field::WaitTime, Field::RequestedTtl, Field::MemoryMb, Field::CpuTime, Field::MaxRss})
      if (ok && r[nf] > kMaxStoredNumber)
        bad(SkipReason::NotFinite, info(nf).name, "out of range (above 3.4e38, the largest number the model stores)");
    if (!ok) continue;
    if (state == "TIMEOUT") ++timeouts;
    out.append(r);
    ++rep.rows;
  }
  if (!have_header) throw InputError(rep.path, 0, "empty sacct file: no header line");
  if (steps)
    rep.notes.push_back(std::to_string(steps) + " job-step lines (JOBID.batch, JOBID.extern, JOBID.N) not kept: steps are parts of "
                                                "their job (sacct -X lists jobs only)");
  if (timeouts)
    rep.notes.push_back(std::to_string(timeouts) + " jobs hit their time limit (State TIMEOUT): censored outcomes, their "
                                                   "run time is at least wall_s");
  if (unfinished_jobs)
    rep.notes.push_back(std::to_string(unfinished_jobs) + " jobs had not finished (PENDING, RUNNING, ...): kept without a run time");
  if (!src.stream_problem().empty()) rep.warnings.push_back(src.stream_problem());
}

}  // namespace ttlpred
