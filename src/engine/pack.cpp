#include "engine/pack.hpp"

#include <algorithm>
#include <cmath>

#include "quant/half.hpp"
#include "quant/fake_quant.hpp"
#include "quant/sparse24.hpp"

namespace ttlpred::engine::detail {

namespace {

std::uint32_t round_up(std::uint32_t v, std::uint32_t m) { return (v + m - 1) / m * m; }

// Per-column symmetric int8 quantization of the whole view (quant/fake_quant.hpp):
// q[o*in + k], scale per column.
void quantize_weights(const WeightView& v, std::vector<std::int8_t>& q, std::vector<float>& scale) {
  q.assign(std::size_t{v.out} * v.in, 0);
  scale.assign(v.out, 1.0f);
  quant::quantize_weight_rows(v.w, v.ld, v.out, v.in, q.data(), v.in, scale.data());
}

// The two kept inputs (absolute indices) of group g of column o.
void kept_pair(const WeightView& v, std::uint32_t o, std::uint32_t g, int& a, int& b) {
  float w[4] = {};
  const std::uint32_t n = std::min<std::uint32_t>(4, v.in - std::min(v.in, 4 * g));
  for (std::uint32_t t = 0; t < n; ++t) w[t] = v.at(o, 4 * g + t);
  quant::top2_of_group(w, n, a, b);
}

}  // namespace

void LayerStore::bind() {
  packed.weights = weights.get();
  packed.aux = aux.get();
  packed.bias = bias.data();
  packed.col_scale = col_scale.empty() ? nullptr : col_scale.data();
  packed.wsum = wsum.empty() ? nullptr : wsum.data();
}

std::size_t LayerStore::bytes() const { return weights.size() + aux.size() + 4 * (bias.size() + col_scale.size() + wsum.size()); }

LayerStore pack_layer(const WeightView& v, const float* bias, Activation act, WeightFormat format) {
  LayerStore s;
  PackedLayer& p = s.packed;
  p.format = format;
  p.in = v.in;
  p.out = v.out;
  p.act = act;
  p.panels = (v.out + kPanel - 1) / kPanel;
  const std::uint32_t cols = p.cols_padded();
  s.bias.assign(cols, 0.0f);
  std::copy(bias, bias + v.out, s.bias.begin());
  auto col_ok = [&](std::uint32_t n) { return n < v.out; };

  switch (format) {
    case WeightFormat::F32:
    case WeightFormat::F16:
    case WeightFormat::BF16: {
      p.in_padded = v.in;
      const std::size_t n = std::size_t{p.panels} * v.in * kPanel;
      if (format == WeightFormat::F32) {
        s.weights = AlignedBuffer(n * sizeof(float));
        float* w = s.weights.as<float>();
        for (std::uint32_t pn = 0; pn < p.panels; ++pn)
          for (std::uint32_t k = 0; k < v.in; ++k)
            for (std::uint32_t i = 0; i < kPanel; ++i)
              if (col_ok(pn * kPanel + i)) w[(std::size_t{pn} * v.in + k) * kPanel + i] = v.at(pn * kPanel + i, k);
      } else {
        s.weights = AlignedBuffer(n * sizeof(std::uint16_t));
        std::uint16_t* w = s.weights.as<std::uint16_t>();
        for (std::uint32_t pn = 0; pn < p.panels; ++pn)
          for (std::uint32_t k = 0; k < v.in; ++k)
            for (std::uint32_t i = 0; i < kPanel; ++i)
              if (col_ok(pn * kPanel + i)) {
                const float f = v.at(pn * kPanel + i, k);
                // bf16: column i < 8 in the low half of 32-bit slot i, column 8+i in its high
                // half, so one load widens to 16 floats with a shift and a mask.
                const std::uint32_t slot = format == WeightFormat::F16 ? i : bf16_slot(i);
                w[(std::size_t{pn} * v.in + k) * kPanel + slot] =
                    format == WeightFormat::F16 ? quant::float_to_half(f) : quant::float_to_bf16(f);
              }
      }
      break;
    }
    case WeightFormat::BF16Pairs:
    case WeightFormat::BF16Tiles: {
      p.in_padded = round_up(v.in, format == WeightFormat::BF16Pairs ? 2 : 32);
      s.weights = AlignedBuffer(std::size_t{p.panels} * p.in_padded * kPanel * sizeof(std::uint16_t));
      std::uint16_t* w = s.weights.as<std::uint16_t>();
      for (std::uint32_t pn = 0; pn < p.panels; ++pn)
        for (std::uint32_t k = 0; k < v.in; ++k)
          for (std::uint32_t i = 0; i < kPanel; ++i)
            if (col_ok(pn * kPanel + i))
              w[((std::size_t{pn} * (p.in_padded / 2) + k / 2) * kPanel + i) * 2 + k % 2] =
                  quant::float_to_bf16(v.at(pn * kPanel + i, k));
      break;
    }
    case WeightFormat::QS8:
    case WeightFormat::QS8Tiles:
    case WeightFormat::QS8Sp24: {
      std::vector<std::int8_t> q;
      std::vector<float> scale;
      quantize_weights(v, q, scale);
      s.col_scale.assign(cols, 0.0f);
      s.wsum.assign(cols, 0.0f);
      for (std::uint32_t o = 0; o < v.out; ++o) {
        s.col_scale[o] = scale[o];
        std::int32_t sum = 0;
        for (std::uint32_t k = 0; k < v.in; ++k) sum += q[std::size_t{o} * v.in + k];
        s.wsum[o] = static_cast<float>(sum);  // pruned weights are already zero here
      }
      auto qat = [&](std::uint32_t o, std::uint32_t k) -> std::int8_t {
        return o < v.out && k < v.in ? q[std::size_t{o} * v.in + k] : std::int8_t{0};
      };
      if (format != WeightFormat::QS8Sp24) {
        p.in_padded = round_up(v.in, format == WeightFormat::QS8 ? 4 : 64);
        const std::uint32_t groups = p.in_padded / 4;
        s.weights = AlignedBuffer(std::size_t{p.panels} * groups * kPanel * 4);
        std::int8_t* w = s.weights.as<std::int8_t>();
        for (std::uint32_t pn = 0; pn < p.panels; ++pn)
          for (std::uint32_t g = 0; g < groups; ++g)
            for (std::uint32_t i = 0; i < kPanel; ++i)
              for (std::uint32_t t = 0; t < 4; ++t)
                w[((std::size_t{pn} * groups + g) * kPanel + i) * 4 + t] = qat(pn * kPanel + i, 4 * g + t);
      } else {
        p.in_padded = round_up(v.in, 8);
        const std::uint32_t groups = p.in_padded / 8;
        s.weights = AlignedBuffer(std::size_t{p.panels} * groups * kPanel * 4);
        s.aux = AlignedBuffer(std::size_t{p.panels} * groups * kPanel);
        std::int8_t* w = s.weights.as<std::int8_t>();
        std::uint8_t* codes = s.aux.as<std::uint8_t>();
        for (std::uint32_t pn = 0; pn < p.panels; ++pn)
          for (std::uint32_t g = 0; g < groups; ++g)
            for (std::uint32_t i = 0; i < kPanel; ++i) {
              const std::uint32_t o = pn * kPanel + i;
              const std::size_t at = (std::size_t{pn} * groups + g) * kPanel + i;
              std::uint8_t code = 0;
              for (std::uint32_t half = 0; half < 2; ++half) {
                int a = 0, b = 1;
                if (o < v.out) kept_pair(v, o, 2 * g + half, a, b);
                const std::uint32_t base = 8 * g + 4 * half;
                w[at * 4 + 2 * half] = qat(o, base + static_cast<std::uint32_t>(a));
                w[at * 4 + 2 * half + 1] = qat(o, base + static_cast<std::uint32_t>(b));
                code = static_cast<std::uint8_t>(code | (a << (4 * half)) | (b << (4 * half + 2)));
              }
              codes[at] = code;
            }
      }
      break;
    }
    case WeightFormat::F16Sp24: {
      p.in_padded = round_up(v.in, 4);
      const std::uint32_t groups = p.in_padded / 4;
      s.weights = AlignedBuffer(std::size_t{p.panels} * groups * 2 * kPanel * sizeof(std::uint16_t));
      s.aux = AlignedBuffer(std::size_t{p.panels} * groups * sizeof(std::uint64_t));
      std::uint16_t* w = s.weights.as<std::uint16_t>();
      std::uint64_t* idx = s.aux.as<std::uint64_t>();
      for (std::uint32_t pn = 0; pn < p.panels; ++pn)
        for (std::uint32_t g = 0; g < groups; ++g) {
          std::uint64_t bits = 0;
          const std::size_t at = std::size_t{pn} * groups + g;
          for (std::uint32_t i = 0; i < kPanel; ++i) {
            const std::uint32_t o = pn * kPanel + i;
            int a = 0, b = 1;
            float va = 0.0f, vb = 0.0f;
            if (o < v.out) {
              kept_pair(v, o, g, a, b);
              if (4 * g + static_cast<std::uint32_t>(a) < v.in) va = v.at(o, 4 * g + static_cast<std::uint32_t>(a));
              if (4 * g + static_cast<std::uint32_t>(b) < v.in) vb = v.at(o, 4 * g + static_cast<std::uint32_t>(b));
            }
            w[at * 2 * kPanel + i] = quant::float_to_half(va);
            w[at * 2 * kPanel + kPanel + i] = quant::float_to_half(vb);
            bits |= (std::uint64_t(a) << (4 * i)) | (std::uint64_t(b) << (4 * i + 2));
          }
          idx[at] = bits;
        }
      break;
    }
  }
  s.bind();
  return s;
}

}  // namespace ttlpred::engine::detail
