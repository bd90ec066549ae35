#include "data/trace_summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace ttlpred {

namespace {

constexpr double kPercents[] = {1, 5, 10, 25, 50, 75, 90, 95, 99, 100};

std::string fmt_number(double v);

// "p50", or "max" for the 100th percentile. Built by appends: g++ 12 -O3 warns falsely
// (-Wrestrict) on "p" + std::string.
std::string percent_label(double p) {
  if (p == 100) return "max";
  std::string s = "p";
  s += fmt_number(p);
  return s;
}

std::string fmt_number(double v) {
  char tmp[48];
  if (std::isnan(v)) return "-";
  if (std::abs(v) < 1e15 && v == std::trunc(v)) std::snprintf(tmp, sizeof tmp, "%lld", static_cast<long long>(v));
  else std::snprintf(tmp, sizeof tmp, "%.6g", v);
  return tmp;
}

// Bin 0 holds [0, 1); bin k >= 1 holds [10^((k-1)/2), 10^(k/2)).
std::size_t bin_of(double v) {
  if (v < 1) return 0;
  return 1 + static_cast<std::size_t>(std::floor(2 * std::log10(v)));
}
double bin_lo(std::size_t k) { return k == 0 ? 0 : std::pow(10.0, (static_cast<double>(k) - 1) / 2); }

void append_distribution(std::string& s, const char* title, const Distribution& d) {
  s += title;
  s += ": " + std::to_string(d.n) + " known\n";
  if (d.n == 0) return;
  s += "  ";
  for (const auto& [p, v] : d.percentiles) {
    s += percent_label(p);
    s += ' ';
    s += human_duration(v);
    s += "  ";
  }
  s += "\n";
  std::size_t most = 1;
  for (const auto& b : d.bins) most = std::max(most, b.count);
  for (const auto& b : d.bins) {
    char tmp[96];
    std::snprintf(tmp, sizeof tmp, "  [%7s, %7s) %9zu  ", human_duration(b.lo).c_str(), human_duration(b.hi).c_str(), b.count);
    s += tmp;
    // At least one mark for a non-empty bin, so that rare long jobs stay visible.
    const std::size_t bar = b.count == 0 ? 0 : std::max<std::size_t>(1, b.count * 50 / most);
    s.append(bar, '#');
    s += "\n";
  }
}

nlohmann::json distribution_json(const Distribution& d) {
  nlohmann::json j;
  j["known"] = d.n;
  nlohmann::json p = nlohmann::json::object();
  for (const auto& [q, v] : d.percentiles) p[percent_label(q)] = v;
  j["percentiles"] = p;
  j["histogram"] = nlohmann::json::array();
  for (const auto& b : d.bins) j["histogram"].push_back({{"lo", b.lo}, {"hi", b.hi}, {"count", b.count}});
  return j;
}

}  // namespace

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return kMissingNumber;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const std::size_t i = rank < 1 ? 0 : std::min(sorted.size() - 1, static_cast<std::size_t>(rank) - 1);
  return sorted[i];
}

Distribution distribution_of(std::span<const double> values) {
  std::vector<double> v;
  for (double x : values)
    if (!std::isnan(x) && x >= 0) v.push_back(x);
  std::sort(v.begin(), v.end());
  Distribution d;
  d.n = v.size();
  if (v.empty()) return d;
  for (double p : kPercents) d.percentiles.emplace_back(p, percentile_sorted(v, p));
  const std::size_t nbins = bin_of(v.back()) + 1;
  for (std::size_t k = 0; k < nbins; ++k) d.bins.push_back({bin_lo(k), bin_lo(k + 1), 0});
  for (double x : v) ++d.bins[std::min(bin_of(x), nbins - 1)].count;
  // Empty bins below the smallest value say nothing (requested times start at minutes).
  const auto first = std::find_if(d.bins.begin(), d.bins.end(), [](const HistogramBin& b) { return b.count > 0; });
  d.bins.erase(d.bins.begin(), first);
  return d;
}

TraceSummary summarize(const JobTable& t, std::size_t top_values) {
  TraceSummary s;
  s.rows = t.rows();
  for (const auto& fi : kFields) {
    ColumnSummary c;
    c.field = fi.field;
    if (fi.kind == FieldKind::Number) {
      std::vector<double> v;
      double sum = 0;
      for (double x : t.num(fi.field))
        if (!std::isnan(x)) v.push_back(x), sum += x;
      if (v.empty()) continue;
      std::sort(v.begin(), v.end());
      c.known = v.size();
      c.min = v.front();
      c.max = v.back();
      c.p50 = percentile_sorted(v, 50);
      c.p99 = percentile_sorted(v, 99);
      c.mean = sum / static_cast<double>(v.size());
    } else {
      std::vector<std::size_t> counts(t.dict(fi.field).size(), 0);
      for (auto code : t.codes(fi.field))
        if (code != kMissingCode) ++counts[code], ++c.known;
      if (c.known == 0) continue;
      for (auto n : counts) c.distinct += n > 0;
      std::vector<std::uint32_t> order(counts.size());
      for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
      const std::size_t k = std::min(top_values, order.size());
      std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(),
                        [&](auto a, auto b) { return counts[a] != counts[b] ? counts[a] > counts[b] : a < b; });
      for (std::size_t i = 0; i < k && counts[order[i]] > 0; ++i)
        c.top.emplace_back(std::string(t.dict(fi.field).value(order[i])), counts[order[i]]);
    }
    s.columns.push_back(std::move(c));
  }
  const auto wall = t.num(Field::WallTime);
  const auto ttl = t.num(Field::RequestedTtl);
  s.wall = distribution_of(wall);
  s.ttl = distribution_of(ttl);
  for (std::size_t i = 0; i < t.rows(); ++i) {
    if (std::isnan(wall[i]) || std::isnan(ttl[i]) || ttl[i] <= 0) continue;
    ++s.with_wall_and_ttl;
    s.past_ttl += wall[i] > ttl[i];
  }
  return s;
}

std::string human_duration(double sec) {
  char tmp[32];
  if (std::isnan(sec)) return "-";
  const double a = std::abs(sec);
  const char* unit = "s";
  double v = sec;
  if (a >= 86400) v = sec / 86400, unit = "d";
  else if (a >= 3600) v = sec / 3600, unit = "h";
  else if (a >= 60) v = sec / 60, unit = "m";
  if (v == std::trunc(v) || std::abs(v) >= 100) std::snprintf(tmp, sizeof tmp, "%.0f%s", v, unit);
  else std::snprintf(tmp, sizeof tmp, "%.3g%s", v, unit);
  return tmp;
}

std::string format_summary(const TraceSummary& s) {
  std::string out = "rows: " + std::to_string(s.rows) + "\n\n";
  char tmp[256];
  std::snprintf(tmp, sizeof tmp, "%-17s %-8s %9s %12s %12s %12s %12s %12s\n", "number column", "phase", "known", "min",
                "p50", "mean", "p99", "max");
  out += tmp;
  for (const auto& c : s.columns) {
    const auto& fi = info(c.field);
    if (fi.kind != FieldKind::Number) continue;
    std::snprintf(tmp, sizeof tmp, "%-17s %-8s %9zu %12s %12s %12s %12s %12s\n", std::string(fi.name).c_str(),
                  std::string(phase_name(fi.phase)).c_str(), c.known, fmt_number(c.min).c_str(), fmt_number(c.p50).c_str(),
                  fmt_number(c.mean).c_str(), fmt_number(c.p99).c_str(), fmt_number(c.max).c_str());
    out += tmp;
  }
  out += "\n";
  std::snprintf(tmp, sizeof tmp, "%-17s %-8s %9s %9s  %s\n", "category column", "phase", "known", "distinct", "top values (count)");
  out += tmp;
  for (const auto& c : s.columns) {
    const auto& fi = info(c.field);
    if (fi.kind != FieldKind::Category) continue;
    std::string top;
    for (const auto& [v, n] : c.top) {
      if (!top.empty()) top += ", ";
      top += quote_for_message(v, 40) + " " + std::to_string(n);
    }
    std::snprintf(tmp, sizeof tmp, "%-17s %-8s %9zu %9zu  ", std::string(fi.name).c_str(),
                  std::string(phase_name(fi.phase)).c_str(), c.known, c.distinct);
    out += tmp + top + "\n";
  }
  out += "\n";
  append_distribution(out, "run time (wall_s)", s.wall);
  out += "\n";
  append_distribution(out, "requested time (requested_ttl_s)", s.ttl);
  out += "\n";
  if (s.with_wall_and_ttl > 0) {
    std::snprintf(tmp, sizeof tmp, "ran past the requested time: %zu of %zu jobs (%.2f%%)\n", s.past_ttl, s.with_wall_and_ttl,
                  100.0 * static_cast<double>(s.past_ttl) / static_cast<double>(s.with_wall_and_ttl));
    out += tmp;
  } else {
    out += "ran past the requested time: no job has both run time and requested time\n";
  }
  return out;
}

nlohmann::json summary_to_json(const TraceSummary& s, const ReadReport& r) {
  nlohmann::json j = {{"file", r.path}, {"format", r.format}, {"lines", r.lines}, {"rows", r.rows},
                      {"comment_lines", r.comment_lines}, {"continuation_lines", r.continuation_lines}};
  nlohmann::json by_reason = nlohmann::json::object();
  for (std::size_t i = 0; i < kNumSkipReasons; ++i)
    if (r.skipped[i]) by_reason[std::string(skip_reason_name(static_cast<SkipReason>(i)))] = r.skipped[i];
  j["skipped"] = {{"total", r.skipped_total()}, {"by_reason", by_reason}, {"examples", r.examples}};
  j["warnings"] = r.warnings;
  j["notes"] = r.notes;
  nlohmann::json cols = nlohmann::json::object();
  for (const auto& c : s.columns) {
    const auto& fi = info(c.field);
    nlohmann::json cj = {{"phase", phase_name(fi.phase)}, {"known", c.known}};
    if (fi.kind == FieldKind::Number) {
      cj.update({{"kind", "number"}, {"unit", fi.unit}});
      cj.update({{"min", c.min}, {"p50", c.p50}, {"mean", c.mean}, {"p99", c.p99}, {"max", c.max}});
    } else {
      cj["kind"] = "category";
      cj["distinct"] = c.distinct;
      cj["top"] = nlohmann::json::array();
      for (const auto& [v, n] : c.top) cj["top"].push_back({{"value", v}, {"count", n}});
    }
    cols[std::string(fi.name)] = cj;
  }
  j["columns"] = cols;
  j["wall_s"] = distribution_json(s.wall);
  j["requested_ttl_s"] = distribution_json(s.ttl);
  j["past_requested_time"] = {
      {"jobs_with_both", s.with_wall_and_ttl},
      {"past", s.past_ttl},
      {"share", s.with_wall_and_ttl ? static_cast<double>(s.past_ttl) / static_cast<double>(s.with_wall_and_ttl) : 0.0}};
  return j;
}

}  // namespace ttlpred
