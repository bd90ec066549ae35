#include "data/csv_column_map.hpp"

#include "util/error.hpp"

namespace ttlpred {

namespace {

struct Alias {
  std::string_view alias, target;
};
// Short names a person types for the columns every export has.
constexpr Alias kAliases[] = {{"submit", "submit_time"}, {"start", "start_time"}, {"end", "end_time"},
                              {"wall", "wall_s"},        {"limit", "requested_ttl_s"}, {"timelimit", "requested_ttl_s"},
                              {"cores", "cpu_cores"},    {"memory", "memory_mb"},   {"id", "job_id"},
                              {"state", "status"}};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<CsvTarget> csv_target_by_name(std::string_view name) {
  for (const auto& a : kAliases)
    if (a.alias == name) name = a.target;
  if (name == "start_time") return CsvTarget{std::nullopt, DerivedTime::StartTime, "start_time"};
  if (name == "end_time") return CsvTarget{std::nullopt, DerivedTime::EndTime, "end_time"};
  if (const auto f = field_by_name(name)) return CsvTarget{*f, DerivedTime::None, std::string(name)};
  return std::nullopt;
}

CsvColumnMap parse_csv_column_map(std::string_view text) {
  CsvColumnMap map;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string_view item = trim(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) {
      if (comma == text.size() && !map.empty()) break;  // a trailing comma
      throw Error("--map: empty item in '" + std::string(text) + "' (expected target=Column,...)");
    }
    const auto eq = item.find('=');
    if (eq == std::string_view::npos)
      throw Error("--map: '" + std::string(item) + "' has no '=' (expected target=Column, e.g. submit=SubmitTime)");
    const std::string_view target = trim(item.substr(0, eq)), source = trim(item.substr(eq + 1));
    if (target.empty() || source.empty())
      throw Error("--map: '" + std::string(item) + "' needs a target and a column name on both sides of '='");
    auto t = csv_target_by_name(target);
    if (!t)
      throw Error("--map: unknown target '" + std::string(target) +
                  "' in '" + std::string(item) +
                  "' (expected a schema column such as submit_time or wall_s, start_time, end_time, or one of "
                  "submit, start, end, wall, limit, timelimit, cores, memory, id, state; see docs/data-format.md)");
    for (const auto& e : map.entries)
      if (e.target.name == t->name)
        throw Error("--map: " + t->name + " mapped twice ('" + e.text + "' and '" + std::string(item) + "')");
    map.entries.push_back({std::move(*t), std::string(source), std::string(item)});
  }
  return map;
}

}  // namespace ttlpred
