#pragma once
// A min segment tree over positions 0..n-1 that answers "the first position whose value is
// below x" in O(log n). The broker keeps one per job-core count, positions in priority
// order, so "the first waiting job whose TTL is below the pilot's time left" costs a few
// dozen steps instead of a scan of a queue that can hold hundreds of thousands of jobs.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace ttlpred::sim {

class MinTree {
 public:
  static constexpr double kEmpty = std::numeric_limits<double>::infinity();

  explicit MinTree(std::size_t n = 0) {
    while (leaves_ < n) leaves_ *= 2;
    node_.assign(2 * leaves_, kEmpty);
  }
  void set(std::size_t pos, double value) {
    std::size_t i = pos + leaves_;
    node_[i] = value;
    for (i /= 2; i >= 1; i /= 2) node_[i] = std::min(node_[2 * i], node_[2 * i + 1]);
  }
  double get(std::size_t pos) const { return node_[pos + leaves_]; }
  // The first position with value < x; npos when none.
  std::size_t first_below(double x) const {
    if (!(node_[1] < x)) return npos;
    std::size_t i = 1;
    while (i < leaves_) i = node_[2 * i] < x ? 2 * i : 2 * i + 1;
    return i - leaves_;
  }
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

 private:
  std::size_t leaves_ = 1;
  std::vector<double> node_;
};

}  // namespace ttlpred::sim
