#include "serve/http_connection.hpp"

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <utility>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/beast/http/error.hpp>
#pragma GCC diagnostic pop

#include "serve/job_json.hpp"
#include "util/free_memory.hpp"

namespace ttlpred::serve {
namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;

// Bytes asked of one read while a request is arriving: a 256-job batch body (~40 KB) in one
// or two reads.
constexpr std::size_t kReadChunk = 64u << 10;
// Bytes asked of the first read of a request, and what an idle connection keeps allocated:
// a single-job request (~200 bytes with its header) in one read, while 10 000 idle
// connections hold 40 MB rather than the 640 MB of a full chunk each.
constexpr std::size_t kFirstRead = 4u << 10;
// A request whose body was larger than this gives the memory its handling freed back to the
// system once its reply is out (util/free_memory.hpp): the handlers keep their buffers warm
// for bodies up to 1 MiB, so below it there is nothing large to give back.
constexpr std::size_t kReturnMemoryAfterBody = 1u << 20;

bool expects_continue(const HttpRequest& req) {
  return req.version() >= 11 && boost::beast::iequals(req[http::field::expect], "100-continue");
}

}  // namespace

Connection::Connection(ConnectionSocket socket, const HttpOptions& options, Router& router,
                       const std::atomic<bool>& stopping, ConnectionOwner& owner)
    : socket_(std::move(socket)), options_(options), router_(router), stopping_(stopping), owner_(owner) {
  boost::system::error_code ec;
  const auto remote = socket_.remote_endpoint(ec);
  if (!ec) peer_ = remote.address().to_string();
}

void Connection::set_deadline(Phase phase, Clock::duration after) {
  phase_ = phase;
  deadline_ = Clock::now() + after;
}

void Connection::start() {
  boost::system::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);  // replies are small and whole: no Nagle delay
  socket_.non_blocking(true, ec);  // replies are written at once where the socket takes them
  next_request();
}

void Connection::next_request() {
  if (stopping_) return close_gently();
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(options_.max_header));
  parser_->body_limit(options_.max_body);
  timed_out_ = false;
  if (buffer_.size() != 0) {
    // A pipelined request is already here: its clock starts now, and it waits its turn
    // behind the other connections' ready requests instead of being served at once.
    in_request_ = true;
    set_deadline(Phase::Reading, std::chrono::seconds(options_.read_timeout_s));
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      if (self->phase_ == Phase::Reading) self->parse();
    });
    return;
  }
  in_request_ = false;
  if (buffer_.capacity() > kFirstRead) buffer_.shrink_to_fit();  // an idle connection keeps little
  set_deadline(Phase::Idle, std::chrono::seconds(options_.keep_alive_timeout_s));
  read_more();
}

void Connection::read_more() {
  if (stopping_) return close();  // no more of a request is read once the server stops
  const std::size_t want = in_request_ ? kReadChunk : kFirstRead;
  socket_.async_read_some(buffer_.prepare(want), [self = shared_from_this()](const boost::system::error_code& ec,
                                                                              std::size_t n) { self->on_read(ec, n); });
}

void Connection::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (phase_ == Phase::Closed) return;
  if (ec) {
    // A timeout mid-request earns a 408; anything else (the client closed or reset, the
    // keep-alive timeout, the server stopping) leaves nobody to answer.
    if (timed_out_ && in_request_) return fail(408, Router::default_message(408));
    return close();
  }
  buffer_.commit(n);
  if (timed_out_) {
    // The bytes came as the deadline passed (their completion was queued before expire()
    // cancelled the read): a request past its read timeout still gets its 408, a first
    // byte at the keep-alive timeout starts a request as usual.
    if (in_request_) return fail(408, Router::default_message(408));
    timed_out_ = false;
  }
  if (!in_request_) {
    in_request_ = true;  // the request's clock starts at its first byte
    set_deadline(Phase::Reading, std::chrono::seconds(options_.read_timeout_s));
  }
  parse();
}

void Connection::parse() {
  boost::beast::error_code ec;
  if (!parser_->is_header_done()) {
    const std::size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == http::error::need_more) return read_more();
    if (ec) return fail(status_for_read_error(ec, true), {});
    // Framing and identity checks on the header, before any body is read (request_framing.hpp).
    std::string why;
    if (const int status = status_for_header(parser_->get(), why); status != 0) return fail(status, why);
    parser_->eager(true);  // from here on, each put() takes all the body it is given
    if (!parser_->is_done() && expects_continue(parser_->get())) return send_continue();
  }
  while (!parser_->is_done()) {
    if (buffer_.size() == 0) return read_more();
    const std::size_t used = parser_->put(buffer_.data(), ec);
    buffer_.consume(used);
    if (ec == http::error::need_more) return read_more();
    if (ec) return fail(status_for_read_error(ec, true), {});
  }
  serve();
}

void Connection::send_continue() {
  static constexpr char kContinue[] = "HTTP/1.1 100 Continue\r\n\r\n";
  asio::async_write(socket_, asio::buffer(kContinue, sizeof kContinue - 1),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      if (self->phase_ == Phase::Closed) return;
                      if (self->timed_out_) return self->fail(408, Router::default_message(408));
                      if (ec) return self->close();
                      self->parse();
                    });
}

void Connection::serve() {
  phase_ = Phase::Handling;
  deadline_ = Clock::time_point::max();
  const HttpRequest& req = parser_->get();
  body_bytes_ = req.body().size();
  const char* allow = nullptr;
  Reply reply = router_.handle(req, allow, peer_);
  // After the handler: a stop() that came while it ran makes this the last reply.
  keep_alive_ = req.keep_alive() && ++served_ < options_.keep_alive_max && !stopping_;
  last_reply_ = false;
  send(std::move(reply), req.version(), allow);
}

void Connection::send(Reply&& reply, unsigned version, const char* allow) {
  response_.emplace(static_cast<http::status>(reply.status), version);
  response_->set(http::field::content_type, reply.content_type);
  if (allow) response_->set(http::field::allow, allow);
  response_->keep_alive(keep_alive_);
  response_->body() = std::move(reply.body);
  response_->prepare_payload();
  serializer_.emplace(*response_);
  set_deadline(Phase::Writing, std::chrono::seconds(options_.write_timeout_s));
  write_next();
}

void Connection::write_next() {
  // Header and body come as one buffer sequence: one sendmsg(). Written at once where the
  // socket takes it (a reply almost always fits its buffer), so the request's turn ends
  // here; asynchronously only for what it does not take. Going through Asio's queue for
  // every reply cost an extra epoll_wait() per request (strace) and ~3 % of the throughput.
  for (;;) {
    boost::beast::error_code ec;
    std::size_t written = 0;
    bool wait = false;
    serializer_->next(ec, [&](boost::beast::error_code&, const auto& buffers) {
      boost::system::error_code wec;
      written = socket_.write_some(buffers, wec);  // the socket is non-blocking (start())
      if (wec == asio::error::would_block || wec == asio::error::try_again) {
        wait = true;
      } else if (wec) {
        ec = wec;
      }
    });
    if (ec) return close();  // reset by the client
    if (wait) break;
    serializer_->consume(written);
    if (serializer_->is_done()) return reply_written();
  }
  boost::beast::error_code ec;
  serializer_->next(ec, [this](boost::beast::error_code&, const auto& buffers) {
    asio::async_write(socket_, buffers, [self = shared_from_this()](const boost::system::error_code& e, std::size_t n) {
      self->on_write(e, n);
    });
  });
  if (ec) close();
}

void Connection::on_write(const boost::system::error_code& ec, std::size_t n) {
  if (phase_ == Phase::Closed) return;
  if (ec) return close();  // reset by the client, or --write-timeout
  serializer_->consume(n);
  if (!serializer_->is_done()) return write_next();
  reply_written();
}

void Connection::reply_written() {
  serializer_.reset();
  response_.reset();
  if (body_bytes_ > kReturnMemoryAfterBody) {
    body_bytes_ = 0;
    parser_.reset();  // the body itself
    return_free_memory();
  }
  if (last_reply_ || !keep_alive_) return close_gently();
  next_request();
}

void Connection::fail(int status, const std::string& why) {
  if (status == 0) return close();
  router_.record_refused(parser_ ? parser_->get().target() : boost::beast::string_view());
  keep_alive_ = false;
  last_reply_ = true;
  send({status, error_body(why.empty() ? Router::default_message(status) : why)}, 11, nullptr);
}

// After a last reply (an error, `Connection: close`) the client may still be sending: closing
// with unread bytes would make the kernel answer with a reset that can destroy the reply
// before the client reads it. Half-close, then discard what comes until the client closes
// or kLinger passes (a client that reads to the end closes at once).
void Connection::close_gently() {
  boost::system::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
  if (ec) return close();
  buffer_.clear();
  set_deadline(Phase::Closing, stopping_ ? std::chrono::milliseconds(200) : std::chrono::milliseconds(kLinger));
  drain();
}

void Connection::drain() {
  buffer_.clear();
  socket_.async_read_some(buffer_.prepare(kFirstRead),
                          [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                            if (self->phase_ == Phase::Closed) return;
                            if (ec) return self->close();
                            self->drain();
                          });
}

void Connection::close() {
  if (phase_ == Phase::Closed) return;
  phase_ = Phase::Closed;
  deadline_ = Clock::time_point::max();
  boost::system::error_code ec;
  socket_.close(ec);
  buffer_ = {};
  parser_.reset();
  owner_.closed(*this);
}

void Connection::expire() {
  if (phase_ == Phase::Closed || phase_ == Phase::Handling) return;
  timed_out_ = true;
  deadline_ = Clock::time_point::max();
  // The pending read or write ends with operation_aborted; its handler sees timed_out_.
  boost::system::error_code ec;
  socket_.cancel(ec);
}

void Connection::stop() {
  // A connection waiting for a request (or for the rest of one) ends now; one writing a
  // reply finishes it first (on_write closes it, as next_request() sees stopping_).
  if (phase_ == Phase::Idle || phase_ == Phase::Reading || phase_ == Phase::Closing) {
    boost::system::error_code ec;
    socket_.cancel(ec);
  }
}

}  // namespace ttlpred::serve
