#include "util/binary_io.hpp"

#include <zlib.h>

#include <algorithm>

namespace ttlpred {

std::uint32_t crc32_of(const std::uint8_t* data, std::size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (size > 0) {  // zlib takes uInt lengths
    const uInt chunk = static_cast<uInt>(std::min<std::size_t>(size, 1u << 30));
    crc = crc32(crc, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<std::uint32_t>(crc);
}

std::vector<std::uint8_t> seal_container(std::string_view magic8, std::uint32_t version,
                                         const std::vector<std::uint8_t>& payload) {
  BinaryWriter w;
  for (std::size_t i = 0; i < 8; ++i) w.put<char>(i < magic8.size() ? magic8[i] : '\0');
  w.put<std::uint32_t>(version);
  w.put<std::uint64_t>(payload.size());
  w.put<std::uint32_t>(crc32_of(payload.data(), payload.size()));
  auto out = w.take();
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

namespace {

struct ContainerHeader {
  std::uint32_t version = 0;
  std::uint64_t payload_size = 0;
  std::uint32_t crc = 0;
};

ContainerHeader read_container_header(BinaryReader& r, std::string_view magic8, std::uint32_t max_version) {
  char magic[8];
  for (char& c : magic) c = r.get<char>();
  for (std::size_t i = 0; i < 8; ++i) {
    if (magic[i] != (i < magic8.size() ? magic8[i] : '\0'))
      r.fail("not a " + std::string(magic8) + " file (wrong magic bytes)");
  }
  ContainerHeader h;
  h.version = r.get<std::uint32_t>();
  if (h.version == 0 || h.version > max_version)
    r.fail("format version " + std::to_string(h.version) + " is newer than this build reads (max " +
           std::to_string(max_version) + "); upgrade ttlpred");
  h.payload_size = r.get<std::uint64_t>();
  h.crc = r.get<std::uint32_t>();
  return h;
}

void check_payload_size(const BinaryReader& r, const ContainerHeader& h, std::uint64_t file_payload) {
  if (h.payload_size != file_payload)
    r.fail("truncated or padded: header says " + std::to_string(h.payload_size) + " payload bytes, file has " +
           std::to_string(file_payload));
}

}  // namespace

OpenedContainer open_container(const std::vector<std::uint8_t>& file, std::string_view magic8,
                               std::uint32_t max_version, const std::string& what) {
  BinaryReader r(file, what);
  const ContainerHeader h = read_container_header(r, magic8, max_version);
  const std::size_t header = r.position();
  check_payload_size(r, h, file.size() - header);
  if (crc32_of(file.data() + header, h.payload_size) != h.crc) r.fail("checksum mismatch: the file is corrupted");
  OpenedContainer out;
  out.version = h.version;
  out.payload.assign(file.begin() + static_cast<std::ptrdiff_t>(header), file.end());
  return out;
}

void check_container_head(const std::vector<std::uint8_t>& head, std::uint64_t file_size, std::string_view magic8,
                          std::uint32_t max_version, const std::string& what) {
  BinaryReader r(head, what);
  const ContainerHeader h = read_container_header(r, magic8, max_version);
  check_payload_size(r, h, file_size - r.position());
}

}  // namespace ttlpred
