#pragma once
// The trainable network behind train_mlp: all parameters in one flat array (embedding
// tables, then per layer weight out x in row-major and bias), so that the optimizer, the
// shard reduction and "restore best weights" are plain array operations. Templated on the
// scalar so that tests can check the backward pass in double against finite differences;
// the trainer uses float. Matrix products go through Eigen over OpenBLAS (in mlp_net.cpp
// only: no Eigen type crosses this header, so other targets never see Eigen compiled with
// other flags).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model/model_input.hpp"
#include "model/mlp.hpp"
#include "quant/fake_quant.hpp"
#include "util/aligned_vector.hpp"

namespace ttlpred {

struct NetShape {
  std::uint32_t dense_inputs = 0;
  std::vector<std::uint32_t> emb_card, emb_dim;  // per categorical column
  std::vector<std::uint32_t> widths;  // outputs of each layer, the last is 1 + quantile heads
  std::vector<Activation> acts;       // per layer, the last is None

  std::uint32_t first_inputs() const;
  std::uint32_t layer_inputs(std::size_t l) const { return l == 0 ? first_inputs() : widths[l - 1]; }
};

// Offsets of each block in the flat parameter array.
struct NetLayout {
  std::vector<std::size_t> emb;      // table j starts here
  std::vector<std::size_t> weight;   // layer l weight
  std::vector<std::size_t> bias;     // layer l bias
  std::size_t embeddings_end = 0;    // [0, embeddings_end) are embedding tables
  std::size_t total = 0;
  explicit NetLayout(const NetShape& s);
};

NetShape shape_of(const MlpModel& m);
// Flat parameters <-> MlpModel (same layout as NetLayout).
std::vector<float> pack_parameters(const MlpModel& m);
MlpModel unpack_parameters(const NetShape& s, std::span<const float> params);

// He-style initialization, deterministic for `seed`.
template <class T>
std::vector<T> init_parameters(const NetShape& s, std::uint64_t seed);

struct DropoutPlan {
  float rate = 0.0f;       // 0 = off
  std::uint64_t seed = 0;  // mixed with step and row id, so masks do not depend on sharding
  std::uint64_t step = 0;
};

// Fake quantization of every layer's input (layer 0: its dense columns only), as an
// int8-static plan rounds them: quantization-aware training (train/compression.hpp).
struct ActQuantPlan {
  std::vector<quant::ActFakeQuant> layer_inputs;  // one per layer
};

// The quantile heads' part of the loss (model/quantile_heads.hpp): each row's pinball losses
// at `levels`, times `weight`, added to the mean output's squared error. The network's last
// layer then has 1 + levels.size() outputs.
struct QuantileLoss {
  std::span<const float> levels;
  float weight = 1.0f;
};

// Scratch buffers of one shard; reused across steps so that training does not allocate.
template <class T>
struct NetWorkspace {
  AlignedVector<T> a0;                  // rows x first_inputs
  std::vector<AlignedVector<T>> z, a;   // per layer, rows x width (pre/post activation)
  std::vector<AlignedVector<T>> mask;   // per hidden layer when dropout is on
  std::vector<AlignedVector<T>> qpass;  // per hidden layer under QAT: 1 where rounding did not clip
  AlignedVector<T> dz, dprev;           // backward scratch
  AlignedVector<T> da0;                 // d loss / d a0, rows x first_inputs
  AlignedVector<T> grad;                // layer-parameter gradients (embedding part unused)
};

// `params` should be 64-byte aligned (AlignedVector) for results that do not depend on
// where the buffer lies.
// Forward pass of `rows` (indices into x): out[i * W + o] = network output o for x row
// rows[i], W = the last layer's width.
// Category indices at or above a table's cardinality read the OOV row 0. `act_quant`
// (optional) fake-quantizes each layer's input.
template <class T>
void net_forward(const NetShape& s, const NetLayout& L, const T* params, const EncodedBatch& x,
                 std::span<const std::uint32_t> rows, NetWorkspace<T>& ws, T* out,
                 const ActQuantPlan* act_quant = nullptr);

// Forward + backward on `rows` with targets y (parallel to rows). Returns the sum of squared
// errors; sets ws.grad (size L.total; the layer blocks) to the gradient of
// grad_scale * sum (out - y)^2 and leaves its d/d(a0) in ws.da0 for the embeddings.
// `lower_bound` (optional, parallel to rows): where non-zero, y is only a lower bound on the
// target (a censored outcome: the job was killed at its limit), and the error counts only
// when out < y: the loss max(0, y - out)^2, which never pulls a prediction down to the bound.
// `quantiles` (optional): outputs 1..K are quantile heads whose weighted pinball losses join
// the gradient (not the returned sum); the last layer's width must be 1 + K.
template <class T>
double net_backward(const NetShape& s, const NetLayout& L, const T* params, const EncodedBatch& x,
                    std::span<const std::uint32_t> rows, const float* y, T grad_scale, const DropoutPlan& dropout,
                    NetWorkspace<T>& ws, const ActQuantPlan* act_quant = nullptr,
                    const std::uint8_t* lower_bound = nullptr, const QuantileLoss* quantiles = nullptr);

// Adds the embedding-table gradients of a finished net_backward into grad[0, embeddings_end).
template <class T>
void add_embedding_gradients(const NetShape& s, const NetLayout& L, const EncodedBatch& x,
                             std::span<const std::uint32_t> rows, const NetWorkspace<T>& ws, T* grad);

// Loss and full gradient (layers and embeddings) on one shard: the gradient-check entry. The
// loss is the squared errors' sum plus, with `quantiles`, the weighted pinball losses' sum.
template <class T>
double net_loss_and_gradient(const NetShape& s, const T* params, const EncodedBatch& x,
                             std::span<const std::uint32_t> rows, const float* y, std::vector<T>& grad,
                             const std::uint8_t* lower_bound = nullptr, const QuantileLoss* quantiles = nullptr);

}  // namespace ttlpred
