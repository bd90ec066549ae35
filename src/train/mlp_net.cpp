#include "train/mlp_net.hpp"

#include "model/quantile_heads.hpp"

// Built with AVX-512 enabled (the opt-in -march builds), GCC 12's avx512fintrin.h makes
// undefined vectors as `__m512 __Y = __Y;`, which -Wmaybe-uninitialized flags wherever
// Eigen inlines such an intrinsic (GCC bug 105593, fixed in GCC 13). The pragma covers the
// intrinsic headers only, as Eigen includes them here.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#pragma GCC diagnostic pop
#else
#include <Eigen/Core>
#endif

#include <algorithm>
#include <cmath>

#include "train/blas_threads.hpp"
#include "util/splitmix.hpp"
#include "util/error.hpp"

namespace ttlpred {

std::uint32_t NetShape::first_inputs() const {
  std::uint32_t n = dense_inputs;
  for (auto d : emb_dim) n += d;
  return n;
}

NetLayout::NetLayout(const NetShape& s) {
  std::size_t off = 0;
  for (std::size_t j = 0; j < s.emb_card.size(); ++j) {
    emb.push_back(off);
    off += static_cast<std::size_t>(s.emb_card[j]) * s.emb_dim[j];
  }
  embeddings_end = off;
  for (std::size_t l = 0; l < s.widths.size(); ++l) {
    weight.push_back(off);
    off += static_cast<std::size_t>(s.layer_inputs(l)) * s.widths[l];
    bias.push_back(off);
    off += s.widths[l];
  }
  total = off;
}

NetShape shape_of(const MlpModel& m) {
  NetShape s;
  s.dense_inputs = m.dense_inputs;
  for (const auto& e : m.embeddings) {
    s.emb_card.push_back(e.cardinality);
    s.emb_dim.push_back(e.dim);
  }
  for (const auto& d : m.layers) {
    s.widths.push_back(d.out);
    s.acts.push_back(d.act);
  }
  return s;
}

std::vector<float> pack_parameters(const MlpModel& m) {
  std::vector<float> p;
  for (const auto& e : m.embeddings) p.insert(p.end(), e.table.begin(), e.table.end());
  for (const auto& d : m.layers) {
    p.insert(p.end(), d.weight.begin(), d.weight.end());
    p.insert(p.end(), d.bias.begin(), d.bias.end());
  }
  return p;
}

MlpModel unpack_parameters(const NetShape& s, std::span<const float> params) {
  const NetLayout L(s);
  if (params.size() != L.total) throw Error("parameter count does not match the network shape");
  MlpModel m;
  m.dense_inputs = s.dense_inputs;
  for (std::size_t j = 0; j < s.emb_card.size(); ++j) {
    Embedding e;
    e.cardinality = s.emb_card[j];
    e.dim = s.emb_dim[j];
    const auto* p = params.data() + L.emb[j];
    e.table.assign(p, p + static_cast<std::size_t>(e.cardinality) * e.dim);
    m.embeddings.push_back(std::move(e));
  }
  for (std::size_t l = 0; l < s.widths.size(); ++l) {
    DenseLayer d;
    d.in = s.layer_inputs(l);
    d.out = s.widths[l];
    d.act = s.acts[l];
    const auto* w = params.data() + L.weight[l];
    d.weight.assign(w, w + static_cast<std::size_t>(d.in) * d.out);
    const auto* b = params.data() + L.bias[l];
    d.bias.assign(b, b + d.out);
    m.layers.push_back(std::move(d));
  }
  return m;
}

template <class T>
std::vector<T> init_parameters(const NetShape& s, std::uint64_t seed) {
  const NetLayout L(s);
  std::vector<T> p(L.total, T(0));
  SplitMix64 rng(seed);
  for (std::size_t j = 0; j < s.emb_card.size(); ++j) {
    const std::size_t n = static_cast<std::size_t>(s.emb_card[j]) * s.emb_dim[j];
    for (std::size_t i = 0; i < n; ++i) p[L.emb[j] + i] = static_cast<T>(0.05 * rng.normal());
  }
  for (std::size_t l = 0; l < s.widths.size(); ++l) {
    const std::size_t in = s.layer_inputs(l);
    // He initialization keeps ReLU activations at unit scale; the output layer starts small
    // so that the first predictions sit near the target mean.
    const bool last = l + 1 == s.widths.size();
    const double sd = last ? 0.1 / std::sqrt(static_cast<double>(in)) : std::sqrt(2.0 / static_cast<double>(in));
    for (std::size_t i = 0; i < in * s.widths[l]; ++i) p[L.weight[l] + i] = static_cast<T>(sd * rng.normal());
  }
  return p;
}

namespace {

template <class T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MapMat = Eigen::Map<RowMat<T>>;
template <class T>
using CMapMat = Eigen::Map<const RowMat<T>>;

template <class T>
void gather_inputs(const NetShape& s, const NetLayout& L, const T* params, const EncodedBatch& x,
                   std::span<const std::uint32_t> rows, AlignedVector<T>& a0) {
  const std::size_t in = s.first_inputs();
  a0.resize(rows.size() * in);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    T* dst = a0.data() + i * in;
    const float* d = x.dense_row(rows[i]);
    for (std::size_t k = 0; k < s.dense_inputs; ++k) dst[k] = static_cast<T>(d[k]);
    dst += s.dense_inputs;
    const std::uint32_t* c = x.cat_row(rows[i]);
    for (std::size_t j = 0; j < s.emb_card.size(); ++j) {
      const std::uint32_t idx = c[j] < s.emb_card[j] ? c[j] : 0;
      const T* e = params + L.emb[j] + static_cast<std::size_t>(idx) * s.emb_dim[j];
      std::copy(e, e + s.emb_dim[j], dst);
      dst += s.emb_dim[j];
    }
  }
}

template <class T>
void apply_activation(Activation act, const AlignedVector<T>& z, AlignedVector<T>& a) {
  a.resize(z.size());
  switch (act) {
    case Activation::None: std::copy(z.begin(), z.end(), a.begin()); break;
    case Activation::Relu:
      for (std::size_t i = 0; i < z.size(); ++i) a[i] = z[i] > T(0) ? z[i] : T(0);
      break;
    case Activation::LeakyRelu:
      for (std::size_t i = 0; i < z.size(); ++i) a[i] = z[i] > T(0) ? z[i] : static_cast<T>(kLeakyReluSlope) * z[i];
      break;
  }
}

// Dense layer l: z = a_prev * W^T + b.
template <class T>
void affine(const NetShape& s, const NetLayout& L, const T* params, std::size_t l, const T* a_prev, std::size_t rows,
            AlignedVector<T>& z) {
  const Eigen::Index in = s.layer_inputs(l), out = s.widths[l];
  z.resize(rows * static_cast<std::size_t>(out));
  CMapMat<T> A(a_prev, static_cast<Eigen::Index>(rows), in);
  CMapMat<T> W(params + L.weight[l], out, in);
  Eigen::Map<const Eigen::Matrix<T, 1, Eigen::Dynamic>> b(params + L.bias[l], out);
  MapMat<T> Z(z.data(), static_cast<Eigen::Index>(rows), out);
  Z.noalias() = A * W.transpose();
  Z.rowwise() += b;
}

// 64 random bits for units [4*quad, 4*quad+4) of one row and layer: 16 bits per unit, so
// that the mask costs one hash per four units. Keyed by row id, never by shard or thread.
std::uint64_t unit_bits(std::uint64_t seed, std::uint64_t step, std::uint64_t row, std::uint64_t layer, std::uint64_t quad) {
  std::uint64_t h = seed ^ (step * 0x9E3779B97F4A7C15ull);
  h = splitmix64_mix(h ^ (row * 0xC2B2AE3D27D4EB4Full));
  return splitmix64_mix(h ^ (layer << 32) ^ quad);
}

// Forward through all layers, keeping z and a per layer (and dropout masks when training).
template <class T>
void forward_all(const NetShape& s, const NetLayout& L, const T* params, const EncodedBatch& x,
                 std::span<const std::uint32_t> rows, const DropoutPlan* dropout, NetWorkspace<T>& ws,
                 const ActQuantPlan* aq) {
  const std::size_t n_layers = s.widths.size();
  ws.z.resize(n_layers);
  ws.a.resize(n_layers);
  use_single_threaded_blas();
  gather_inputs(s, L, params, x, rows, ws.a0);
  if (aq) {
    // The dense features are data: no gradient flows back into them, so no clip mask.
    const quant::ActFakeQuant& q = aq->layer_inputs[0];
    const std::size_t in = s.first_inputs();
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t k = 0; k < s.dense_inputs; ++k) {
        T& v = ws.a0[i * in + k];
        v = static_cast<T>(q(static_cast<float>(v)));
      }
    ws.qpass.resize(n_layers);
  }
  const bool drop = dropout && dropout->rate > 0.0f;
  if (drop) ws.mask.resize(n_layers);
  for (std::size_t l = 0; l < n_layers; ++l) {
    const T* prev = l == 0 ? ws.a0.data() : ws.a[l - 1].data();
    affine(s, L, params, l, prev, rows.size(), ws.z[l]);
    apply_activation(s.acts[l], ws.z[l], ws.a[l]);
    if (drop && l + 1 < n_layers) {
      const std::size_t w = s.widths[l];
      auto& m = ws.mask[l];
      m.resize(rows.size() * w);
      const T keep_scale = static_cast<T>(1.0 / (1.0 - dropout->rate));
      const std::uint64_t threshold = static_cast<std::uint64_t>(static_cast<double>(dropout->rate) * 65536.0);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        std::uint64_t bits = 0;
        for (std::size_t u = 0; u < w; ++u) {
          if (u % 4 == 0) bits = unit_bits(dropout->seed, dropout->step, rows[i], l, u / 4);
          const bool keep = (bits & 0xFFFFu) >= threshold;
          bits >>= 16;
          m[i * w + u] = keep ? keep_scale : T(0);
        }
      }
      for (std::size_t k = 0; k < m.size(); ++k) ws.a[l][k] *= m[k];
    }
    if (aq && l + 1 < n_layers) {
      const quant::ActFakeQuant& q = aq->layer_inputs[l + 1];
      auto& a = ws.a[l];
      auto& pass = ws.qpass[l];
      pass.resize(a.size());
      for (std::size_t k = 0; k < a.size(); ++k) {
        const float v = static_cast<float>(a[k]);
        pass[k] = q.passes(v) ? T(1) : T(0);
        a[k] = static_cast<T>(q(v));
      }
    }
  }
}

}  // namespace

template <class T>
void net_forward(const NetShape& s, const NetLayout& L, const T* params, const EncodedBatch& x,
                 std::span<const std::uint32_t> rows, NetWorkspace<T>& ws, T* out, const ActQuantPlan* aq) {
  forward_all(s, L, params, x, rows, nullptr, ws, aq);
  std::copy(ws.a.back().begin(), ws.a.back().end(), out);
}

template <class T>
double net_backward(const NetShape& s, const NetLayout& L, const T* params, const EncodedBatch& x,
                    std::span<const std::uint32_t> rows, const float* y, T grad_scale, const DropoutPlan& dropout,
                    NetWorkspace<T>& ws, const ActQuantPlan* aq, const std::uint8_t* lower_bound,
                    const QuantileLoss* quantiles) {
  const std::size_t k = quantiles ? quantiles->levels.size() : 0;
  const std::size_t width = s.widths.back();
  if (width != 1 + k)
    throw Error("training: the network has " + std::to_string(width) + " outputs for 1 mean and " + std::to_string(k) +
                " quantile heads");
  forward_all(s, L, params, x, rows, &dropout, ws, aq);
  const std::size_t n = rows.size();
  const std::size_t n_layers = s.widths.size();
  const bool drop = dropout.rate > 0.0f;
  ws.grad.resize(L.total);
  // Output layer: d/dz of scale * (z - y)^2, and of the heads' scale * weight * pinball.
  double sse = 0.0;
  ws.dz.resize(n * width);
  const auto& out = ws.a.back();
  const T head_scale = k ? grad_scale * static_cast<T>(quantiles->weight) : T(0);
  for (std::size_t i = 0; i < n; ++i) {
    const T* o = out.data() + i * width;
    T* d = ws.dz.data() + i * width;
    const bool bound = lower_bound && lower_bound[i];
    T e = o[0] - static_cast<T>(y[i]);
    if (bound && e > T(0)) e = T(0);  // above a lower bound: no error
    sse += static_cast<double>(e) * static_cast<double>(e);
    d[0] = T(2) * grad_scale * e;
    if (k) {
      quantile_heads_loss<T>(o + 1, quantiles->levels, static_cast<T>(y[i]), bound, d + 1);
      for (std::size_t j = 1; j <= k; ++j) d[j] *= head_scale;
    }
  }
  for (std::size_t l = n_layers; l-- > 0;) {
    const Eigen::Index in = s.layer_inputs(l), outw = s.widths[l];
    const T* a_prev = l == 0 ? ws.a0.data() : ws.a[l - 1].data();
    CMapMat<T> A(a_prev, static_cast<Eigen::Index>(n), in);
    CMapMat<T> dZ(ws.dz.data(), static_cast<Eigen::Index>(n), outw);
    MapMat<T> dW(ws.grad.data() + L.weight[l], outw, in);
    Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>> db(ws.grad.data() + L.bias[l], outw);
    dW.noalias() = dZ.transpose() * A;
    db = dZ.colwise().sum();
    // d/d(a_prev), then through the previous layer's dropout mask and activation.
    auto& dA = l == 0 ? ws.da0 : ws.dprev;
    dA.resize(n * static_cast<std::size_t>(in));
    MapMat<T> dAm(dA.data(), static_cast<Eigen::Index>(n), in);
    CMapMat<T> W(params + L.weight[l], outw, in);
    dAm.noalias() = dZ * W;
    if (l == 0) break;
    const auto& zp = ws.z[l - 1];
    const Activation act = s.acts[l - 1];
    if (aq)
      for (std::size_t k = 0; k < dA.size(); ++k) dA[k] *= ws.qpass[l - 1][k];
    if (drop)
      for (std::size_t k = 0; k < dA.size(); ++k) dA[k] *= ws.mask[l - 1][k];
    for (std::size_t k = 0; k < dA.size(); ++k) {
      if (act == Activation::Relu) {
        if (!(zp[k] > T(0))) dA[k] = T(0);
      } else if (act == Activation::LeakyRelu) {
        if (!(zp[k] > T(0))) dA[k] *= static_cast<T>(kLeakyReluSlope);
      }
    }
    std::swap(ws.dz, ws.dprev);
  }
  return sse;
}

template <class T>
void add_embedding_gradients(const NetShape& s, const NetLayout& L, const EncodedBatch& x,
                             std::span<const std::uint32_t> rows, const NetWorkspace<T>& ws, T* grad) {
  const std::size_t in = s.first_inputs();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const T* d = ws.da0.data() + i * in + s.dense_inputs;
    const std::uint32_t* c = x.cat_row(rows[i]);
    for (std::size_t j = 0; j < s.emb_card.size(); ++j) {
      const std::uint32_t idx = c[j] < s.emb_card[j] ? c[j] : 0;
      T* g = grad + L.emb[j] + static_cast<std::size_t>(idx) * s.emb_dim[j];
      for (std::size_t k = 0; k < s.emb_dim[j]; ++k) g[k] += d[k];
      d += s.emb_dim[j];
    }
  }
}

template <class T>
double net_loss_and_gradient(const NetShape& s, const T* params, const EncodedBatch& x,
                             std::span<const std::uint32_t> rows, const float* y, std::vector<T>& grad,
                             const std::uint8_t* lower_bound, const QuantileLoss* quantiles) {
  const NetLayout L(s);
  NetWorkspace<T> ws;
  const AlignedVector<T> p(params, params + L.total);
  double loss = net_backward<T>(s, L, p.data(), x, rows, y, T(1), DropoutPlan{}, ws, nullptr, lower_bound, quantiles);
  grad.assign(ws.grad.begin(), ws.grad.end());
  std::fill(grad.begin(), grad.begin() + static_cast<std::ptrdiff_t>(L.embeddings_end), T(0));
  add_embedding_gradients<T>(s, L, x, rows, ws, grad.data());
  if (quantiles && !quantiles->levels.empty()) {
    // net_backward returns the squared errors alone; the heads' part of the same loss.
    const std::size_t width = s.widths.back();
    const auto& out = ws.a.back();
    for (std::size_t i = 0; i < rows.size(); ++i)
      loss += static_cast<double>(quantiles->weight) *
              static_cast<double>(quantile_heads_loss<T>(out.data() + i * width + 1, quantiles->levels,
                                                         static_cast<T>(y[i]), lower_bound && lower_bound[i], nullptr));
  }
  return loss;
}

#define TTLPRED_INSTANTIATE(T)                                                                                   \
  template std::vector<T> init_parameters<T>(const NetShape&, std::uint64_t);                                    \
  template void net_forward<T>(const NetShape&, const NetLayout&, const T*, const EncodedBatch&,                 \
                               std::span<const std::uint32_t>, NetWorkspace<T>&, T*, const ActQuantPlan*);                            \
  template double net_backward<T>(const NetShape&, const NetLayout&, const T*, const EncodedBatch&,              \
                                  std::span<const std::uint32_t>, const float*, T, const DropoutPlan&,           \
                                  NetWorkspace<T>&, const ActQuantPlan*, const std::uint8_t*,                   \
                                  const QuantileLoss*);                                                         \
  template void add_embedding_gradients<T>(const NetShape&, const NetLayout&, const EncodedBatch&,               \
                                           std::span<const std::uint32_t>, const NetWorkspace<T>&, T*);          \
  template double net_loss_and_gradient<T>(const NetShape&, const T*, const EncodedBatch&,                       \
                                           std::span<const std::uint32_t>, const float*, std::vector<T>&,        \
                                           const std::uint8_t*, const QuantileLoss*);
TTLPRED_INSTANTIATE(float)
TTLPRED_INSTANTIATE(double)
#undef TTLPRED_INSTANTIATE

}  // namespace ttlpred
