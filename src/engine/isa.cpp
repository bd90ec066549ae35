#include "engine/isa.hpp"

#include <string>

#include "util/error.hpp"

namespace ttlpred::engine {

namespace {
constexpr Isa kAllIsas[] = {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Avx512Vnni, Isa::Avx512Bf16};
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Avx512Vnni: return "avx512-vnni";
    case Isa::Avx512Bf16: return "avx512-bf16";
  }
  return "?";
}

Isa isa_from_name(std::string_view name) {
  for (Isa isa : kAllIsas)
    if (isa_name(isa) == name) return isa;
  throw Error("unknown ISA '" + std::string(name) +
              "' (known: scalar, avx2, avx512, avx512-vnni, avx512-bf16)");
}

bool host_supports(Isa isa) {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi2");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
  switch (isa) {
    case Isa::Scalar: return true;
    case Isa::Avx2: return avx2;
    case Isa::Avx512: return avx512;
    case Isa::Avx512Vnni: return avx512 && __builtin_cpu_supports("avx512vnni");
    // The BF16 set is the VNNI set plus vdpbf16ps: it needs both.
    case Isa::Avx512Bf16:
      return avx512 && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bf16");
  }
  return false;
}

bool isa_implemented(Isa) { return true; }

bool isa_emulated(Isa isa) { return isa == Isa::Avx512 || isa == Isa::Avx512Vnni || isa == Isa::Avx512Bf16; }

std::vector<Isa> usable_isas() {
  std::vector<Isa> out;
  for (Isa isa : kAllIsas)
    if (isa_implemented(isa) && host_supports(isa)) out.push_back(isa);
  return out;
}

Isa best_isa() { return usable_isas().back(); }

}  // namespace ttlpred::engine
