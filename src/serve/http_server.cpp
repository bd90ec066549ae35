#include "serve/http_server.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "serve/http_connection.hpp"
#include "serve/http_routes.hpp"
#include "util/error.hpp"
#include "util/free_memory.hpp"

namespace ttlpred::serve {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

// How often each thread checks its connections' deadlines: what a timeout may overrun by.
constexpr std::chrono::milliseconds kSweepPeriod{100};
// How long accepting pauses when the process is out of descriptors: others must close first.
constexpr std::chrono::milliseconds kAcceptBackoff{10};

// One server thread: its io_context, the connections it serves, and the sweep of their
// deadlines. Everything but `count` is touched only on the lane's own thread.
class Lane final : public ConnectionOwner {
 public:
  asio::io_context io{1};  // one thread: Asio takes no locks it can skip and wakes no other thread
  asio::steady_timer sweep{io};
  std::unordered_map<Connection*, std::shared_ptr<Connection>> connections;
  std::atomic<std::size_t> count{0};  // connections given to this lane, for the acceptor's choice
  std::atomic<std::size_t>* total = nullptr;
  const std::atomic<bool>* stopping = nullptr;

  void closed(Connection& c) override {
    connections.erase(&c);
    count.fetch_sub(1, std::memory_order_relaxed);
    total->fetch_sub(1, std::memory_order_relaxed);
    if (*stopping && connections.empty()) sweep.cancel();  // nothing left: run() may return
  }

  void schedule_sweep() {
    sweep.expires_after(kSweepPeriod);
    sweep.async_wait([this](const boost::system::error_code& ec) {
      if (ec || (*stopping && connections.empty())) return;
      const auto now = Clock::now();
      std::vector<std::shared_ptr<Connection>> due;
      for (const auto& [raw, c] : connections)
        if (c->deadline() <= now) due.push_back(c);
      for (const auto& c : due) c->expire();  // may close it: not while walking the map
      schedule_sweep();
    });
  }

  void stop() {
    std::vector<std::shared_ptr<Connection>> all;
    all.reserve(connections.size());
    for (const auto& [raw, c] : connections) all.push_back(c);
    for (const auto& c : all) c->stop();
    if (connections.empty()) sweep.cancel();
  }
};

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
  Router router;
  int listen_fd = -1;

  std::mutex mutex;  // orders stop() against run()'s start
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> connections{0};  // open ones, all lanes together
  std::vector<std::unique_ptr<Lane>> lanes;
  std::unique_ptr<tcp::acceptor> acceptor;  // on lanes[0]
  std::unique_ptr<asio::steady_timer> accept_backoff;

  Impl(Service& s, HttpOptions o) : service(s), options(std::move(o)), router(service, options) {}
  ~Impl() {
    if (listen_fd >= 0) ::close(listen_fd);
  }

  Lane& least_loaded() {
    Lane* best = lanes.front().get();
    for (const auto& lane : lanes)
      if (lane->count.load(std::memory_order_relaxed) < best->count.load(std::memory_order_relaxed)) best = lane.get();
    return *best;
  }

  void accept_next() {
    if (stopping) return;
    Lane& lane = least_loaded();
    acceptor->async_accept(lane.io, [this, &lane](const boost::system::error_code& ec, ConnectionSocket socket) {
      if (stopping || ec == asio::error::operation_aborted) return;
      if (ec) {
        if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space || ec == asio::error::no_memory) {
          accept_backoff->expires_after(kAcceptBackoff);  // out of descriptors: others must end first
          accept_backoff->async_wait([this](const boost::system::error_code& e) {
            if (!e) accept_next();
          });
          return;
        }
        return accept_next();  // the client gave up before we took it (ECONNABORTED): the next one
      }
      if (connections.load(std::memory_order_relaxed) >= options.max_connections) {
        boost::system::error_code ignored;
        socket.close(ignored);  // over --max-connections: refused at once rather than queued for ever
        return accept_next();
      }
      connections.fetch_add(1, std::memory_order_relaxed);
      lane.count.fetch_add(1, std::memory_order_relaxed);
      // The connection starts on its own lane's thread, where all its handlers run.
      asio::post(lane.io, [this, &lane, s = std::move(socket)]() mutable {
        if (stopping) {  // accepted as the server stopped: the lane may have ended its sweep
          boost::system::error_code ignored;
          s.close(ignored);
          lane.count.fetch_sub(1, std::memory_order_relaxed);
          connections.fetch_sub(1, std::memory_order_relaxed);
          return;
        }
        auto c = std::make_shared<Connection>(std::move(s), options, router, stopping, lane);
        lane.connections.emplace(c.get(), c);
        c->start();
      });
      accept_next();
    });
  }

  // Runs one lane until it has nothing left to do. A handler's exception (std::bad_alloc
  // under a flood) is reported and the lane goes on serving the others.
  static void run_lane(Lane& lane) {
    for (;;) {
      try {
        lane.io.run();
        return;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "ttlpred serve: error in a connection's handler (the server goes on): %s\n", e.what());
      }
    }
  }
};

HttpServer::HttpServer(Service& service, HttpOptions options)
    : impl_(std::make_unique<Impl>(service, std::move(options))) {
  const HttpOptions& o = impl_->options;
  if (o.threads == 0) throw Error("--threads must be at least 1");
  if (o.max_body == 0) throw Error("--max-body must be at least 1 byte");
  if (o.max_header < 256) throw Error("--max-header must be at least 256 bytes");
  return_large_blocks_when_freed();  // a hostile body's memory must not stay resident
  if (o.max_connections == 0) throw Error("--max-connections must be at least 1");
  for (std::size_t i = 0; i < o.threads; ++i) {
    impl_->lanes.push_back(std::make_unique<Lane>());
    impl_->lanes.back()->total = &impl_->connections;
    impl_->lanes.back()->stopping = &impl_->stopping;
  }
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
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) == 0) {  // Asio accepts until EAGAIN
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
  {
    std::lock_guard lock(m.mutex);
    if (m.stopping) return;  // stop() came first
    Lane& first = *m.lanes.front();
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    getsockname(m.listen_fd, reinterpret_cast<sockaddr*>(&bound), &len);
    m.acceptor = std::make_unique<tcp::acceptor>(first.io);
    boost::system::error_code ec;
    m.acceptor->assign(bound.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), m.listen_fd, ec);
    if (ec) throw Error("cannot serve on the listening socket: " + ec.message());
    m.listen_fd = -1;  // the acceptor owns it now
    m.accept_backoff = std::make_unique<asio::steady_timer>(first.io);
    for (auto& lane : m.lanes) lane->schedule_sweep();
    m.accept_next();
  }
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < m.lanes.size(); ++i) threads.emplace_back([&m, i] { Impl::run_lane(*m.lanes[i]); });
  Impl::run_lane(*m.lanes.front());
  for (auto& t : threads) t.join();
}

void HttpServer::stop() {
  if (!impl_) return;
  Impl& m = *impl_;
  {
    std::lock_guard lock(m.mutex);
    if (m.stopping.exchange(true)) return;
  }
  // Each lane ends its own connections on its own thread: those waiting for a request close,
  // a reply being computed or written still goes out whole, with Connection: close.
  for (std::size_t i = 0; i < m.lanes.size(); ++i) {
    Lane& lane = *m.lanes[i];
    asio::post(lane.io, [&m, &lane, first = i == 0] {
      if (first) {
        boost::system::error_code ec;
        if (m.acceptor) m.acceptor->close(ec);
        if (m.accept_backoff) m.accept_backoff->cancel();
      }
      lane.stop();
    });
  }
}

}  // namespace ttlpred::serve
