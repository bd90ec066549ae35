#include "util/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>

#include "util/error.hpp"

namespace ttlpred {
namespace {

std::string errno_text() { return std::strerror(errno); }

// Why `path` cannot be created: errno's text, and for a missing folder, which one (a user
// reads "cannot write out/p.csv: no folder out", not a temporary file's name).
std::string create_failure(const std::string& path) {
  const int saved = errno;
  std::string why = std::strerror(saved);
  if (saved == ENOENT) {
    const std::size_t slash = path.find_last_of('/');
    const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    why += " (no folder " + folder + ")";
  }
  return why;
}

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

std::vector<std::uint8_t> read_regular_file(const std::string& path, std::uint64_t max_bytes,
                                            const HeadCheck& check_head, std::size_t head_bytes) {
  if (path.empty()) throw InputError(path, 0, "empty path");
  if (path.find('\0') != std::string::npos) throw InputError(path, 0, "the path holds a NUL byte");
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw InputError(path, 0, "cannot open: " + errno_text());
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError(path, 0, "cannot stat: " + errno_text());
  if (!S_ISREG(st.st_mode)) throw InputError(path, 0, "not a regular file");
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    throw InputError(path, 0, "is " + std::to_string(st.st_size) + " bytes, above the limit of " +
                                  std::to_string(max_bytes));
  // Fills out[done, out.size()) until it is full or the file ends; false at the end.
  std::vector<std::uint8_t> out;
  std::size_t done = 0;
  auto fill = [&] {
    while (done < out.size()) {
      const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw InputError(path, 0, "read error: " + errno_text());
      if (n == 0) return false;
      done += static_cast<std::size_t>(n);
    }
    return true;
  };
  if (check_head) {
    out.resize(std::min<std::uint64_t>(head_bytes, static_cast<std::uint64_t>(st.st_size)));
    fill();
    out.resize(done);
    check_head(out, static_cast<std::uint64_t>(st.st_size));
  }
  out.resize(static_cast<std::size_t>(st.st_size));
  while (fill()) {
    // The file may have grown since fstat: read on, but never past the limit.
    if (out.size() >= max_bytes + 1) throw InputError(path, 0, "grew past the limit of " + std::to_string(max_bytes) + " bytes");
    out.resize(std::min<std::uint64_t>(max_bytes + 1, out.size() + (1 << 16)));
  }
  out.resize(done);
  if (done > max_bytes) throw InputError(path, 0, "grew past the limit of " + std::to_string(max_bytes) + " bytes");
  return out;
}

void write_file_atomic_stream(const std::string& path, const std::function<void(std::FILE*)>& fill) {
  const std::string tmp = temp_name_for(path);
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw Error("cannot write " + path + ": " + create_failure(path));
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
    throw Error("cannot write " + path + ": " + std::strerror(saved));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    std::remove(tmp.c_str());
    throw Error("cannot write " + path + ": cannot rename its temporary file " + tmp + " over it: " + why);
  }
}

void write_file_atomic(const std::string& path, std::span<const std::uint8_t> bytes) {
  write_file_atomic_stream(path, [&](std::FILE* f) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
      throw Error("short write to " + path);
  });
}

}  // namespace ttlpred
