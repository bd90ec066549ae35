#include "serve/taught_outcomes.hpp"

namespace ttlpred::serve {

TaughtOutcomes::TaughtOutcomes(std::size_t capacity) : capacity_(capacity) {}

void TaughtOutcomes::remember(std::uint64_t job) {
  if (capacity_ == 0 || !ids_.insert(job).second) return;
  if (ring_.size() < capacity_) {
    ring_.push_back(job);
    return;
  }
  ids_.erase(ring_[next_]);
  ring_[next_] = job;
  next_ = (next_ + 1) % capacity_;
}

void TaughtOutcomes::write(BinaryWriter& w) const {
  std::vector<std::uint64_t> oldest_first(ring_.size());
  for (std::size_t i = 0; i < ring_.size(); ++i) oldest_first[i] = ring_[(next_ + i) % ring_.size()];
  w.put_vector(oldest_first);
}

void TaughtOutcomes::read(BinaryReader& r) {
  const std::vector<std::uint64_t> ids = r.get_vector<std::uint64_t>();
  ring_.clear();
  ids_.clear();
  next_ = 0;
  for (const std::uint64_t id : ids) remember(id);
}

}  // namespace ttlpred::serve
