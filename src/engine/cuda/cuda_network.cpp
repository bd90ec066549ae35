// The lane and the parts every CUDA network implementation shares.
#include "engine/cuda/cuda_network.hpp"

#include <algorithm>

namespace ttlpred::cuda::detail {

Lane::Lane(const NetworkShape& shape, int device, std::size_t max_batch) {
  TTLPRED_CUDA_CHECK(cudaSetDevice(device));
  TTLPRED_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const cublasStatus_t st = cublasLtCreate(&lt);
  if (st != CUBLAS_STATUS_SUCCESS) {
    (void)cudaStreamDestroy(stream);
    detail::throw_cublas("cublasLtCreate(&lt)", st, __FILE__, __LINE__);
  }
  try {
    const std::size_t B = max_batch;
    workspace = DeviceBuffer(kLtWorkspaceBytes);
    d_dense = DeviceBuffer(B * shape.dense_inputs * sizeof(float));
    d_cats = DeviceBuffer(B * shape.n_cat * sizeof(std::uint32_t));
    d_out = DeviceBuffer(B * shape.n_out * sizeof(float));
    h_dense = PinnedBuffer(B * shape.dense_inputs * sizeof(float));
    h_cats = PinnedBuffer(B * shape.n_cat * sizeof(std::uint32_t));
    h_out = PinnedBuffer(B * shape.n_out * sizeof(float));
    act[0] = DeviceBuffer(B * shape.act_bytes_per_row);
    act[1] = DeviceBuffer(B * shape.act_bytes_per_row);
    acc_i32 = DeviceBuffer(B * shape.acc_bytes_per_row);
  } catch (...) {
    (void)cublasLtDestroy(lt);
    (void)cudaStreamDestroy(stream);
    throw;
  }
}

Lane::~Lane() {
  (void)cudaStreamSynchronize(stream);
  (void)cublasLtDestroy(lt);
  (void)cudaStreamDestroy(stream);
}

NetworkShape io_shape(const MlpModel& model, const PackedEmbeddings& emb) {
  NetworkShape s;
  s.dense_inputs = model.dense_inputs;
  s.n_cat = model.embeddings.size();
  s.n_out = model.layers.back().out;
  s.cardinality = emb.cardinality;
  return s;
}

DeviceEmbeddings::DeviceEmbeddings(const PackedEmbeddings& emb, bool with_folded)
    : tables(DeviceBuffer::from(emb.tables)),
      offset(DeviceBuffer::from(emb.table_offset)),
      dim(DeviceBuffer::from(emb.dim)),
      card(DeviceBuffer::from(emb.cardinality)),
      col_table(DeviceBuffer::from(emb.column_table)),
      col_comp(DeviceBuffer::from(emb.column_component)) {
  if (with_folded && !emb.cardinality.empty()) {
    folded = DeviceBuffer::from(emb.folded);
    folded_offset = DeviceBuffer::from(emb.folded_offset);
  }
}

GatherArgs DeviceEmbeddings::gather(const NetworkShape& shape, std::uint32_t in, std::uint32_t in_pad) const {
  GatherArgs g;
  g.dense_inputs = static_cast<std::uint32_t>(shape.dense_inputs);
  g.n_cat = static_cast<std::uint32_t>(shape.n_cat);
  g.tables = tables.as<float>();
  g.table_offset = offset.as<std::uint32_t>();
  g.dim = dim.as<std::uint32_t>();
  g.cardinality = card.as<std::uint32_t>();
  g.column_table = col_table.as<std::uint32_t>();
  g.column_component = col_comp.as<std::uint32_t>();
  g.in = in;
  g.in_pad = in_pad;
  return g;
}

GatherArgs on_lane(GatherArgs g, const Lane& lane) {
  g.dense = lane.d_dense.as<float>();
  g.cats = lane.d_cats.as<std::uint32_t>();
  return g;
}

DeviceFinalLayer::DeviceFinalLayer(const PackedLayer& last, bool int8)
    : in_pad(last.in_pad), out(last.out), act(last.act) {
  std::vector<float> weights(static_cast<std::size_t>(last.out) * last.in_pad);
  if (int8)
    weights = last.weight_dequant;
  else
    std::copy_n(last.weight_f32.begin(), weights.size(), weights.begin());  // the first `out` padded rows
  w = DeviceBuffer::from(weights);
  b = DeviceBuffer::from(std::vector<float>(last.bias_f32.begin(), last.bias_f32.begin() + last.out));
}

std::uint32_t widest_activation(const std::vector<PackedLayer>& layers) {
  std::uint32_t widest = std::max(layers.front().in_pad, layers.front().q_in_pad);
  for (const PackedLayer& l : layers) widest = std::max(widest, l.out_pad);
  return widest;
}

}  // namespace ttlpred::cuda::detail
