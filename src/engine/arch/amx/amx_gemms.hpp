#pragma once
// The AMX kernel set's GEMMs, written once over a tile policy `Amx` (amx_tiles_native.hpp:
// the instructions; amx_tiles_emulated.hpp: their definitions, element by element) and the
// AVX-512 vector policy `V` of their epilogue, as tiles_avx512.hpp is written over Vec16: the
// emulated set runs these very blocks on any host, so that every host's tests check the tile
// indexing (blocks, panel pairs, input tiles) that only an AMX CPU could run before.
//
// The AVX-512 BF16 set with the bf16 and int8 GEMMs on Intel AMX tiles (tdpbf16ps,
// tdpbusd). One tile product is 16 rows x 16 columns x 32 bf16 (or 64 u8 x s8) inputs;
// measured on a Sapphire Rapids class core that is about 30 times vdpbf16ps's and 6 times
// vpdpbusd's multiply rate, and vdpbf16ps itself has half vfmadd231ps's multiply rate there,
// so bf16 on vdpbf16ps could never beat fp32 at large batch.
//
// A block of up to 32 rows (two A tiles) runs over two panels at a time (two B tiles, four
// C tiles: 8 tile registers, all 16 rows x 64 bytes). The weights are the BF16Pairs / QS8
// layouts with the inputs padded to whole tiles (BF16Tiles, QS8Tiles): a panel's B tile for
// inputs 32t.. (bf16) or 64t.. (int8) is its 16 consecutive 64-byte rows from there. C
// tiles go through a 32 x 32 stack buffer into the AVX-512 epilogue (bias, folded
// embeddings, activation, requantization), so every fused output rule is the AVX-512 one.
// Fewer than kMinRows rows leave the tiles mostly empty: those go to the BF16 set's
// vdpbf16ps / vpdpbusd tiles (Amx::vector_set()), which read the same layouts (padding is
// zero weights).
#include <cstddef>
#include <cstdint>

#include "engine/arch/avx512/tiles_avx512.hpp"
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {

// ldtilecfg's 64-byte operand, palette 1.
struct alignas(64) AmxTileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};
static_assert(sizeof(AmxTileConfig) == 64);

template <class Amx, class V>
struct AmxGemms {
  using T = Avx512Tiles<V>;
  // Below this many rows a call runs on the vector tiles (see the preamble).
  static constexpr std::size_t kMinRows = 8;
  // bf16 activations are rounded into a stack buffer of 32 rows x kMaxPairs pairs (32 KiB);
  // wider layers stay on the vdpbf16ps tile.
  static constexpr std::uint32_t kMaxPairs = 256;

  // Tiles 0-3 accumulators (C[row tile][panel] = 2 * row tile + panel), 4-5 the two row tiles
  // of activations, 6-7 the two panels' weights. A and C tiles hold `rows_a` and `rows_b`
  // rows, so that a short last block reads only the rows it has.
  class Tiles {
   public:
    Tiles() = default;
    Tiles(const Tiles&) = delete;
    Tiles& operator=(const Tiles&) = delete;
    // Returns the thread's tile state to its initial (unused) state, so that context switches
    // stop saving 8 KiB of tiles.
    ~Tiles() { Amx::release(); }
    // Configures for a block of `rows` (1..32) rows, unless already so.
    void configure(std::size_t rows) {
      const std::uint8_t a = static_cast<std::uint8_t>(rows < 16 ? rows : 16);
      const std::uint8_t b = static_cast<std::uint8_t>(rows > 16 ? rows - 16 : 1);
      if (a == rows_a_ && b == rows_b_) return;
      AmxTileConfig cfg;
      for (int t = 0; t < 8; ++t) cfg.colsb[t] = 64;
      cfg.rows[0] = cfg.rows[1] = cfg.rows[4] = a;
      cfg.rows[2] = cfg.rows[3] = cfg.rows[5] = b;
      cfg.rows[6] = cfg.rows[7] = 16;
      Amx::load_config(&cfg);
      rows_a_ = a;
      rows_b_ = b;
    }

   private:
    std::uint8_t rows_a_ = 0, rows_b_ = 0;
  };

  // C tiles of an MT x NP block (MT row tiles, NP panels) to buf (32 x 32 words, 128 B a row).
  template <int MT, int NP>
  static void store_block(void* buf) {
    auto* b = static_cast<char*>(buf);
    Amx::template store<0>(b, 128);
    if constexpr (NP > 1) Amx::template store<1>(b + 64, 128);
    if constexpr (MT > 1) Amx::template store<2>(b + 16 * 128, 128);
    if constexpr (MT > 1 && NP > 1) Amx::template store<3>(b + 16 * 128 + 64, 128);
  }
  template <int MT, int NP>
  static void zero_block() {
    Amx::template zero<0>();
    if constexpr (NP > 1) Amx::template zero<1>();
    if constexpr (MT > 1) Amx::template zero<2>();
    if constexpr (MT > 1 && NP > 1) Amx::template zero<3>();
  }
  // The four products of one input tile, C += A B: tdpbf16ps or tdpbusd.
  template <int C, int A, int B, bool Bf16>
  static void product() {
    if constexpr (Bf16)
      Amx::template dpbf16ps<C, A, B>();
    else
      Amx::template dpbusd<C, A, B>();
  }
  template <int MT, int NP, bool Bf16>
  static void products() {
    product<0, 4, 6, Bf16>();
    if constexpr (NP > 1) product<1, 4, 7, Bf16>();
    if constexpr (MT > 1) product<2, 5, 6, Bf16>();
    if constexpr (MT > 1 && NP > 1) product<3, 5, 7, Bf16>();
  }

  // Rows x0 (a_stride bytes apart; rows 16.. at x1) times panels w0, w1 over `tiles` input
  // tiles (each 64 bytes of a row, 16 x 64 bytes of a panel), into buf.
  template <int MT, int NP, bool Bf16>
  static void block(const char* x0, const char* x1, std::size_t a_stride, const char* w0, const char* w1,
                    std::uint32_t tiles, void* buf) {
    zero_block<MT, NP>();
    for (std::uint32_t t = 0; t < tiles; ++t) {
      Amx::template load<4>(x0 + 64 * std::size_t{t}, a_stride);
      if constexpr (MT > 1) Amx::template load<5>(x1 + 64 * std::size_t{t}, a_stride);
      Amx::template load<6>(w0 + 1024 * std::size_t{t}, 64);
      if constexpr (NP > 1) Amx::template load<7>(w1 + 1024 * std::size_t{t}, 64);
      products<MT, NP, Bf16>();
    }
    store_block<MT, NP>(buf);
  }

  // Every panel pair for one block of `rows` rows (x0: its first row, a_stride bytes apart),
  // then the epilogue of each row and panel from the stored accumulators.
  template <bool Bf16, int MT>
  static void all_panels(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::size_t rows, const char* x0,
                         std::size_t a_stride, std::uint32_t tiles) {
    alignas(64) std::int32_t buf[32][32];
    const char* x1 = x0 + 16 * a_stride;
    const std::size_t panel_bytes = std::size_t{tiles} * 1024;
    const char* w = static_cast<const char*>(L.weights);
    for (std::uint32_t p = 0; p < L.panels; p += 2) {
      const char* w0 = w + p * panel_bytes;
      const bool two = p + 1 < L.panels;
      if (two)
        block<MT, 2, Bf16>(x0, x1, a_stride, w0, w0 + panel_bytes, tiles, buf);
      else
        block<MT, 1, Bf16>(x0, x1, a_stride, w0, w0, tiles, buf);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::uint32_t j = 0; j < (two ? 2u : 1u); ++j) {
          const std::uint32_t n = (p + j) * kPanel;
          if constexpr (Bf16)
            T::finish_sum(L, c, m0 + r, n, V::load(reinterpret_cast<const float*>(buf[r] + 16 * j)));
          else
            T::finish_sum(L, c, m0 + r, n, V::load_i(buf[r] + 16 * j));
        }
    }
  }

  template <bool Bf16>
  static void run_block(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::size_t rows, const char* x0,
                        std::size_t a_stride, std::uint32_t tiles) {
    if (rows > 16)
      all_panels<Bf16, 2>(L, c, m0, rows, x0, a_stride, tiles);
    else
      all_panels<Bf16, 1>(L, c, m0, rows, x0, a_stride, tiles);
  }

  // bf16: each block of 32 rows is rounded to bf16 pairs once (the vdpbf16ps tile's rounding)
  // and every panel runs over it.
  static void gemm_bf16(const PackedLayer& L, const LayerCall& c) {
    const std::uint32_t pairs = L.in_padded / 2;
    if (c.rows < kMinRows || pairs > kMaxPairs)
      return Amx::vector_set().gemm[static_cast<int>(WeightFormat::BF16Pairs)](L, c);
    alignas(64) std::uint32_t xb[32 * kMaxPairs];
    Tiles tiles;
    for (std::size_t m = 0; m < c.rows; m += 32) {
      const std::size_t rows = c.rows - m < 32 ? c.rows - m : 32;
      T::Bf16Pairs::convert(L, c, m, static_cast<int>(rows), pairs, xb);
      tiles.configure(rows);
      run_block<true>(L, c, m, rows, reinterpret_cast<const char*>(xb), std::size_t{pairs} * 4, pairs / 16);
    }
  }

  // int8: the u8 activation rows are A tiles as they are (each row's padding up to in_padded
  // is readable: zero points from the quantizer, or stale scratch, both times zero weights).
  static void gemm_qs8(const PackedLayer& L, const LayerCall& c) {
    if (c.rows < kMinRows) return Amx::vector_set().gemm[static_cast<int>(WeightFormat::QS8)](L, c);
    Tiles tiles;
    const char* x = static_cast<const char*>(c.x);
    for (std::size_t m = 0; m < c.rows; m += 32) {
      const std::size_t rows = c.rows - m < 32 ? c.rows - m : 32;
      tiles.configure(rows);
      run_block<false>(L, c, m, rows, x + m * c.x_stride, c.x_stride, L.in_padded / 64);
    }
  }
};

}  // namespace ttlpred::engine::detail
