#include "util/thread_pool.hpp"

#include <algorithm>

namespace ttlpred {

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int w = 1; w < threads; ++w) workers_.emplace_back([this, w] { work(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

// Takes tasks one at a time under the lock: tasks are coarse (a shard, a chunk of rows), so
// the lock is cheap next to them.
void ThreadPool::drain(int worker) {
  for (;;) {
    std::size_t task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (next_ >= tasks_) return;
      task = next_++;
    }
    try {
      (*fn_)(task, worker);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_) error_ = std::current_exception();
      next_ = tasks_;  // skip the rest
    }
  }
}

void ThreadPool::work(int worker) {
  std::size_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++busy_;
    }
    drain(worker);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --busy_;
    }
    done_cv_.notify_one();
  }
}

void ThreadPool::run(std::size_t tasks, const std::function<void(std::size_t, int)>& fn) {
  if (tasks == 0) return;
  if (workers_.empty() || tasks == 1) {
    for (std::size_t t = 0; t < tasks; ++t) fn(t, 0);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    tasks_ = tasks;
    next_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  start_cv_.notify_all();
  drain(0);
  std::exception_ptr error;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // Every task has been taken; wait for the workers still running one. A worker that wakes
    // late finds no task left and leaves at once.
    done_cv_.wait(lock, [&] { return busy_ == 0; });
    fn_ = nullptr;
    error = error_;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace ttlpred
