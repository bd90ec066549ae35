#pragma once
// Helpers shared by tests: temp folders, the shared/ traces, running the CLI.
#include <string>

namespace ttlpred::test {

// A fresh empty folder under the system temp dir, removed at process exit.
std::string temp_dir();
// Path of a file in ../shared/data/traces, or "" when shared/ is absent (callers GTEST_SKIP).
std::string shared_trace(const std::string& name);
// Runs build/ttlpred with `args` (a shell-quoted string); returns the exit code and fills
// `output` with stdout+stderr.
int run_cli(const std::string& args, std::string* output);
// The same with the two streams apart: `out` gets stdout, `err` stderr (either may be null).
int run_cli_split(const std::string& args, std::string* out, std::string* err);
// Path of a file of the source tree, from its root ("docs/openapi.json"). Tests find their
// files by this, not by __FILE__, which is relative to the build folder when ccache rewrites
// paths (base_dir) and so names nothing from the folder the test runs in.
std::string source_path(const std::string& relative);
// Path of the built ttlpred program (for tests that start it as a long-running process).
std::string cli_binary();

}  // namespace ttlpred::test
