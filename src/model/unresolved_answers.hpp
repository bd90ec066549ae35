#pragma once
// How many jobs of one batch key (a user) have been answered since that key's last outcome:
// the jobs answered on the same evidence. A user's burst (an array of jobs submitted
// together, all answered before any of them ends) either fits its TTL or outruns it as one:
// conformal calibration bounds the kill rate of each job, but a burst of n answered alike
// spends n times one job's share of the kills at once, so one burst can break a whole window's
// promise (docs/ACCURACY.md, "Bursts answered on the same evidence"). The online calibration
// asks for a lower level, a / sqrt(n), for the n-th such job (model/online_calibration.hpp).
//
// The counts live in a fixed table of 2^16 slots indexed by the key's low bits: fixed memory
// whatever the number of users a service meets (a client inventing users cannot grow it), no
// allocation on the answering path, and lock-free counters that concurrent answers may bump
// (the service answers under a shared lock). Two keys sharing a slot add up, which only asks
// for a lower level (a longer TTL). Key 0 is "no key" and is never counted.
#include <atomic>
#include <cstdint>
#include <memory>

namespace ttlpred {

class UnresolvedAnswers {
 public:
  static constexpr std::uint32_t kSlots = 1u << 16;

  UnresolvedAnswers();
  UnresolvedAnswers(const UnresolvedAnswers& other);
  UnresolvedAnswers& operator=(const UnresolvedAnswers& other);
  UnresolvedAnswers(UnresolvedAnswers&&) noexcept = default;
  UnresolvedAnswers& operator=(UnresolvedAnswers&&) noexcept = default;

  // Jobs of `key` answered since its last outcome (0 for key 0).
  std::uint32_t count(std::uint32_t key) const;
  // One more job of `key` answered.
  void answered(std::uint32_t key);
  // An outcome of `key` is known: the answers after it rest on new evidence.
  void resolved(std::uint32_t key);

 private:
  std::atomic<std::uint32_t>* slot(std::uint32_t key) const;
  std::unique_ptr<std::atomic<std::uint32_t>[]> slots_;
};

}  // namespace ttlpred
