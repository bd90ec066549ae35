#pragma once
// A category value -> vocabulary index table for the serving path (encode_one): open
// addressing over one flat copy of the vocabulary's bytes, so that a lookup is one hash of
// the value 8 bytes at a time, one probe in a contiguous array and one compare, where the
// vocabulary's std::unordered_map costs a modulo by a prime, a node and its string to chase.
// Answers what CategoryColumn::index answers (tests/features/vocabulary_index_test.cpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ttlpred {

class VocabularyIndex {
 public:
  VocabularyIndex() = default;
  // vocabulary[i] gets index i + 1; the values are distinct (the encoder checks that).
  explicit VocabularyIndex(const std::vector<std::string>& vocabulary);
  // The index of `value`, 0 when it is not in the vocabulary.
  std::uint32_t find(std::string_view value) const { return find(value, hash(value)); }
  // The same in two steps, so that a caller with several lookups can start every probe's
  // memory load (prefetch) before waiting on the first: `h` is hash(value).
  static std::uint64_t hash(std::string_view value);
  void prefetch(std::uint64_t h) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & mask_]);
  }
  std::uint32_t find(std::string_view value, std::uint64_t h) const;

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::uint32_t offset = 0, length = 0;
    std::uint32_t index = 0;  // 0: empty slot
  };
  std::vector<Slot> slots_;  // a power of two, at most half full
  std::string bytes_;        // the values, back to back
  std::uint64_t mask_ = 0;
};

}  // namespace ttlpred
