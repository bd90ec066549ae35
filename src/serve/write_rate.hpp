#pragma once
// A rate limit on what one client may teach the service (/v1/outcomes, /v1/started): a token
// bucket per peer address, refilled at `per_second` outcomes a second up to `burst`. A request
// is let in while its peer's bucket holds one outcome and then charged what it carried (a batch of
// n outcomes costs n), so one large batch may take the bucket below zero, and the peer waits
// until the refill has paid the debt: over any stretch a peer teaches at most
// burst + per_second x seconds + one batch. The broker's steady stream (ALICE: up to a
// million jobs a day, about 12 a second, in bursts) stays far below the default; a flood of
// forged outcomes from one writer is cut to the rate (docs/service.md, "Security and limits").
//
// Bounded: at most kMaxPeers buckets. A full bucket carries no state and is dropped to make
// room; when every bucket is in use (many addresses at once), the newcomers share one.
// Thread-safe (one mutex, held for a look-up).
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace ttlpred::serve {

class WriteRateLimit {
 public:
  static constexpr std::size_t kMaxPeers = 4096;

  // per_second <= 0: no limit. Throws Error for a burst < 1 with a limit, or values that are not finite.
  WriteRateLimit(double per_second, double burst);

  bool enabled() const { return per_second_ > 0; }
  // Whether `peer` may send a request now (its bucket holds one outcome); `now_s` a steady clock's seconds.
  bool admit(std::string_view peer, double now_s);
  // Takes `count` outcomes from `peer`'s bucket (after its request was served).
  void charge(std::string_view peer, double count, double now_s);
  std::uint64_t refused() const;  // requests refused since construction

 private:
  struct Bucket {
    double tokens = 0;
    double at_s = 0;  // when `tokens` was last brought up to date
  };
  Bucket& bucket(std::string_view peer, double now_s);  // refilled to now; caller holds mutex_

  double per_second_, burst_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_;
  Bucket shared_;  // the newcomers' when kMaxPeers buckets are in use
  bool shared_started_ = false;
  std::uint64_t refused_ = 0;
};

}  // namespace ttlpred::serve
