#include "util/latency.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

namespace ttlpred {

LatencyStats summarize(std::vector<double>& s) {
  LatencyStats st;
  if (s.empty()) return st;
  std::sort(s.begin(), s.end());
  st.calls = s.size();
  st.median_us = s.size() % 2 ? s[s.size() / 2] : 0.5 * (s[s.size() / 2 - 1] + s[s.size() / 2]);
  st.p99_us = s[std::min(s.size() - 1, static_cast<std::size_t>(0.99 * static_cast<double>(s.size())))];
  double sum = 0;
  for (double v : s) sum += v;
  st.mean_us = sum / static_cast<double>(s.size());
  return st;
}

namespace {
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}
}  // namespace

std::vector<double> measure_samples(const std::function<void(std::size_t)>& fn, double seconds,
                                    std::size_t min_calls, std::size_t max_calls, BenchClock which) {
  using clock = std::chrono::steady_clock;
  std::size_t i = 0;
  const auto warm_end = clock::now() + std::chrono::duration<double>(0.1 * seconds);
  for (std::size_t w = 0; w < 3 || clock::now() < warm_end; ++w) fn(i++);
  std::vector<double> samples;
  samples.reserve(std::min<std::size_t>(max_calls, 1u << 20));
  const auto end = clock::now() + std::chrono::duration<double>(seconds);
  while (samples.size() < max_calls) {
    if (which == BenchClock::ThreadCpu) {
      const double c0 = thread_cpu_us();
      fn(i++);
      samples.push_back(thread_cpu_us() - c0);
      if (samples.size() >= min_calls && clock::now() >= end) break;
      continue;
    }
    const auto t0 = clock::now();
    fn(i++);
    const auto t1 = clock::now();
    samples.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    if (samples.size() >= min_calls && t1 >= end) break;
  }
  return samples;
}

LatencyStats measure(const std::function<void(std::size_t)>& fn, double seconds, std::size_t min_calls,
                     std::size_t max_calls, BenchClock clock) {
  std::vector<double> samples = measure_samples(fn, seconds, min_calls, max_calls, clock);
  return summarize(samples);
}

}  // namespace ttlpred
