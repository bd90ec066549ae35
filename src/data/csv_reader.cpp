// ALICE-style CSV reader: the header names schema fields (docs/data-format.md), quoting as
// in RFC 4180, which is exactly what CsvWriter produces. Quoted fields may hold commas,
// doubled quotes and newlines, so one record can span several physical lines.
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "data/csv_column_map.hpp"
#include "data/field_parse.hpp"
#include "data/timestamp_parse.hpp"
#include "data/trace_readers.hpp"
#include "util/error.hpp"

namespace ttlpred {

namespace {

// A record whose quote stays open longer than this is given up (a stray quote would
// otherwise swallow the rest of the file).
constexpr std::size_t kMaxRecordLines = 1000;

enum class Split { Ok, NeedMore, BadQuote };

// Splits one record into fields. Fields are views into `rec`, or into `scratch` for quoted
// fields with doubled quotes; `scratch` gets capacity for all of `rec` up front, so it never
// reallocates under the views.
Split split_record(std::string_view rec, std::vector<std::string_view>& fields, std::string& scratch) {
  fields.clear();
  scratch.clear();
  scratch.reserve(rec.size());
  std::size_t pos = 0;
  for (;;) {
    if (pos < rec.size() && rec[pos] == '"') {
      std::size_t seg = ++pos;
      const std::size_t scratch_start = scratch.size();
      bool unescaped = false;
      for (;;) {
        const std::size_t q = rec.find('"', pos);
        if (q == std::string_view::npos) return Split::NeedMore;
        if (q + 1 < rec.size() && rec[q + 1] == '"') {  // "" inside quotes is one quote
          scratch.append(rec.data() + seg, q + 1 - seg);
          pos = seg = q + 2;
          unescaped = true;
          continue;
        }
        if (unescaped) {
          scratch.append(rec.data() + seg, q - seg);
          fields.emplace_back(scratch.data() + scratch_start, scratch.size() - scratch_start);
        } else {
          fields.push_back(rec.substr(seg, q - seg));
        }
        pos = q + 1;
        break;
      }
      if (pos == rec.size() || (rec[pos] == '\r' && pos + 1 == rec.size())) return Split::Ok;
      if (rec[pos] != ',') return Split::BadQuote;
      ++pos;
      continue;
    }
    const std::size_t comma = rec.find(',', pos);
    if (comma == std::string_view::npos) {
      std::string_view last = rec.substr(pos);
      if (!last.empty() && last.back() == '\r') last.remove_suffix(1);  // CRLF line end
      fields.push_back(last);
      return Split::Ok;
    }
    fields.push_back(rec.substr(pos, comma - pos));
    pos = comma + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && parse::is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && parse::is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool is_blank_line(std::string_view s) { return trim(s).empty(); }

// Controls other than tab, CR and LF (which quoted fields may hold) mark binary junk.
std::size_t find_bad_control(std::string_view s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7F) return i;
  }
  return std::string_view::npos;
}

struct Column {
  std::optional<Field> field;
  DerivedTime derived = DerivedTime::None;
  bool used() const { return field || derived != DerivedTime::None; }
};

struct Header {
  std::vector<Column> columns;
  bool has_start = false, has_end = false;
};

bool same_name_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// The header's columns: a name the column map gives a target takes that target; any other
// name that is a schema column (or start_time / end_time) is read as itself, unless the map
// sends another column there.
Header parse_header(std::string_view line, std::size_t line_no, const std::string& path, ReadReport& rep,
                    const CsvColumnMap& map) {
  if (line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // UTF-8 byte-order mark
  std::vector<std::string_view> names;
  std::string scratch;
  if (split_record(line, names, scratch) != Split::Ok)
    throw InputError(path, line_no, "CSV header has unbalanced quotes");
  for (auto& n : names) n = trim(n);
  Header h;
  h.columns.resize(names.size());
  std::vector<bool> mapped(names.size(), false);
  for (const auto& e : map.entries) {
    std::optional<std::size_t> at;
    for (std::size_t i = 0; i < names.size() && !at; ++i)
      if (names[i] == e.source) at = i;
    for (std::size_t i = 0; i < names.size() && !at; ++i)
      if (same_name_ignoring_case(names[i], e.source)) at = i;
    if (!at)
      throw InputError(path, line_no, "--map " + e.text + ": the header has no column " + quote_for_message(e.source) +
                                          " (header: " + quote_for_message(line, 200) + ")");
    if (mapped[*at])
      throw InputError(path, line_no, "--map: column " + quote_for_message(e.source) + " mapped to two targets");
    mapped[*at] = true;
    h.columns[*at] = Column{e.target.field, e.target.derived};
  }
  auto target_mapped = [&](const CsvTarget& t) {
    for (const auto& e : map.entries)
      if (e.target.name == t.name) return true;
    return false;
  };
  std::size_t known = 0;
  std::string near_names;  // unknown names that look like a schema field's, for the errors below
  std::vector<std::size_t> seen_at(kNumFields + 2, 0);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string_view name = names[i];
    if (!mapped[i]) {
      // Only exact schema names (and the two derived instants) are read unmapped; aliases
      // such as "start" are for --map, where a person chose them.
      const auto f = field_by_name(name);
      const auto t = f ? csv_target_by_name(name)
                       : (name == "start_time" || name == "end_time" ? csv_target_by_name(name) : std::nullopt);
      if (!t) {
        std::string hint;
        if (const auto near = nearest_field(name)) {
          hint = "; did you mean " + std::string(info(*near).name) + "? (rename it, or --map " + std::string(info(*near).name) +
                 "=" + std::string(name) + ")";
          near_names += (near_names.empty() ? "" : ", ") + quote_for_message(name) + " -> " + std::string(info(*near).name);
        }
        rep.warnings.push_back("unknown column " + quote_for_message(name) + " (column " + std::to_string(i + 1) +
                               ") ignored" + hint);
        continue;
      }
      if (target_mapped(*t)) {
        rep.warnings.push_back("column " + quote_for_message(name) + " (column " + std::to_string(i + 1) +
                               ") ignored: --map reads " + t->name + " from another column");
        continue;
      }
      h.columns[i] = Column{t->field, t->derived};
    }
    const Column& c = h.columns[i];
    const std::size_t slot = c.field ? index_of(*c.field) : kNumFields + (c.derived == DerivedTime::StartTime ? 0 : 1);
    auto& prev = seen_at[slot];
    if (prev)
      throw InputError(path, line_no, "column " + std::string(name) + " appears twice (columns " + std::to_string(prev) +
                                          " and " + std::to_string(i + 1) + ")");
    prev = i + 1;
    h.has_start |= c.derived == DerivedTime::StartTime;
    h.has_end |= c.derived == DerivedTime::EndTime;
    ++known;
  }
  if (known == 0)
    throw InputError(path, line_no,
                     "no CSV header: the first line names no schema field (expected names such as job_id, "
                     "submit_time, wall_s, or a --map naming the columns; see docs/data-format.md), first line is " +
                         quote_for_message(line) + (near_names.empty() ? "" : "; near names: " + near_names));
  if (h.has_end && !h.has_start)
    throw InputError(path, line_no, "an end_time column needs a start_time column (wall_s = end_time - start_time)");
  return h;
}

// A time column: a number (Unix seconds) or an ISO-8601 date-time.
parse::NumberStatus instant(std::string_view t, double& v) {
  const auto st = parse::number(t, v);
  if (st != parse::NumberStatus::NotANumber) return st;
  return parse::iso8601_seconds(t, v) ? parse::NumberStatus::Ok : parse::NumberStatus::NotANumber;
}

}  // namespace

void read_csv(LineSource& src, JobTable& out, ReadReport& rep) { read_csv_mapped(src, out, rep, CsvColumnMap{}); }

void read_csv_mapped(LineSource& src, JobTable& out, ReadReport& rep, const CsvColumnMap& map) {
  rep.begin("csv", src.name());
  std::optional<Header> header;
  std::string_view line;
  std::string pending;  // a record spanning several lines (only with quoted newlines)
  std::size_t pending_lines = 0, record_line = 0;
  std::vector<std::string_view> fields;
  std::string scratch;
  JobRecord r;

  while (src.next(line)) {
    ++rep.lines;
    const std::size_t ln = src.line_number();
    if (src.line_truncated()) {
      // Skipping it would take the first record for the header ("names no schema field").
      if (!header)
        throw InputError(rep.path, ln, "CSV header line longer than " + std::to_string(LineSource::kMaxLine) +
                                           " bytes (the longest line read)");
      if (pending_lines) {  // the record it continues goes with it
        rep.continuation_lines += pending_lines - 1;
        rep.skip(SkipReason::LineTooLong, record_line, "", "record longer than " + std::to_string(LineSource::kMaxLine) + " bytes");
        rep.continuation_lines += 1;
        pending.clear();
        pending_lines = 0;
      } else {
        rep.skip(SkipReason::LineTooLong, ln, "", "line longer than " + std::to_string(LineSource::kMaxLine) + " bytes");
      }
      continue;
    }
    if (!header) {
      if (is_blank_line(line)) {
        ++rep.comment_lines;
        continue;
      }
      header = parse_header(line, ln, rep.path, rep, map);
      ++rep.comment_lines;
      continue;
    }
    std::string_view rec = line;
    if (pending_lines) {
      pending.push_back('\n');
      pending.append(line);
      rec = pending;
      ++pending_lines;
    } else {
      if (is_blank_line(line)) {
        ++rep.comment_lines;
        continue;
      }
      record_line = ln;
    }

    const Split split = split_record(rec, fields, scratch);
    if (split == Split::NeedMore) {
      if (!pending_lines) {
        pending.assign(line);
        pending_lines = 1;
      }
      if (pending_lines < kMaxRecordLines && pending.size() < LineSource::kMaxLine) continue;
      rep.continuation_lines += pending_lines - 1;
      rep.skip(SkipReason::BadQuoting, record_line, "",
               "quoted field not closed within " + std::to_string(pending_lines) + " lines");
      pending.clear();
      pending_lines = 0;
      continue;
    }
    if (pending_lines) rep.continuation_lines += pending_lines - 1;
    pending_lines = 0;  // `pending` stays alive: `rec` and the fields may point into it
    if (split == Split::BadQuote) {
      rep.skip(SkipReason::BadQuoting, record_line, "", "text after a closing quote");
      continue;
    }
    if (const auto pos = find_bad_control(rec); pos != std::string_view::npos) {
      char tmp[64];
      std::snprintf(tmp, sizeof tmp, "control or binary byte 0x%02X", static_cast<unsigned>(static_cast<unsigned char>(rec[pos])));
      rep.skip(SkipReason::ControlBytes, record_line, "", tmp);
      continue;
    }
    if (fields.size() != header->columns.size()) {
      rep.skip(SkipReason::ColumnCount, record_line, "",
               std::to_string(fields.size()) + " fields, header has " + std::to_string(header->columns.size()));
      continue;
    }

    r.clear();
    bool ok = true;
    double start_time = kMissingNumber, end_time = kMissingNumber;
    for (std::size_t i = 0; i < fields.size() && ok; ++i) {
      const Column& col = header->columns[i];
      if (!col.used()) continue;
      if (col.field && is_category(*col.field)) {
        const Field f = *col.field;
        if (!parse::valid_utf8(fields[i])) {
          rep.skip(SkipReason::InvalidUtf8, record_line, info(f).name, "not UTF-8: " + quote_for_message(fields[i]));
          ok = false;
        }
        r.text(f) = fields[i];
        continue;
      }
      const std::string_view name = col.field ? info(*col.field).name
                                              : (col.derived == DerivedTime::StartTime ? "start_time" : "end_time");
      const std::string_view t = trim(fields[i]);
      if (t.empty()) continue;  // unknown
      double v = 0;
      // Instants may be ISO-8601 (database exports); everything else is a plain number.
      const bool is_instant = !col.field || *col.field == Field::SubmitTime;
      const auto st = is_instant ? instant(t, v) : parse::number(t, v);
      if (st == parse::NumberStatus::NotANumber) {
        rep.skip(SkipReason::NotANumber, record_line, name,
                 (is_instant ? "neither a number nor an ISO-8601 date-time: " : "not a number: ") + quote_for_message(t));
        ok = false;
      } else if (st == parse::NumberStatus::NotFinite) {
        rep.skip(SkipReason::NotFinite, record_line, name, "not a finite number: " + quote_for_message(t));
        ok = false;
      } else if (v < 0) {
        rep.skip(SkipReason::Negative, record_line, name, "negative value " + quote_for_message(t));
        ok = false;
      } else if (v > kMaxStoredNumber) {
        rep.skip(SkipReason::NotFinite, record_line, name,
                 "out of range: " + quote_for_message(t) + " (above 3.4e38, the largest number the model stores)");
        ok = false;
      }
      if (col.field) r[*col.field] = v;
      else if (col.derived == DerivedTime::StartTime) start_time = v;
      else end_time = v;
    }
    // Durations from instants, unless the row states them itself.
    if (ok && !std::isnan(start_time)) {
      const double submit = r[Field::SubmitTime];
      if (std::isnan(r[Field::WaitTime]) && !std::isnan(submit)) {
        if (start_time < submit) {
          rep.skip(SkipReason::Negative, record_line, "start_time", "starts before its submit_time");
          ok = false;
        } else {
          r[Field::WaitTime] = start_time - submit;
        }
      }
      if (ok && std::isnan(r[Field::WallTime]) && !std::isnan(end_time)) {
        if (end_time < start_time) {
          rep.skip(SkipReason::Negative, record_line, "end_time", "ends before its start_time");
          ok = false;
        } else {
          r[Field::WallTime] = end_time - start_time;
        }
      }
    }
    if (!ok) continue;
    out.append(r);
    ++rep.rows;
  }
  if (pending_lines) {
    rep.continuation_lines += pending_lines - 1;
    rep.skip(SkipReason::BadQuoting, record_line, "", "quoted field not closed before the end of the file");
  }
  if (!header) throw InputError(rep.path, 0, "empty CSV file: no header line");
  if (!src.stream_problem().empty()) rep.warnings.push_back(src.stream_problem());
}

}  // namespace ttlpred
