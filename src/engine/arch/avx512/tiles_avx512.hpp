#pragma once
// The AVX-512 GEMM tiles, written once over a 16-lane vector policy `V` (vec16_native.hpp
// for the real instructions, vec16_emulated.hpp for the portable model that tests them on
// any host). A panel of 16 output columns is one register in every weight format, so the
// packing is the AVX2 one (kernels.hpp) and a tile of MR rows x NP panels keeps MR*NP
// accumulators: 8 x 2 for full row blocks (16 of the 32 registers), wider and shorter for
// the last rows so that a single row (batch 1) still has 8 accumulators in flight.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "engine/arch/tile_pointers.hpp"
#include "engine/kernels.hpp"

namespace ttlpred::engine::detail {
namespace {

template <class V>
struct Avx512Tiles {
  using F = typename V::F;
  using I = typename V::I;

  static F activate(F v, Activation act) {
    switch (act) {
      case Activation::None: return v;
      case Activation::Relu: return V::max(v, V::zero());
      case Activation::LeakyRelu: return V::max(v, V::mul(v, V::broadcast(kLeakyReluSlope)));
    }
    return v;
  }

  // Folded embeddings, activation and store of row m, columns n..n+15 (clipped to y_cols).
  static void finish(const PackedLayer& L, const LayerCall& c, std::size_t m, std::uint32_t n, F v) {
    if (c.y_cols <= n) return;
    const unsigned avail = c.y_cols - n < 16 ? c.y_cols - n : 16u;
    if (!c.raw) {
      for (std::uint32_t j = 0; j < c.n_folded; ++j)
        v = V::add(v, V::load(c.folded[j] + std::size_t{c.cats[m * c.cat_stride + j]} * L.cols_padded() + n));
      v = activate(v, L.act);
    }
    if (c.out_u8)
      V::store_u8(static_cast<std::uint8_t*>(c.y) + m * c.y_stride + n, v, c.out_inv_scale, c.out_zp, c.out_qmax, avail);
    else
      V::store(static_cast<float*>(c.y) + m * c.y_stride + n, v, avail);
  }
  // The epilogue of 16 float sums (bias added), or of 16 int32 sums (dequantized).
  static void finish_sum(const PackedLayer& L, const LayerCall& c, std::size_t m, std::uint32_t n, F acc) {
    if (!c.raw) acc = V::add(acc, V::load(L.bias + n));
    finish(L, c, m, n, acc);
  }
  static void finish_sum(const PackedLayer& L, const LayerCall& c, std::size_t m, std::uint32_t n, I acc) {
    F v = V::to_float(acc);
    if (c.row_scale) {
      v = V::fnmadd(V::broadcast(c.row_zp[m]), V::load(L.wsum + n), v);
      v = V::mul(v, V::broadcast(c.row_scale[m]));
    }
    finish(L, c, m, n, V::fmadd(v, V::load(L.col_scale + n), V::load(L.bias + n)));
  }

  // The per-tile preamble and epilogue every tile shares (with tile_pointers.hpp's row and
  // panel pointers): zeroed accumulators, and the fused epilogue over all of them.
  template <class A, int MR, int NP>
  static void zero(A (&acc)[MR][NP], A z) {
    #pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
      #pragma GCC unroll 16
      for (int j = 0; j < NP; ++j) acc[r][j] = z;
  }
  template <class A, int MR, int NP>
  static void finish_tile(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0, A (&acc)[MR][NP]) {
    #pragma GCC unroll 16
    for (int r = 0; r < MR; ++r)
      #pragma GCC unroll 16
      for (int j = 0; j < NP; ++j) finish_sum(L, c, m0 + r, (p0 + j) * kPanel, acc[r][j]);
  }

  // The N (4 or 8) input bytes at p in every 32- or 64-bit lane: a group of u8 activations.
  template <int N>
  [[gnu::always_inline]] static I broadcast_bytes(const std::uint8_t* p) {
    if constexpr (N == 4) {
      std::int32_t four;
      std::memcpy(&four, p, 4);
      return V::broadcast32(four);
    } else {
      std::int64_t eight;
      std::memcpy(&eight, p, 8);
      return V::broadcast64(eight);
    }
  }

  // Float weights (F32, F16, BF16): `Load` widens one panel row of 16 weights.
  template <class Load>
  struct Float {
    template <int MR, int NP>
    static void run(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0) {
      const std::uint32_t K = L.in;
      const float* x[MR];
      row_ptrs(c, m0, x);
      const typename Load::T* w[NP];
      panel_ptrs(L.weights, p0, std::size_t{K} * kPanel, w);
      F acc[MR][NP];
      zero(acc, V::zero());
      for (std::uint32_t k = 0; k < K; ++k) {
        F wk[NP];
        #pragma GCC unroll 16
        for (int j = 0; j < NP; ++j) wk[j] = Load::load(w[j] + std::size_t{k} * kPanel);
        #pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const F xb = V::broadcast(x[r][k]);
          #pragma GCC unroll 16
          for (int j = 0; j < NP; ++j) acc[r][j] = V::fmadd(wk[j], xb, acc[r][j]);
        }
      }
      finish_tile(L, c, m0, p0, acc);
    }
  };
  struct LoadF32 {
    using T = float;
    static F load(const float* p) { return V::load(p); }
  };
  struct LoadF16 {
    using T = std::uint16_t;
    static F load(const std::uint16_t* p) { return V::load_f16(p); }
  };
  struct LoadBF16 {
    using T = std::uint16_t;
    static F load(const std::uint16_t* p) { return V::load_bf16_slots(p); }
  };

  // u8 x s8, "c4": one register holds 4 consecutive inputs of each of the 16 columns.
  template <class Dot>
  struct Qs8 {
    template <int MR, int NP>
    static void run(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0) {
      const std::uint32_t groups = L.in_padded / 4;
      const std::uint8_t* x[MR];
      row_ptrs(c, m0, x);
      const std::int8_t* w[NP];
      panel_ptrs(L.weights, p0, std::size_t{groups} * kPanel * 4, w);
      I acc[MR][NP];
      zero(acc, V::izero());
      for (std::uint32_t g = 0; g < groups; ++g) {
        I wg[NP];
        #pragma GCC unroll 16
        for (int j = 0; j < NP; ++j) wg[j] = V::load_i(w[j] + std::size_t{g} * kPanel * 4);
        #pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const I xb = broadcast_bytes<4>(x[r] + 4 * g);
          #pragma GCC unroll 16
          for (int j = 0; j < NP; ++j) acc[r][j] = Dot::acc(acc[r][j], xb, wg[j]);
        }
      }
      finish_tile(L, c, m0, p0, acc);
    }
  };

  // Column code byte (2-bit indices a0 a1 | b0 b1) -> shuffle control bytes {a0, a1, 4+b0, 4+b1}.
  static I shuffle_control(I code) {
    const I spread = V::or_i(V::or_i(code, V::template shl<6>(code)),
                             V::or_i(V::template shl<12>(code), V::template shl<18>(code)));
    return V::add_i(V::and_i(spread, V::broadcast32(0x03030303)), V::broadcast32(0x04040000));
  }

  // 2:4 sparse u8 x s8: per column and 8 inputs, 4 kept weights and their 2-bit positions;
  // the matching activations are gathered by a byte shuffle.
  template <class Dot>
  struct Qs8Sparse {
    template <int MR, int NP>
    static void run(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0) {
      const Qs8SparsePanels<NP> w(L, p0);
      const std::uint8_t* x[MR];
      row_ptrs(c, m0, x);
      I acc[MR][NP];
      zero(acc, V::izero());
      for (std::uint32_t g = 0; g < w.groups; ++g) {
        I ctl[NP], wg[NP];
        #pragma GCC unroll 16
        for (int j = 0; j < NP; ++j) {
          ctl[j] = shuffle_control(V::widen_u8(w.pos[j] + std::size_t{g} * kPanel));
          wg[j] = V::load_i(w.v[j] + std::size_t{g} * kPanel * 4);
        }
        #pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const I xb = broadcast_bytes<8>(x[r] + 8 * g);
          #pragma GCC unroll 16
          for (int j = 0; j < NP; ++j) acc[r][j] = Dot::acc(acc[r][j], V::shuffle_bytes(xb, ctl[j]), wg[j]);
        }
      }
      finish_tile(L, c, m0, p0, acc);
    }
  };

  // 2:4 sparse fp16: per column and 4 inputs, 2 kept halves; column c's positions are bits
  // 4c and 4c+2 of a 64-bit word, and vpermilps reads only the low 2 bits of each index.
  struct F16Sparse {
    template <int MR, int NP>
    static void run(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0) {
      static constexpr std::int32_t kShift0[16] = {0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28};
      static constexpr std::int32_t kShift1[16] = {2, 6, 10, 14, 18, 22, 26, 30, 2, 6, 10, 14, 18, 22, 26, 30};
      const F16SparsePanels<NP> w(L, p0);
      const float* x[MR];
      row_ptrs(c, m0, x);
      const I sh0 = V::lanes(kShift0), sh1 = V::lanes(kShift1);
      F acc[MR][NP];
      zero(acc, V::zero());
      for (std::uint32_t g = 0; g < w.groups; ++g) {
        I i0[NP], i1[NP];
        F v0[NP], v1[NP];
        #pragma GCC unroll 16
        for (int j = 0; j < NP; ++j) {
          const std::uint64_t bits = w.pos[j][g];
          const I b = V::halves32(static_cast<std::uint32_t>(bits), static_cast<std::uint32_t>(bits >> 32));
          i0[j] = V::shr_var(b, sh0);
          i1[j] = V::shr_var(b, sh1);
          const std::uint16_t* vp = w.v[j] + std::size_t{g} * 2 * kPanel;
          v0[j] = V::load_f16(vp);
          v1[j] = V::load_f16(vp + kPanel);
        }
        #pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const F xg = V::broadcast4(x[r] + 4 * g);
          #pragma GCC unroll 16
          for (int j = 0; j < NP; ++j) {
            acc[r][j] = V::fmadd(v0[j], V::permute_in_lanes(xg, i0[j]), acc[r][j]);
            acc[r][j] = V::fmadd(v1[j], V::permute_in_lanes(xg, i1[j]), acc[r][j]);
          }
        }
      }
      finish_tile(L, c, m0, p0, acc);
    }
  };

  // bf16 x bf16 on AVX512-BF16 (vdpbf16ps): weights in BF16Pairs, activations rounded to
  // bf16 pairs (V::bf16_pairs, 32 floats an instruction; a denormal becomes zero there,
  // which vdpbf16ps would read it as anyway unless it rounded up to the smallest normal).
  // gemm_bf16_pairs converts each
  // block of up to 8 rows once and runs every panel over it (`dot`); a layer wider than
  // 2 kMaxConverted inputs falls back to `run`, which converts per tile, kBlock pairs at a
  // time on the stack. Converting per tile made every panel pair redo the rounding of the
  // same rows: at batch 1024 on a 256-wide layer the conversions cost more than the products.
  struct Bf16Pairs {
    static constexpr std::uint32_t kBlock = 128;
    static constexpr std::uint32_t kMaxConverted = 1024;  // pairs: 8 rows take 32 KiB of stack
    // Pairs t0 .. t0+n-1 of the row at x (L.in floats; pairs past them are zero) to out.
    static void convert_row(const PackedLayer& L, const float* x, std::uint32_t t0, std::uint32_t n, std::uint32_t* out) {
      for (std::uint32_t t = 0; t < n; t += 16) {
        const std::uint32_t k = 2 * (t0 + t);
        const std::uint32_t avail = k < L.in ? (L.in - k < 32 ? L.in - k : 32u) : 0u;
        V::store_i(out + t, V::bf16_pairs(avail ? x + k : x, avail), n - t < 16 ? n - t : 16u);
      }
    }
    // Rows m0 .. m0+rows-1 as bf16 pairs, `pairs` words per row (an odd width's last pair
    // has a zero partner).
    static void convert(const PackedLayer& L, const LayerCall& c, std::size_t m0, int rows, std::uint32_t pairs,
                        std::uint32_t* xb) {
      for (int r = 0; r < rows; ++r)
        convert_row(L, static_cast<const float*>(c.x) + (m0 + r) * c.x_stride, 0, pairs, xb + std::size_t(r) * pairs);
    }
    // acc += pairs t0 .. t0+n-1 of the panels w times the converted rows at xb (row r's
    // pair t0 + t at xb[r * row_stride + t]).
    template <int MR, int NP>
    [[gnu::always_inline]] static void accumulate(F (&acc)[MR][NP], const std::uint32_t* const (&w)[NP], std::uint32_t t0, std::uint32_t n,
                           const std::uint32_t* xb, std::size_t row_stride) {
      for (std::uint32_t t = 0; t < n; ++t) {
        I wk[NP];
        #pragma GCC unroll 16
        for (int j = 0; j < NP; ++j) wk[j] = V::load_i(w[j] + std::size_t{t0 + t} * kPanel);
        #pragma GCC unroll 16
        for (int r = 0; r < MR; ++r) {
          const I xp = V::broadcast32(static_cast<std::int32_t>(xb[r * row_stride + t]));
          #pragma GCC unroll 16
          for (int j = 0; j < NP; ++j) acc[r][j] = V::dot_bf16(acc[r][j], wk[j], xp);
        }
      }
    }
    // MR rows (their converted pairs at xb, `pairs` words a row) x NP panels from p0.
    template <int MR, int NP>
    static void dot(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0, const std::uint32_t* xb,
                    std::uint32_t pairs) {
      const std::uint32_t* w[NP];
      panel_ptrs(L.weights, p0, std::size_t{pairs} * kPanel, w);
      F acc[MR][NP];
      zero(acc, V::zero());
      accumulate(acc, w, 0, pairs, xb, pairs);
      finish_tile(L, c, m0, p0, acc);
    }
    // Every panel for R converted rows: 8 rows two panels at a time (16 accumulators), fewer
    // rows wider so that a single row still has 8 accumulators in flight.
    template <int R>
    static void all_panels(const PackedLayer& L, const LayerCall& c, std::size_t m0, const std::uint32_t* xb,
                           std::uint32_t pairs) {
      std::uint32_t p = 0;
      if constexpr (R == 8) {
        for (; p + 2 <= L.panels; p += 2) dot<8, 2>(L, c, m0, p, xb, pairs);
      } else {
        if constexpr (R == 1)
          for (; p + 8 <= L.panels; p += 8) dot<1, 8>(L, c, m0, p, xb, pairs);
        for (; p + 4 <= L.panels; p += 4) dot<R, 4>(L, c, m0, p, xb, pairs);
        for (; p + 2 <= L.panels; p += 2) dot<R, 2>(L, c, m0, p, xb, pairs);
      }
      for (; p < L.panels; ++p) dot<R, 1>(L, c, m0, p, xb, pairs);
    }
    template <int MR, int NP>
    static void run(const PackedLayer& L, const LayerCall& c, std::size_t m0, std::uint32_t p0) {
      const std::uint32_t pairs = L.in_padded / 2;
      const float* x[MR];
      row_ptrs(c, m0, x);
      const std::uint32_t* w[NP];
      panel_ptrs(L.weights, p0, std::size_t{pairs} * kPanel, w);
      F acc[MR][NP];
      zero(acc, V::zero());
      std::uint32_t xb[MR * kBlock];  // one flat array: accumulate walks rows by stride
      for (std::uint32_t b0 = 0; b0 < pairs; b0 += kBlock) {
        const std::uint32_t nb = pairs - b0 < kBlock ? pairs - b0 : kBlock;
        for (int r = 0; r < MR; ++r) convert_row(L, x[r], b0, nb, xb + std::size_t(r) * kBlock);
        accumulate(acc, w, b0, nb, xb, kBlock);
      }
      finish_tile(L, c, m0, p0, acc);
    }
  };

  // Panels p.. in steps of NP for rows m..m+R-1.
  template <class Tile, int R, int NP>
  static void panels(const PackedLayer& L, const LayerCall& c, std::size_t m, std::uint32_t& p) {
    for (; p + NP <= L.panels; p += NP) Tile::template run<R, NP>(L, c, m, p);
  }
  // Fewer than 8 rows: as many panels at once as keeps about 8-16 accumulators.
  template <class Tile, int R>
  static void short_rows(const PackedLayer& L, const LayerCall& c, std::size_t m) {
    std::uint32_t p = 0;
    if constexpr (R == 1) panels<Tile, R, 8>(L, c, m, p);
    panels<Tile, R, 4>(L, c, m, p);
    panels<Tile, R, 2>(L, c, m, p);
    panels<Tile, R, 1>(L, c, m, p);
  }
  // Full blocks of 8 rows go two panels at a time, so the two panels' weights stay in L1
  // while the rows stream; then up to 7 rows as 4 + 3, 2 or 1.
  template <class Tile>
  static void drive(const PackedLayer& L, const LayerCall& c) {
    const std::size_t full = c.rows / 8 * 8;
    std::uint32_t p = 0;
    for (; p + 2 <= L.panels; p += 2)
      for (std::size_t m = 0; m < full; m += 8) Tile::template run<8, 2>(L, c, m, p);
    for (; p < L.panels; ++p)
      for (std::size_t m = 0; m < full; m += 8) Tile::template run<8, 1>(L, c, m, p);
    std::size_t m = full;
    std::size_t rem = c.rows - full;
    if (rem >= 4) {
      short_rows<Tile, 4>(L, c, m);
      m += 4;
      rem -= 4;
    }
    switch (rem) {
      case 3: short_rows<Tile, 3>(L, c, m); break;
      case 2: short_rows<Tile, 2>(L, c, m); break;
      case 1: short_rows<Tile, 1>(L, c, m); break;
      default: break;
    }
  }

  struct DotBw {
    static I acc(I a, I x, I w) { return V::dot_bw(a, x, w); }
  };

  static void gemm_f32(const PackedLayer& L, const LayerCall& c) { drive<Float<LoadF32>>(L, c); }
  static void gemm_f16(const PackedLayer& L, const LayerCall& c) { drive<Float<LoadF16>>(L, c); }
  static void gemm_bf16(const PackedLayer& L, const LayerCall& c) { drive<Float<LoadBF16>>(L, c); }
  static void gemm_f16_sp24(const PackedLayer& L, const LayerCall& c) { drive<F16Sparse>(L, c); }
  template <class Dot>
  static void gemm_qs8(const PackedLayer& L, const LayerCall& c) { drive<Qs8<Dot>>(L, c); }
  static void gemm_bf16_pairs(const PackedLayer& L, const LayerCall& c) {
    const std::uint32_t pairs = L.in_padded / 2;
    if (pairs > Bf16Pairs::kMaxConverted) return drive<Bf16Pairs>(L, c);
    alignas(64) std::uint32_t xb[8 * Bf16Pairs::kMaxConverted];
    for (std::size_t m = 0; m < c.rows; m += 8) {
      const std::size_t rows = c.rows - m < 8 ? c.rows - m : 8;
      Bf16Pairs::convert(L, c, m, static_cast<int>(rows), pairs, xb);
      if (rows == 8) {
        Bf16Pairs::template all_panels<8>(L, c, m, xb, pairs);
        continue;
      }
      std::size_t r0 = 0;  // up to 7 rows as 4 + 3, 2 or 1
      if (rows >= 4) {
        Bf16Pairs::template all_panels<4>(L, c, m, xb, pairs);
        r0 = 4;
      }
      const std::uint32_t* rest = xb + r0 * pairs;
      switch (rows - r0) {
        case 3: Bf16Pairs::template all_panels<3>(L, c, m + r0, rest, pairs); break;
        case 2: Bf16Pairs::template all_panels<2>(L, c, m + r0, rest, pairs); break;
        case 1: Bf16Pairs::template all_panels<1>(L, c, m + r0, rest, pairs); break;
        default: break;
      }
    }
  }
  template <class Dot>
  static void gemm_qs8_sp24(const PackedLayer& L, const LayerCall& c) { drive<Qs8Sparse<Dot>>(L, c); }
};

}  // namespace
}  // namespace ttlpred::engine::detail
