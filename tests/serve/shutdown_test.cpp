// Shutdown with a request in flight: stop() (what SIGTERM calls) while a worker is between
// computing a reply and writing it must still deliver that reply whole, then close.
//
// The seam needs no hook in the server and no sleep: the access log is a FIFO whose pipe the
// test has filled, so the worker that answers the request blocks in the log write that comes
// after the handler and before the reply is written. The request counter, recorded just
// before that write, tells the test the worker is there; the test calls stop(), then drains
// the pipe, which lets the worker go on to write its reply.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "serve_test_util.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

using Clock = std::chrono::steady_clock;

// Generous ceiling of each wait: only a broken server waits it out.
constexpr auto kPatience = std::chrono::seconds(20);

// Reads what the pipe holds without blocking; returns the bytes read.
std::size_t drain(int fd) {
  char buf[4096];
  std::size_t total = 0;
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) total += static_cast<std::size_t>(n);
  return total;
}

// Everything the server sends until it closes the connection (or kPatience passes).
std::string read_to_close(int fd, bool& closed) {
  const timeval wait{0, 100000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  std::string got;
  char buf[4096];
  closed = false;
  for (const auto end = Clock::now() + kPatience; Clock::now() < end;) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n == 0) {
      closed = true;
      break;
    }
    if (n > 0) got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

TEST(ServeShutdown, ARequestInFlightAtStopGetsItsWholeReplyThenTheConnectionCloses) {
  const std::string fifo = test::temp_dir() + "/access.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reading end first, so that the server's open for writing does not wait; a second
  // writing end of the test's own fills the pipe later. Both stay open until the server is
  // gone (a log write with no reader would raise SIGPIPE).
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const int filler = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  ASSERT_GE(filler, 0);
  ASSERT_GT(::fcntl(filler, F_SETPIPE_SZ, 4096), 0);  // the smallest pipe: little to fill

  serve::HttpOptions ho;
  ho.access_log = fifo;
  ho.threads = 2;
  auto server = std::make_unique<test::TestServer>(test::options_for(test::shared_test_model()), ho);
  // On every way out, a failed ASSERT's early return included: the pipe is emptied before the
  // server is joined (a worker blocked in its log write would hold the join for ever), then
  // both ends are closed.
  struct Teardown {
    std::unique_ptr<test::TestServer>& server;
    int reader, filler;
    ~Teardown() {
      if (server) {
        drain(reader);
        server.reset();
      }
      ::close(filler);
      ::close(reader);
    }
  } teardown{server, reader, filler};
  const std::string body = R"([{"user":"alice","requested_ttl_s":7200},{"user":"bob"},{"user":"zed"}])";
  // The reply an undisturbed server gives, to compare with the one written during the stop.
  const auto expected = server->client().Post("/v1/predict", body, "application/json");
  ASSERT_TRUE(expected);
  ASSERT_EQ(expected->status, 200);
  drain(reader);
  const std::uint64_t predicts = server->service->metrics().requests(serve::Endpoint::Predict);

  const std::string fill(4096, 'x');
  while (::write(filler, fill.data(), fill.size()) > 0) {
  }
  ASSERT_EQ(errno, EAGAIN);  // full: the next log line blocks its writer

  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(server->port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string request = "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));

  // The handler has run and its worker is at (or in) the blocked log write: the reply is
  // computed and not yet written.
  const auto until = Clock::now() + kPatience;
  while (server->service->metrics().requests(serve::Endpoint::Predict) == predicts && Clock::now() < until)
    std::this_thread::yield();
  ASSERT_EQ(server->service->metrics().requests(serve::Endpoint::Predict), predicts + 1);

  server->http->stop();  // what the SIGTERM watcher calls
  // Let the log line through: the pipe is emptied until the worker's line has come.
  std::string log;
  char buf[4096];
  while (log.find("\"endpoint\":\"predict\"") == std::string::npos && Clock::now() < until) {
    const ssize_t n = ::read(reader, buf, sizeof buf);
    if (n > 0) log.append(buf, static_cast<std::size_t>(n));
    if (n <= 0) std::this_thread::yield();
  }
  bool closed = false;
  const std::string got = read_to_close(fd, closed);
  ::close(fd);
  server.reset();  // joins the server: every worker has finished

  EXPECT_TRUE(closed) << "the connection must close after the last reply";
  const std::size_t head_end = got.find("\r\n\r\n");
  ASSERT_NE(head_end, std::string::npos) << got;
  const std::string head = got.substr(0, head_end);
  EXPECT_TRUE(head.starts_with("HTTP/1.1 200 ")) << head;
  EXPECT_NE(head.find("Connection: close"), std::string::npos) << head;  // stopping: no keep-alive
  EXPECT_NE(head.find("Content-Length: " + std::to_string(expected->body.size())), std::string::npos) << head;
  EXPECT_EQ(got.substr(head_end + 4), expected->body);  // whole, and the same answer
  EXPECT_EQ(nlohmann::json::parse(got.substr(head_end + 4))["predictions"].size(), 3u);
}

}  // namespace
}  // namespace ttlpred
