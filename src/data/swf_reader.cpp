// Standard Workload Format reader. Field meanings follow the Parallel Workloads Archive's
// definition; docs/data-format.md lists how each one lands in the schema.
#include <string>

#include "data/archive_fields.hpp"
#include "data/trace_readers.hpp"

namespace ttlpred {

namespace {

constexpr int kSwfFields = 18;
constexpr std::string_view kSwfNames[kSwfFields] = {
    "job_number", "submit_time",      "wait_time", "run_time",  "allocated_procs", "avg_cpu_time",
    "used_memory", "requested_procs", "requested_time", "requested_memory", "status", "user_id",
    "group_id",   "executable",       "queue",     "partition", "preceding_job",  "think_time"};

// Later start times are refused: 1e308 shifted every submit time to inf.
constexpr double kLatestUnixStart = 4102444800.0;  // 2100-01-01T00:00:00Z

// "; UnixStartTime: 843480031" in the header: SWF submit times count from this instant.
bool parse_unix_start(std::string_view comment, double& out) {
  constexpr std::string_view key = "UnixStartTime:";
  const auto pos = comment.find(key);
  if (pos == std::string_view::npos) return false;
  std::string_view rest = comment.substr(pos + key.size());
  while (!rest.empty() && parse::is_blank(rest.front())) rest.remove_prefix(1);
  while (!rest.empty() && parse::is_blank(rest.back())) rest.remove_suffix(1);
  double v = 0;
  if (parse::number(rest, v) != parse::NumberStatus::Ok || v < 0) return false;
  out = v;
  return true;
}

}  // namespace

void read_swf(LineSource& src, JobTable& out, ReadReport& rep) {
  rep.begin("swf", src.name());
  double time_offset = 0;
  bool seen_data = false;
  std::string_view line;
  std::string_view f[20];
  double v[kSwfFields];
  JobRecord r;
  while (src.next(line)) {
    ++rep.lines;
    const std::size_t ln = src.line_number();
    if (!archive::usable_line(line, ln, src.line_truncated(), rep)) continue;
    if (parse::is_comment_or_blank(line, ';')) {
      ++rep.comment_lines;
      double start = 0;
      if (!seen_data && parse_unix_start(line, start) && start > kLatestUnixStart) {
        rep.warnings.push_back(rep.path + ":" + std::to_string(ln) + ": UnixStartTime " + quote_for_message(line) +
                               " ignored: not a Unix time before 2100");
      } else if (!seen_data && parse_unix_start(line, start)) {
        time_offset = start;
        rep.notes.push_back("submit times shifted by the header's UnixStartTime " + std::to_string(static_cast<long long>(start)) +
                            " to Unix seconds");
      }
      continue;
    }
    seen_data = true;
    // Fast path: a line of integers only, none negative but -1 (nearly every real line).
    std::size_t n = 0;
    bool ok = parse::split_integer_fields(line, f, v, kSwfFields, n) && n >= kSwfFields && n <= kSwfFields;
    for (int i = 0; i < kSwfFields && ok; ++i) ok = v[i] >= 0 || v[i] == -1;
    if (!ok) {  // the general path: fractions, Alea's text field 20, and every kind of damage
      std::size_t control_at;
      n = parse::split_fields_checked(line, f, 20, control_at);
      if (!archive::fields_complete(line, n, control_at, kSwfFields, "SWF", ln, rep)) continue;
      ok = true;
      for (int i = 0; i < kSwfFields && ok; ++i) ok = archive::numeric_field(f[i], kSwfNames[i], i + 1, "SWF", ln, rep, v[i]);
      if (!ok) continue;
    }
    // Alea's extended SWF puts a queue name in field 20; it is text, so check it is UTF-8.
    std::string_view queue_name;
    if (n >= 20 && f[19] != "-1") {
      if (!parse::valid_utf8(f[19])) {
        rep.skip(SkipReason::InvalidUtf8, ln, "queue (SWF field 20)", "not UTF-8: " + quote_for_message(f[19]));
        continue;
      }
      queue_name = f[19];
    }

    r.clear();
    r[Field::JobId] = archive::known_or_nan(v[0]);
    r[Field::SubmitTime] = v[1] == -1 ? kMissingNumber : v[1] + time_offset;
    r[Field::WaitTime] = archive::known_or_nan(v[2]);
    r[Field::WallTime] = archive::known_or_nan(v[3]);
    r[Field::SlotCores] = archive::known_or_nan(v[4]);
    if (v[5] != -1 && v[4] != -1) r[Field::CpuTime] = v[5] * v[4];  // SWF gives CPU time per processor
    if (v[6] != -1) r[Field::MaxRss] = v[6] / 1024.0;                 // KB per processor -> MB
    r[Field::CpuCores] = archive::known_or_nan(v[7]);
    r[Field::RequestedTtl] = archive::known_or_nan(v[8]);
    if (v[9] != -1) r[Field::MemoryMb] = v[9] / 1024.0;
    if (v[10] != -1) r.text(Field::Status) = archive::status_text(v[10]);
    // Ids stay categories: user 7 is no closer to user 8 than to user 700.
    if (v[11] != -1) r.text(Field::User) = f[11];
    if (v[12] != -1) r.text(Field::Group) = f[12];
    if (v[13] != -1) r.text(Field::Executable) = f[13];
    if (v[14] != -1) r.text(Field::Queue) = f[14];
    if (v[15] != -1) r.text(Field::Partition) = f[15];
    if (!queue_name.empty()) r.text(Field::Queue) = queue_name;
    out.append(r);
    ++rep.rows;
  }
  if (!src.stream_problem().empty()) rep.warnings.push_back(src.stream_problem());
}

}  // namespace ttlpred
