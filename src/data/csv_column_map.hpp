#pragma once
// The CSV column mapping (`--map submit=SubmitTime,user=UserName`): which header name of a
// foreign CSV (a database export) holds which schema column, so such a file needs no
// renaming first. Besides the schema columns, two derived columns exist for exports that
// store instants rather than durations: `start_time` (wait_s = start - submit) and
// `end_time` (wall_s = end - start). docs/data-format.md lists the short aliases.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "data/schema.hpp"

namespace ttlpred {

// What a CSV column feeds: a schema field, or one of the instants durations come from.
enum class DerivedTime : unsigned char { None, StartTime, EndTime };
struct CsvTarget {
  std::optional<Field> field;
  DerivedTime derived = DerivedTime::None;
  std::string name;  // canonical: the schema name, "start_time" or "end_time"
};

// A schema column name, "start_time", "end_time", or an alias (submit, start, end, wall,
// limit, timelimit, cores, memory, id, state) -> its target; nullopt when none.
std::optional<CsvTarget> csv_target_by_name(std::string_view name);

struct CsvColumnMap {
  struct Entry {
    CsvTarget target;
    std::string source;  // the header name in the file
    std::string text;    // the item as given ("submit=SubmitTime"), for messages
  };
  std::vector<Entry> entries;
  bool empty() const { return entries.empty(); }
};

// Parses "target=Source,target=Source". Throws Error naming the item when a target is
// unknown, an item has no '=' or an empty side, or a target is mapped twice.
CsvColumnMap parse_csv_column_map(std::string_view text);

}  // namespace ttlpred
