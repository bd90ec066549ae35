#pragma once
// Helpers shared by tests: temp folders, the shared/ traces, running the CLI.
#include <cstddef>
#include <string>
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

}  // namespace ttlpred::test
