#pragma once
// The AMX tile policy of amx_gemms.hpp on a portable model of the instructions: eight tile
// registers of 16 rows x 64 bytes per thread, each operation computed from its definition
// (Intel SDM, "Intel AMX instruction set reference"):
// - ldtilecfg takes the rows and bytes per row of each tile and zeroes every tile;
// - tileloadd reads a tile's configured rows and bytes from memory, zeroing the rest;
//   tilestored writes them back; tilezero zeroes a tile;
// - tdpbusd: for each row m of C and dword column n, the sum over the dwords k of A's row of
//   the four products u8(A[m][4k+i]) x s8(B[k][4n+i]), added to C[m][n] with int32
//   wrap-around: exact integer arithmetic, so the emulated int8 tiles must equal the
//   vpdpbusd tiles bit for bit, as the real ones do;
// - tdpbf16ps: for each row m and column n, two fp32 sums from zero, one over the even
//   elements of the pairs (A[m][2k] B[k][2n]) and one over the odd ones, each an FMA per k
//   in order; then C[m][n] += (even + odd). Every step rounds to nearest even; denormal
//   inputs read as zero and denormal results are flushed (the instruction does not consult
//   MXCSR). This is the SDM's operation as the Bochs emulator also models it; it is not
//   checked on an AMX CPU here, so bf16 is held to the FP64 reference's tolerance, as the
//   vector tiles are.
// Compiled without any instruction-set flag, with the vector policy Vec16Emulated.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/arch/amx/amx_gemms.hpp"

namespace ttlpred::engine::detail {

struct AmxEmulated {
  struct State {
    AmxTileConfig cfg;
    alignas(64) std::uint8_t tile[8][16][64] = {};
  };
  static State& state() {
    thread_local State s;
    return s;
  }
  static void load_config(const AmxTileConfig* cfg) {
    State& s = state();
    s.cfg = *cfg;
    std::memset(s.tile, 0, sizeof s.tile);
  }
  static void release() { state() = State{}; }
  template <int t>
  static void zero() {
    std::memset(state().tile[t], 0, sizeof state().tile[t]);
  }
  template <int t>
  static void load(const void* p, std::size_t stride) {
    State& s = state();
    zero<t>();
    for (std::size_t r = 0; r < s.cfg.rows[t]; ++r)
      std::memcpy(s.tile[t][r], static_cast<const char*>(p) + r * stride, s.cfg.colsb[t]);
  }
  template <int t>
  static void store(void* p, std::size_t stride) {
    const State& s = state();
    for (std::size_t r = 0; r < s.cfg.rows[t]; ++r)
      std::memcpy(static_cast<char*>(p) + r * stride, s.tile[t][r], s.cfg.colsb[t]);
  }
  template <int c, int a, int b>
  static void dpbusd() {
    State& s = state();
    const std::size_t rows = s.cfg.rows[c], columns = s.cfg.colsb[c] / 4u, depth = s.cfg.colsb[a] / 4u;
    for (std::size_t m = 0; m < rows; ++m)
      for (std::size_t n = 0; n < columns; ++n) {
        std::uint32_t acc = dword(s.tile[c][m] + 4 * n);
        for (std::size_t k = 0; k < depth; ++k)
          for (std::size_t i = 0; i < 4; ++i) {
            const std::int32_t x = s.tile[a][m][4 * k + i];
            const std::int32_t w = static_cast<std::int8_t>(s.tile[b][k][4 * n + i]);
            acc += static_cast<std::uint32_t>(x * w);  // wraps as the int32 lanes do
          }
        std::memcpy(s.tile[c][m] + 4 * n, &acc, 4);
      }
  }
  template <int c, int a, int b>
  static void dpbf16ps() {
    State& s = state();
    const std::size_t rows = s.cfg.rows[c], columns = s.cfg.colsb[c] / 4u, depth = s.cfg.colsb[a] / 4u;
    for (std::size_t m = 0; m < rows; ++m)
      for (std::size_t n = 0; n < columns; ++n) {
        float sums[2] = {0.0f, 0.0f};  // over the even and the odd elements of the pairs
        for (std::size_t k = 0; k < depth; ++k)
          for (std::size_t i = 0; i < 2; ++i)
            sums[i] = flush(std::fma(bf16(s.tile[a][m] + 4 * k + 2 * i), bf16(s.tile[b][k] + 4 * n + 2 * i), sums[i]));
        float acc;
        std::memcpy(&acc, s.tile[c][m] + 4 * n, 4);
        acc = flush(flush(acc) + flush(sums[0] + sums[1]));
        std::memcpy(s.tile[c][m] + 4 * n, &acc, 4);
      }
  }
  static const KernelSet& vector_set() { return avx512bf16_emulated_kernels(); }

 private:
  static std::uint32_t dword(const std::uint8_t* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  static float flush(float v) { return std::fpclassify(v) == FP_SUBNORMAL ? std::copysign(0.0f, v) : v; }
  // A bf16 (two bytes, little-endian) as the fp32 of its bits; a denormal one as zero.
  static float bf16(const std::uint8_t* p) {
    const std::uint32_t bits = std::uint32_t{p[0]} << 16 | std::uint32_t{p[1]} << 24;
    float v;
    std::memcpy(&v, &bits, 4);
    return flush(v);
  }
};

}  // namespace ttlpred::engine::detail
