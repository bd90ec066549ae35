#include "features/vocabulary_index.hpp"

#include <cstring>

#include "util/error.hpp"

namespace ttlpred {
namespace {

std::uint64_t load64(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  return w;
}
std::uint64_t load32(const char* p) {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

}  // namespace

// Any well-mixed hash serves (it is not stored anywhere): 8 bytes a step, the last 1 to 8
// bytes in one or two overlapping loads (no byte loop), then splitmix64's finalizer.
std::uint64_t VocabularyIndex::hash(std::string_view s) {
  std::uint64_t h = 0x9e3779b97f4a7c15ULL * (s.size() + 1);
  const char* p = s.data();
  std::size_t n = s.size();
  for (; n > 8; p += 8, n -= 8) {
    h = (h ^ load64(p)) * 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 31;
  }
  std::uint64_t w = 0;
  if (n == 8)
    w = load64(p);
  else if (n >= 4)
    w = load32(p) | load32(p + n - 4) << 32;
  else if (n > 0)
    w = static_cast<std::uint8_t>(p[0]) | std::uint64_t{static_cast<std::uint8_t>(p[n / 2])} << 8 |
        std::uint64_t{static_cast<std::uint8_t>(p[n - 1])} << 16;
  h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 30;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

VocabularyIndex::VocabularyIndex(const std::vector<std::string>& vocabulary) {
  std::size_t size = 16;
  while (size < 2 * vocabulary.size()) size *= 2;
  slots_.assign(size, Slot{});
  mask_ = size - 1;
  for (std::size_t i = 0; i < vocabulary.size(); ++i) {
    const std::string& v = vocabulary[i];
    if (bytes_.size() + v.size() > 0xFFFFFFFFu) throw Error("encoder: vocabulary of more than 4 GiB");
    Slot s;
    s.hash = hash(v);
    s.offset = static_cast<std::uint32_t>(bytes_.size());
    s.length = static_cast<std::uint32_t>(v.size());
    s.index = static_cast<std::uint32_t>(i + 1);
    bytes_ += v;
    std::uint64_t at = s.hash & mask_;
    while (slots_[at].index != 0) at = (at + 1) & mask_;
    slots_[at] = s;
  }
}

std::uint32_t VocabularyIndex::find(std::string_view value, std::uint64_t h) const {
  if (slots_.empty()) return 0;
  for (std::uint64_t at = h & mask_;; at = (at + 1) & mask_) {
    const Slot& s = slots_[at];
    if (s.index == 0) return 0;
    if (s.hash == h && s.length == value.size() && std::memcmp(bytes_.data() + s.offset, value.data(), s.length) == 0)
      return s.index;
  }
}

}  // namespace ttlpred
