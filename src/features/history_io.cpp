// Saving and restoring a history state, so a restarted service keeps what it has learned.
#include <algorithm>
#include <cmath>
#include <limits>

#include "features/history.hpp"
#include "util/file_io.hpp"

namespace ttlpred {
namespace {

constexpr std::string_view kMagic = "TTLHIST";
// Version 3 added the second-largest run time per key (robust_max) and, after the entries,
// each key's last update (eviction order; older files load with 0: all equally old). Version 2 added the
// work-rate statistics (configuration and per-key entries); version 1
// files still load, with no work fields.
// Version 4 (written only for a configuration made for match time, so that states for
// submit time keep version 3's bytes) adds the prediction time to the configuration and,
// at the end, the running set: each running job's identifier, start and key hashes.
// Version 5 (written only for a configuration with censored work rates) adds the flag to the
// configuration, each key's squared deviations of log rates per work field, each running
// job's log work per field, and at the end the pooled spreads.
constexpr std::uint32_t kVersion = 5;
constexpr std::uint32_t kMatchTimeVersion = 4;
constexpr std::uint32_t kSubmitTimeVersion = 3;

void put_ring(BinaryWriter& w, const std::array<float, kMaxLastK>& ring, std::uint32_t k) {
  for (std::uint32_t i = 0; i < k; ++i) w.put<float>(ring[i]);
}
void get_ring(BinaryReader& r, std::array<float, kMaxLastK>& ring, std::uint32_t k) {
  for (std::uint32_t i = 0; i < k; ++i) ring[i] = r.get<float>();
}

// The keys of a hash map, in increasing order: what the file lists its entries by.
template <class Map>
std::vector<std::uint64_t> sorted_keys(const Map& map) {
  std::vector<std::uint64_t> keys;
  keys.reserve(map.size());
  for (const auto& kv : map) keys.push_back(kv.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

std::vector<std::uint8_t> HistoryState::to_bytes() const {
  BinaryWriter w;
  cfg_.write(w);
  w.put<std::uint64_t>(observed_);
  // Sorted by key so that equal states give equal files.
  const std::vector<std::uint64_t> order = sorted_keys(keys_);
  w.put<std::uint64_t>(order.size());
  for (auto key : order) {
    const KeyHistory& h = keys_.at(key);
    w.put<std::uint64_t>(key);
    w.put<std::uint64_t>(h.count);
    w.put<double>(h.ewma);
    w.put<double>(h.max);
    w.put<double>(h.max2);
    w.put<double>(h.last);
    w.put<double>(h.sum_log);
    w.put<std::uint32_t>(h.ring_pos);
    put_ring(w, h.recent, cfg_.last_k);
    w.put<std::uint64_t>(h.ratio_count);
    w.put<std::uint32_t>(h.ratio_pos);
    put_ring(w, h.recent_ratio, cfg_.last_k);
    for (std::size_t i = 0; i < cfg_.work_fields.size(); ++i) {
      const KeyHistory::Work& hw = h.work[i];
      w.put<std::uint64_t>(hw.count);
      w.put<double>(hw.sum_log_rate);
      if (cfg_.censored_rates) w.put<double>(hw.m2);
    }
  }
  // Version 3: then each key's last update (the eviction order under a capacity), same order.
  for (auto key : order) w.put<std::uint64_t>(keys_.at(key).last_seen);
  if (!cfg_.running_stats()) return seal_container(kMagic, kSubmitTimeVersion, w.bytes());
  // Version 4: the running set, by job identifier.
  const std::vector<std::uint64_t> jobs = sorted_keys(running_);
  w.put<std::uint64_t>(jobs.size());
  for (auto job : jobs) {
    const RunningJob& r = running_.at(job);
    w.put<std::uint64_t>(job);
    w.put<double>(r.start_s);
    // Only the keys the configuration uses: the state reads no others, and a file for a
    // configuration without a newer key kind stays readable by a build that predates it.
    std::uint16_t present = 0;
    for (auto key : cfg_.keys)
      if (const auto k = static_cast<std::size_t>(key); r.keys.present[k])
        present = static_cast<std::uint16_t>(present | (1u << k));
    w.put<std::uint16_t>(present);
    for (std::size_t k = 0; k < kNumHistoryKeys; ++k)
      if (present & (1u << k)) w.put<std::uint64_t>(r.keys.hash[k]);
    if (cfg_.censored_rates)
      for (std::size_t f = 0; f < cfg_.work_fields.size(); ++f) w.put<float>(r.log_work[f]);
  }
  if (!cfg_.censored_rates) return seal_container(kMagic, kMatchTimeVersion, w.bytes());
  // Version 5: the pooled spreads, by pool.
  const std::vector<std::uint64_t> pools = sorted_keys(spreads_);
  w.put<std::uint64_t>(pools.size());
  for (auto pool : pools) {
    w.put<std::uint64_t>(pool);
    w.put<double>(spreads_.at(pool).m2);
    w.put<std::uint64_t>(spreads_.at(pool).dof);
  }
  return seal_container(kMagic, kVersion, w.bytes());
}

HistoryState HistoryState::from_bytes(const std::vector<std::uint8_t>& bytes, const std::string& what) {
  const auto opened = open_container(bytes, kMagic, kVersion, what);
  BinaryReader r(opened.payload, what);
  HistoryState s(HistoryConfig::read(r, opened.version, opened.version >= 4, opened.version >= 5));
  const bool censored = s.cfg_.censored_rates;
  const std::uint32_t k = s.cfg_.last_k;
  s.observed_ = r.get<std::uint64_t>();
  const auto n = r.get<std::uint64_t>();
  // Each entry takes at least 60 bytes: refuse counts the payload cannot hold before reserving.
  if (n > opened.payload.size() / 60) r.fail("history: " + std::to_string(n) + " keys do not fit in the file");
  s.keys_.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const auto key = r.get<std::uint64_t>();
    KeyHistory h;
    h.count = r.get<std::uint64_t>();
    h.ewma = r.get<double>();
    h.max = r.get<double>();
    // Older files lack the second largest: the largest of the recent ring stands in, so an
    // extreme maximum they hold is recognised as one.
    const bool has_max2 = opened.version >= 3;
    if (has_max2) h.max2 = r.get<double>();
    h.last = r.get<double>();
    h.sum_log = r.get<double>();
    h.ring_pos = r.get<std::uint32_t>();
    get_ring(r, h.recent, k);
    h.ratio_count = r.get<std::uint64_t>();
    h.ratio_pos = r.get<std::uint32_t>();
    get_ring(r, h.recent_ratio, k);
    bool work_ok = true;
    for (std::size_t w = 0; w < s.cfg_.work_fields.size(); ++w) {
      KeyHistory::Work& hw = h.work[w];
      hw.count = r.get<std::uint64_t>();
      hw.sum_log_rate = r.get<double>();
      if (censored) hw.m2 = r.get<double>();
      work_ok = work_ok && hw.count <= h.count && std::isfinite(hw.sum_log_rate) && hw.m2 >= 0 && std::isfinite(hw.m2);
    }
    // Files written before run times were clipped may hold any value (inf in the float
    // rings): clip as observe() would have. An old all-time maximum decays from there.
    for (auto* v : {&h.ewma, &h.last, &h.max, &h.max2}) *v = std::min(*v, kMaxHistoryWallS);
    for (std::uint32_t j = 0; j < k; ++j) h.recent[j] = std::min(h.recent[j], static_cast<float>(kMaxHistoryWallS));
    if (!has_max2) {
      const auto used = static_cast<std::uint32_t>(std::min<std::uint64_t>(h.count, k));
      for (std::uint32_t j = 0; j < used; ++j) h.max2 = std::max(h.max2, static_cast<double>(h.recent[j]));
      h.max2 = h.count < 2 ? 0.0 : std::min(h.max2, h.max);
    }
    if (!work_ok || h.count == 0 || h.ring_pos >= k || h.ratio_pos >= k || h.ratio_count > h.count || !std::isfinite(h.ewma))
      r.fail("history: key entry " + std::to_string(i) + " is inconsistent");
    s.derive(h);
    if (!s.keys_.emplace(key, h).second) r.fail("history: key entry " + std::to_string(i) + " is duplicated");
  }
  if (opened.version >= 3) {
    std::vector<std::uint64_t> sorted;
    sorted.reserve(s.keys_.size());
    for (const auto& kv : s.keys_) sorted.push_back(kv.first);
    std::sort(sorted.begin(), sorted.end());
    for (auto key : sorted) {
      const auto seen = r.get<std::uint64_t>();
      if (seen > s.observed_) r.fail("history: a key's last update is after the last observed job");
      s.keys_.at(key).last_seen = seen;
    }
  }
  if (opened.version >= 4) {
    const auto n_running = r.get<std::uint64_t>();
    if (n_running > opened.payload.size() / 18) r.fail("history: " + std::to_string(n_running) + " running jobs do not fit in the file");
    for (std::uint64_t i = 0; i < n_running; ++i) {
      const auto job = r.get<std::uint64_t>();
      const auto start = r.get<double>();
      const auto present = r.get<std::uint16_t>();
      if (present >> kNumHistoryKeys) r.fail("history: running job " + std::to_string(i) + " names an unknown key kind");
      JobKeys keys;
      for (std::size_t k = 0; k < kNumHistoryKeys; ++k)
        if (present & (1u << k)) {
          keys.present[k] = true;
          keys.hash[k] = r.get<std::uint64_t>();
        }
      std::array<float, kMaxWorkFields> log_work;
      log_work.fill(std::numeric_limits<float>::quiet_NaN());
      if (censored)
        for (std::size_t f = 0; f < s.cfg_.work_fields.size(); ++f) {
          log_work[f] = r.get<float>();
          if (std::isinf(log_work[f])) r.fail("history: running job " + std::to_string(i) + " has an infinite work");
        }
      if (!std::isfinite(start)) r.fail("history: running job " + std::to_string(i) + " has no finite start time");
      if (!s.start_running_logged(job, keys, start, log_work))
        r.fail("history: running job " + std::to_string(i) + " is duplicated");
    }
  }
  if (censored) {
    const auto n_pools = r.get<std::uint64_t>();
    if (n_pools > kMaxSpreadPools + kNumHistoryKeys * kMaxWorkFields)
      r.fail("history: " + std::to_string(n_pools) + " pooled spreads, more than the state keeps");
    for (std::uint64_t i = 0; i < n_pools; ++i) {
      const auto pool = r.get<std::uint64_t>();
      Spread sp;
      sp.m2 = r.get<double>();
      sp.dof = r.get<std::uint64_t>();
      const std::string which = "history: pooled spread " + std::to_string(i);
      if (!(sp.m2 >= 0) || !std::isfinite(sp.m2)) r.fail(which + " is not a finite sum of squares");
      if (!s.spreads_.emplace(pool, sp).second) r.fail(which + " is duplicated");
    }
  }
  if (!r.at_end()) r.fail("history: trailing bytes after the last key");
  return s;
}

void HistoryState::save(const std::string& path) const { write_file_atomic(path, to_bytes()); }

HistoryState HistoryState::load(const std::string& path) { return from_bytes(read_file_bytes(path), path); }

}  // namespace ttlpred
