#pragma once
// Little-endian binary serialization with bounds checks, and a checksummed container.
// History state, the feature encoder and the model file all use it, so a truncated or
// corrupted file is refused in one place with one kind of message.
#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "util/error.hpp"

namespace ttlpred {

static_assert(std::endian::native == std::endian::little, "ttlpred files are little-endian");

class BinaryWriter {
 public:
  template <class T>
    requires std::is_arithmetic_v<T>
  void put(T v) {
    append_raw(&v, sizeof(T));
  }
  void put_string(std::string_view s) {
    put<std::uint64_t>(s.size());
    append_raw(s.data(), s.size());
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  void put_vector(const std::vector<T>& v) {
    put<std::uint64_t>(v.size());
    append_raw(v.data(), v.size() * sizeof(T));
  }
  void put_bytes(const std::vector<std::uint8_t>& b) { put_vector(b); }

  const std::vector<std::uint8_t>& bytes() const { return bytes_; }
  std::vector<std::uint8_t> take() { return std::move(bytes_); }

 private:
  // resize + memcpy rather than vector::insert: g++ 12 reports a false stringop-overflow
  // for the latter at -O2.
  void append_raw(const void* p, std::size_t n) {
    if (n == 0) return;
    const std::size_t old = bytes_.size();
    bytes_.resize(old + n);
    std::memcpy(bytes_.data() + old, p, n);
  }
  std::vector<std::uint8_t> bytes_;
};

class BinaryReader {
 public:
  // `what` names the source in error messages (a file path, "model encoder section", ...).
  BinaryReader(const std::uint8_t* data, std::size_t size, std::string what)
      : data_(data), size_(size), what_(std::move(what)) {}
  explicit BinaryReader(const std::vector<std::uint8_t>& b, std::string what)
      : BinaryReader(b.data(), b.size(), std::move(what)) {}

  template <class T>
    requires std::is_arithmetic_v<T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string get_string(std::size_t max_len = 1u << 20) {
    const auto n = get<std::uint64_t>();
    if (n > max_len) fail("string length " + std::to_string(n) + " is implausible");
    need(n);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  std::vector<T> get_vector(std::size_t max_count = std::size_t{1} << 32) {
    const auto n = get<std::uint64_t>();
    if (n > max_count || n > (size_ - pos_) / sizeof(T)) fail("array of " + std::to_string(n) + " elements does not fit");
    std::vector<T> v(n);
    if (n) std::memcpy(v.data(), data_ + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return v;
  }
  std::vector<std::uint8_t> get_bytes() { return get_vector<std::uint8_t>(); }

  bool at_end() const { return pos_ == size_; }
  std::size_t position() const { return pos_; }
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(what_ + ": " + why + " (at byte " + std::to_string(pos_) + ")");
  }

 private:
  void need(std::size_t n) const {
    if (n > size_ - pos_) fail("truncated: needs " + std::to_string(n) + " more bytes, " + std::to_string(size_ - pos_) + " left");
  }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  std::string what_;
};

std::uint32_t crc32_of(const std::uint8_t* data, std::size_t size);

// Container: magic (8 bytes), format version (u32), payload size (u64), CRC-32 of payload
// (u32), payload. `open_container` refuses a wrong magic, a newer version than `max_version`,
// a short file or a checksum mismatch, naming `what` in the error.
std::vector<std::uint8_t> seal_container(std::string_view magic8, std::uint32_t version,
                                         const std::vector<std::uint8_t>& payload);
struct OpenedContainer {
  std::uint32_t version;
  std::vector<std::uint8_t> payload;
};
OpenedContainer open_container(const std::vector<std::uint8_t>& file, std::string_view magic8,
                               std::uint32_t max_version, const std::string& what);
// open_container's checks that need only a file's first kContainerHeaderBytes (`head`) and its
// size: the magic, the version, and a payload size that is the file's. With read_regular_file's
// HeadCheck, a huge file that is no such container (or one padded past its payload) is refused
// before it is read. Throws Error naming `what`, with open_container's wording; the checksum
// is left to open_container.
inline constexpr std::size_t kContainerHeaderBytes = 8 + 4 + 8 + 4;
void check_container_head(const std::vector<std::uint8_t>& head, std::uint64_t file_size, std::string_view magic8,
                          std::uint32_t max_version, const std::string& what);

}  // namespace ttlpred
