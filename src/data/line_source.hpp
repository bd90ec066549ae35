#pragma once
// Reads a text file line by line, plain or gzip-compressed (zlib reads both), through one
// large buffer: a line is a view into that buffer, so reading never allocates per line.
// Traces have millions of lines; this is the only I/O path the readers use.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace ttlpred {

class LineSource {
 public:
  // Longest line returned whole; a longer one is cut here (line_truncated()) and the rest
  // of it is dropped, so a binary file without newlines cannot exhaust memory.
  static constexpr std::size_t kMaxLine = std::size_t{1} << 20;

  // Opens `path` (gzip or plain). Throws InputError naming the file when it cannot.
  explicit LineSource(const std::string& path);
  // Reads from memory (benchmarks, fuzz tests); `data` must outlive the source.
  LineSource(std::string_view data, std::string name);
  ~LineSource();
  LineSource(const LineSource&) = delete;
  LineSource& operator=(const LineSource&) = delete;

  // The next line without its '\n' (a '\r' before it is kept: CSV needs to see it inside
  // quoted fields). The view stays valid until the next call. False at end of input.
  bool next(std::string_view& line);
  // 1-based number of the line last returned by next().
  std::size_t line_number() const { return line_no_; }
  bool line_truncated() const { return truncated_; }
  const std::string& name() const { return name_; }
  // Non-empty when reading stopped early (corrupt or truncated gzip stream).
  const std::string& stream_problem() const { return problem_; }

 private:
  bool refill();  // appends input after end_; false when nothing more came
  std::size_t read_some(char* dst, std::size_t n);

  std::string name_;
  struct Gz;
  std::unique_ptr<Gz> gz_;
  std::string_view memory_;  // memory mode: remaining input
  bool memory_mode_ = false;
  std::unique_ptr<char[]> buf_;  // file mode only; not zero-filled (it is large)
  std::size_t begin_ = 0, end_ = 0;  // unread bytes are buf_[begin_, end_)
  bool eof_ = false;
  bool discarding_ = false;  // dropping the tail of an over-long line
  bool truncated_ = false;
  std::size_t line_no_ = 0;
  std::string problem_;
};

}  // namespace ttlpred
