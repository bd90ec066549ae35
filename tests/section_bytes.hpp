#pragma once
// Crafting hostile but well-sealed bytes for the readers behind the model file's checksums.
// A reader's guards are reached only when the container around the bytes is valid, so a test
// decodes a real section into a mirror of its layout, changes one field, encodes it back and
// seals it again with a correct checksum: the refusal it sees is the guard's, not the
// checksum's. One layout function per format (`template <class IO> void layout(IO&, Mirror&)`)
// serves both ways: run with a PayloadDecoder it reads the real bytes into the mirror, with a
// PayloadEncoder it writes the mirror back, so the two cannot disagree about the format.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "util/binary_io.hpp"

namespace ttlpred::test {

// What `f()` throws, or "(accepted)" when it returns.
template <class F>
std::string error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(accepted)";
}

// The payload of a sealed container (util/binary_io.hpp), whatever its magic and version.
inline std::vector<std::uint8_t> payload_of(const std::vector<std::uint8_t>& container) {
  return {container.begin() + static_cast<std::ptrdiff_t>(kContainerHeaderBytes), container.end()};
}

// `payload` sealed with the magic and format version of `like`, and a correct checksum.
inline std::vector<std::uint8_t> resealed_like(const std::vector<std::uint8_t>& like,
                                               const std::vector<std::uint8_t>& payload) {
  BinaryReader r(like, "container to reseal");
  std::string magic;
  for (int i = 0; i < 8; ++i) magic.push_back(r.get<char>());
  return seal_container(magic, r.get<std::uint32_t>(), payload);
}

// What a section's own writer (`section.write(BinaryWriter&)`) puts.
template <class Section>
std::vector<std::uint8_t> written(const Section& section) {
  BinaryWriter w;
  section.write(w);
  return w.take();
}

// The format version in a sealed container's header.
inline std::uint32_t container_version(const std::vector<std::uint8_t>& container) {
  BinaryReader r(container, "container");
  for (int i = 0; i < 8; ++i) r.get<char>();
  return r.get<std::uint32_t>();
}

// Reads a layout's fields from bytes. A counted list is read as its count, and resized to it;
// a list whose length the format implies (`sized`) is resized to that length; `rest` takes
// every byte left (a part the mirror keeps whole).
class PayloadDecoder {
 public:
  static constexpr bool decoding = true;
  explicit PayloadDecoder(const std::vector<std::uint8_t>& bytes) : r_(bytes, "payload to decode"), size_(bytes.size()) {}
  template <class T>
    requires std::is_arithmetic_v<T>
  void operator()(T& v) {
    v = r_.get<T>();
  }
  void operator()(std::string& s) { s = r_.get_string(); }
  template <class T>
  void counted(std::uint64_t& count, std::vector<T>& items) {
    count = r_.get<std::uint64_t>();
    items.resize(count);
  }
  template <class T>
  void sized(std::vector<T>& items, std::size_t n) {
    items.resize(n);
  }
  void rest(std::vector<std::uint8_t>& bytes) {
    bytes.resize(size_ - r_.position());
    for (auto& b : bytes) b = r_.get<std::uint8_t>();
  }
  bool at_end() const { return r_.at_end(); }

 private:
  BinaryReader r_;
  std::size_t size_;
};

// Writes a layout's fields. A count is written as the mirror holds it, whatever the length of
// its list, so that a test can make a count lie; every list is written as long as it is.
class PayloadEncoder {
 public:
  static constexpr bool decoding = false;
  template <class T>
    requires std::is_arithmetic_v<T>
  void operator()(const T& v) {
    w_.put<T>(v);
  }
  void operator()(const std::string& s) { w_.put_string(s); }
  template <class T>
  void counted(const std::uint64_t& count, const std::vector<T>&) {
    w_.put<std::uint64_t>(count);
  }
  template <class T>
  void sized(const std::vector<T>&, std::size_t) {}
  void rest(const std::vector<std::uint8_t>& bytes) {
    for (auto b : bytes) w_.put<std::uint8_t>(b);
  }
  std::vector<std::uint8_t> take() { return w_.take(); }

 private:
  BinaryWriter w_;
};

// A mirror of a real payload; throws when the layout does not account for every byte.
template <class Mirror>
Mirror decoded(const std::vector<std::uint8_t>& payload, Mirror m = {}) {
  PayloadDecoder d(payload);
  layout(d, m);
  if (!d.at_end()) throw std::logic_error("the test's layout does not cover the whole payload");
  return m;
}

// A mirror's fields as bytes: its layout, then its `trailing` bytes (none in a real payload).
template <class Mirror>
std::vector<std::uint8_t> encoded(Mirror m) {
  PayloadEncoder e;
  layout(e, m);
  std::vector<std::uint8_t> out = e.take();
  out.insert(out.end(), m.trailing.begin(), m.trailing.end());
  return out;
}

// A hostile case of a table-driven test: what it breaks, how, and the words the refusal must
// contain.
template <class Mirror>
struct Mutation {
  const char* name;
  void (*apply)(Mirror&);
  const char* expected;
};

// Each mutation on a copy of `real`: what `refusal(copy)` says must contain `names` (the
// input's name, the section) and the mutation's expected words.
template <class Mirror, std::size_t N, class Refusal>
void expect_each_refused(const Mutation<Mirror> (&mutations)[N], const Mirror& real, Refusal&& refusal,
                         const std::string& names) {
  for (const auto& m : mutations) {
    Mirror broken = real;
    m.apply(broken);
    EXPECT_THAT(refusal(broken), ::testing::AllOf(::testing::HasSubstr(names), ::testing::HasSubstr(m.expected)))
        << m.name;
  }
}

}  // namespace ttlpred::test
