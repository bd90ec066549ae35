#include "test_support.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unordered_set>

namespace ttlpred::test {
namespace fs = std::filesystem;

namespace {
struct TempRoot {
  fs::path root;
  TempRoot() {
    char tmpl[] = "/tmp/ttlpred-test-XXXXXX";
    root = mkdtemp(tmpl);
  }
  ~TempRoot() {
    std::error_code ec;
    fs::remove_all(root, ec);
  }
};
TempRoot& temp_root() {
  static TempRoot r;
  return r;
}
}  // namespace

std::string temp_dir() {
  static int counter = 0;
  fs::path p = temp_root().root / std::to_string(counter++);
  fs::create_directories(p);
  return p.string();
}

std::string source_path(const std::string& relative) {
  return (fs::path(TTLPRED_SOURCE_ROOT) / relative).string();
}

std::string shared_trace(const std::string& name) {
  fs::path p = fs::path(TTLPRED_SHARED_DIR) / "data" / "traces" / name;
  return fs::exists(p) ? p.string() : std::string{};
}

namespace {
// Runs a shell command line; `output` gets what it writes to the pipe (its stdout).
int run_shell(const std::string& cmd, std::string* output) {
  std::FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  if (output) *output = std::move(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Exit 127 is the shell's "command not found", and also what the loader gives when the binary
// is there but cannot start (a shared library missing): only the first may skip a test (its
// callers' GTEST_SKIP on 127), the second is a failure, recorded here for every caller.
void fail_if_it_could_not_start(int rc, const std::string& output) {
  if (rc == 127 && std::filesystem::exists(TTLPRED_BINARY))
    ADD_FAILURE() << TTLPRED_BINARY << " exists but exited 127: it could not start (a shared library missing?)\n" << output;
}
}  // namespace

int run_cli(const std::string& args, std::string* output) {
  std::string out;
  const int rc = run_shell(std::string("'") + TTLPRED_BINARY + "' " + args + " 2>&1", &out);
  fail_if_it_could_not_start(rc, out);
  if (output) *output = std::move(out);
  return rc;
}

bool generate_trace(const std::string& quoted_path, int jobs, int seed) {
  std::string out;
  const int rc = run_cli("generate --jobs " + std::to_string(jobs) + " --seed " + std::to_string(seed) + " --out " +
                             quoted_path,
                         &out);
  if (rc == 127) return false;
  EXPECT_EQ(rc, 0) << out;
  return true;
}

int run_cli_split(const std::string& args, std::string* out, std::string* err) {
  // stderr goes to a file of its own, so that the test sees which stream said what.
  const std::string err_path = temp_dir() + "/stderr.txt";
  std::string stdout_text;
  const int rc = run_shell(std::string("'") + TTLPRED_BINARY + "' " + args + " 2> '" + err_path + "'", &stdout_text);
  std::string err_text;
  if (std::FILE* f = std::fopen(err_path.c_str(), "rb")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) err_text.append(buf, n);
    std::fclose(f);
  }
  fail_if_it_could_not_start(rc, err_text);
  if (out) *out = std::move(stdout_text);
  if (err) *err = std::move(err_text);
  return rc;
}

std::vector<std::string> line_prefixes(const std::string& path, int columns) {
  std::ifstream in(path);
  std::vector<std::string> v;
  for (std::string l; std::getline(in, l);) {
    std::size_t cut = 0;
    for (int c = 0; c < columns && cut != std::string::npos; ++c) cut = l.find(',', cut == 0 ? 0 : cut + 1);
    v.push_back(l.substr(0, cut));
  }
  return v;
}

std::size_t lines_found(const std::vector<std::string>& scored, const std::vector<std::string>& predicted) {
  const std::unordered_set<std::string> have(predicted.begin() + (predicted.empty() ? 0 : 1), predicted.end());
  std::size_t found = 0;
  for (std::size_t i = 1; i < scored.size(); ++i) found += have.count(scored[i]);
  return found;
}

std::string cli_binary() { return TTLPRED_BINARY; }

}  // namespace ttlpred::test
