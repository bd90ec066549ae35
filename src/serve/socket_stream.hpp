#pragma once
// One accepted TCP connection as a Boost.Beast synchronous stream. The server's timeouts are
// kept by the kernel (SO_RCVTIMEO, SO_SNDTIMEO), so that a request costs one recv() and one
// sendmsg() with header and body together: no poll() before every read and write, which
// was most of the per-request system time before (docs/service.md, "HTTP layer").
//
// Timeouts: waiting for the first byte of a request, the keep-alive timeout; from that byte
// until the request has been read, the read timeout in total, so that a client trickling a
// byte at a time is cut off as surely as a silent one.
#include <sys/uio.h>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <chrono>
#include <cstddef>

namespace ttlpred::serve {

class SocketStream {
 public:
  using Clock = std::chrono::steady_clock;
  using Millis = std::chrono::milliseconds;

  // Does not own `fd`; sets its TCP_NODELAY and timeouts. `keep_alive` is how long a read
  // waits for a request's first byte (the server passes a few milliseconds and parks the
  // connection in its poller when none comes).
  SocketStream(int fd, Millis keep_alive, Millis read_timeout, Millis write_timeout);

  // Called before each request: its clock starts now when `bytes_buffered` (a pipelined
  // request already read), else at the first byte that arrives.
  void start_request(bool bytes_buffered);
  // Whether any byte of the current request has been seen (a timeout then earns a 408).
  bool in_request() const { return in_request_; }

  // SyncReadStream: reads into the first non-empty buffer (Beast's flat_buffer hands one).
  // End of stream is boost::asio::error::eof, a timeout boost::beast::error::timeout.
  template <class MutableBuffers>
  std::size_t read_some(const MutableBuffers& buffers, boost::beast::error_code& ec) {
    for (auto it = boost::asio::buffer_sequence_begin(buffers); it != boost::asio::buffer_sequence_end(buffers); ++it) {
      const boost::asio::mutable_buffer b(*it);
      if (b.size() != 0) return receive(b.data(), b.size(), ec);
    }
    ec = {};
    return 0;
  }
  template <class MutableBuffers>
  std::size_t read_some(const MutableBuffers& buffers) {
    boost::beast::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

  // SyncWriteStream: one sendmsg() over up to kMaxIov buffers (Beast's serializer hands the
  // header and the body as one sequence).
  template <class ConstBuffers>
  std::size_t write_some(const ConstBuffers& buffers, boost::beast::error_code& ec) {
    iovec iov[kMaxIov];
    int count = 0;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers) && count < kMaxIov; ++it) {
      const boost::asio::const_buffer b(*it);
      if (b.size() != 0) iov[count++] = {const_cast<void*>(b.data()), b.size()};
    }
    return send(iov, count, ec);
  }
  template <class ConstBuffers>
  std::size_t write_some(const ConstBuffers& buffers) {
    boost::beast::error_code ec;
    const std::size_t n = write_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  static constexpr int kMaxIov = 16;

  std::size_t receive(void* data, std::size_t size, boost::beast::error_code& ec);
  std::size_t send(const iovec* iov, int count, boost::beast::error_code& ec);
  void set_receive_timeout(Millis t);

  int fd_;
  Millis keep_alive_, read_timeout_;
  Millis receive_timeout_{0};  // what SO_RCVTIMEO is now, to set it only when it must change
  bool in_request_ = false;
  Clock::time_point deadline_{};
};

}  // namespace ttlpred::serve
