#include "data/line_source.hpp"

#include <sys/stat.h>
#include <zlib.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "util/error.hpp"

namespace ttlpred {

namespace {
// Room for one maximal line plus a large read chunk, so that refills are rare and a line
// never straddles the buffer's end for long.
constexpr std::size_t kBufferSize = 2 * LineSource::kMaxLine + (std::size_t{1} << 20);
}  // namespace

struct LineSource::Gz {
  gzFile file = nullptr;
  ~Gz() {
    if (file) gzclose(file);
  }
};

LineSource::LineSource(const std::string& path)
    : name_(path), gz_(std::make_unique<Gz>()), buf_(std::make_unique_for_overwrite<char[]>(kBufferSize)) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(path, 0, "cannot open: is a directory");
  errno = 0;
  gz_->file = gzopen(path.c_str(), "rb");
  if (!gz_->file)
    throw InputError(path, 0, std::string("cannot open: ") + (errno ? std::strerror(errno) : "out of memory"));
  gzbuffer(gz_->file, 1u << 18);
}

LineSource::LineSource(std::string_view data, std::string name)
    : name_(std::move(name)), memory_(data), memory_mode_(true) {}

LineSource::~LineSource() = default;

std::size_t LineSource::read_some(char* dst, std::size_t n) {
  const int got = gzread(gz_->file, dst, static_cast<unsigned>(std::min<std::size_t>(n, INT_MAX)));
  int err = Z_OK;
  const char* msg = gzerror(gz_->file, &err);
  if (got < 0 || (err != Z_OK && err != Z_STREAM_END)) {
    // A damaged or cut gzip stream: keep what was read, say why the rest is missing.
    problem_ = std::string("reading stopped early: ") + (msg && *msg ? msg : "read error");
    eof_ = true;
    return got > 0 ? static_cast<std::size_t>(got) : 0;
  }
  return static_cast<std::size_t>(got);
}

bool LineSource::refill() {
  if (eof_) return false;
  if (begin_ > 0) {  // slide the unread tail to the front
    std::memmove(buf_.get(), buf_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  const std::size_t got = read_some(buf_.get() + end_, kBufferSize - end_);
  if (got == 0) eof_ = true;
  end_ += got;
  return got > 0;
}

bool LineSource::next(std::string_view& line) {
  truncated_ = false;
  if (memory_mode_) {  // lines are views straight into the caller's memory
    if (memory_.empty()) return false;
    const void* nl = std::memchr(memory_.data(), '\n', memory_.size());
    const std::size_t len = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - memory_.data()) : memory_.size();
    truncated_ = len > kMaxLine;
    line = memory_.substr(0, truncated_ ? kMaxLine : len);
    memory_.remove_prefix(nl ? len + 1 : len);
    ++line_no_;
    return true;
  }
  std::size_t scanned = 0;  // bytes of the current line already known to hold no '\n'
  for (;;) {
    const char* start = buf_.get() + begin_;
    const std::size_t avail = end_ - begin_;
    const void* nl = avail > scanned ? std::memchr(start + scanned, '\n', avail - scanned) : nullptr;
    if (nl) {
      const std::size_t len = static_cast<std::size_t>(static_cast<const char*>(nl) - start);
      begin_ += len + 1;
      if (discarding_) {  // end of an over-long line whose head was already returned
        discarding_ = false;
        scanned = 0;
        continue;
      }
      truncated_ = len > kMaxLine;  // the same cut whether or not the '\n' was already buffered
      line = std::string_view(start, truncated_ ? kMaxLine : len);
      ++line_no_;
      return true;
    }
    scanned = avail;
    if (discarding_) {
      begin_ = end_;
      scanned = 0;
      if (!refill()) return false;
      continue;
    }
    if (avail >= kMaxLine) {
      line = std::string_view(start, kMaxLine);
      begin_ += kMaxLine;
      discarding_ = true;
      truncated_ = true;
      ++line_no_;
      return true;
    }
    if (!refill()) {
      if (end_ == begin_) return false;
      line = std::string_view(buf_.get() + begin_, end_ - begin_);  // last line, no '\n'
      begin_ = end_;
      ++line_no_;
      return true;
    }
  }
}

}  // namespace ttlpred
