#include "test_support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

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

std::string shared_trace(const std::string& name) {
  fs::path p = fs::path(TTLPRED_SHARED_DIR) / "data" / "traces" / name;
  return fs::exists(p) ? p.string() : std::string{};
}

int run_cli(const std::string& args, std::string* output) {
  const std::string cmd = std::string("'") + TTLPRED_BINARY + "' " + args + " 2>&1";
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

std::string cli_binary() { return TTLPRED_BINARY; }

}  // namespace ttlpred::test
