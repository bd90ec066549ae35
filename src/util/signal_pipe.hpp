#pragma once
// Process signals delivered to one thread that reads them like a file, whatever threads the
// libraries in the process started on their own.
//
// A process-directed signal goes to any thread that does not block it. Blocking a signal
// before our threads start (so that they inherit the mask) and calling sigwait() in one of
// them is not enough: a library may start threads before main() (OpenBLAS's pthread build
// starts its pool when it is loaded), and a signal that lands on one of those with its
// default action (SIGHUP: terminate) ends the process. So each signal gets a handler, on
// whichever thread runs it, that only writes the signal number to a pipe; the thread that
// handles signals reads the pipe.
#include <initializer_list>

namespace ttlpred {

class SignalPipe {
 public:
  // Installs the handlers (SA_RESTART) for `signals`. One SignalPipe per process.
  explicit SignalPipe(std::initializer_list<int> signals);
  ~SignalPipe();  // restores the default actions and closes the pipe
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  // Blocks until one of the signals arrives (or notify() is called) and returns its number.
  int wait();
  // Wakes wait() with `sig` as if it had been delivered (async-signal-safe).
  static void notify(int sig);

 private:
  int signals_[8] = {};
  int count_ = 0;
};

}  // namespace ttlpred
