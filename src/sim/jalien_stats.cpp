#include "sim/jalien_stats.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "util/error.hpp"

namespace ttlpred::sim {

namespace {
// Each rule's name, once: the parser, the printer and the refusal's list read it.
constexpr std::array<std::pair<StatsRule, std::string_view>, 3> kRuleNames{
    {{StatsRule::Max, "max"}, {StatsRule::MeanPlus2Sd, "mean+2sd"}, {StatsRule::MeanPlus3Sd, "mean+3sd"}}};
}  // namespace

StatsRule stats_rule_from_name(std::string_view name) {
  std::string accepted;
  for (const auto& [rule, text] : kRuleNames) {
    if (text == name) return rule;
    accepted += (accepted.empty() ? "" : &rule == &kRuleNames.back().first ? " or " : ", ") + std::string(text);
  }
  throw Error("simulate: unknown --stats-rule '" + std::string(name) + "' (expected " + accepted + ")");
}

const char* stats_rule_name(StatsRule rule) {
  for (const auto& [r, text] : kRuleNames)
    if (r == rule) return text.data();
  return "?";
}

void RunTimeStats::add(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) throw Error("simulate: a finished job's run time must be finite and >= 0");
  ++n_;
  const double d = seconds - mean_;
  mean_ += d / static_cast<double>(n_);
  m2_ += d * (seconds - mean_);
  max_ = n_ == 1 ? seconds : std::max(max_, seconds);
}

double RunTimeStats::sd() const { return n_ < 2 ? 0.0 : std::sqrt(std::max(0.0, m2_) / static_cast<double>(n_ - 1)); }

double RunTimeStats::estimate(StatsRule rule) const {
  switch (rule) {
    case StatsRule::Max: return max_;
    case StatsRule::MeanPlus2Sd: return mean_ + 2 * sd();
    case StatsRule::MeanPlus3Sd: return mean_ + 3 * sd();
  }
  return max_;
}

std::size_t StatsKeyHash::operator()(const StatsKey& k) const noexcept {
  // splitmix64's finaliser over the three codes packed two by two.
  const auto mix = [](std::uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  return static_cast<std::size_t>(mix((std::uint64_t{k.production} << 32 | k.site) ^ mix(k.cpu_model)));
}

JalienStatsTtl::JalienStatsTtl(std::vector<StatsKey> keys, std::vector<double> static_ttl, std::size_t classes,
                               JalienStatsOptions options)
    : keys_(std::move(keys)), static_ttl_(std::move(static_ttl)), classes_(classes), options_(options) {
  if (classes_ == 0 || keys_.size() != static_ttl_.size() * classes_)
    throw Error("simulate: the JAliEn statistics need one key per job and host class");
  if (options_.min_jobs < 2) throw Error("simulate: --stats-min-jobs must be at least 2 (a standard deviation needs two run times)");
  for (std::size_t i = 0; i < static_ttl_.size(); ++i)
    if (!(static_ttl_[i] > 0) || !std::isfinite(static_ttl_[i]))
      throw Error("simulate: job " + std::to_string(i) + " has no positive static TTL");
  matched_class_.assign(static_ttl_.size(), std::numeric_limits<std::uint32_t>::max());
}

void JalienStatsTtl::learn(const StatsKey& key, double seconds) {
  if (key.production == kNoProduction) return;
  stats_[key].add(seconds);
}

void JalienStatsTtl::recorded(const StatsKey& key, double seconds, double end_s) {
  if (!std::isfinite(end_s)) throw Error("simulate: a recorded job's end time must be finite");
  recorded_.push_back({end_s, seconds, key});
  recorded_sorted_ = false;
}

const RunTimeStats* JalienStatsTtl::stats(const StatsKey& key) const {
  const auto it = stats_.find(key);
  return it == stats_.end() ? nullptr : &it->second;
}

void JalienStatsTtl::decide(std::size_t job, double t, std::span<double> ttl) {
  if (!recorded_sorted_) {
    std::stable_sort(recorded_.begin(), recorded_.end(), [](const Recorded& a, const Recorded& b) { return a.end_s > b.end_s; });
    recorded_sorted_ = true;
  }
  for (; !recorded_.empty() && recorded_.back().end_s <= t; recorded_.pop_back())
    learn(recorded_.back().key, recorded_.back().seconds);
  bool any = false;
  for (std::size_t h = 0; h < classes_; ++h) {
    ttl[h] = static_ttl_[job];
    const RunTimeStats* s = stats(keys_[job * classes_ + h]);
    if (s == nullptr || s->count() < options_.min_jobs) continue;
    ttl[h] = std::min(ttl[h], s->estimate(options_.rule));
    any = true;
  }
  ++(any ? estimated_ : fallbacks_);
}

void JalienStatsTtl::matched(std::size_t job, std::size_t host_class) {
  if (host_class >= classes_) throw Error("simulate: a job was matched on a host class the statistics do not have");
  matched_class_[job] = static_cast<std::uint32_t>(host_class);
}

void JalienStatsTtl::ended(std::size_t job, double t, double ran_s, int, bool killed) {
  if (matched_class_[job] >= classes_) throw Error("simulate: an outcome came for a job that was not matched");
  retry_ended(job, matched_class_[job], t, ran_s, killed);
}

void JalienStatsTtl::retry_ended(std::size_t job, std::size_t host_class, double, double ran_s, bool killed) {
  if (killed) return;
  if (host_class >= classes_) throw Error("simulate: a job ended on a host class the statistics do not have");
  learn(keys_[job * classes_ + host_class], ran_s);
}

}  // namespace ttlpred::sim
