#include "serve/recent_predictions.hpp"

#include <cmath>

#include "features/key_hash.hpp"

namespace ttlpred::serve {

std::optional<std::uint64_t> job_key(const JobRecord& r) {
  const std::string_view text = r.text(Field::JobId);
  // The history keys' string hash; the top bit set apart from integer ids below 2^63, which
  // every double-rounded id is unless it is astronomically large.
  if (!text.empty()) return keyhash::of_string(text) | (1ull << 63);
  if (!r.known(Field::JobId)) return std::nullopt;
  const double v = r[Field::JobId];
  if (!(v >= 0) || !std::isfinite(v)) return std::nullopt;
  return v < 9.2e18 ? static_cast<std::uint64_t>(v) & ~(1ull << 63) : (1ull << 63) - 1;
}

// The ring's memory is reserved, not touched: pages are only used as answers fill it, so an
// idle service does not pay for the capacity.
RecentPredictions::RecentPredictions(std::size_t capacity) : capacity_(capacity) { ring_.reserve(capacity); }

void RecentPredictions::record(std::span<const Entry> entries) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mutex_);
  for (const Entry& e : entries) {
    if (ring_.size() < capacity_) ring_.emplace_back();
    Slot& slot = ring_[next_];
    if (slot.live) {  // the oldest answer goes (not evicted when it is this job's own, replaced)
      index_.erase(slot.entry.key);
      if (slot.entry.key != e.key) ++evicted_;
      slot.live = false;
    }
    const auto [it, inserted] = index_.try_emplace(e.key, next_);
    if (!inserted) {
      ring_[it->second].live = false;  // the job's earlier answer: replaced
      it->second = next_;
    }
    slot.entry = e;
    slot.live = true;
    next_ = next_ + 1 == capacity_ ? 0 : next_ + 1;
  }
}

std::optional<ServedPrediction> RecentPredictions::find(std::uint64_t key) const {
  std::lock_guard lock(mutex_);
  const auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return ring_[it->second].entry.served;
}

void RecentPredictions::erase(std::uint64_t key) {
  std::lock_guard lock(mutex_);
  const auto it = index_.find(key);
  if (it == index_.end()) return;
  ring_[it->second].live = false;
  index_.erase(it);
}

std::size_t RecentPredictions::size() const {
  std::lock_guard lock(mutex_);
  return index_.size();
}

std::uint64_t RecentPredictions::evicted() const {
  std::lock_guard lock(mutex_);
  return evicted_;
}

}  // namespace ttlpred::serve
