// SignalPipe: a process-directed signal reaches the reading thread even when it lands on a
// thread that a library started before our signal mask existed (OpenBLAS's pool does that).
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "test_support.hpp"
#include "util/error.hpp"
#include "util/signal_pipe.hpp"

namespace ttlpred {
namespace {

TEST(SignalPipe, ASignalOnAForeignThreadReachesTheReader) {
  // A "library" thread that blocks nothing, started before the pipe and the mask.
  test::StoppableThread foreign([](const std::atomic<bool>& stop) {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  SignalPipe pipe({SIGHUP, SIGUSR2});
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR2);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // this thread never takes them: the foreign one does
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(kill(getpid(), SIGHUP), 0);
    EXPECT_EQ(pipe.wait(), SIGHUP) << "delivery " << i;
  }
  ASSERT_EQ(kill(getpid(), SIGUSR2), 0);
  EXPECT_EQ(pipe.wait(), SIGUSR2);
  SignalPipe::notify(SIGTERM);  // a wake-up that is not a signal
  EXPECT_EQ(pipe.wait(), SIGTERM);
  foreign.stop_and_join();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

TEST(SignalPipe, OnePerProcess) {
  SignalPipe a({SIGUSR2});
  EXPECT_THROW(SignalPipe({SIGUSR2}), Error);
}

}  // namespace
}  // namespace ttlpred
