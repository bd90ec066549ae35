#pragma once
// Helpers shared by tests: temp folders, the shared/ traces, running the CLI.
#include <atomic>
#include <cstddef>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace ttlpred::test {

// A fresh empty folder under the system temp dir, removed at process exit.
std::string temp_dir();
// Path of a file of this repository, `relative` to its root ("tests/golden/x.csv"). Tests
// locate their committed inputs through it, never through __FILE__: a compiler cache that
// rewrites paths relative to the build folder (CI's ccache) leaves __FILE__ relative.
std::string source_path(const std::string& relative);
// Path of a file in ../shared/data/traces, or "" when shared/ is absent (callers GTEST_SKIP).
std::string shared_trace(const std::string& name);
// Runs build/ttlpred with `args` (a shell-quoted string); returns the exit code and fills
// `output` with stdout+stderr.
int run_cli(const std::string& args, std::string* output);
// The same with the two streams apart: `out` gets stdout, `err` stderr (either may be null).
int run_cli_split(const std::string& args, std::string* out, std::string* err);
// `ttlpred generate --jobs N --seed S --out PATH` (PATH shell-quoted): the trace a CLI test
// starts from. False where the program is not built (the caller skips); a failed run is a
// test failure.
bool generate_trace(const std::string& quoted_path, int jobs, int seed);
// The first `columns` comma-separated fields of every line of the file at `path` (header
// included), each line as one string: what eval --per-job and predict both print first.
std::vector<std::string> line_prefixes(const std::string& path, int columns);
// How many of `scored`'s lines after the header appear among `predicted`'s.
std::size_t lines_found(const std::vector<std::string>& scored, const std::vector<std::string>& predicted);
// Path of the built ttlpred program (for tests that start it as a long-running process).
std::string cli_binary();

// A test's background thread (a load, a hammer of requests) that runs `body(stop)` until
// `stop` is set, and is stopped and joined on every way out of its scope. A failed ASSERT
// returns early: a plain joinable std::thread then ends the whole program in its destructor,
// before anything the test started (a server child) is cleaned up.
class StoppableThread {
 public:
  explicit StoppableThread(std::function<void(const std::atomic<bool>& stop)> body)
      : thread_([this, body = std::move(body)] { body(stop_); }) {}
  ~StoppableThread() { stop_and_join(); }
  void stop_and_join() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  StoppableThread(const StoppableThread&) = delete;
  StoppableThread& operator=(const StoppableThread&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ttlpred::test
