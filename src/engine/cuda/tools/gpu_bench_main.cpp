// ttlpred_gpu_bench: the GPU benchmark as a program needing only the CUDA toolkit.
//   ttlpred_gpu_bench [--shape 96,256,256,256,1] [--variants fp16,fused] [--min-batch 1]
//                     [--max-batch 65536] [--seconds 0.2] [--device 0] [--json FILE]
// Exit status: 0 done, 1 error, 3 no GPU visible.
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "engine/cuda/cuda_plan.hpp"
#include "engine/cuda/gpu_bench.hpp"
#include "util/error.hpp"
#include "util/whole_number.hpp"

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::size_t to_size(const std::string& flag, const std::string& v) {
  const std::optional<unsigned long long> n = ttlpred::parse_whole_number(v);
  if (!n) throw ttlpred::Error(flag + ": '" + v + "' is not a whole number");
  return static_cast<std::size_t>(*n);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    ttlpred::cuda::GpuBenchOptions o;
    std::string json_path;
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--help" || flag == "-h") {
        std::cout << "usage: ttlpred_gpu_bench [--shape 96,256,256,256,1] [--variants fp32,fp16,int8-static,"
                     "int8-static/requant,fused] [--min-batch N] [--max-batch N] [--seconds S] [--device N] "
                     "[--json FILE]\n";
        return 0;
      }
      if (i + 1 >= argc) throw ttlpred::Error(flag + ": missing value");
      const std::string v = argv[++i];
      if (flag == "--shape") o.shape = ttlpred::cuda::parse_shape(v);
      else if (flag == "--variants") o.variants = split(v);
      else if (flag == "--min-batch") o.min_batch = to_size(flag, v);
      else if (flag == "--max-batch") o.max_batch = to_size(flag, v);
      else if (flag == "--device") o.device = static_cast<int>(to_size(flag, v));
      else if (flag == "--seconds") o.seconds_per_point = std::stod(v);
      else if (flag == "--json") json_path = v;
      else throw ttlpred::Error("unknown option " + flag + " (see --help)");
    }
    if (ttlpred::cuda::cuda_device_count() <= o.device) {
      std::cout << "ttlpred_gpu_bench: no CUDA GPU visible, nothing to benchmark\n";
      return 3;
    }
    std::ostringstream json;
    ttlpred::cuda::run_gpu_bench(o, std::cout, json);
    std::cout << json.str();
    if (!json_path.empty()) {
      std::ofstream f(json_path);
      f << json.str();
      if (!f) throw ttlpred::Error(json_path + ": cannot write the JSON lines");
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "ttlpred_gpu_bench: " << e.what() << "\n";
    return 1;
  }
}
