#include "util/signal_pipe.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string>

#include "util/error.hpp"

namespace ttlpred {
namespace {

// The pipe's ends; the handler reads the write end from here (a signal handler cannot be
// given state any other way).
std::atomic<int> g_read_fd{-1}, g_write_fd{-1};

extern "C" void on_signal(int sig) {
  const int saved = errno;
  const int fd = g_write_fd.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const unsigned char b = static_cast<unsigned char>(sig);
    [[maybe_unused]] const ssize_t n = ::write(fd, &b, 1);  // a full pipe drops it: one is pending anyway
  }
  errno = saved;
}

}  // namespace

SignalPipe::SignalPipe(std::initializer_list<int> signals) {
  if (g_write_fd.load() >= 0) throw Error("SignalPipe: one per process");
  if (signals.size() > sizeof signals_ / sizeof signals_[0]) throw Error("SignalPipe: too many signals");
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw Error(std::string("SignalPipe: pipe: ") + std::strerror(errno));
  ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
  g_read_fd = fds[0];
  g_write_fd = fds[1];
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  for (int s : signals) {
    signals_[count_++] = s;
    ::sigaction(s, &sa, nullptr);
  }
}

SignalPipe::~SignalPipe() {
  for (int i = 0; i < count_; ++i) std::signal(signals_[i], SIG_DFL);
  ::close(g_write_fd.exchange(-1));
  ::close(g_read_fd.exchange(-1));
}

int SignalPipe::wait() {
  for (;;) {
    unsigned char b = 0;
    const ssize_t n = ::read(g_read_fd.load(), &b, 1);
    if (n == 1) return b;
    if (n < 0 && errno == EINTR) continue;
    throw Error(std::string("SignalPipe: read: ") + (n == 0 ? "closed" : std::strerror(errno)));
  }
}

void SignalPipe::notify(int sig) { on_signal(sig); }

}  // namespace ttlpred
