// Grid Workloads Archive format reader. The first 16 fields are SWF's; 17 and 18 name the
// submitting site and the site that ran the job. Ids are text in GWF ("U12", "clrlcgce01").
#include <string>

#include "data/archive_fields.hpp"
#include "data/trace_readers.hpp"

namespace ttlpred {

namespace {

constexpr int kGwfFields = 29;
constexpr int kNumericGwfFields = 11;  // JobID .. Status are numbers; ids after them are text
constexpr std::string_view kGwfNames[kGwfFields] = {
    "JobID",       "SubmitTime",   "WaitTime",          "RunTime",    "NProcs",          "AverageCPUTimeUsed",
    "UsedMemory",  "ReqNProcs",    "ReqTime",           "ReqMemory",  "Status",          "UserID",
    "GroupID",     "ExecutableID", "QueueID",           "PartitionID", "OrigSiteID",     "LastRunSiteID",
    "JobStructure", "JobStructureParams", "UsedNetwork", "UsedLocalDiskSpace", "UsedResources", "ReqPlatform",
    "ReqNetwork",  "ReqLocalDiskSpace", "ReqResources", "VOID",       "ProjectID"};

}  // namespace

void read_gwf(LineSource& src, JobTable& out, ReadReport& rep) {
  rep.begin("gwf", src.name());
  std::string_view line;
  std::string_view f[kGwfFields];
  double v[kNumericGwfFields];
  JobRecord r;
  while (src.next(line)) {
    ++rep.lines;
    const std::size_t ln = src.line_number();
    if (!archive::usable_line(line, ln, src.line_truncated(), rep)) continue;
    if (parse::is_comment_or_blank(line, '#') || parse::is_comment_or_blank(line, ';')) {
      ++rep.comment_lines;
      continue;
    }
    std::size_t control_at;
    const std::size_t n = parse::split_fields_checked(line, f, kGwfFields, control_at);
    if (!archive::fields_complete(line, n, control_at, kGwfFields, "GWF", ln, rep)) continue;
    bool ok = true;
    for (int i = 0; i < kNumericGwfFields && ok; ++i)
      ok = archive::numeric_field(f[i], kGwfNames[i], i + 1, "GWF", ln, rep, v[i]);
    for (int i = kNumericGwfFields; i < 18 && ok; ++i) {  // the text fields we keep
      if (!parse::valid_utf8(f[i])) {
        rep.skip(SkipReason::InvalidUtf8, ln, std::string(kGwfNames[i]) + " (GWF field " + std::to_string(i + 1) + ")",
                 "not UTF-8: " + quote_for_message(f[i]));
        ok = false;
      }
    }
    if (!ok) continue;
    auto text = [&](int i) { return f[i] == "-1" ? std::string_view{} : f[i]; };

    r.clear();
    r[Field::JobId] = archive::known_or_nan(v[0]);
    r[Field::SubmitTime] = archive::known_or_nan(v[1]);
    r[Field::WaitTime] = archive::known_or_nan(v[2]);
    r[Field::WallTime] = archive::known_or_nan(v[3]);
    r[Field::SlotCores] = archive::known_or_nan(v[4]);
    if (v[5] != -1 && v[4] != -1) r[Field::CpuTime] = v[5] * v[4];  // per-processor average, as in SWF
    if (v[6] != -1) r[Field::MaxRss] = v[6] / 1024.0;                 // KB -> MB
    r[Field::CpuCores] = archive::known_or_nan(v[7]);
    r[Field::RequestedTtl] = archive::known_or_nan(v[8]);
    if (v[9] != -1) r[Field::MemoryMb] = v[9] / 1024.0;
    if (v[10] != -1) r.text(Field::Status) = archive::status_text(v[10]);
    r.text(Field::User) = text(11);
    r.text(Field::Group) = text(12);
    r.text(Field::Executable) = text(13);
    r.text(Field::Queue) = text(14);
    r.text(Field::Partition) = text(15);
    // The site that ran the job; the submitting site when that is all the trace knows.
    r.text(Field::Site) = text(17).empty() ? text(16) : text(17);
    out.append(r);
    ++rep.rows;
  }
  if (!src.stream_problem().empty()) rep.warnings.push_back(src.stream_problem());
}

}  // namespace ttlpred
