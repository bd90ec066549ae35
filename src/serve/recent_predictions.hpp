#pragma once
// The answers the service gave, kept until each job's outcome arrives: an outcome can only
// teach the calibrator, and the live quality figures can only score a TTL, if the TTL that
// job was actually given is known. Keyed by the job's `job_id`; a job without one is not
// recorded (its outcome is unmatched: docs/service.md, "Served predictions").
//
// Bounded: a ring of `capacity` answers, the oldest overwritten first (FIFO by the time of
// the answer), O(1) per answer and per look-up. A job answered again (a new /v1/predict, or
// a later /v1/match) replaces its earlier answer, which still holds its ring slot until the
// ring comes round: the table holds the last `capacity` answers, of fewer jobs when some
// were answered twice. Thread-safe (one mutex, held for a batch's records or one look-up).
#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/job_record.hpp"
#include "model/online_calibration.hpp"

namespace ttlpred::serve {

// What was served for one job.
struct ServedPrediction {
  double predicted_at = 0;              // unix seconds (the service's clock) of the answer
  std::array<char, 16> model_version{};  // the answering model's version (16 hex digits)
  OnlineMethod method = OnlineMethod::Static;
  // decision.job: pred_s = the expected wall time answered, requested_s = the job's request
  // (0: none), group = the safe-TTL calibration group, key = the mondrian key; decision.ttl_s
  // = the safe TTL answered, decision.level = the level it was asked for at.
  OnlineDecision decision;
};

// The table's key for a job's `job_id`: the integer's value (exact up to 2^53, as the record
// holds it) or a 64-bit hash of the string; nullopt when the job has none. Two jobs share a
// key only when their integers round to one double or their strings' hashes collide.
std::optional<std::uint64_t> job_key(const JobRecord& r);

class RecentPredictions {
 public:
  struct Entry {
    std::uint64_t key = 0;
    ServedPrediction served;
  };
  // capacity 0: nothing is recorded (every outcome is unmatched).
  explicit RecentPredictions(std::size_t capacity);

  void record(std::span<const Entry> entries);
  std::optional<ServedPrediction> find(std::uint64_t key) const;
  // Forgets the job's answer (its outcome has been applied: a repeated outcome is unmatched).
  void erase(std::uint64_t key);

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const;
  std::uint64_t evicted() const;  // answers overwritten before their outcome came

 private:
  struct Slot {
    Entry entry;
    bool live = false;
  };
  std::size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<Slot> ring_;  // grows to capacity_, then wraps
  std::size_t next_ = 0;
  std::unordered_map<std::uint64_t, std::size_t> index_;  // key -> its live slot
  std::uint64_t evicted_ = 0;
};

}  // namespace ttlpred::serve
