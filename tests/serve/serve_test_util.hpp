#pragma once
// The service tests' model (test_model_file.hpp), an in-process server on an ephemeral
// port, and the real program as a child process.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "data/job_table.hpp"
#include "features/encoder.hpp"
#include "features/history.hpp"
#include "model/model_file.hpp"
#include "model/safe_ttl.hpp"
#include "serve/http_server.hpp"
#include "serve/service.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"

namespace ttlpred::test {

// POSTs `body` and checks the status; the reply as JSON (a discarded value when it is none).
inline nlohmann::json post_json(httplib::Client& c, const std::string& path, const std::string& body, int expect,
                                const httplib::Headers& headers = {}) {
  auto res = c.Post(path, headers, body, "application/json");
  EXPECT_TRUE(res) << path;
  if (!res) return {};
  EXPECT_EQ(res->status, expect) << path << " -> " << res->body;
  return nlohmann::json::parse(res->body, nullptr, false);
}

// Service options for `model` with the batch limit the tests use.
inline serve::ServiceOptions options_for(const std::string& model) {
  serve::ServiceOptions o;
  o.model_path = model;
  o.max_batch = 300;
  return o;
}

// A TCP connection to 127.0.0.1:port, as a descriptor the caller closes (a failed connect
// fails the test): the raw clients that speak bytes the HTTP client would not send.
inline int connect_loopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  return fd;
}

// Service + HTTP server in this process, on a free loopback port.
struct TestServer {
  std::unique_ptr<serve::Service> service;
  std::unique_ptr<serve::HttpServer> http;
  std::thread thread;
  int port = 0;

  // `open_outcomes`: the tests post outcomes on loopback without a token unless they test
  // the token (serve --open-outcomes); false leaves the service's default.
  explicit TestServer(serve::ServiceOptions so, serve::HttpOptions ho = {}, bool open_outcomes = true) {
    ho.port = 0;
    if (ho.host.empty()) ho.host = "127.0.0.1";
    if (open_outcomes) ho.open_outcomes = true;
    service = std::make_unique<serve::Service>(std::move(so));
    http = std::make_unique<serve::HttpServer>(*service, ho);
    port = http->bind();
    thread = std::thread([this] { http->run(); });
    // The library only marks itself running inside run(): wait for it, so that a stop()
    // right after construction is not lost.
    for (int i = 0; i < 500; ++i) {
      if (auto res = client().Get("/healthz"); res && res->status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  ~TestServer() {
    http->stop();
    thread.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_keep_alive(true);
    c.set_tcp_nodelay(true);
    c.set_read_timeout(10, 0);
    return c;
  }
};

// The real program (`ttlpred serve --model M --listen 127.0.0.1:0 --journal J --threads 2`
// and `extra` options) as a child process; its port is read from its first stdout line.
// Every wait on it is bounded (kChildWait): a server that never prints its port or never
// exits on a signal fails the test by name, where an unbounded read() or waitpid() held the
// whole test run. The child dies with the test (PR_SET_PDEATHSIG, which follows the thread
// that forked: construct it on the test's own thread): it shares the test's stderr, and
// ctest waits for that pipe's end, so a server left behind by a test that crashed or was
// stopped at its time limit held ctest for as long as the server ran, with no test named.
struct ServeChild {
  static constexpr std::chrono::seconds kChildWait{120};  // ASan start-up of a loaded model: ~2 s
  pid_t pid = -1;
  int port = 0;
  ServeChild(const std::string& model, const std::string& journal, const std::vector<std::string>& extra = {}) {
    int fds[2];
    EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
    std::vector<std::string> args = {cli_binary(), "serve", "--model", model, "--listen", "127.0.0.1:0", "--journal", journal,
                                     "--threads", "2", "--open-outcomes"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t parent = getpid();
    pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);  // the test died before the line above
      dup2(fds[1], 1);  // dup2 clears close-on-exec on the copy
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    std::string line;
    const auto deadline = std::chrono::steady_clock::now() + kChildWait;
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd p{fds[0], POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        ADD_FAILURE() << "the server printed no port line within " << kChildWait.count() << " s (so far: '" << line << "')";
        break;
      }
      char ch;
      if (read(fds[0], &ch, 1) != 1 || ch == '\n') break;
      line += ch;
    }
    close(fds[0]);
    const auto colon = line.rfind(':');
    EXPECT_NE(colon, std::string::npos) << "no port line from the server: '" << line << "'";
    if (colon != std::string::npos) port = std::stoi(line.substr(colon + 1));
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_tcp_nodelay(true);
    return c;
  }
  // Sends `sig` and returns the wait status; a server still running kChildWait later is a
  // test failure, and is killed.
  int signal_and_wait(int sig) {
    kill(pid, sig);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + kChildWait;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "the server did not exit within " << kChildWait.count() << " s of signal " << sig;
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    pid = -1;
    return status;
  }
  ~ServeChild() {
    if (pid > 0) signal_and_wait(SIGKILL);
  }
  ServeChild(const ServeChild&) = delete;
  ServeChild& operator=(const ServeChild&) = delete;
};

// One test model (seed 1) per test binary, written on first use.
inline const std::string& shared_test_model() {
  static const std::string path = [] {
    const std::string p = temp_dir() + "/shared.model";
    write_test_model(p, 1);
    return p;
  }();
  return path;
}

}  // namespace ttlpred::test
