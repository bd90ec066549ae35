#pragma once
// Synthetic regression problems with a known answer, for the trainer tests.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model/model_input.hpp"
#include "train/train_config.hpp"

namespace ttlpred::test {

struct Problem {
  EncodedBatch x;
  std::vector<float> wall_s;
  std::vector<double> truth_h;  // noise-free expected run time, hours
};

// wall_hours = 2 + 1.5 sin(x0) + 0.8 x1 x2 + |x3| + offset[cat] + N(0, noise_h), clamped at 0.
inline Problem noisy_function(std::size_t rows, double noise_h, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  const double offset[6] = {0.0, 0.5, -0.7, 1.2, 0.0, 2.0};  // index 0 = OOV, unused
  Problem p;
  p.x.rows = rows;
  p.x.dense_width = 4;
  p.x.cat_width = 1;
  p.x.cat_cardinality = {6};
  for (std::size_t r = 0; r < rows; ++r) {
    float d[4];
    for (float& v : d) v = static_cast<float>(n01(rng));
    const std::uint32_t c = 1 + static_cast<std::uint32_t>(rng() % 5);
    p.x.dense.insert(p.x.dense.end(), d, d + 4);
    p.x.cats.push_back(c);
    const double h = 2.0 + 1.5 * std::sin(d[0]) + 0.8 * d[1] * d[2] + std::abs(d[3]) + offset[c];
    p.truth_h.push_back(h);
    p.wall_s.push_back(static_cast<float>(std::max(0.0, h + noise_h * n01(rng)) * 3600.0));
  }
  return p;
}

// A network and schedule sized for these problems: trains in well under a second.
inline TrainConfig small_train_config() {
  TrainConfig c;
  c.hidden = {32, 32};
  c.dropout = 0.0f;
  c.batch_size = 128;
  c.max_epochs = 25;
  c.patience = 5;
  c.learning_rate = 5e-3f;
  c.validation_fraction = 0.2;
  c.threads = 2;
  return c;
}

}  // namespace ttlpred::test
