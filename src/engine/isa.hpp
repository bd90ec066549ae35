#pragma once
// Instruction sets the engine has kernels for, and what the host offers. The best one is
// resolved once, when a plan is compiled; an option pins one (benchmarks, tests).
#include <string_view>
#include <vector>

namespace ttlpred::engine {

enum class Isa { Scalar, Avx2, Avx512, Avx512Vnni, Avx512Bf16, Avx512Amx };

std::string_view isa_name(Isa isa);
// Throws ttlpred::Error listing the known names.
Isa isa_from_name(std::string_view name);
// Whether this CPU can run code built for `isa` (AVX2 also requires FMA, F16C and BMI2;
// avx512-amx also requires the kernel to grant this process the AMX tile state, which the
// first call asks for).
bool host_supports(Isa isa);
// Whether this build has kernels for `isa`: all of them (scalar, avx2, avx512 = F+BW+VL,
// avx512-vnni, avx512-bf16, avx512-amx); kept for builds that may leave some out.
bool isa_implemented(Isa isa);
// Whether `isa`'s kernels can also run on the portable model of their instructions
// (CompileOptions::emulated), on any host: the three AVX-512 ones and avx512-amx (its tiles
// on arch/amx/amx_tiles_emulated.hpp).
bool isa_emulated(Isa isa);
// The ISAs both implemented and supported here, scalar first.
std::vector<Isa> usable_isas();
// The best usable ISA.
Isa best_isa();

}  // namespace ttlpred::engine
