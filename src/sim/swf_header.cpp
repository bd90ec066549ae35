#include "sim/swf_header.hpp"

#include <charconv>
#include <string_view>

#include "data/line_source.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {
namespace {

std::optional<int> header_value(std::string_view line, std::string_view key, const LineSource& src) {
  const auto at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(at + key.size());
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  int value = 0;
  const auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), value);
  if (ec != std::errc() || value <= 0)
    throw InputError(src.name(), src.line_number(), "header field " + std::string(key) + " is not a positive integer");
  (void)end;
  return value;
}

}  // namespace

std::optional<int> swf_max_procs(const std::string& path) {
  LineSource src(path);
  std::string_view line;
  std::optional<int> procs, nodes;
  while (src.next(line)) {
    std::size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (i == line.size()) continue;
    if (line[i] != ';') break;  // header ends at the first job line
    if (auto v = header_value(line, "MaxProcs:", src)) procs = v;
    if (auto v = header_value(line, "MaxNodes:", src)) nodes = v;
  }
  return procs ? procs : nodes;
}

}  // namespace ttlpred::sim
