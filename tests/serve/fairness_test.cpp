// Connections take turns: with two server threads, connections that keep sending requests
// and connections that trickle a byte at a time must not hold the server. Each busy one
// used to keep a thread for as long as its next request came within 20 ms, and each slow one
// held a thread for the whole read timeout: 8 busy and 50 slow connections against 2 threads
// kept a fresh client's /healthz waiting for seconds. Now the threads serve every
// connection in turn, one request each, and a slow one is only a pending read.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve_test_util.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long a fresh client may wait for its answer while the attack runs: 100 ms, the
// service's promise. Measured about 1 ms in both the release and the ASan+UBSan build (on
// the shared 2-core VM); the sanitized build gets 500 ms all the same, for CI, where it runs
// beside other sanitized tests on the same 2 cores and a preempted client thread alone can
// lose tens of milliseconds. Either bound is far below what one slow connection per thread
// used to cost: the whole read timeout (5 s).
#if defined(__SANITIZE_ADDRESS__)
constexpr double kAnswerWithin = 0.5;
#else
constexpr double kAnswerWithin = 0.1;
#endif

// A TCP connection to the server on loopback that sends bytes when told to.
struct SlowClient {
  int fd = -1;
  explicit SlowClient(int port) {
    fd = test::connect_loopback(port);
  }
  ~SlowClient() { close(fd); }
  SlowClient(const SlowClient&) = delete;
  SlowClient& operator=(const SlowClient&) = delete;
};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

TEST(HttpFairness, BusyAndSlowConnectionsLeaveAFreshClientAnsweredAndShareTheThreadsEvenly) {
  serve::HttpOptions ho;
  ho.threads = 2;
  ho.read_timeout_s = 30;  // the slow requests stay unfinished, not answered 408, for the whole test
  test::TestServer s(test::options_for(test::shared_test_model()), ho);
  const std::string job = R"({"user":"alice"})";

  // 50 slow connections, each sending a request one byte at a time (a byte every 100 ms to
  // each), which never ends within the test.
  std::vector<std::unique_ptr<SlowClient>> slow;
  for (int i = 0; i < 50; ++i) slow.push_back(std::make_unique<SlowClient>(s.port));
  const std::string trickle = "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n";
  test::StoppableThread slowloris([&](const std::atomic<bool>& stop) {
    for (std::size_t at = 0; at < trickle.size() && !stop; ++at) {
      for (const auto& c : slow) (void)send(c->fd, trickle.data() + at, 1, MSG_NOSIGNAL);
      for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(milliseconds(10));
    }
  });

  // 8 busy keep-alive connections: each sends its next request 1 ms after its answer, so
  // that a thread that kept a connection while requests kept coming would never let go.
  constexpr std::size_t kBusy = 8;
  std::array<std::atomic<std::uint64_t>, kBusy> answered{};
  std::array<std::atomic<std::uint64_t>, kBusy> failed{};
  std::vector<std::unique_ptr<test::StoppableThread>> busy;
  for (std::size_t i = 0; i < kBusy; ++i)
    busy.push_back(std::make_unique<test::StoppableThread>([&, i](const std::atomic<bool>& stop) {
      auto c = s.client();
      const auto end = Clock::now() + std::chrono::seconds(30);  // bounded even if never stopped
      for (int n = 0; n < 200000 && !stop && Clock::now() < end; ++n) {
        auto r = c.Post("/v1/predict", job, "application/json");
        (r && r->status == 200 ? answered : failed)[i].fetch_add(1);
        std::this_thread::sleep_for(milliseconds(1));
      }
    }));
  // Every busy connection is under way before anything is measured.
  for (const auto until = Clock::now() + std::chrono::seconds(10); Clock::now() < until;) {
    if (std::all_of(answered.begin(), answered.end(), [](const auto& a) { return a.load() > 0; })) break;
    std::this_thread::sleep_for(milliseconds(5));
  }

  // A fresh client, five times over: /healthz and one job, each on a new connection.
  std::array<std::uint64_t, kBusy> at_start{};
  for (std::size_t i = 0; i < kBusy; ++i) at_start[i] = answered[i].load();
  const auto window = Clock::now();
  double worst_health = 0, worst_predict = 0;
  for (int round = 0; round < 5; ++round) {
    {
      httplib::Client fresh("127.0.0.1", s.port);
      fresh.set_read_timeout(10, 0);
      const auto start = Clock::now();
      auto h = fresh.Get("/healthz");
      worst_health = std::max(worst_health, seconds_since(start));
      ASSERT_TRUE(h) << "round " << round;
      EXPECT_EQ(h->status, 200);
    }
    {
      httplib::Client fresh("127.0.0.1", s.port);
      fresh.set_read_timeout(10, 0);
      const auto start = Clock::now();
      auto p = fresh.Post("/v1/predict", job, "application/json");
      worst_predict = std::max(worst_predict, seconds_since(start));
      ASSERT_TRUE(p) << "round " << round;
      EXPECT_EQ(p->status, 200);
      EXPECT_NE(p->body.find("safe_ttl_s"), std::string::npos);
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  // The busy connections' share over the same second or so.
  while (seconds_since(window) < 1.0) std::this_thread::sleep_for(milliseconds(10));
  std::array<std::uint64_t, kBusy> got{};
  for (std::size_t i = 0; i < kBusy; ++i) got[i] = answered[i].load() - at_start[i];
  for (auto& b : busy) b->stop_and_join();
  slowloris.stop_and_join();

  EXPECT_LT(worst_health, kAnswerWithin) << "slowest /healthz of 5 from a fresh connection, seconds";
  EXPECT_LT(worst_predict, kAnswerWithin) << "slowest single-job /v1/predict of 5 from a fresh connection, seconds";
  const auto [fewest, most] = std::minmax_element(got.begin(), got.end());
  std::string counts;
  for (auto g : got) counts += std::to_string(g) + " ";
  EXPECT_GT(*fewest, 0u) << "a busy connection was starved; answers per connection: " << counts;
  EXPECT_LE(*most, 2 * *fewest) << "answers per busy connection in the window: " << counts;
  for (std::size_t i = 0; i < kBusy; ++i) EXPECT_EQ(failed[i].load(), 0u) << "busy connection " << i;
  // The slow connections were held open, unanswered, the whole time: they only waited.
  EXPECT_EQ(s.service->metrics().errors(serve::Endpoint::Predict), 0u);
  std::printf("fresh client: slowest /healthz %.2f ms, slowest predict %.2f ms; busy answers per connection: %s\n",
              1e3 * worst_health, 1e3 * worst_predict, counts.c_str());
}

}  // namespace
}  // namespace ttlpred
