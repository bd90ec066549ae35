#pragma once
// Whole-file reads and atomic writes. Nothing we write is ever half-written: data goes to a
// temporary file beside the target, is flushed to disk, then renamed over it.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace ttlpred {

std::vector<std::uint8_t> read_file_bytes(const std::string& path);

// For paths that come from outside (a reload request): a regular file only, at most
// `max_bytes`, opened without blocking. A FIFO would block the reader forever, /dev/zero
// never ends, a NUL in the path would silently cut it: each is refused with InputError
// naming the path and the reason, before anything is read. `check_head`, when given, sees
// the first `head_bytes` bytes (fewer for a shorter file) and the file's size before the rest
// is read, and refuses by throwing: a huge file whose header already says it is no model
// costs one small read, not the file.
using HeadCheck = std::function<void(const std::vector<std::uint8_t>& head, std::uint64_t file_size)>;
std::vector<std::uint8_t> read_regular_file(const std::string& path, std::uint64_t max_bytes,
                                            const HeadCheck& check_head = {}, std::size_t head_bytes = 0);

// Writes `bytes` to `path` atomically (temp file in the same folder + fsync + rename).
void write_file_atomic(const std::string& path, std::span<const std::uint8_t> bytes);

// Streams content through `fill`, which writes to the given FILE*; same atomic guarantee.
// Used for large outputs (generated traces) that should not be held in memory twice.
void write_file_atomic_stream(const std::string& path, const std::function<void(std::FILE*)>& fill);

}  // namespace ttlpred
