#pragma once
// Readers of job traces into a JobTable, one per format (docs/data-format.md gives every
// field mapping). Each appends the rows it can use to `out` and accounts for every line in
// `report`; bad rows are skipped and counted, never fatal. Only a problem with the file as
// a whole (CSV without a recognizable header) throws InputError.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "data/job_table.hpp"
#include "data/line_source.hpp"
#include "data/read_report.hpp"

namespace ttlpred {

enum class TraceFormat : std::uint8_t { Auto, Csv, Swf, Gwf };
std::string_view format_name(TraceFormat f);  // "auto", "csv", "swf", "gwf"
std::optional<TraceFormat> format_by_name(std::string_view name);

// ALICE-style CSV: a header of schema field names, RFC-4180 quoting, empty = unknown.
void read_csv(LineSource& src, JobTable& out, ReadReport& report);
// Standard Workload Format (Parallel Workloads Archive), incl. Alea's field 20 queue name.
void read_swf(LineSource& src, JobTable& out, ReadReport& report);
// Grid Workloads Archive format: 29 tab-separated fields, '#' comments.
void read_gwf(LineSource& src, JobTable& out, ReadReport& report);

// The format of `path` from its extension (.csv, .swf, .gwf, each optionally .gz), else
// from its first non-comment line. Throws InputError when neither tells.
TraceFormat detect_format(const std::string& path);

// What messages call standard input, read when the path is "-".
inline constexpr const char* kStandardInputName = "<stdin>";

// Reads a whole trace file, plain or gzip. `report` is reset and filled. Throws InputError
// naming the file when it is missing, unreadable, of unknown format, or a CSV without header.
// The path "-" is standard input: read whole into memory first (it cannot be read twice),
// plain or gzip, its format told by its content unless `format` names it.
JobTable read_trace(const std::string& path, ReadReport& report, TraceFormat format = TraceFormat::Auto);

}  // namespace ttlpred
