#pragma once
// Readers of job traces into a JobTable, one per format (docs/data-format.md gives every
// field mapping). Each appends the rows it can use to `out` and accounts for every line in
// `report`; bad rows are skipped and counted, never fatal. Only a problem with the file as
// a whole (CSV without a recognizable header) throws InputError.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "data/csv_column_map.hpp"
#include "data/job_table.hpp"
#include "data/line_source.hpp"
#include "data/read_report.hpp"

namespace ttlpred {

enum class TraceFormat : std::uint8_t { Auto, Csv, Swf, Gwf, Sacct, Journal };
std::string_view format_name(TraceFormat f);  // "auto", "csv", "swf", "gwf", "sacct", "journal"
std::optional<TraceFormat> format_by_name(std::string_view name);

// ALICE-style CSV: a header of schema field names, RFC-4180 quoting, empty = unknown.
void read_csv(LineSource& src, JobTable& out, ReadReport& report);
// The same with a column mapping (--map): foreign header names read as schema columns.
void read_csv_mapped(LineSource& src, JobTable& out, ReadReport& report, const CsvColumnMap& map);
// Standard Workload Format (Parallel Workloads Archive), incl. Alea's field 20 queue name.
void read_swf(LineSource& src, JobTable& out, ReadReport& report);
// Grid Workloads Archive format: 29 tab-separated fields, '#' comments.
void read_gwf(LineSource& src, JobTable& out, ReadReport& report);
// Slurm accounting: `sacct --parsable2` output, a '|'-separated header of sacct field names
// (JobID, Submit, Elapsed, Timelimit, State, ...). Job steps (JOBID.batch, ...) are not jobs
// and are not kept; TIMEOUT jobs keep status TIMEOUT, a censored outcome.
void read_sacct(LineSource& src, JobTable& out, ReadReport& report);

// A `ttlpred serve --journal` folder: the outcome records of its journal-<g>.jsonl files, in
// generation order, each a job of schema fields (the keys the service adds are not fields;
// one without submit_time is dated received_at - wait_s - wall_s). Throws InputError for a
// folder without journal files.
void read_journal_folder(const std::string& dir, JobTable& out, ReadReport& report);

// Whether models trained on traces of formats `a` and `b` describe other kinds of job. A
// journal holds the service's jobs, of whatever kind it serves: like any format. "" (not
// recorded): like any.
bool other_trace_formats(std::string_view a, std::string_view b);

// The format of `path`: a folder is a journal; else from its extension (.csv, .swf, .gwf,
// each optionally .gz), else from its first non-comment line. Throws InputError when neither tells.
TraceFormat detect_format(const std::string& path);

// What messages call standard input, read when the path is "-".
inline constexpr const char* kStandardInputName = "<stdin>";

// Reads a whole trace file, plain or gzip. `report` is reset and filled. Throws InputError
// naming the file when it is missing, unreadable, of unknown format, or a CSV without header.
// The path "-" is standard input: read whole into memory first (it cannot be read twice),
// plain or gzip, its format told by its content unless `format` names it.
JobTable read_trace(const std::string& path, ReadReport& report, TraceFormat format = TraceFormat::Auto);

// How to read a trace beyond its path: the format, and the CSV column map (--map). A map
// implies CSV when the format is auto (a database export's header names no schema column,
// so its content would not tell).
struct TraceReadOptions {
  TraceFormat format = TraceFormat::Auto;
  CsvColumnMap column_map;
};
JobTable read_trace(const std::string& path, ReadReport& report, const TraceReadOptions& options);

}  // namespace ttlpred
