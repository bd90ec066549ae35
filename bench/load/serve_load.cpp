// serve_load: drives `ttlpred serve` over keep-alive connections on loopback and reports
// round-trip percentiles, throughput, errors and the server's resident memory over time.
// Plain blocking sockets, one thread per connection, one request in flight per connection:
// the latency it measures is what a broker thread waiting for its answer would see.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "load_job.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string host = "127.0.0.1";
  int port = 8080;
  int connections = 1;
  double seconds = 10;
  int batch = 1;
  int server_pid = 0;
  double report_every = 0;  // seconds between progress lines (0: none)
  bool match = false;       // POST /v1/match (a slot and `batch` candidates) instead of /v1/predict
};


std::string request_for(const Options& o) {
  std::string body;
  if (o.match) {
    // A slot every candidate fits, and the broker's one job per pilot (limit 1). Each job has
    // a job_id, so a service with a model made for match time records the start (journaled
    // when it has a journal): the same job, rematched, restarts each time.
    body = "{\"slot\":{\"slot_time_left_s\":259200,\"slot_cores\":8},\"limit\":1,\"jobs\":[";
    for (int i = 0; i < o.batch; ++i) {
      std::string job = ttlpred::load::load_job(i);
      job.insert(1, "\"job_id\":" + std::to_string(i) + ",");
      body += (i ? "," : "") + job;
    }
    body += "]}";
    return "POST /v1/match HTTP/1.1\r\nHost: " + o.host + "\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
  }
  if (o.batch == 1) {
    body = ttlpred::load::load_job(0);
  } else {
    body = "[";
    for (int i = 0; i < o.batch; ++i) body += (i ? "," : "") + ttlpred::load::load_job(i);
    body += "]";
  }
  return "POST /v1/predict HTTP/1.1\r\nHost: " + o.host + "\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

long rss_kib(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

struct Worker {
  std::vector<float> latency_us;
  std::uint64_t errors = 0;
};

int connect_to(const Options& o) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(o.port));
  inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Reads one response; returns its status (0 on a broken connection). `closing` is set when
// the server ends the connection after it ("Connection: close", e.g. its keep-alive
// request limit): the client then reconnects, as a broker's client would.
int read_response(int fd, std::string& buf, bool& closing) {
  buf.clear();
  std::size_t header_end = std::string::npos;
  char tmp[65536];
  while (header_end == std::string::npos) {
    const ssize_t n = recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return 0;
    buf.append(tmp, static_cast<std::size_t>(n));
    header_end = buf.find("\r\n\r\n");
  }
  const int status = std::atoi(buf.c_str() + 9);
  const auto conn = buf.find("Connection: close");
  closing = conn != std::string::npos && conn < header_end;
  std::size_t length = 0;
  const auto cl = buf.find("Content-Length: ");
  if (cl != std::string::npos && cl < header_end) length = std::strtoul(buf.c_str() + cl + 16, nullptr, 10);
  while (buf.size() < header_end + 4 + length) {
    const ssize_t n = recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return 0;
    buf.append(tmp, static_cast<std::size_t>(n));
  }
  return status;
}

void run_worker(const Options& o, const std::string& request, const std::atomic<bool>& stop,
                std::atomic<std::uint64_t>& done, Worker& w) {
  int fd = connect_to(o);
  std::string buf;
  w.latency_us.reserve(1 << 20);
  while (!stop.load(std::memory_order_relaxed)) {
    if (fd < 0) {
      ++w.errors;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      fd = connect_to(o);
      continue;
    }
    const auto t0 = Clock::now();
    std::size_t sent = 0;
    bool ok = true;
    while (sent < request.size()) {
      const ssize_t n = send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) {
        ok = false;
        break;
      }
      sent += static_cast<std::size_t>(n);
    }
    bool closing = false;
    const int status = ok ? read_response(fd, buf, closing) : 0;
    const auto t1 = Clock::now();
    if (status != 200) {
      ++w.errors;
      close(fd);
      fd = connect_to(o);
      continue;
    }
    if (w.latency_us.size() < w.latency_us.capacity())  // fixed memory: the first 1M samples
      w.latency_us.push_back(std::chrono::duration<float, std::micro>(t1 - t0).count());
    done.fetch_add(1, std::memory_order_relaxed);
    if (closing) {
      close(fd);
      fd = connect_to(o);
    }
  }
  if (fd >= 0) close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"serve_load: keep-alive load on ttlpred serve's /v1/predict (or /v1/match)"};
  app.add_option("--host", o.host)->capture_default_str();
  app.add_option("--port", o.port)->capture_default_str();
  app.add_option("--connections", o.connections, "concurrent keep-alive connections")->capture_default_str();
  app.add_option("--seconds", o.seconds, "how long to run (a soak: several minutes)")->capture_default_str();
  app.add_option("--batch", o.batch, "jobs per request")->capture_default_str();
  app.add_option("--server-pid", o.server_pid, "sample this process's resident memory");
  app.add_option("--report-every", o.report_every, "seconds between progress lines (0: none)");
  app.add_flag("--match", o.match, "POST /v1/match: one slot, --batch candidates with job ids, limit 1");
  CLI11_PARSE(app, argc, argv);

  const std::string request = request_for(o);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> done{0};
  std::vector<Worker> workers(static_cast<std::size_t>(o.connections));
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (auto& w : workers) threads.emplace_back([&, wp = &w] { run_worker(o, request, stop, done, *wp); });

  long rss_first = -1, rss_last = -1, rss_max = -1;
  std::uint64_t last_done = 0;
  auto last_t = start;
  const double tick = o.report_every > 0 ? o.report_every : 1.0;
  while (std::chrono::duration<double>(Clock::now() - start).count() < o.seconds) {
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(tick, o.seconds)));
    if (o.server_pid > 0) {
      rss_last = rss_kib(o.server_pid);
      if (rss_first < 0) rss_first = rss_last;
      rss_max = std::max(rss_max, rss_last);
    }
    if (o.report_every > 0) {
      const auto now = Clock::now();
      const std::uint64_t d = done.load();
      std::printf("t=%6.0fs  %10.0f req/s  rss=%ld KiB\n", std::chrono::duration<double>(now - start).count(),
                  static_cast<double>(d - last_done) / std::chrono::duration<double>(now - last_t).count(), rss_last);
      std::fflush(stdout);
      last_done = d;
      last_t = now;
    }
  }
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

  std::vector<float> all;
  std::uint64_t errors = 0;
  for (auto& w : workers) {
    all.insert(all.end(), w.latency_us.begin(), w.latency_us.end());
    errors += w.errors;
  }
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty() ? 0.0 : static_cast<double>(all[static_cast<std::size_t>(p * static_cast<double>(all.size() - 1))]);
  };
  const double reqs = static_cast<double>(done.load());
  std::printf("connections=%d batch=%d seconds=%.1f\n", o.connections, o.batch, elapsed);
  std::printf("requests=%.0f errors=%llu req/s=%.0f predictions/s=%.0f\n", reqs, static_cast<unsigned long long>(errors),
              reqs / elapsed, reqs * o.batch / elapsed);
  std::printf("latency_us p50=%.1f p90=%.1f p99=%.1f max=%.1f\n", pct(0.5), pct(0.9), pct(0.99),
              all.empty() ? 0.0 : static_cast<double>(all.back()));
  if (o.server_pid > 0) std::printf("server_rss_kib first=%ld last=%ld max=%ld\n", rss_first, rss_last, rss_max);
  return errors == 0 ? 0 : 1;
}
