#pragma once
// One accepted HTTP/1.1 connection, served asynchronously on Boost.Asio: no thread waits on
// it. Between requests, and while a request's bytes trickle in, the connection is only a
// pending read in its thread's io_context (epoll); each time bytes arrive it parses what it
// has (Boost.Beast's parser, fed by hand), and once a request is whole it answers that one
// request and goes back to waiting. So a thread serves its connections in turn, one request
// each per turn, and a client that keeps its connection busy, or one that sends a byte a
// second, holds no thread.
//
// Deadlines cost no thread and no timer operation per request: the connection keeps one time
// point, moved on at each phase, which its thread's sweep (http_server.cpp) checks every
// kSweepPeriod and acts on through expire():
//   - waiting for a request's first byte: --keep-alive-timeout, then closed silently;
//   - from that byte until the request is whole (header and body): --read-timeout, then 408;
//   - writing a reply: --write-timeout, then closed;
//   - after a last reply: draining what the client still sends, for up to kLinger.
// A request being computed has no deadline (it is on its thread, as before).
//
// Single-threaded by construction: all of a connection's handlers, expire() and stop() run
// on the one thread that runs its io_context, so it needs no lock and no strand.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>

// Beast 1.74 returns boost::none from its content-length parser; under the sanitizers GCC 12
// inlines that into the request parser and flags the empty optional as maybe-uninitialized
// (a false positive: an empty optional never reads its storage). The pragma covers only the
// Beast headers, where the warning is reported.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>
#pragma GCC diagnostic pop

#include "serve/http_routes.hpp"
#include "serve/http_server.hpp"

namespace ttlpred::serve {

// A socket bound to one io_context's own executor type: no type-erased executor per operation.
using ConnectionSocket =
    boost::asio::ip::tcp::socket::rebind_executor<boost::asio::io_context::executor_type>::other;

class Connection;

// Who keeps a thread's connections: told once when one has closed its socket.
class ConnectionOwner {
 public:
  virtual void closed(Connection& c) = 0;

 protected:
  ~ConnectionOwner() = default;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Clock = std::chrono::steady_clock;
  // How long a connection drains what a client still sends after its last reply.
  static constexpr std::chrono::seconds kLinger{2};

  Connection(ConnectionSocket socket, const HttpOptions& options, Router& router, const std::atomic<bool>& stopping,
             ConnectionOwner& owner);

  // Starts waiting for the first request.
  void start();
  // When expire() is due; time_point::max() while a request is being computed or when closed.
  Clock::time_point deadline() const { return deadline_; }
  // The deadline has passed: ends the phase it bounds (see the header comment).
  void expire();
  // The server is stopping: no new request is read. A reply being computed or written still
  // goes out whole (with Connection: close), then the connection closes.
  void stop();

 private:
  enum class Phase { Idle, Reading, Handling, Writing, Closing, Closed };

  void next_request();
  void read_more();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  void parse();
  void serve();
  void send(Reply&& reply, unsigned version, const char* allow);
  void write_next();
  void on_write(const boost::system::error_code& ec, std::size_t n);
  void reply_written();
  void send_continue();
  // Answers `status` (0: nobody to answer) and closes.
  void fail(int status, const std::string& why);
  void close_gently();
  void drain();
  void close();
  void set_deadline(Phase phase, Clock::duration after);

  ConnectionSocket socket_;
  std::string peer_;  // the client's address ("" when unknown): the writers' rate limit is kept by it
  const HttpOptions& options_;
  Router& router_;
  const std::atomic<bool>& stopping_;
  ConnectionOwner& owner_;

  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::optional<boost::beast::http::response<boost::beast::http::string_body>> response_;
  std::optional<boost::beast::http::serializer<false, boost::beast::http::string_body>> serializer_;

  Phase phase_ = Phase::Idle;
  Clock::time_point deadline_ = Clock::time_point::max();
  bool timed_out_ = false;   // expire() ended the pending operation
  bool in_request_ = false;  // some byte of the current request has arrived
  bool keep_alive_ = true;   // the reply being written leaves the connection open
  bool last_reply_ = false;  // the reply being written is an error's: close after it
  std::size_t served_ = 0;
  std::size_t body_bytes_ = 0;  // the body of the request being answered
};

}  // namespace ttlpred::serve
