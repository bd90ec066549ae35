#include "serve/socket_stream.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <cerrno>

namespace ttlpred::serve {
namespace {

timeval to_timeval(std::chrono::milliseconds t) {
  // 0 would mean "wait forever" to the kernel.
  const long ms = std::max<long>(1, static_cast<long>(t.count()));
  return {ms / 1000, (ms % 1000) * 1000};
}

boost::beast::error_code last_error() {
  if (errno == EAGAIN || errno == EWOULDBLOCK) return boost::beast::error::timeout;
  return {errno, boost::system::system_category()};
}

}  // namespace

SocketStream::SocketStream(int fd, Millis keep_alive, Millis read_timeout, Millis write_timeout)
    : fd_(fd), keep_alive_(keep_alive), read_timeout_(read_timeout) {
  const int one = 1;  // replies are small and whole: do not let Nagle hold them back
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const timeval w = to_timeval(write_timeout);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &w, sizeof w);
  set_receive_timeout(keep_alive_);
}

void SocketStream::set_receive_timeout(Millis t) {
  const timeval v = to_timeval(t);
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &v, sizeof v);
  receive_timeout_ = t;
}

void SocketStream::start_request(bool bytes_buffered) {
  in_request_ = bytes_buffered;
  if (bytes_buffered) deadline_ = Clock::now() + read_timeout_;
}

std::size_t SocketStream::receive(void* data, std::size_t size, boost::beast::error_code& ec) {
  ec = {};
  if (in_request_) {
    const auto left = std::chrono::ceil<Millis>(deadline_ - Clock::now());
    if (left <= Millis(0)) {
      ec = boost::beast::error::timeout;
      return 0;
    }
    // Shorten the kernel's wait only where it would overrun the deadline noticeably, so the
    // common request (one segment, or several within the timeout) sets nothing; lengthen it
    // from the short wait for a first byte (the server hands an idle connection back to its
    // poller after a few milliseconds) to what is left of the read timeout.
    if (receive_timeout_ > left + Millis(50) || (receive_timeout_ == keep_alive_ && keep_alive_ < left))
      set_receive_timeout(left);
  } else if (receive_timeout_ != keep_alive_) {
    set_receive_timeout(keep_alive_);
  }
  for (;;) {
    const ssize_t n = ::recv(fd_, data, size, 0);
    if (n > 0) {
      if (!in_request_) {
        in_request_ = true;
        deadline_ = Clock::now() + read_timeout_;
      }
      return static_cast<std::size_t>(n);
    }
    if (n == 0) {
      ec = boost::asio::error::eof;
      return 0;
    }
    if (errno == EINTR) continue;
    ec = last_error();
    return 0;
  }
}

std::size_t SocketStream::send(const iovec* iov, int count, boost::beast::error_code& ec) {
  ec = {};
  if (count == 0) return 0;
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov);
  msg.msg_iovlen = static_cast<std::size_t>(count);
  for (;;) {
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno == EINTR) continue;
    ec = last_error();
    return 0;
  }
}

}  // namespace ttlpred::serve
