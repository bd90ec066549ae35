#include "engine/cuda/cuda_pack.hpp"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <string>

#include "util/error.hpp"

namespace ttlpred::cuda {
namespace {

// std::bit_cast without needing g++ >= 11 on the GPU machines that build this standalone.
template <class To, class From>
To bits_as(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

[[noreturn]] void fail(const std::string& what) { throw Error("CUDA backend: model " + what); }

bool all_finite(const std::vector<float>& v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

}  // namespace

void validate_model(const MlpModel& model) {
  if (model.layers.empty()) fail("has no layers");
  for (std::size_t j = 0; j < model.embeddings.size(); ++j) {
    const Embedding& e = model.embeddings[j];
    const std::string name = "embedding " + std::to_string(j);
    if (e.cardinality == 0) fail(name + ": cardinality is 0 (the OOV row 0 must exist)");
    if (e.dim == 0) fail(name + ": dim is 0");
    if (e.table.size() != static_cast<std::size_t>(e.cardinality) * e.dim)
      fail(name + ": table has " + std::to_string(e.table.size()) + " values, expected cardinality x dim = " +
           std::to_string(static_cast<std::size_t>(e.cardinality) * e.dim));
    if (!all_finite(e.table)) fail(name + ": table holds a non-finite value");
  }
  std::uint32_t expected_in = model.first_layer_inputs();
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const DenseLayer& d = model.layers[l];
    const std::string name = "layer " + std::to_string(l);
    if (d.in == 0 || d.out == 0) fail(name + ": in and out must be > 0");
    if (d.in != expected_in)
      fail(name + ": in = " + std::to_string(d.in) + " but its input has " + std::to_string(expected_in) + " values");
    if (d.weight.size() != static_cast<std::size_t>(d.in) * d.out)
      fail(name + ": weight has " + std::to_string(d.weight.size()) + " values, expected out x in");
    if (d.bias.size() != d.out) fail(name + ": bias has " + std::to_string(d.bias.size()) + " values, expected out");
    if (d.act != Activation::None && d.act != Activation::Relu && d.act != Activation::LeakyRelu)
      fail(name + ": unknown activation " + std::to_string(static_cast<int>(d.act)));
    if (!all_finite(d.weight) || !all_finite(d.bias)) fail(name + ": weight or bias holds a non-finite value");
    expected_in = d.out;
  }
}

std::uint16_t float_to_half_bits(float x) {
  const auto f = bits_as<std::uint32_t>(x);
  const std::uint32_t sign = (f >> 16) & 0x8000u;
  const std::uint32_t exp = (f >> 23) & 0xffu;
  std::uint32_t mant = f & 0x7fffffu;
  if (exp == 0xffu) return static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;  // half subnormals count units of 2^-24
    std::uint32_t h = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;  // a carry into the exponent is right
    return static_cast<std::uint16_t>(sign | h);
  }
  std::uint32_t h = sign | (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // rounds up to inf at the top, as it should
  return static_cast<std::uint16_t>(h);
}

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = (static_cast<std::uint32_t>(h) & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return bits_as<float>(sign | 0x7f800000u | (mant << 13));
  return bits_as<float>(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

std::int8_t quantize_int8(float x, float scale) {
  const float q = std::nearbyint(x / scale);
  return static_cast<std::int8_t>(std::clamp(q, -127.0f, 127.0f));
}

std::vector<PackedLayer> pack_layers(const MlpModel& model) {
  validate_model(model);
  std::vector<PackedLayer> packed;
  packed.reserve(model.layers.size());
  for (const DenseLayer& d : model.layers) {
    PackedLayer p;
    p.in = d.in;
    p.out = d.out;
    p.in_pad = pad_width(d.in);
    p.out_pad = pad_width(d.out);
    p.act = d.act;
    const std::size_t n = static_cast<std::size_t>(p.out_pad) * p.in_pad;
    p.weight_f32.assign(n, 0.0f);
    p.bias_f32.assign(p.out_pad, 0.0f);
    p.weight_i8.assign(n, 0);
    p.weight_scale.assign(p.out_pad, 1.0f);
    for (std::uint32_t o = 0; o < d.out; ++o) {
      float absmax = 0.0f;
      for (std::uint32_t i = 0; i < d.in; ++i) {
        const float w = d.weight[static_cast<std::size_t>(o) * d.in + i];
        p.weight_f32[static_cast<std::size_t>(o) * p.in_pad + i] = w;
        absmax = std::max(absmax, std::fabs(w));
      }
      p.bias_f32[o] = d.bias[o];
      const float scale = absmax > 0.0f ? absmax / 127.0f : 1.0f;
      p.weight_scale[o] = scale;
      for (std::uint32_t i = 0; i < d.in; ++i) {
        const std::size_t k = static_cast<std::size_t>(o) * p.in_pad + i;
        p.weight_i8[k] = quantize_int8(p.weight_f32[k], scale);
      }
    }
    p.weight_f16.resize(n);
    std::transform(p.weight_f32.begin(), p.weight_f32.end(), p.weight_f16.begin(), float_to_half_bits);
    p.bias_f16.resize(p.out_pad);
    std::transform(p.bias_f32.begin(), p.bias_f32.end(), p.bias_f16.begin(), float_to_half_bits);
    packed.push_back(std::move(p));
  }
  return packed;
}

PackedEmbeddings pack_embeddings(const MlpModel& model) {
  validate_model(model);
  PackedEmbeddings pe;
  for (std::uint32_t j = 0; j < model.embeddings.size(); ++j) {
    const Embedding& e = model.embeddings[j];
    pe.table_offset.push_back(static_cast<std::uint32_t>(pe.tables.size()));
    pe.dim.push_back(e.dim);
    pe.cardinality.push_back(e.cardinality);
    pe.tables.insert(pe.tables.end(), e.table.begin(), e.table.end());
    for (std::uint32_t c = 0; c < e.dim; ++c) {
      pe.column_table.push_back(j);
      pe.column_component.push_back(c);
    }
  }
  return pe;
}

void gather_first_layer_input(const MlpModel& model, const float* dense, const std::uint32_t* cats,
                              double* row_out) {
  std::size_t k = 0;
  for (std::uint32_t i = 0; i < model.dense_inputs; ++i) row_out[k++] = dense[i];
  for (std::size_t j = 0; j < model.embeddings.size(); ++j) {
    const Embedding& e = model.embeddings[j];
    const std::uint32_t idx = cats[j] < e.cardinality ? cats[j] : 0u;
    for (std::uint32_t c = 0; c < e.dim; ++c) row_out[k++] = e.table[static_cast<std::size_t>(idx) * e.dim + c];
  }
}

std::vector<double> reference_forward(const MlpModel& model, const float* dense, const std::uint32_t* cats,
                                      std::size_t rows, std::vector<double>* layer_input_range) {
  validate_model(model);
  const std::size_t L = model.layers.size();
  if (layer_input_range) {
    layer_input_range->assign(2 * L, 0.0);
    for (std::size_t l = 0; l < L; ++l) {
      (*layer_input_range)[2 * l] = HUGE_VAL;
      (*layer_input_range)[2 * l + 1] = -HUGE_VAL;
    }
  }
  const std::size_t n_out = model.layers.back().out;
  const std::size_t n_cat = model.embeddings.size();
  std::vector<double> out(rows * n_out);
  std::vector<double> x(model.first_layer_inputs()), y;
  for (std::size_t r = 0; r < rows; ++r) {
    x.resize(model.first_layer_inputs());
    gather_first_layer_input(model, dense + r * model.dense_inputs, n_cat ? cats + r * n_cat : nullptr, x.data());
    for (std::size_t l = 0; l < L; ++l) {
      const DenseLayer& d = model.layers[l];
      if (layer_input_range) {
        for (double v : x) {
          (*layer_input_range)[2 * l] = std::min((*layer_input_range)[2 * l], v);
          (*layer_input_range)[2 * l + 1] = std::max((*layer_input_range)[2 * l + 1], v);
        }
      }
      y.assign(d.out, 0.0);
      for (std::uint32_t o = 0; o < d.out; ++o) {
        double s = d.bias[o];
        for (std::uint32_t i = 0; i < d.in; ++i) s += static_cast<double>(d.weight[static_cast<std::size_t>(o) * d.in + i]) * x[i];
        y[o] = activate(s, d.act);
      }
      x.swap(y);
    }
    std::copy(x.begin(), x.end(), out.begin() + static_cast<std::ptrdiff_t>(r * n_out));
  }
  return out;
}

std::vector<float> calibrate_activation_scales(const MlpModel& model, const EncodedBatch& calibration) {
  validate_model(model);
  if (calibration.rows == 0) throw Error("int8-static calibration: the calibration batch has no rows");
  if (calibration.dense_width != model.dense_inputs || calibration.cat_width != model.embeddings.size())
    throw Error("int8-static calibration: batch has " + std::to_string(calibration.dense_width) + " dense and " +
                std::to_string(calibration.cat_width) + " categorical columns, the model expects " +
                std::to_string(model.dense_inputs) + " and " + std::to_string(model.embeddings.size()));
  if (calibration.dense.size() != calibration.rows * calibration.dense_width ||
      calibration.cats.size() != calibration.rows * calibration.cat_width)
    throw Error("int8-static calibration: batch arrays do not hold rows x width values");
  std::vector<double> range;
  reference_forward(model, calibration.dense.data(), calibration.cats.data(), calibration.rows, &range);
  std::vector<float> scales(model.layers.size());
  for (std::size_t l = 0; l < scales.size(); ++l) {
    const double absmax = std::max(std::fabs(range[2 * l]), std::fabs(range[2 * l + 1]));
    scales[l] = absmax > 0.0 ? static_cast<float>(absmax / 127.0) : 1.0f;
  }
  return scales;
}

}  // namespace ttlpred::cuda
