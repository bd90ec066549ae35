#pragma once
// `ttlpred bench --serving TRACE --model FILE`: the serving path from a raw job record to a
// safe TTL, one job at a time, timed stage by stage (history features, encoding, network,
// safe TTL) and whole (Predictor::predict), per variant.
#include <string>
#include <vector>

#include "engine/isa.hpp"
#include "engine/variant.hpp"

namespace ttlpred::cli {

struct ServingBenchOptions {
  std::string model, trace;
  std::vector<engine::Variant> variants;
  std::string isa;  // "" = the best this CPU runs
  double seconds = 0.25;
  bool json = false;
};

void run_serving_bench(const ServingBenchOptions& o);

}  // namespace ttlpred::cli
