// ttlpred_gpu_check: every CUDA variant against the FP64 host reference, without GoogleTest.
//   ttlpred_gpu_check [--variants fp16,fused]     (default: all)
// Exit status: 0 all passed, 1 a check failed, 3 no GPU visible.
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/cuda/cuda_plan.hpp"
#include "engine/cuda/cuda_self_check.hpp"

int main(int argc, char** argv) {
  try {
    std::vector<std::string> forms;
    for (int i = 1; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--variants" && i + 1 < argc) {
        std::stringstream in(argv[++i]);
        for (std::string item; std::getline(in, item, ',');)
          if (!item.empty()) forms.push_back(item);
      } else if (flag == "--list") {
        for (const std::string& f : ttlpred::cuda::self_check_forms()) std::cout << f << "\n";
        return 0;
      } else {
        std::cerr << "usage: ttlpred_gpu_check [--variants fp32,fp16,int8-static,int8-static/requant,fused] [--list]\n";
        return 1;
      }
    }
    const int n = ttlpred::cuda::cuda_device_count();
    if (n == 0) {
      std::cout << "ttlpred_gpu_check: no CUDA GPU visible, checks skipped\n";
      return 3;
    }
    std::cout << "ttlpred_gpu_check: " << ttlpred::cuda::cuda_device_description(0) << "\n";
    const auto results = ttlpred::cuda::run_self_check(std::cout, 0, forms);
    std::size_t failed = 0;
    for (const auto& r : results) failed += r.passed ? 0 : 1;
    std::cout << (results.size() - failed) << " passed, " << failed << " failed\n";
    return failed == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "ttlpred_gpu_check: " << e.what() << "\n";
    return 1;
  }
}
