#include "predict/device.hpp"

#include "util/error.hpp"

#ifdef TTLPRED_WITH_CUDA
#include "engine/cuda/cuda_backend.hpp"
#endif

namespace ttlpred {

bool build_has_cuda_backend() {
#ifdef TTLPRED_WITH_CUDA
  return true;
#else
  return false;
#endif
}

DeviceChoice device_named(const std::string& name, const char* option) {
  DeviceChoice d;
  if (name == "cpu") return d;
  const std::string bad = std::string(option) + " must be cpu, cuda or cuda:N (N a GPU index), not '" + name + "'";
  if (name.rfind("cuda", 0) != 0) throw Error(bad);
  if (name.size() > 4) {
    const std::string index = name.substr(5);
    if (name[4] != ':' || index.empty() || index.size() > 4 ||
        index.find_first_not_of("0123456789") != std::string::npos)
      throw Error(bad);
    d.device = std::stoi(index);
  }
#ifdef TTLPRED_WITH_CUDA
  d.backend = &cuda::cuda_backend();
  return d;
#else
  throw Error(std::string(option) + " " + name +
              ": this build has no CUDA backend; build one with the CUDA toolkit: cmake -B build "
              "-DTTLPRED_CUDA=ON -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc (docs/gpu-backend.md)");
#endif
}

}  // namespace ttlpred
