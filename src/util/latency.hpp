#pragma once
// Latency measurement for `ttlpred bench`: warm-up, then individually timed calls until a
// time budget is spent; median and p99 over the timed calls.
#include <cstddef>
#include <functional>
#include <vector>

namespace ttlpred {

// Wall: what a caller waits (the default). ThreadCpu: CPU time of the calling thread, which
// leaves out time the thread spent preempted: for shared, loaded machines (it costs a
// system call per reading, ~0.1-0.3 us, included in each sample).
enum class BenchClock { Wall, ThreadCpu };

struct LatencyStats {
  double median_us = 0, p99_us = 0, mean_us = 0;
  std::size_t calls = 0;
};

// Order statistics of `samples_us` (sorted in place). Empty input gives zeros.
LatencyStats summarize(std::vector<double>& samples_us);

// Calls fn(i) with i = 0, 1, 2, ...: warm-up for ~10% of `seconds` (at least 3 calls), then
// times each call until `seconds` have passed (at least `min_calls`, at most `max_calls`).
LatencyStats measure(const std::function<void(std::size_t)>& fn, double seconds, std::size_t min_calls = 20,
                     std::size_t max_calls = 2'000'000, BenchClock clock = BenchClock::Wall);
// The same, returning the per-call samples (microseconds) unsorted, to pool across threads.
std::vector<double> measure_samples(const std::function<void(std::size_t)>& fn, double seconds,
                                    std::size_t min_calls = 20, std::size_t max_calls = 2'000'000,
                                    BenchClock clock = BenchClock::Wall);

}  // namespace ttlpred
