// History keys, their names, which keys a table supports, and how a record maps to key hashes.
#include <algorithm>
#include <cmath>

#include "features/history.hpp"
#include "features/key_hash.hpp"

namespace ttlpred {
namespace {

constexpr std::array<std::string_view, kNumHistoryKeys> kKeyNames = {
    "all", "user", "group", "queue", "partition", "executable", "production", "master_job", "type_package", "user_request",
    "type_system"};

constexpr std::array<std::string_view, kRatioHistoryStats> kStatNames = {
    "log_count", "log_mean_k", "log_ewma", "log_max", "log_last", "mean_log", "ratio_k", "log_ratio_x_request"};

constexpr std::array<std::string_view, kRunningStats> kRunningStatNames = {"run_log_count", "run_log_max_elapsed",
                                                                          "run_log_median_elapsed"};

// The single category column behind a key, for keys that have one.
constexpr Field single_column(HistoryKey k) {
  switch (k) {
    case HistoryKey::User: return Field::User;
    case HistoryKey::Group: return Field::Group;
    case HistoryKey::Queue: return Field::Queue;
    case HistoryKey::Partition: return Field::Partition;
    case HistoryKey::Executable: return Field::Executable;
    case HistoryKey::ProductionTag: return Field::ProductionTag;
    default: return Field::JobId;  // not a single category column
  }
}

}  // namespace

std::string_view history_key_name(HistoryKey k) {
  const auto i = static_cast<std::size_t>(k);
  return i < kNumHistoryKeys ? kKeyNames[i] : std::string_view("?");
}

std::string_view prediction_time_name(PredictionTime at) {
  return at == PredictionTime::Match ? "match" : "submit";
}

std::optional<PredictionTime> prediction_time_by_name(std::string_view name) {
  if (name == "submit") return PredictionTime::Submit;
  if (name == "match") return PredictionTime::Match;
  return std::nullopt;
}

HistoryConfig HistoryConfig::for_table(const JobTable& t, std::uint32_t last_k, double ewma_alpha) {
  HistoryConfig c;
  c.last_k = last_k;
  c.ewma_alpha = ewma_alpha;
  c.ratio_stats = t.has_values(Field::RequestedTtl);
  for (Field f : kWorkFieldCandidates) {
    const auto col = t.num(f);
    if (std::any_of(col.begin(), col.end(), [](double v) { return v > 0.0 && std::isfinite(v); })) c.work_fields.push_back(f);
  }
  c.work_per_speed = !c.work_fields.empty() && t.has_values(Field::HostSpeed);
  for (std::size_t i = 0; i < kNumHistoryKeys; ++i) {
    const auto k = static_cast<HistoryKey>(i);
    bool has = false;
    switch (k) {
      case HistoryKey::All: has = true; break;
      case HistoryKey::MasterJob: has = t.has_values(Field::MasterJobId); break;
      case HistoryKey::JobTypePackage: has = t.has_values(Field::JobType) || t.has_values(Field::Package); break;
      case HistoryKey::UserRequest: has = t.has_values(Field::User) && t.has_values(Field::RequestedTtl); break;
      case HistoryKey::JobTypeSystem: has = t.has_values(Field::InteractionType); break;
      default: has = t.has_values(single_column(k)); break;
    }
    if (has) c.keys.push_back(k);
  }
  c.validate();
  return c;
}

std::vector<std::string> HistoryConfig::feature_names() const {
  std::vector<std::string> names;
  names.reserve(width());
  const std::size_t fixed = work_offset();
  for (auto k : keys) {
    const std::string prefix = "h_" + std::string(history_key_name(k)) + "_";
    for (std::size_t s = 0; s < fixed; ++s) names.push_back(prefix + std::string(kStatNames[s]));
    const std::string rate = censored_rates ? "cens_rate_x_" : "rate_x_";
    for (Field f : work_fields) {
      const std::string field(info(f).name);
      names.push_back(prefix + "log_" + rate + field);
      names.push_back(prefix + rate + field + "_hours");
    }
    if (running_stats())
      for (auto name : kRunningStatNames) names.push_back(prefix + std::string(name));
  }
  return names;
}

void HistoryConfig::validate() const {
  if (last_k < 1 || last_k > kMaxLastK)
    throw Error("history: last_k must be 1.." + std::to_string(kMaxLastK) + ", got " + std::to_string(last_k));
  if (!(ewma_alpha > 0.0 && ewma_alpha <= 1.0))
    throw Error("history: ewma_alpha must be in (0, 1], got " + std::to_string(ewma_alpha));
  std::array<bool, kNumHistoryKeys> seen{};
  for (auto k : keys) {
    const auto i = static_cast<std::size_t>(k);
    if (i >= kNumHistoryKeys) throw Error("history: unknown key kind " + std::to_string(i));
    if (seen[i]) throw Error("history: key '" + std::string(history_key_name(k)) + "' listed twice");
    seen[i] = true;
  }
  if (work_fields.size() > kMaxWorkFields)
    throw Error("history: at most " + std::to_string(kMaxWorkFields) + " work fields, got " + std::to_string(work_fields.size()));
  for (std::size_t i = 0; i < work_fields.size(); ++i) {
    const Field f = work_fields[i];
    if (std::find(kWorkFieldCandidates.begin(), kWorkFieldCandidates.end(), f) == kWorkFieldCandidates.end())
      throw Error("history: field number " + std::to_string(static_cast<int>(f)) +
                  " cannot measure work (events, input_bytes or input_files)");
    if (std::find(work_fields.begin(), work_fields.begin() + static_cast<std::ptrdiff_t>(i), f) != work_fields.begin() + static_cast<std::ptrdiff_t>(i))
      throw Error("history: work field '" + std::string(info(f).name) + "' listed twice");
  }
  if (work_per_speed && work_fields.empty()) throw Error("history: work per host speed without work fields");
  if (at != PredictionTime::Submit && at != PredictionTime::Match)
    throw Error("history: unknown prediction time " + std::to_string(static_cast<int>(at)));
  if (censored_rates && at != PredictionTime::Match)
    throw Error("history: censored work rates need running jobs, so a configuration for match time");
}

double HistoryConfig::prediction_time_of(const JobRecord& r) const {
  const double submit = r[Field::SubmitTime], wait = r[Field::WaitTime];
  if (at == PredictionTime::Submit || std::isnan(wait) || wait < 0) return submit;
  return submit + wait;
}

JobAmounts HistoryConfig::amounts_of(const JobRecord& r) const {
  JobAmounts a;
  a.requested_ttl_s = r[Field::RequestedTtl];
  const double speed = work_per_speed ? r[Field::HostSpeed] : 1.0;
  for (std::size_t w = 0; w < work_fields.size(); ++w) a.work[w] = r[work_fields[w]] / speed;
  return a;
}

void HistoryConfig::write(BinaryWriter& w) const {
  w.put<std::uint32_t>(last_k);
  w.put<double>(ewma_alpha);
  w.put<std::uint8_t>(ratio_stats ? 1 : 0);
  std::vector<std::uint8_t> k;
  for (auto key : keys) k.push_back(static_cast<std::uint8_t>(key));
  w.put_vector(k);
  std::vector<std::uint8_t> wf;
  for (auto f : work_fields) wf.push_back(static_cast<std::uint8_t>(f));
  w.put_vector(wf);
  w.put<std::uint8_t>(work_per_speed ? 1 : 0);
  if (at != PredictionTime::Submit) w.put<std::uint8_t>(static_cast<std::uint8_t>(at));
  if (censored_rates) w.put<std::uint8_t>(1);
}

HistoryConfig HistoryConfig::read(BinaryReader& r, std::uint32_t format_version, bool with_prediction_time,
                                  bool with_censored_flag) {
  HistoryConfig c;
  c.last_k = r.get<std::uint32_t>();
  c.ewma_alpha = r.get<double>();
  const auto ratio = r.get<std::uint8_t>();
  if (ratio > 1) r.fail("history config: bad ratio flag");
  c.ratio_stats = ratio == 1;
  for (auto k : r.get_vector<std::uint8_t>(kNumHistoryKeys)) c.keys.push_back(static_cast<HistoryKey>(k));
  if (format_version >= 2) {
    for (auto f : r.get_vector<std::uint8_t>(kMaxWorkFields)) {
      if (f >= kNumFields) r.fail("history config: unknown work field number " + std::to_string(f));
      c.work_fields.push_back(static_cast<Field>(f));
    }
    const auto per_speed = r.get<std::uint8_t>();
    if (per_speed > 1) r.fail("history config: bad work-per-speed flag");
    c.work_per_speed = per_speed == 1;
  }
  if (with_prediction_time) {
    const auto at = r.get<std::uint8_t>();
    if (at != static_cast<std::uint8_t>(PredictionTime::Match)) r.fail("history config: bad prediction time " + std::to_string(at));
    c.at = PredictionTime::Match;
  }
  if (with_censored_flag && r.get<std::uint8_t>() != 1) r.fail("history config: bad censored-rates flag");
  c.censored_rates = with_censored_flag;
  try {
    c.validate();
  } catch (const Error& e) {
    r.fail(e.what());
  }
  return c;
}

JobKeys job_keys(const JobRecord& r) {
  JobKeys out;
  auto set = [&](HistoryKey k, std::uint64_t part_a, std::uint64_t part_b = 0) {
    const auto i = static_cast<std::size_t>(k);
    out.present[i] = true;
    out.hash[i] = keyhash::combine(static_cast<std::uint8_t>(i), part_a, part_b);
  };
  set(HistoryKey::All, 0);
  for (auto k : {HistoryKey::User, HistoryKey::Group, HistoryKey::Queue, HistoryKey::Partition,
                 HistoryKey::Executable, HistoryKey::ProductionTag}) {
    const auto s = r.text(single_column(k));
    if (!s.empty()) set(k, keyhash::of_string(s));
  }
  if (!std::isnan(r[Field::MasterJobId])) set(HistoryKey::MasterJob, keyhash::of_number(r[Field::MasterJobId]));
  const auto type = r.text(Field::JobType), package = r.text(Field::Package);
  const std::uint64_t type_hash = keyhash::of_string(type);
  if (!type.empty() || !package.empty()) set(HistoryKey::JobTypePackage, type_hash, keyhash::of_string(package));
  if (!type.empty()) out.type = type_hash;
  if (const auto system = r.text(Field::InteractionType); !system.empty())
    set(HistoryKey::JobTypeSystem, type_hash, keyhash::of_string(system));
  if (const auto user = r.text(Field::User); !user.empty() && r[Field::RequestedTtl] > 0)
    set(HistoryKey::UserRequest, keyhash::of_string(user), keyhash::of_number(r[Field::RequestedTtl]));
  return out;
}

}  // namespace ttlpred
