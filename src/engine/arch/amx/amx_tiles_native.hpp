#pragma once
// The AMX tile policy of amx_gemms.hpp on the instructions themselves: each operation is one
// AMX instruction. The intrinsics paste their tile numbers into the instruction text, so a
// number must be a literal: each template below names the tiles amx_gemms.hpp uses (C 0-3,
// A 4-5, B 6-7) literally, and any other combination fails to compile. Only for a file
// compiled with -mamx-tile -mamx-int8 -mamx-bf16.
#include <immintrin.h>

#include <cstddef>

#include "engine/arch/amx/amx_gemms.hpp"

namespace ttlpred::engine::detail {

// One statement per tile number in 0..7 (`OP` is a macro of one literal).
#define TTLPRED_AMX_TILE_SWITCH(t, OP)      \
  if constexpr ((t) == 0) OP(0);            \
  else if constexpr ((t) == 1) OP(1);       \
  else if constexpr ((t) == 2) OP(2);       \
  else if constexpr ((t) == 3) OP(3);       \
  else if constexpr ((t) == 4) OP(4);       \
  else if constexpr ((t) == 5) OP(5);       \
  else if constexpr ((t) == 6) OP(6);       \
  else {                                    \
    static_assert((t) == 7, "tiles are 0-7"); \
    OP(7);                                  \
  }
// The four products of amx_gemms.hpp: C(c) += A(a) B(b).
#define TTLPRED_AMX_PRODUCT_SWITCH(c, a, b, OP)                           \
  if constexpr ((c) == 0 && (a) == 4 && (b) == 6) OP(0, 4, 6);            \
  else if constexpr ((c) == 1 && (a) == 4 && (b) == 7) OP(1, 4, 7);       \
  else if constexpr ((c) == 2 && (a) == 5 && (b) == 6) OP(2, 5, 6);       \
  else {                                                                   \
    static_assert((c) == 3 && (a) == 5 && (b) == 7, "not a product of amx_gemms.hpp"); \
    OP(3, 5, 7);                                                           \
  }

struct AmxNative {
  static void load_config(const AmxTileConfig* cfg) { _tile_loadconfig(cfg); }
  static void release() { _tile_release(); }
  template <int t>
  static void zero() {
#define TTLPRED_AMX_ZERO(n) _tile_zero(n)
    TTLPRED_AMX_TILE_SWITCH(t, TTLPRED_AMX_ZERO)
#undef TTLPRED_AMX_ZERO
  }
  template <int t>
  static void load(const void* p, std::size_t stride) {
#define TTLPRED_AMX_LOAD(n) _tile_loadd(n, p, stride)
    TTLPRED_AMX_TILE_SWITCH(t, TTLPRED_AMX_LOAD)
#undef TTLPRED_AMX_LOAD
  }
  template <int t>
  static void store(void* p, std::size_t stride) {
#define TTLPRED_AMX_STORE(n) _tile_stored(n, p, stride)
    TTLPRED_AMX_TILE_SWITCH(t, TTLPRED_AMX_STORE)
#undef TTLPRED_AMX_STORE
  }
  template <int c, int a, int b>
  static void dpbusd() {
    TTLPRED_AMX_PRODUCT_SWITCH(c, a, b, _tile_dpbusd)
  }
  template <int c, int a, int b>
  static void dpbf16ps() {
    TTLPRED_AMX_PRODUCT_SWITCH(c, a, b, _tile_dpbf16ps)
  }
  // Where a call is too small for tiles.
  static const KernelSet& vector_set() { return avx512bf16_kernels(); }
};

#undef TTLPRED_AMX_PRODUCT_SWITCH
#undef TTLPRED_AMX_TILE_SWITCH

}  // namespace ttlpred::engine::detail
