#include "serve/write_rate.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "util/error.hpp"

namespace ttlpred::serve {

WriteRateLimit::WriteRateLimit(double per_second, double burst) : per_second_(per_second), burst_(burst) {
  if (!std::isfinite(per_second) || !std::isfinite(burst)) throw Error("--outcome-rate and --outcome-burst must be finite");
  if (per_second > 0 && burst < 1) throw Error("--outcome-burst must be at least 1 outcome");
}

WriteRateLimit::Bucket& WriteRateLimit::bucket(std::string_view peer, double now_s) {
  auto refill = [&](Bucket& b) {
    b.tokens = std::min(burst_, b.tokens + std::max(0.0, now_s - b.at_s) * per_second_);
    b.at_s = now_s;
  };
  const std::string key(peer);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxPeers) {
      // Full buckets hold nothing a new one would not: drop them to make room.
      for (auto j = buckets_.begin(); j != buckets_.end();) {
        refill(j->second);
        j = j->second.tokens >= burst_ ? buckets_.erase(j) : std::next(j);
      }
    }
    if (buckets_.size() >= kMaxPeers) {
      if (!shared_started_) shared_ = {burst_, now_s};
      shared_started_ = true;
      refill(shared_);
      return shared_;
    }
    it = buckets_.emplace(key, Bucket{burst_, now_s}).first;
  }
  refill(it->second);
  return it->second;
}

bool WriteRateLimit::admit(std::string_view peer, double now_s) {
  if (!enabled()) return true;
  std::lock_guard lock(mutex_);
  if (bucket(peer, now_s).tokens >= 1) return true;
  ++refused_;
  return false;
}

void WriteRateLimit::charge(std::string_view peer, double count, double now_s) {
  if (!enabled() || !(count > 0)) return;
  std::lock_guard lock(mutex_);
  bucket(peer, now_s).tokens -= count;
}

std::uint64_t WriteRateLimit::refused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

}  // namespace ttlpred::serve
