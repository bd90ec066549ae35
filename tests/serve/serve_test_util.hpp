#pragma once
// The service tests' model (test_model_file.hpp), an in-process server on an ephemeral
// port, and the real program as a child process.
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

// Service options for `model` with the batch limit the tests use.
inline serve::ServiceOptions options_for(const std::string& model) {
  serve::ServiceOptions o;
  o.model_path = model;
  o.max_batch = 300;
  return o;
}

// Service + HTTP server in this process, on a free loopback port.
struct TestServer {
  std::unique_ptr<serve::Service> service;
  std::unique_ptr<serve::HttpServer> http;
  std::thread thread;
  int port = 0;

  explicit TestServer(serve::ServiceOptions so, serve::HttpOptions ho = {}) {
    ho.port = 0;
    if (ho.host.empty()) ho.host = "127.0.0.1";
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
struct ServeChild {
  pid_t pid = -1;
  int port = 0;
  ServeChild(const std::string& model, const std::string& journal, const std::vector<std::string>& extra = {}) {
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    std::vector<std::string> args = {cli_binary(), "serve", "--model", model, "--listen", "127.0.0.1:0", "--journal", journal,
                                     "--threads", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid = fork();
    if (pid == 0) {
      dup2(fds[1], 1);
      close(fds[0]);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    std::string line;
    char ch;
    while (read(fds[0], &ch, 1) == 1 && ch != '\n') line += ch;
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
  int signal_and_wait(int sig) {
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
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
