#include "util/file_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "util/error.hpp"

namespace ttlpred {
namespace {

std::string errno_text() { return std::strerror(errno); }

std::string temp_name_for(const std::string& path) {
  std::random_device rd;
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".tmp.%d.%08x", static_cast<int>(getpid()), rd());
  return path + suffix;
}

}  // namespace

std::vector<std::uint8_t> read_file_bytes(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InputError(path, 0, "cannot open: " + errno_text());
  std::vector<std::uint8_t> out;
  std::uint8_t buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  const bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) throw InputError(path, 0, "read error");
  return out;
}

void write_file_atomic_stream(const std::string& path, const std::function<void(std::FILE*)>& fill) {
  const std::string tmp = temp_name_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error("cannot create " + tmp + ": " + errno_text());
  try {
    fill(f);
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  const bool ok = std::fflush(f) == 0 && !std::ferror(f) && fsync(fileno(f)) == 0;
  const int saved = errno;
  std::fclose(f);
  if (!ok) {
    std::remove(tmp.c_str());
    throw Error("cannot write " + tmp + ": " + std::strerror(saved));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    std::remove(tmp.c_str());
    throw Error("cannot rename " + tmp + " to " + path + ": " + why);
  }
}

void write_file_atomic(const std::string& path, std::span<const std::uint8_t> bytes) {
  write_file_atomic_stream(path, [&](std::FILE* f) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
      throw Error("short write to " + path);
  });
}

}  // namespace ttlpred
