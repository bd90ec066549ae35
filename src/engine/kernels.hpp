#pragma once
// Internal contract between a compiled plan and the per-ISA kernel files under arch/.
// A plan owns PackedLayers; for every chunk of rows it hands each layer's kernel a LayerCall
// describing where the inputs are, where the outputs go and which fused epilogue applies.
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "engine/weight_format.hpp"
#include "model/mlp.hpp"

namespace ttlpred::engine::detail {

// Output columns per packed panel, in every weight format.
inline constexpr std::uint32_t kPanel = 16;

// How one layer's weights are packed (p = panel of 16 output columns, K = in, Kp = in_padded;
// columns past `out` and inputs past `in` are zero):
//   F32, F16, BF16: weights [p][K][16]; BF16 columns interleaved within each 16 (bf16_slot)
//   QS8:            s8 weights [p][Kp/4][16][4]  (4 consecutive inputs per column: "c4")
//   F16Sp24:        halves [p][Kp/4][2][16] (the 2 kept weights of each group of 4 inputs);
//                   aux uint64 [p][Kp/4]: column c's kept indices at bits 4c and 4c+2
//   QS8Sp24:        s8 [p][Kp/8][16][4] (column c: 2 kept of inputs 0-3, 2 kept of 4-7);
//                   aux u8 [p][Kp/8][16]: four 2-bit indices, one per kept weight
//   BF16Pairs:      bf16 [p][Kp/2][16][2] (column c's inputs 2k and 2k+1 share a 32-bit lane,
//                   low half first: the pairs AVX512-BF16's vdpbf16ps multiplies)
//   BF16Tiles:      BF16Pairs with Kp a multiple of 32: a panel's 16 pair rows from 16t on
//                   are one AMX B tile (16 rows x 64 bytes)
//   QS8Tiles:       QS8 with Kp a multiple of 64: a panel's 16 groups from 16t on are one
//                   AMX B tile
// Position of column i (0..15) within a BF16 group of 16: 0,2,..,14 for columns 0..7, then
// 1,3,..,15 for columns 8..15 (pairs share a 32-bit lane: low half = column i, high = 8+i).
constexpr std::uint32_t bf16_slot(std::uint32_t i) { return i < 8 ? 2 * i : 2 * (i - 8) + 1; }

using engine::kNumWeightFormats;
using engine::WeightFormat;

struct PackedLayer {
  WeightFormat format = WeightFormat::F32;
  std::uint32_t in = 0, out = 0;
  std::uint32_t in_padded = 0;  // in rounded up to the format's input group (1, 2, 4, 8, 32 or 64)
  std::uint32_t panels = 0;     // ceil(out / 16)
  Activation act = Activation::None;
  const void* weights = nullptr;
  const void* aux = nullptr;
  const float* bias = nullptr;       // panels*16; for int8-static the zero-point term is folded in
  const float* col_scale = nullptr;  // int8: accumulator -> real multiplier per column
  const float* wsum = nullptr;       // int8-dynamic: sum of the s8 weights per column
  std::uint32_t cols_padded() const { return panels * kPanel; }
};

// One layer applied to `rows` rows. Output value per (row m, column n), unless `raw`:
//   float formats: v = acc + bias[n]
//   int8 static:   v = acc * col_scale[n] + bias[n]
//   int8 dynamic:  v = (acc - row_zp[m] * wsum[n]) * row_scale[m] * col_scale[n] + bias[n]
//   then v += folded[j][cats[m*cat_stride + j] * cols_padded + n] for each folded embedding,
//   v = act(v), stored as float or as u8 = clamp(round(v * out_inv_scale) + out_zp, 0, out_qmax).
struct LayerCall {
  std::size_t rows = 0;
  const void* x = nullptr;  // float, or u8 for QS8 formats
  std::size_t x_stride = 0;  // elements
  void* y = nullptr;
  std::size_t y_stride = 0;
  std::uint32_t y_cols = 0;  // columns that may be written: out for user buffers, more in scratch
  bool raw = false;          // baseline: store the bare dot products (bias/act done elsewhere)
  const float* row_scale = nullptr;
  const float* row_zp = nullptr;
  const std::uint32_t* cats = nullptr;
  std::size_t cat_stride = 0;
  std::uint32_t n_folded = 0;
  const float* const* folded = nullptr;
  bool out_u8 = false;
  float out_inv_scale = 1.0f, out_zp = 0.0f, out_qmax = 255.0f;
};

using GemmFn = void (*)(const PackedLayer&, const LayerCall&);
// Per-row asymmetric quantization found from the row's own range (int8-dynamic); columns
// cols..cols_padded get the zero point so that padded inputs are defined.
using QuantizeDynamicFn = void (*)(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride,
                                   std::uint8_t* q, std::size_t q_stride, std::size_t cols_padded, float qmax,
                                   float* row_scale, float* row_zp);
// Quantization with fixed (calibrated) scale and zero point.
using QuantizeStaticFn = void (*)(const float* x, std::size_t rows, std::size_t cols, std::size_t x_stride,
                                  std::uint8_t* q, std::size_t q_stride, std::size_t cols_padded, float inv_scale,
                                  float zp, float qmax);

struct KernelSet {
  GemmFn gemm[kNumWeightFormats];  // indexed by WeightFormat; null where the set has none
  const char* gemm_name[kNumWeightFormats];
  QuantizeDynamicFn quantize_dynamic;
  QuantizeStaticFn quantize_static;
  // Largest u8 activation the int8 kernels accept: AVX2's vpmaddubsw adds two u8*s8
  // products into a saturating int16, so activations keep 7 bits there (127*127*2 < 32767).
  float act_qmax;
};

// One GEMM of a kernel set, registered under the weight format it reads, never by position.
// Its name is the identifier the kernel file gives it (TTLPRED_GEMM stringizes it), in
// XNNPACK's scheme <types>_gemm_<rows>x<cols>[c<inputs per lane>]__<isa>.
struct GemmEntry {
  WeightFormat format;
  GemmFn fn;
  const char* name;
};
#define TTLPRED_GEMM(format, fn) \
  ::ttlpred::engine::detail::GemmEntry { ::ttlpred::engine::WeightFormat::format, fn, #fn }

// The six formats every base kernel set covers, each GEMM named by the scheme above from
// the set's tile (rows x cols), the instruction set its fp32 and bf16 kernels need, the one
// of its fp16 kernels (dense and 2:4) and the one of its int8 kernels (dense c4, 2:4 c8).
#define TTLPRED_BASE_GEMMS(tile, float_isa, f16_isa, int8_isa)            \
  TTLPRED_GEMM(F32, f32_gemm_##tile##__##float_isa),                      \
      TTLPRED_GEMM(F16, f16_gemm_##tile##__##f16_isa),                    \
      TTLPRED_GEMM(BF16, bf16_gemm_##tile##__##float_isa),                \
      TTLPRED_GEMM(QS8, qu8s8_gemm_##tile##c4__##int8_isa),               \
      TTLPRED_GEMM(F16Sp24, f16_sp24_gemm_##tile##__##f16_isa),           \
      TTLPRED_GEMM(QS8Sp24, qu8s8_sp24_gemm_##tile##c8__##int8_isa)

// The int8 formats a VNNI set replaces (vpdpbusd: the full 8-bit activation grid), named
// likewise from its instruction set.
#define TTLPRED_VNNI_GEMMS(int8_isa)                           \
  TTLPRED_GEMM(QS8, qu8s8_gemm_8x32c4__##int8_isa),            \
      TTLPRED_GEMM(QS8Sp24, qu8s8_sp24_gemm_8x32c8__##int8_isa)

// `base`'s GEMMs (none when null), then `gemms`, each under its own format: an entry for a
// format `base` has replaces it.
inline KernelSet make_kernel_set(const KernelSet* base, std::initializer_list<GemmEntry> gemms,
                                 QuantizeDynamicFn quantize_dynamic, QuantizeStaticFn quantize_static, float act_qmax) {
  KernelSet s{};
  if (base) s = *base;
  for (const GemmEntry& e : gemms) {
    s.gemm[static_cast<int>(e.format)] = e.fn;
    s.gemm_name[static_cast<int>(e.format)] = e.name;
  }
  s.quantize_dynamic = quantize_dynamic;
  s.quantize_static = quantize_static;
  s.act_qmax = act_qmax;
  return s;
}

// A set built on `base`: its row quantizers, its GEMMs with `gemms` in their formats, and
// the activation range of `act_qmax` (by default the base's).
inline KernelSet extend_kernel_set(const KernelSet& base, std::initializer_list<GemmEntry> gemms, float act_qmax) {
  return make_kernel_set(&base, gemms, base.quantize_dynamic, base.quantize_static, act_qmax);
}
inline KernelSet extend_kernel_set(const KernelSet& base, std::initializer_list<GemmEntry> gemms) {
  return extend_kernel_set(base, gemms, base.act_qmax);
}

const KernelSet& scalar_kernels();
const KernelSet& avx2_kernels();
// 512-bit tiles (arch/avx512/): F+BW+VL, and with the int8 GEMMs on vpdpbusd (full 8-bit
// activations).
const KernelSet& avx512_kernels();
const KernelSet& avx512vnni_kernels();
// The VNNI set plus bf16 on vdpbf16ps (BF16Pairs weights, activations rounded to bf16).
const KernelSet& avx512bf16_kernels();
// The BF16 set with bf16 (BF16Tiles) and int8 (QS8Tiles) on AMX tiles.
const KernelSet& avx512amx_kernels();
// The same tiles on a portable model of the instructions, for checking them on any host.
const KernelSet& avx512_emulated_kernels();
const KernelSet& avx512vnni_emulated_kernels();
const KernelSet& avx512bf16_emulated_kernels();
const KernelSet& avx512amx_emulated_kernels();

}  // namespace ttlpred::engine::detail
