#pragma once
// HTTP/1.1 front of the Service: routes, limits, timeouts, admin token, and timing of every
// request into the metrics. Boost.Beast parses requests and writes replies; Boost.Asio runs
// the connections asynchronously (http_connection.hpp), so no thread waits on a connection:
// not between its requests, not while its bytes trickle in. `threads` threads each run an
// io_context of their own and serve their share of the connections (a new one goes to the
// thread with the fewest) in turn, one request per connection per turn; the acceptor runs on
// the first. So `threads` requests are computed at once, and any number of connections, busy,
// idle or slow (up to max_connections and the descriptor limit), only wait their turn. An
// io_context per thread rather than one shared by a pool: Asio's shared scheduler hands each
// ready socket from the thread that polled it to another one (a wake-up and a context switch
// per request, docs/service.md, "HTTP layer"), and a connection's handlers on one thread need
// no strand. The cost: a long request (a 4096-job batch, a reload) delays the other
// connections of its thread, not those of the others. Per-connection deadlines are checked
// by each thread's sweep timer: no thread and no timer operation per request.
#include <memory>
#include <string>

#include "serve/service.hpp"

namespace ttlpred::serve {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                    // 0: any free port (see HttpServer::port())
  std::size_t threads = 8;
  std::size_t max_body = 4u << 20;    // bytes; larger bodies get 413
  std::size_t max_header = 16u << 10;  // bytes of request line and headers; more gets 431
  int read_timeout_s = 5;             // a request must arrive whole within this (else 408)
  int write_timeout_s = 5;
  int keep_alive_timeout_s = 5;       // idle keep-alive connections are closed after this
  std::size_t keep_alive_max = 1000000;  // requests per connection
  // Open connections at most, idle ones included (beyond it new ones are closed at once);
  // the process's descriptor limit (ulimit -n) bounds it too.
  std::size_t max_connections = 10000;
  std::string access_log;             // JSON-lines access log: a file, "-" for stderr, "" off (access_log.hpp)
  std::string admin_token;            // required for /admin/*, /v1/outcomes and /v1/started when set
  // Without a token, /admin/reload is open on loopback only, and /v1/outcomes and /v1/started
  // are refused unless this is set too (--open-outcomes, loopback only): any local process
  // could otherwise move every user's TTL through the shared history keys.
  bool open_outcomes = false;
  // What one client (by address) may send to /v1/outcomes and /v1/started: outcomes a
  // second, and the burst its bucket holds (write_rate.hpp); a rate <= 0 is no limit.
  double outcome_rate = 1000;
  double outcome_burst = 100000;
};

// "http://HOST:PORT" as a client writes it: an IPv6 address in brackets (http://[::1]:8080).
std::string listen_url(const std::string& host, int port);

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(const std::string& host);

class HttpServer {
 public:
  HttpServer(Service& service, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket; returns the port. Throws Error when it cannot.
  int bind();
  // Serves until stop() (from any thread or a signal-watching thread).
  void run();
  void stop();
  int port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace ttlpred::serve
