#pragma once
// A small fixed pool of worker threads that sleep on a condition variable between jobs.
// We do not use OpenMP here: its worker threads spin while waiting, which on a busy 2-core
// machine (CI runs test binaries side by side) made training ten times slower. Results never
// depend on which thread runs a task: callers index scratch space by `worker`, and
// everything that is summed is summed per task, then in task order.
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ttlpred {

class ThreadPool {
 public:
  // `threads` counts the calling thread too; 0 = std::thread::hardware_concurrency().
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Runs fn(task, worker) for every task in [0, tasks), worker in [0, size()); returns when all
  // are done. The first exception thrown by a task is rethrown here.
  void run(std::size_t tasks, const std::function<void(std::size_t, int)>& fn);

 private:
  void work(int worker);
  void drain(int worker);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(std::size_t, int)>* fn_ = nullptr;
  std::size_t tasks_ = 0, next_ = 0;
  std::size_t generation_ = 0;
  int busy_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

}  // namespace ttlpred
