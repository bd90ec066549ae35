// The one entry point for reading a trace file: picks the format, then the reader.
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "data/field_parse.hpp"
#include "data/trace_readers.hpp"
#include "util/error.hpp"

namespace ttlpred {

std::string_view format_name(TraceFormat f) {
  switch (f) {
    case TraceFormat::Auto: return "auto";
    case TraceFormat::Csv: return "csv";
    case TraceFormat::Swf: return "swf";
    case TraceFormat::Gwf: return "gwf";
    case TraceFormat::Sacct: return "sacct";
    case TraceFormat::Journal: return "journal";
  }
  return "?";
}

std::optional<TraceFormat> format_by_name(std::string_view name) {
  for (auto f : {TraceFormat::Auto, TraceFormat::Csv, TraceFormat::Swf, TraceFormat::Gwf, TraceFormat::Sacct,
                 TraceFormat::Journal})
    if (format_name(f) == name) return f;
  return std::nullopt;
}

namespace {

std::optional<TraceFormat> format_from_extension(std::string path) {
  std::transform(path.begin(), path.end(), path.begin(), [](unsigned char c) { return std::tolower(c); });
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".gz")) path.resize(path.size() - 3);
  if (ends_with(".csv")) return TraceFormat::Csv;
  if (ends_with(".swf")) return TraceFormat::Swf;
  if (ends_with(".gwf")) return TraceFormat::Gwf;
  if (ends_with(".sacct")) return TraceFormat::Sacct;
  return std::nullopt;
}

// Decides from the first line that is neither blank nor a comment: a comma-separated line
// naming schema fields is a CSV header; 29+ blank-separated fields are GWF, 18+ are SWF.
std::optional<TraceFormat> format_from_content(LineSource& src) {
  std::string_view line;
  bool semicolon_comments = false, hash_comments = false;
  for (int i = 0; i < 1000 && src.next(line); ++i) {
    if (src.line_truncated()) return std::nullopt;
    if (parse::is_comment_or_blank(line, ';')) {
      semicolon_comments |= !parse::is_comment_or_blank(line, '\0');
      continue;
    }
    if (parse::is_comment_or_blank(line, '#')) {
      hash_comments = true;
      continue;
    }
    if (const auto bar = line.find('|'); bar != std::string_view::npos) {
      // sacct --parsable2 output starts with a header whose first name is JobID or JobIDRaw.
      std::string name(line.substr(0, bar));
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      if (name == "jobid" || name == "jobidraw") return TraceFormat::Sacct;
    }
    if (line.find(',') != std::string_view::npos) {
      std::string_view name = line.substr(0, line.find(','));
      if (name.substr(0, 3) == "\xEF\xBB\xBF") name.remove_prefix(3);
      if (!name.empty() && name.front() == '"') name = name.substr(1, name.size() >= 2 ? name.size() - 2 : 0);
      if (field_by_name(name)) return TraceFormat::Csv;
      return std::nullopt;
    }
    std::string_view fields[1];
    const std::size_t n = parse::split_blanks(line, fields, 1);
    if (n >= 29 && !semicolon_comments) return TraceFormat::Gwf;
    if (n >= 18) return TraceFormat::Swf;
    return std::nullopt;
  }
  if (semicolon_comments && !hash_comments) return TraceFormat::Swf;
  if (hash_comments && !semicolon_comments) return TraceFormat::Gwf;
  return std::nullopt;
}

constexpr const char* kUnknownFormat =
    "cannot tell the trace format from the file name (.csv, .swf, .gwf, optionally .gz) or "
    "the first data line; name it with --format csv|swf|gwf|sacct";

// All of standard input, through zlib so that gzip is read as well as plain text.
std::string read_standard_input() {
  const int fd = ::dup(0);
  if (fd < 0) throw InputError(kStandardInputName, 0, std::string("cannot read: ") + std::strerror(errno));
  gzFile gz = gzdopen(fd, "rb");
  if (!gz) {
    ::close(fd);
    throw InputError(kStandardInputName, 0, "cannot read: out of memory");
  }
  std::string data;
  std::vector<char> chunk(1u << 20);
  for (;;) {
    const int got = gzread(gz, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (got < 0) {
      int err = Z_OK;
      const std::string why = gzerror(gz, &err);
      gzclose(gz);
      throw InputError(kStandardInputName, 0, "cannot read: " + why);
    }
    if (got == 0) break;
    data.append(chunk.data(), static_cast<std::size_t>(got));
  }
  gzclose(gz);
  return data;
}

JobTable read_lines(LineSource& src, ReadReport& report, TraceFormat format, const CsvColumnMap& map) {
  JobTable table;
  switch (format) {
    case TraceFormat::Csv: read_csv_mapped(src, table, report, map); break;
    case TraceFormat::Sacct: read_sacct(src, table, report); break;
    case TraceFormat::Swf: read_swf(src, table, report); break;
    case TraceFormat::Gwf: read_gwf(src, table, report); break;
    case TraceFormat::Auto:
    case TraceFormat::Journal: break;  // a folder, not lines: read_trace reads it
  }
  return table;
}

}  // namespace

bool other_trace_formats(std::string_view a, std::string_view b) {
  return !a.empty() && !b.empty() && a != "journal" && b != "journal" && a != b;
}

TraceFormat detect_format(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return TraceFormat::Journal;
  if (auto f = format_from_extension(path)) return *f;
  LineSource src(path);
  if (auto f = format_from_content(src)) return *f;
  throw InputError(path, 0, kUnknownFormat);
}

JobTable read_trace(const std::string& path, ReadReport& report, TraceFormat format) {
  TraceReadOptions options;
  options.format = format;
  return read_trace(path, report, options);
}

JobTable read_trace(const std::string& path, ReadReport& report, const TraceReadOptions& options) {
  report = ReadReport{};
  TraceFormat format = options.format;
  if (format == TraceFormat::Auto && !options.column_map.empty()) format = TraceFormat::Csv;
  if (format != TraceFormat::Csv && format != TraceFormat::Auto && !options.column_map.empty())
    throw InputError(path == "-" ? std::string(kStandardInputName) : path, 0,
                     "--map applies to CSV only, and the format is " + std::string(format_name(format)));
  if (path == "-") {
    report.path = kStandardInputName;
    const std::string data = read_standard_input();
    if (format == TraceFormat::Auto) {
      LineSource probe(data, kStandardInputName);
      const auto f = format_from_content(probe);
      if (!f) throw InputError(kStandardInputName, 0, data.empty() ? std::string("no input") : kUnknownFormat);
      format = *f;
    }
    LineSource src(data, kStandardInputName);
    return read_lines(src, report, format, options.column_map);
  }
  report.path = path;
  if (format == TraceFormat::Auto) format = detect_format(path);
  if (format == TraceFormat::Journal) {
    if (!options.column_map.empty()) throw InputError(path, 0, "--map applies to CSV only, and this is a journal folder");
    JobTable table;
    read_journal_folder(path, table, report);
    return table;
  }
  if (format != TraceFormat::Csv && !options.column_map.empty())
    throw InputError(path, 0, "--map applies to CSV only, and this file reads as " + std::string(format_name(format)));
  LineSource src(path);
  return read_lines(src, report, format, options.column_map);
}

}  // namespace ttlpred
