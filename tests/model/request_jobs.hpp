#pragma once
// Random jobs with requests, for the request-aware safe-TTL tests: one generator and one
// request law (uniform in 1-11 h), the prediction and run time of each job drawn by the test.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace ttlpred::test {

struct Jobs {
  std::vector<float> wall, pred, req;
};

// n jobs: job i's request first, then `job(i, req, u, n01)` returns its {prediction, run
// time}, drawing from u() (uniform in [0, 1)) and n01() (standard normal) as it needs.
// Predictions are stored capped at the request.
template <class Job>
Jobs draw_jobs(std::size_t n, std::uint64_t seed, Job job) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto u = [&] { return uniform(rng); };
  auto n01 = [&] { return normal(rng); };
  Jobs j;
  for (std::size_t i = 0; i < n; ++i) {
    const double req = 3600.0 * (1 + 10 * u());
    const std::pair<double, double> pw = job(i, req, u, n01);
    j.wall.push_back(static_cast<float>(pw.second));
    j.pred.push_back(static_cast<float>(std::min(pw.first, req)));
    j.req.push_back(static_cast<float>(req));
  }
  return j;
}

}  // namespace ttlpred::test
