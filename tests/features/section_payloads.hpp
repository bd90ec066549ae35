#pragma once
// Mirrors of the feature encoder's and the history state's payloads (features/encoder_io.cpp,
// features/history_io.cpp), field by field in their newest formats, for tests that break one
// field of a real section and seal it again (section_bytes.hpp). Raw integer types throughout,
// so that a mutation can write a value no enum holds. With the real sections they decode from:
// an encoder fitted on the feature test table, and a history state that has learned from it,
// both made for match time with censored work rates so that every optional field is present.
#include <bit>
#include <cstdint>
#include <string>
#include <vector>

#include "feature_test_table.hpp"
#include "features/encoder.hpp"
#include "features/history.hpp"
#include "section_bytes.hpp"

namespace ttlpred::test {

inline constexpr char kEncoderMagic[] = "TTLENC";
inline constexpr char kHistoryMagic[] = "TTLHIST";

// The history configuration as both sections write it (HistoryConfig::write).
struct HistoryConfigFields {
  std::uint32_t last_k = 0;
  double ewma_alpha = 0;
  std::uint8_t ratio = 0;
  std::uint64_t n_keys = 0;
  std::vector<std::uint8_t> keys;
  std::uint64_t n_work = 0;
  std::vector<std::uint8_t> work;
  std::uint8_t per_speed = 0;
  std::uint8_t at = 0;        // present with the prediction time
  std::uint8_t censored = 0;  // present with the censored-rates flag
};

// Which optional parts a container version has.
struct ConfigParts {
  bool work = false, prediction_time = false, censored_flag = false;
};

template <class IO>
void layout(IO& io, HistoryConfigFields& c, ConfigParts parts) {
  io(c.last_k);
  io(c.ewma_alpha);
  io(c.ratio);
  io.counted(c.n_keys, c.keys);
  for (auto& k : c.keys) io(k);
  if (parts.work) {
    io.counted(c.n_work, c.work);
    for (auto& f : c.work) io(f);
    io(c.per_speed);
  }
  if (parts.prediction_time) io(c.at);
  if (parts.censored_flag) io(c.censored);
}

struct EncoderPayload {
  std::uint32_t version = 0;  // the container's: which optional parts there are
  struct Dense {
    std::uint8_t source = 0, field = 0, transform = 0;
    std::uint32_t index = 0;
    double mean = 0, inv_std = 0;
  };
  struct Category {
    std::uint8_t field = 0;
    std::uint64_t n_values = 0;
    std::vector<std::string> values;
  };
  std::uint64_t n_dense = 0;
  std::vector<Dense> dense;
  std::uint64_t n_cats = 0;
  std::vector<Category> cats;
  std::uint64_t history_width = 0;
  HistoryConfigFields history;
  std::vector<std::uint8_t> trailing;
};

template <class IO>
void layout(IO& io, EncoderPayload& p) {
  io.counted(p.n_dense, p.dense);
  for (auto& c : p.dense) {
    io(c.source);
    io(c.field);
    io(c.transform);
    io(c.index);
    io(c.mean);
    io(c.inv_std);
  }
  io.counted(p.n_cats, p.cats);
  for (auto& c : p.cats) {
    io(c.field);
    io.counted(c.n_values, c.values);
    for (auto& v : c.values) io(v);
  }
  io(p.history_width);
  layout(io, p.history, ConfigParts{p.version >= 2, p.version >= 3, p.version >= 4});
}

struct HistoryPayload {
  std::uint32_t version = 0;  // the container's: which optional parts there are
  struct Work {
    std::uint64_t count = 0;
    double sum_log_rate = 0, m2 = 0;
  };
  struct Key {
    std::uint64_t key = 0, count = 0;
    double ewma = 0, max = 0, max2 = 0, last = 0, sum_log = 0;
    std::uint32_t ring_pos = 0;
    std::vector<float> recent;
    std::uint64_t ratio_count = 0;
    std::uint32_t ratio_pos = 0;
    std::vector<float> recent_ratio;
    std::vector<Work> work;
  };
  struct Running {
    std::uint64_t job = 0;
    double start = 0;
    std::uint16_t present = 0;  // a bit per key kind, each followed by its hash
    std::vector<std::uint64_t> hashes;
    std::vector<float> log_work;
  };
  struct Pool {
    std::uint64_t pool = 0;
    double m2 = 0;
    std::uint64_t dof = 0;
  };
  HistoryConfigFields config;
  std::uint64_t observed = 0;
  std::uint64_t n_keys = 0;
  std::vector<Key> keys;
  std::vector<std::uint64_t> last_seen;  // one per key, in the same order
  std::uint64_t n_running = 0;
  std::vector<Running> running;
  std::uint64_t n_pools = 0;
  std::vector<Pool> pools;
  std::vector<std::uint8_t> trailing;
};

template <class IO>
void layout(IO& io, HistoryPayload& p) {
  const std::uint32_t v = p.version;
  layout(io, p.config, ConfigParts{v >= 2, v >= 4, v >= 5});
  const bool censored = v >= 5;
  const std::size_t k = p.config.last_k, work_fields = p.config.work.size();
  io(p.observed);
  io.counted(p.n_keys, p.keys);
  for (auto& e : p.keys) {
    io(e.key);
    io(e.count);
    io(e.ewma);
    io(e.max);
    if (v >= 3) io(e.max2);
    io(e.last);
    io(e.sum_log);
    io(e.ring_pos);
    io.sized(e.recent, k);
    for (auto& x : e.recent) io(x);
    io(e.ratio_count);
    io(e.ratio_pos);
    io.sized(e.recent_ratio, k);
    for (auto& x : e.recent_ratio) io(x);
    io.sized(e.work, work_fields);
    for (auto& w : e.work) {
      io(w.count);
      io(w.sum_log_rate);
      if (censored) io(w.m2);
    }
  }
  if (v >= 3) {
    io.sized(p.last_seen, p.keys.size());
    for (auto& s : p.last_seen) io(s);
  }
  if (v >= 4) {
    io.counted(p.n_running, p.running);
    for (auto& r : p.running) {
      io(r.job);
      io(r.start);
      io(r.present);
      io.sized(r.hashes, static_cast<std::size_t>(std::popcount(r.present)));
      for (auto& h : r.hashes) io(h);
      io.sized(r.log_work, censored ? work_fields : 0);
      for (auto& x : r.log_work) io(x);
    }
  }
  if (censored) {
    io.counted(p.n_pools, p.pools);
    for (auto& s : p.pools) {
      io(s.pool);
      io(s.m2);
      io(s.dof);
    }
  }
}

// A sealed section's mirror, and the mirror sealed again with a correct checksum.
template <class Mirror>
Mirror mirror_of(const std::vector<std::uint8_t>& container) {
  Mirror m;
  m.version = container_version(container);
  return decoded(payload_of(container), std::move(m));
}
inline std::vector<std::uint8_t> sealed(const EncoderPayload& p) {
  return seal_container(kEncoderMagic, p.version, encoded(p));
}
inline std::vector<std::uint8_t> sealed(const HistoryPayload& p) {
  return seal_container(kHistoryMagic, p.version, encoded(p));
}

// The configuration both real sections are made for: every key and work field the table
// has values for, at match time, with censored work rates.
inline HistoryConfig match_time_censored_config(const JobTable& t) {
  HistoryConfig cfg = HistoryConfig::for_table(t);
  cfg.at = PredictionTime::Match;
  cfg.censored_rates = true;
  return cfg;
}

inline JobTable section_test_table() { return random_feature_table(400, 11); }

inline FeatureEncoder fitted_section_encoder() {
  const JobTable t = section_test_table();
  const HistoryConfig cfg = match_time_censored_config(t);
  const HistoryMatrix hm = compute_history(t, cfg);
  std::vector<std::size_t> rows(t.rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  return FeatureEncoder::fit(t, rows, &hm, &cfg);
}

// A state that has observed the whole table, with its first three jobs running again under
// other identifiers (so that the running set and its work are saved).
inline HistoryState learned_section_state() {
  const JobTable t = section_test_table();
  HistoryState s(match_time_censored_config(t));
  compute_history(t, s);
  JobRecord r;
  for (std::size_t i = 0; i < 3; ++i) {
    t.record(i, r);
    r[Field::HostSpeed] = 1.0;
    r[Field::Events] = 100.0 * static_cast<double>(i + 1);
    s.start_running(1000 + i, job_keys(r), 5e4 + static_cast<double>(i), s.config().amounts_of(r));
  }
  return s;
}

}  // namespace ttlpred::test
