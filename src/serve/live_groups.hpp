#pragma once
// The groups the live quality windows and the drift test are kept per: the model's safe-TTL
// calibration groups, i.e. the values of the category column its safe TTLs are calibrated by
// (ModelFile::safe_ttl.group_column; fit_model's rule picks the first the encoder has of
// job_type, queue, partition: the job type for ALICE-style traces, the queue for SWF ones).
// The served prediction already carries that group (its vocabulary index), and the journal
// records it, so a restart rebuilds the per-group figures from the journal (from the outcomes
// the starting model served; Service::learn_quality says why).
//
// Bounded: the encoder's vocabulary is ordered most frequent first in the model's training
// data, and only its first kMaxNamedGroups values are named; every other value, and a value
// the model never saw, is "other". The label set is therefore the model's, at most
// kMaxNamedGroups + 1, and no client can add to it by sending new job types. (A category
// literally named "other" among the first kMaxNamedGroups shares the bucket.)
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/safe_ttl.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {
class Predictor;
}

namespace ttlpred::serve {

inline constexpr std::uint32_t kMaxNamedGroups = 15;
inline constexpr const char* kOtherGroup = "other";

// The bucket of a calibration group id: the id itself for the first kMaxNamedGroups
// vocabulary values (ids 1 ..), 0 ("other") for the rest and for unknown values (id 0);
// kNoGroup stays kNoGroup (the model is ungrouped).
inline std::uint32_t live_group_bucket(std::uint32_t group) {
  if (group == kNoGroup) return kNoGroup;
  group = group_category(group);  // a residual model's fallback stratum is its category's
  return group >= 1 && group <= kMaxNamedGroups ? group : 0;
}

// The column the model's groups are values of; "" when its safe TTL is not grouped.
std::string live_group_column(const Predictor& predictor);
// The label of `group` (a served prediction's decision.job.group) under `predictor`'s
// vocabulary: the category's text or "other"; "" when ungrouped (kNoGroup, or no column).
std::string live_group_name(const Predictor& predictor, std::uint32_t group);

// Per-group state by label: at most kMaxGroups labels besides "other"; once that many exist
// (a scratch-retrained model with another vocabulary can bring new names), a new label's
// outcomes go to "other". Kept in first-seen order, which is the order metrics list them.
template <class T>
class GroupTable {
 public:
  static constexpr std::size_t kMaxGroups = kMaxNamedGroups + 1;
  explicit GroupTable(T prototype = T()) : prototype_(std::move(prototype)) {}

  // The entry for `name` (created from the prototype when new).
  T& at(const std::string& name) {
    if (T* t = find(name)) return *t;
    if (entries_.size() >= kMaxGroups && name != kOtherGroup) return at(kOtherGroup);
    entries_.emplace_back(name, prototype_);
    return entries_.back().second;
  }
  T* find(const std::string& name) {
    for (auto& [n, t] : entries_)
      if (n == name) return &t;
    return nullptr;
  }
  const std::vector<std::pair<std::string, T>>& entries() const { return entries_; }
  void clear() { entries_.clear(); }

  // Each label and its entry's own state (T::write_state / T::read_state).
  void write_state(BinaryWriter& w) const {
    w.put<std::uint32_t>(static_cast<std::uint32_t>(entries_.size()));
    for (const auto& [name, t] : entries_) {
      w.put_string(name);
      t.write_state(w);
    }
  }
  void read_state(BinaryReader& r) {
    const auto n = r.get<std::uint32_t>();
    if (n > kMaxGroups + 1) r.fail("the learned state holds more groups than a service keeps");
    GroupTable read(prototype_);
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::string name = r.get_string(4096);
      read.at(name).read_state(r);
    }
    entries_ = std::move(read.entries_);
  }

 private:
  T prototype_;
  std::vector<std::pair<std::string, T>> entries_;
};

}  // namespace ttlpred::serve
