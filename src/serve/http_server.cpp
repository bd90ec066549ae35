#include "serve/http_server.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

// Beast 1.74 returns boost::none from its content-length parser; under the sanitizers GCC 12
// inlines that into the request parser and flags the empty optional as maybe-uninitialized
// (a false positive: an empty optional never reads its storage). The pragma covers only the
// Beast headers, where the warning is reported.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#pragma GCC diagnostic pop
#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <tuple>
#include <unordered_map>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "serve/access_log.hpp"
#include "serve/admin_token.hpp"
#include "serve/job_json.hpp"
#include "serve/openapi_document.hpp"
#include "serve/request_framing.hpp"
#include "serve/socket_stream.hpp"
#include "util/error.hpp"

namespace ttlpred::serve {
namespace {

namespace http = boost::beast::http;
using Clock = std::chrono::steady_clock;
using Request = http::request<http::string_body>;

// Bytes asked of one recv(): a 256-job batch body (~40 KB) in one or two calls.
constexpr std::size_t kReadChunk = 64u << 10;

// How long a worker waits on a connection for the next request before handing it to the
// poller. A busy client's next request comes within microseconds and is read at once, as
// before; an idle one frees the worker after this, so idle connections never starve busy
// ones (a few reconnecting idle clients used to hold every worker).
constexpr std::chrono::milliseconds kHoldIdle{20};

struct Route {
  std::string_view path;
  http::verb method;
  Endpoint endpoint;
};
constexpr Route kRoutes[] = {
    {"/v1/predict", http::verb::post, Endpoint::Predict}, {"/v1/match", http::verb::post, Endpoint::Match},
    {"/v1/outcomes", http::verb::post, Endpoint::Outcomes}, {"/healthz", http::verb::get, Endpoint::Healthz},
    {"/readyz", http::verb::get, Endpoint::Readyz},       {"/metrics", http::verb::get, Endpoint::Metrics},
    {"/admin/reload", http::verb::post, Endpoint::Reload}, {"/openapi.json", http::verb::get, Endpoint::OpenApi},
    {"/v1/started", http::verb::post, Endpoint::Started},
};

// Boost 1.74's Beast has its own string_view.
std::string_view std_view(boost::beast::string_view s) { return {s.data(), s.size()}; }

const Route* route_of(boost::beast::string_view target) {
  const std::string_view path = std_view(target).substr(0, std_view(target).find('?'));
  for (const Route& r : kRoutes)
    if (r.path == path) return &r;
  return nullptr;
}

const char* default_message(int status) {
  switch (status) {
    case 400: return "bad request";
    case 404: return "no such endpoint";
    case 405: return "method not allowed";
    case 408: return "request timeout (--read-timeout)";
    case 413: return "request body too large (--max-body)";
    case 431: return "request headers too large";
    case 501: return "not implemented";
    default: return status >= 500 ? "internal error" : "request refused";
  }
}

bool expects_continue(const Request& req) {
  return req.version() >= 11 && boost::beast::iequals(req[http::field::expect], "100-continue");
}

}  // namespace

std::string listen_url(const std::string& host, int port) {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host == "[::1]" || host.starts_with("127.");
}

struct HttpServer::Impl {
  Service& service;
  HttpOptions options;
  int listen_fd = -1;

  std::atomic<bool> stopping{false};  // set under `mutex`, so that no accepted connection is missed
  std::mutex mutex;
  std::unordered_set<int> open;  // connections being served, so that stop() can end them

  std::unique_ptr<AccessLog> access_log;  // null: off (the default)

  Impl(Service& s, HttpOptions o) : service(s), options(std::move(o)) {
    if (!options.access_log.empty()) access_log = std::make_unique<AccessLog>(options.access_log);
  }

  void log_refused(const Request& req, Endpoint e, int status) {
    if (!access_log) return;
    const std::string_view target = std_view(req.target());
    access_log->write({endpoint_name(e), std_view(req.method_string()), target.substr(0, target.find('?')), status, 0.0, 0});
  }
  ~Impl() {
    if (listen_fd >= 0) ::close(listen_fd);
    if (epoll_fd >= 0) ::close(epoll_fd);
    if (wake_fd >= 0) ::close(wake_fd);
  }

  Reply check_admin(const Request& req) const {
    if (options.admin_token.empty()) {
      if (is_loopback(options.host)) return {200, {}};
      return {403, error_body("admin endpoints and /v1/outcomes need an admin token (--admin-token-file, " +
                              std::string(kAdminTokenEnv) + " or --admin-token) when the service listens beyond loopback")};
    }
    if (req[http::field::authorization] != "Bearer " + options.admin_token)
      return {401, error_body("missing or wrong admin token (send 'Authorization: Bearer <token>')", "Authorization")};
    return {200, {}};
  }

  Reply call(Endpoint e, const Request& req) {
    const std::string_view body = req.body();
    switch (e) {
      case Endpoint::Predict: return service.predict(body);
      case Endpoint::Match: return service.match(body);
      case Endpoint::Outcomes: {
        // An outcome feeds every later prediction through the shared history keys: writers
        // are trusted like admins.
        Reply auth = check_admin(req);
        return auth.status != 200 ? auth : service.outcomes(body);
      }
      case Endpoint::Started: {
        // A start counts in every later match-time prediction of its keys: trusted like outcomes.
        Reply auth = check_admin(req);
        return auth.status != 200 ? auth : service.started(body);
      }
      case Endpoint::Healthz: return service.healthz();
      case Endpoint::Readyz: return service.readyz();
      case Endpoint::Metrics: return service.metrics_text();
      case Endpoint::OpenApi: return {200, std::string(openapi_document())};
      case Endpoint::Reload: {
        Reply auth = check_admin(req);
        return auth.status != 200 ? auth : service.reload(body);
      }
      case Endpoint::Other: break;
    }
    return {404, error_body(default_message(404))};
  }

  // Routes one request and times it into the metrics; an exception becomes a 500. A 405
  // sets `allow` to the method the path takes.
  Reply handle(const Request& req, const char*& allow) {
    const Route* route = route_of(req.target());
    if (!route) {
      service.metrics().record(Endpoint::Other, 0.0, true);
      log_refused(req, Endpoint::Other, 404);
      return {404, error_body(default_message(404))};
    }
    if (req.method() != route->method) {
      service.metrics().record(route->endpoint, 0.0, true);
      log_refused(req, route->endpoint, 405);
      allow = route->method == http::verb::get ? "GET" : "POST";
      return {405, error_body(default_message(405))};
    }
    const auto start = Clock::now();
    Reply reply;
    try {
      reply = call(route->endpoint, req);
    } catch (const std::exception& e) {
      reply = {500, error_body(std::string("internal error: ") + e.what())};
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    service.metrics().record(route->endpoint, seconds, reply.status >= 400);
    if (access_log) {
      const std::string_view name = endpoint_name(route->endpoint);
      access_log->write({name, std_view(req.method_string()), route->path, reply.status, seconds,
                         reply.status == 200 ? batch_size_of_reply(name, reply.body) : 0});
    }
    return reply;
  }

  static bool write_reply(SocketStream& stream, unsigned version, bool keep_alive, Reply&& reply, const char* allow) {
    http::response<http::string_body> res{static_cast<http::status>(reply.status), version};
    res.set(http::field::content_type, reply.content_type);
    if (allow) res.set(http::field::allow, allow);
    res.keep_alive(keep_alive);
    res.body() = std::move(reply.body);
    res.prepare_payload();
    boost::beast::error_code ec;
    http::write(stream, res, ec);
    return !ec;
  }

  // After a last reply (an error, `Connection: close`) the client may still be sending:
  // closing with unread bytes would make the kernel answer with a reset that can destroy the
  // reply before the client reads it. Half-close, then discard what comes for a short while
  // (a client that reads to the end closes at once).
  static void close_gently(int fd) {
    ::shutdown(fd, SHUT_WR);
    const timeval wait{0, 200000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    char sink[16384];
    const auto until = Clock::now() + std::chrono::seconds(2);
    while (Clock::now() < until && ::recv(fd, sink, sizeof sink, 0) > 0) {
    }
  }

  enum class After { Closed, Park };

  // Serves requests on `fd` while they come; `served` counts them across parkings. Returns
  // Park when no byte of a next request came within kHoldIdle (the connection goes back to
  // the poller, freeing this worker), Closed when the connection is done (the caller closes).
  After serve_connection(int fd, std::size_t& served) {
    using std::chrono::seconds;
    const auto hold = std::min<SocketStream::Millis>(kHoldIdle, seconds(options.keep_alive_timeout_s));
    SocketStream stream(fd, hold, seconds(options.read_timeout_s), seconds(options.write_timeout_s));
    boost::beast::flat_buffer buffer;
    buffer.reserve(kReadChunk);  // else Beast reads a batch's body in many small pieces
    for (;;) {
      stream.start_request(buffer.size() != 0);
      http::request_parser<http::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(options.max_header));
      parser.body_limit(options.max_body);
      boost::beast::error_code ec;
      http::read_header(stream, buffer, parser, ec);
      if (!ec) {
        std::string why;
        if (const int status = status_for_header(parser.get(), why); status != 0) {
          const Route* route = route_of(parser.get().target());
          service.metrics().record(route ? route->endpoint : Endpoint::Other, 0.0, true);
          write_reply(stream, 11, false, {status, error_body(why)}, nullptr);
          close_gently(fd);
          return After::Closed;
        }
      }
      if (!ec && !parser.is_done() && expects_continue(parser.get())) {
        static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
        stream.write_some(boost::asio::buffer(kContinue, sizeof kContinue - 1), ec);
      }
      if (!ec && !parser.is_done()) http::read(stream, buffer, parser, ec);
      if (ec) {
        // Idle: nothing of a next request yet. The poller waits for it (or closes the
        // connection after --keep-alive-timeout); this worker serves others meanwhile.
        if (ec == boost::beast::error::timeout && !stream.in_request() && buffer.size() == 0 && !stopping)
          return After::Park;
        const int status = status_for_read_error(ec, stream.in_request());
        if (status == 0) return After::Closed;
        const Route* route = route_of(parser.get().target());
        service.metrics().record(route ? route->endpoint : Endpoint::Other, 0.0, true);
        write_reply(stream, 11, false, {status, error_body(default_message(status))}, nullptr);
        close_gently(fd);
        return After::Closed;
      }
      const Request& req = parser.get();
      const char* allow = nullptr;
      Reply reply = handle(req, allow);
      const bool keep_alive = req.keep_alive() && ++served < options.keep_alive_max && !stopping;
      if (!write_reply(stream, req.version(), keep_alive, std::move(reply), allow)) return After::Closed;
      if (!keep_alive) {
        close_gently(fd);  // pipelined requests may still be arriving
        return After::Closed;
      }
    }
  }

  // ---- Connections waiting for work: the queue the workers take from ----------------
  struct Work {
    int fd;
    std::size_t served;
  };
  std::mutex queue_mutex;
  std::condition_variable queue_ready;
  std::deque<Work> queue;

  void push_work(Work w) {
    {
      std::lock_guard lock(queue_mutex);
      queue.push_back(w);
    }
    queue_ready.notify_one();
  }

  void worker() {
    for (;;) {
      Work w{};
      {
        std::unique_lock lock(queue_mutex);
        queue_ready.wait(lock, [&] { return stopping || !queue.empty(); });
        if (stopping) return;  // the poller closes what is still queued
        w = queue.front();
        queue.pop_front();
      }
      {
        std::lock_guard lock(mutex);
        if (stopping) {
          close_connection(w.fd);
          return;
        }
        open.insert(w.fd);
      }
      const After after = serve_connection(w.fd, w.served);
      {
        std::lock_guard lock(mutex);
        open.erase(w.fd);
      }
      if (after == After::Park) {
        park(w.fd, w.served);
      } else {
        close_connection(w.fd);
      }
    }
  }

  // ---- The poller: accepts, watches idle connections, closes them at their timeout ----
  int epoll_fd = -1;
  int wake_fd = -1;  // eventfd: stop() wakes the poller
  std::atomic<std::size_t> connections{0};
  struct Parked {
    std::size_t served;
    std::uint64_t generation;
  };
  std::mutex parked_mutex;
  std::unordered_map<int, Parked> parked;  // idle connections in epoll
  std::deque<std::tuple<Clock::time_point, int, std::uint64_t>> idle_deadlines;  // in parking order
  std::uint64_t next_generation = 0;

  void close_connection(int fd) {
    ::close(fd);
    connections.fetch_sub(1, std::memory_order_relaxed);
  }

  void park(int fd, std::size_t served) {
    if (stopping) {
      close_connection(fd);
      return;
    }
    {
      std::lock_guard lock(parked_mutex);
      const std::uint64_t g = ++next_generation;
      parked[fd] = {served, g};
      idle_deadlines.emplace_back(Clock::now() + std::chrono::seconds(options.keep_alive_timeout_s) - kHoldIdle, fd, g);
    }
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP | EPOLLONESHOT;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
      std::lock_guard lock(parked_mutex);
      parked.erase(fd);
      close_connection(fd);
    }
  }

  // An idle connection became readable (or hung up): back to the workers.
  void unpark(int fd) {
    Parked p{};
    {
      std::lock_guard lock(parked_mutex);
      const auto it = parked.find(fd);
      if (it == parked.end()) return;
      p = it->second;
      parked.erase(it);
    }
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    push_work({fd, p.served});
  }

  // Closes the idle connections whose --keep-alive-timeout has passed; returns how long the
  // poller may sleep until the next one is due.
  int expire_idle() {
    std::vector<int> expired;
    int wait_ms = 1000;
    {
      std::lock_guard lock(parked_mutex);
      const auto now = Clock::now();
      while (!idle_deadlines.empty()) {
        const auto [when, fd, g] = idle_deadlines.front();
        const auto it = parked.find(fd);
        if (it == parked.end() || it->second.generation != g) {  // woke up since: stale entry
          idle_deadlines.pop_front();
          continue;
        }
        if (when > now) {
          wait_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(when - now).count());
          break;
        }
        parked.erase(it);
        expired.push_back(fd);
        idle_deadlines.pop_front();
      }
    }
    for (int fd : expired) {
      ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
      close_connection(fd);
    }
    return std::clamp(wait_ms, 1, 1000);
  }

  void accept_all() {
    for (;;) {
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
          std::this_thread::sleep_for(std::chrono::milliseconds(10));  // out of descriptors: others must end first
        return;  // EAGAIN: all accepted
      }
      if (connections.load(std::memory_order_relaxed) >= options.max_connections) {
        ::close(fd);  // over --max-connections: refused at once rather than queued for ever
        continue;
      }
      connections.fetch_add(1, std::memory_order_relaxed);
      // A connection whose request is already here goes to a worker; one that has sent
      // nothing yet waits in epoll like any idle connection. Handing every new connection to
      // a worker held that worker kHoldIdle per connection: a client pool opening 1 000
      // connections at once queued everyone else behind 1 000 x 20 ms / --threads (6.1 s
      // for a /healthz with 4 threads).
      char first;
      const ssize_t peeked = ::recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
      if (peeked < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        park(fd, 0);
      else
        push_work({fd, 0});  // a request (or an end, or an error) for a worker to read
    }
  }

  void poller() {
    epoll_event events[256];
    for (;;) {
      const int timeout = expire_idle();
      const int n = ::epoll_wait(epoll_fd, events, 256, timeout);
      if (stopping) break;
      for (int i = 0; i < n; ++i) {
        const int fd = events[i].data.fd;
        if (fd == listen_fd) {
          accept_all();
        } else if (fd != wake_fd) {
          unpark(fd);
        }
      }
    }
    // Stopping: wake the workers, close what is parked or still queued.
    queue_ready.notify_all();
    std::lock_guard lock(parked_mutex);
    for (const auto& [fd, p] : parked) close_connection(fd);
    parked.clear();
  }
};

HttpServer::HttpServer(Service& service, HttpOptions options)
    : impl_(std::make_unique<Impl>(service, std::move(options))) {
  const HttpOptions& o = impl_->options;
  if (o.threads == 0) throw Error("--threads must be at least 1");
  if (o.max_body == 0) throw Error("--max-body must be at least 1 byte");
  if (o.max_header < 256) throw Error("--max-header must be at least 256 bytes");
  if (o.max_connections == 0) throw Error("--max-connections must be at least 1");
}

HttpServer::~HttpServer() { stop(); }

int HttpServer::bind() {
  const std::string& host = impl_->options.host;
  const std::string where = host + ":" + std::to_string(impl_->options.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (const int rc = getaddrinfo(host.c_str(), std::to_string(impl_->options.port).c_str(), &hints, &found); rc != 0)
    throw Error("cannot listen on " + where + ": " + gai_strerror(rc));
  std::string why = "no address";
  for (const addrinfo* a = found; a && impl_->listen_fd < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0 &&
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) == 0) {  // the poller accepts until EAGAIN
      impl_->listen_fd = fd;
    } else {
      why = std::strerror(errno);
      ::close(fd);
    }
  }
  freeaddrinfo(found);
  if (impl_->listen_fd < 0) throw Error("cannot listen on " + where + ": " + why);
  sockaddr_storage bound{};
  socklen_t len = sizeof bound;
  getsockname(impl_->listen_fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port_ = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                            : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  return port_;
}

void HttpServer::run() {
  Impl& m = *impl_;
  if (m.listen_fd < 0) throw Error("HttpServer::run() before bind()");
  m.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  m.wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (m.epoll_fd < 0 || m.wake_fd < 0) throw Error(std::string("cannot create the poller: ") + std::strerror(errno));
  for (int fd : {m.listen_fd, m.wake_fd}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(m.epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0)
      throw Error(std::string("cannot watch the listening socket: ") + std::strerror(errno));
  }
  {
    std::lock_guard lock(m.mutex);
    if (m.stopping) return;  // stop() came first
  }
  std::vector<std::thread> workers;
  for (std::size_t i = 0; i < m.options.threads; ++i) workers.emplace_back([&m] { m.worker(); });
  m.poller();
  {
    std::lock_guard lock(m.queue_mutex);  // the workers see `stopping` under this
  }
  m.queue_ready.notify_all();
  for (auto& t : workers) t.join();
  for (const auto& w : m.queue) m.close_connection(w.fd);  // accepted, never served
  m.queue.clear();
}

void HttpServer::stop() {
  if (!impl_) return;
  Impl& m = *impl_;
  {
    std::lock_guard lock(m.mutex);
    m.stopping = true;
    // Wakes the workers blocked in reads of the connections they serve (a read returns end of
    // stream). Only the read side: a worker still computing a reply can write it, so a request
    // in flight at SIGTERM gets its answer before the connection closes.
    for (int fd : m.open) ::shutdown(fd, SHUT_RD);
  }
  {
    std::lock_guard lock(m.queue_mutex);
  }
  m.queue_ready.notify_all();
  if (m.wake_fd >= 0) {
    const std::uint64_t one = 1;
    if (::write(m.wake_fd, &one, sizeof one) < 0) {
    }  // the poller also wakes within a second by itself
  }
}

}  // namespace ttlpred::serve
