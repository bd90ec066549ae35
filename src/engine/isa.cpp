#include "engine/isa.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#include "util/error.hpp"

namespace ttlpred::engine {

namespace {
constexpr Isa kAllIsas[] = {Isa::Scalar, Isa::Avx2, Isa::Avx512, Isa::Avx512Vnni, Isa::Avx512Bf16, Isa::Avx512Amx};

// Linux keeps the 8 KiB AMX tile state off until a process asks for it (arch_prctl
// ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA); without the grant the first tile
// instruction faults. Asked once per process.
bool os_grants_amx() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  static const bool granted = [] {
    constexpr int kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return granted;
#else
  return false;
#endif
}
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Scalar: return "scalar";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    case Isa::Avx512Vnni: return "avx512-vnni";
    case Isa::Avx512Bf16: return "avx512-bf16";
    case Isa::Avx512Amx: return "avx512-amx";
  }
  return "?";
}

Isa isa_from_name(std::string_view name) {
  for (Isa isa : kAllIsas)
    if (isa_name(isa) == name) return isa;
  throw Error("unknown ISA '" + std::string(name) +
              "' (known: scalar, avx2, avx512, avx512-vnni, avx512-bf16, avx512-amx)");
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
    // The AMX set is the BF16 set with its bf16 and int8 GEMMs on tiles.
    case Isa::Avx512Amx:
      return host_supports(Isa::Avx512Bf16) && __builtin_cpu_supports("amx-tile") &&
             __builtin_cpu_supports("amx-bf16") && __builtin_cpu_supports("amx-int8") && os_grants_amx();
  }
  return false;
}

bool isa_implemented(Isa) { return true; }

bool isa_emulated(Isa isa) {
  return isa == Isa::Avx512 || isa == Isa::Avx512Vnni || isa == Isa::Avx512Bf16 || isa == Isa::Avx512Amx;
}

std::vector<Isa> usable_isas() {
  std::vector<Isa> out;
  for (Isa isa : kAllIsas)
    if (isa_implemented(isa) && host_supports(isa)) out.push_back(isa);
  return out;
}

Isa best_isa() { return usable_isas().back(); }

}  // namespace ttlpred::engine
