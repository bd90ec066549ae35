#pragma once
// The job ids whose outcome the history has already learnt from: an outcome teaches the
// shared history keys (partition, queue, group ...) once per job_id, so a client that repeats
// an outcome (a retry after a lost answer, or a writer replaying one job 50 times) moves no
// one's TTL more than the job did once. An outcome without a job_id cannot be recognized
// and is taught each time (docs/service.md, "Who may write outcomes").
//
// Bounded: the last `capacity` job ids taught, the oldest forgotten first (a ring beside a
// hash set: O(1) per look-up and per id, about 50 bytes per id). Capacity 0 remembers
// nothing (every outcome is new). Not thread-safe: the service holds its outcome lock.
#include <cstddef>
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "util/binary_io.hpp"

namespace ttlpred::serve {

class TaughtOutcomes {
 public:
  explicit TaughtOutcomes(std::size_t capacity);

  bool contains(std::uint64_t job) const { return ids_.contains(job); }
  // Remembers `job` (a no-op for one already remembered); past capacity the oldest is forgotten.
  void remember(std::uint64_t job);
  std::size_t size() const { return ids_.size(); }
  std::size_t capacity() const { return capacity_; }

  // The ids oldest first; read() replaces the content and keeps the newest `capacity` of what
  // was written (a restart with a smaller capacity). Throws Error on a truncated state.
  void write(BinaryWriter& w) const;
  void read(BinaryReader& r);

 private:
  std::size_t capacity_;
  std::vector<std::uint64_t> ring_;  // ring_[next_] is the oldest once the ring is full
  std::size_t next_ = 0;
  std::unordered_set<std::uint64_t> ids_;
};

}  // namespace ttlpred::serve
