#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <onnx/checker.h>

#include "interop/onnx_graph.hpp"
#include "quant/activation_ranges.hpp"
#include "quant/fake_quant.hpp"
#include "util/error.hpp"

namespace ttlpred::interop {

namespace {

void add_float_tensor(onnx::GraphProto& g, const std::string& name, std::vector<std::int64_t> dims, const std::vector<float>& v) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) t->add_dims(d);
  t->mutable_float_data()->Add(v.begin(), v.end());
}

void add_io(onnx::ValueInfoProto* vi, const std::string& name, int elem, std::int64_t width) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  shape->add_dim()->set_dim_param("batch");
  shape->add_dim()->set_dim_value(width);
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op, const std::string& name,
                          std::initializer_list<std::string> inputs, const std::string& output) {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(output);
  return n;
}

void int_attr(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// The activation node after a layer's linear output x (none for Activation::None); returns
// the tensor the next layer reads, the graph output after the last layer.
std::string add_activation(onnx::GraphProto& g, Activation act, const std::string& x, const std::string& id, bool last) {
  if (act == Activation::None) return x;
  const std::string out = last ? std::string(kOutput) : "hidden_" + id;
  auto* n = add_node(g, act == Activation::Relu ? "Relu" : "LeakyRelu", "activation_" + id, {x}, out);
  if (act == Activation::LeakyRelu) {
    auto* a = n->add_attribute();
    a->set_name("alpha");
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(kLeakyReluSlope);
  }
  return out;
}

}  // namespace

namespace {
onnx::ModelProto build(const MlpModel& mlp, const Int8Layers* q, const std::string& doc);
}

onnx::ModelProto mlp_to_onnx(const MlpModel& mlp, const std::string& doc) { return build(mlp, nullptr, doc); }

onnx::ModelProto mlp_to_onnx_int8(const MlpModel& mlp, const Int8Layers& q, const std::string& doc) {
  if (q.act_lo.size() != mlp.layers.size() || q.act_hi.size() != mlp.layers.size())
    throw Error("ONNX export: the int8 calibration has " + std::to_string(q.act_lo.size()) + " layer ranges, the model " +
                std::to_string(mlp.layers.size()) + " layers");
  return build(mlp, &q, doc);
}

namespace {

// x -> QuantizeLinear (u8) -> DequantizeLinear; returns the dequantized name and the scale.
// A grid of fewer than 256 codes (qmax < 255) is clipped to its range first; on the full u8
// grid QuantizeLinear's own saturation at 0 and 255 is that clip, and leaving the Clip node
// out lets ONNX Runtime fuse the layer into one int8 QGemm.
struct QdqActivation {
  std::string name;
  float scale;
};
QdqActivation add_activation_qdq(onnx::GraphProto& g, const std::string& x, const std::string& id, float lo, float hi,
                                 float qmax) {
  const quant::QuantParams p = quant::quant_params({lo, hi}, qmax);
  const float zp = p.zero_point;
  add_float_tensor(g, "act_scale_" + id, {}, {p.scale});
  auto* z = g.add_initializer();
  z->set_name("act_zero_point_" + id);
  z->set_data_type(onnx::TensorProto::UINT8);
  z->add_int32_data(static_cast<std::int32_t>(zp));
  std::string input = x;
  if (qmax < 255.0f) {
    add_float_tensor(g, "act_min_" + id, {}, {p.scale * (0.0f - zp)});
    add_float_tensor(g, "act_max_" + id, {}, {p.scale * (qmax - zp)});
    add_node(g, "Clip", "clip_" + id, {x, "act_min_" + id, "act_max_" + id}, "clipped_" + id);
    input = "clipped_" + id;
  }
  add_node(g, "QuantizeLinear", "quantize_" + id, {input, "act_scale_" + id, "act_zero_point_" + id}, "q_" + id);
  add_node(g, "DequantizeLinear", "dequantize_" + id, {"q_" + id, "act_scale_" + id, "act_zero_point_" + id}, "dq_" + id);
  return {"dq_" + id, p.scale};
}

// Int8 weight per output channel and its DequantizeLinear (the float weight is named
// "weight_<id>"); returns the channels' scales.
std::vector<float> add_weight_dq(onnx::GraphProto& g, const DenseLayer& l, const std::string& id) {
  auto* w = g.add_initializer();
  w->set_name("weight_q_" + id);
  w->set_data_type(onnx::TensorProto::INT8);
  w->add_dims(l.out);
  w->add_dims(l.in);
  std::vector<float> scales(l.out);
  for (std::uint32_t o = 0; o < l.out; ++o) {
    const float* row = l.weight.data() + static_cast<std::size_t>(o) * l.in;
    scales[o] = quant::weight_scale(row, l.in);
    for (std::uint32_t k = 0; k < l.in; ++k) w->add_int32_data(quant::quantize_weight(row[k], scales[o]));
  }
  add_float_tensor(g, "weight_scale_" + id, {l.out}, scales);
  auto* z = g.add_initializer();
  z->set_name("weight_zero_point_" + id);
  z->set_data_type(onnx::TensorProto::INT8);
  z->add_dims(l.out);
  for (std::uint32_t o = 0; o < l.out; ++o) z->add_int32_data(0);
  int_attr(add_node(g, "DequantizeLinear", "dequantize_weight_" + id, {"weight_q_" + id, "weight_scale_" + id, "weight_zero_point_" + id},
                    "weight_" + id),
           "axis", 0);
  return scales;
}

// The layer's bias as int32 on the grid of its int32 sums (scale activation scale x weight
// scale per channel, zero point 0) and its DequantizeLinear, named "bias_<id>": the form
// ONNX Runtime's QDQ selector takes for Gemm's third input, so that the layer becomes one
// QGemm (a float bias leaves a float Gemm that dequantizes its weights on every call). The
// rounding moves an output by at most half a step of that grid, below the activations' own
// rounding. A bias beyond int32 on that grid stays float (the layer then runs in float).
void add_bias(onnx::GraphProto& g, const std::vector<float>& bias, float act_scale, const std::vector<float>& weight_scales,
              const std::string& id) {
  std::vector<std::int32_t> codes(bias.size());
  std::vector<float> scales(bias.size());
  for (std::size_t o = 0; o < bias.size(); ++o) {
    scales[o] = act_scale * weight_scales[o];
    const double c = std::nearbyint(static_cast<double>(bias[o]) / scales[o]);
    if (!(scales[o] > 0.0f) || !(std::fabs(c) < 2147483647.0)) {
      add_float_tensor(g, "bias_" + id, {static_cast<std::int64_t>(bias.size())}, bias);
      return;
    }
    codes[o] = static_cast<std::int32_t>(c);
  }
  auto* b = g.add_initializer();
  b->set_name("bias_q_" + id);
  b->set_data_type(onnx::TensorProto::INT32);
  b->add_dims(static_cast<std::int64_t>(bias.size()));
  b->mutable_int32_data()->Add(codes.begin(), codes.end());
  add_float_tensor(g, "bias_scale_" + id, {static_cast<std::int64_t>(bias.size())}, scales);
  auto* z = g.add_initializer();
  z->set_name("bias_zero_point_" + id);
  z->set_data_type(onnx::TensorProto::INT32);
  z->add_dims(static_cast<std::int64_t>(bias.size()));
  for (std::size_t o = 0; o < bias.size(); ++o) z->add_int32_data(0);
  int_attr(add_node(g, "DequantizeLinear", "dequantize_bias_" + id, {"bias_q_" + id, "bias_scale_" + id, "bias_zero_point_" + id},
                    "bias_" + id),
           "axis", 0);
}

onnx::ModelProto build(const MlpModel& mlp, const Int8Layers* q, const std::string& doc) {
  if (mlp.layers.empty()) throw Error("ONNX export: the model has no layers");
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("ttlpred");
  m.set_doc_string(doc);
  auto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOpset);
  auto& g = *m.mutable_graph();
  g.set_name("ttlpred_mlp");
  add_io(g.add_input(), kDenseInput, onnx::TensorProto::FLOAT, mlp.dense_inputs);
  std::string x = kDenseInput;
  std::vector<std::string> parts = {kDenseInput};
  if (!mlp.embeddings.empty()) {
    add_io(g.add_input(), kCategoriesInput, onnx::TensorProto::INT64, static_cast<std::int64_t>(mlp.embeddings.size()));
    for (std::size_t i = 0; i < mlp.embeddings.size(); ++i) {
      const auto& e = mlp.embeddings[i];
      const std::string id = std::to_string(i);
      auto* idx = g.add_initializer();
      idx->set_name("category_index_" + id);
      idx->set_data_type(onnx::TensorProto::INT64);
      idx->add_int64_data(static_cast<std::int64_t>(i));  // a scalar: Gather drops the axis
      int_attr(add_node(g, "Gather", "category_" + id, {kCategoriesInput, "category_index_" + id}, "category_" + id), "axis", 1);
      if (q) continue;  // int8: the embeddings are folded into the first layer (below)
      add_float_tensor(g, "embedding_" + id, {e.cardinality, e.dim}, e.table);
      int_attr(add_node(g, "Gather", "embed_" + id, {"embedding_" + id, "category_" + id}, "embedded_" + id), "axis", 0);
      parts.push_back("embedded_" + id);
    }
  }
  if (!mlp.embeddings.empty() && !q) {
    // After the gathers: ONNX wants nodes in topological order.
    auto* concat = g.add_node();
    concat->set_op_type("Concat");
    concat->set_name("concat_features");
    for (const auto& p : parts) concat->add_input(p);
    concat->add_output("features");
    int_attr(concat, "axis", 1);
    x = "features";
  }
  for (std::size_t l = 0; l < mlp.layers.size(); ++l) {
    const auto& layer = mlp.layers[l];
    const std::string id = std::to_string(l);
    const bool last = l + 1 == mlp.layers.size();
    if (q && l == 0 && !mlp.embeddings.empty()) {
      // As ttlpred's int8 plans do: only the dense features are quantized; each embedding's
      // product with its weight columns is folded into a float table [cardinality, out]
      // gathered by the category and added to the layer's sum.
      DenseLayer dense_part;
      dense_part.in = mlp.dense_inputs;
      dense_part.out = layer.out;
      for (std::uint32_t o = 0; o < layer.out; ++o)
        for (std::uint32_t k = 0; k < mlp.dense_inputs; ++k) dense_part.weight.push_back(layer.weight[static_cast<std::size_t>(o) * layer.in + k]);
      const QdqActivation a = add_activation_qdq(g, x, id, q->act_lo[l], q->act_hi[l], q->act_qmax);
      x = a.name;
      add_bias(g, layer.bias, a.scale, add_weight_dq(g, dense_part, id), id);
      int_attr(add_node(g, "Gemm", "dense_" + id, {x, "weight_" + id, "bias_" + id}, "dense_sum_" + id), "transB", 1);
      auto* sum = g.add_node();
      sum->set_op_type("Sum");
      sum->set_name("fold_embeddings");
      sum->add_input("dense_sum_" + id);
      std::uint32_t offset = mlp.dense_inputs;
      for (std::size_t i = 0; i < mlp.embeddings.size(); ++i) {
        const auto& e = mlp.embeddings[i];
        const std::string ei = std::to_string(i);
        std::vector<float> folded(static_cast<std::size_t>(e.cardinality) * layer.out);
        for (std::uint32_t c = 0; c < e.cardinality; ++c)
          for (std::uint32_t o = 0; o < layer.out; ++o) {
            double acc = 0;
            for (std::uint32_t d = 0; d < e.dim; ++d)
              acc += static_cast<double>(e.table[static_cast<std::size_t>(c) * e.dim + d]) *
                     layer.weight[static_cast<std::size_t>(o) * layer.in + offset + d];
            folded[static_cast<std::size_t>(c) * layer.out + o] = static_cast<float>(acc);
          }
        offset += e.dim;
        add_float_tensor(g, "folded_embedding_" + ei, {e.cardinality, layer.out}, folded);
        int_attr(add_node(g, "Gather", "fold_" + ei, {"folded_embedding_" + ei, "category_" + ei}, "folded_" + ei), "axis", 0);
        sum->add_input("folded_" + ei);
      }
      // Sum comes after the gathers it reads: move it to the end of the node list.
      const int at = g.node_size() - 1 - static_cast<int>(mlp.embeddings.size());
      for (int k = at; k < g.node_size() - 1; ++k) g.mutable_node()->SwapElements(k, k + 1);
      const std::string lin = last && layer.act == Activation::None ? std::string(kOutput) : "linear_" + id;
      g.mutable_node(g.node_size() - 1)->add_output(lin);
      x = add_activation(g, layer.act, lin, id, last);
      continue;
    }
    if (q) {
      const QdqActivation a = add_activation_qdq(g, x, id, q->act_lo[l], q->act_hi[l], q->act_qmax);
      x = a.name;
      add_bias(g, layer.bias, a.scale, add_weight_dq(g, layer, id), id);
    } else {
      add_float_tensor(g, "weight_" + id, {layer.out, layer.in}, layer.weight);
      add_float_tensor(g, "bias_" + id, {layer.out}, layer.bias);
    }
    const std::string lin = last && layer.act == Activation::None ? std::string(kOutput) : "linear_" + id;
    int_attr(add_node(g, "Gemm", "dense_" + id, {x, "weight_" + id, "bias_" + id}, lin), "transB", 1);
    x = add_activation(g, layer.act, lin, id, last);
  }
  add_io(g.add_output(), kOutput, onnx::TensorProto::FLOAT, mlp.layers.back().out);
  try {
    onnx::checker::check_model(m);
  } catch (const std::exception& e) {
    throw Error(std::string("ONNX export: the graph fails onnx's checker: ") + e.what());
  }
  return m;
}

}  // namespace
}  // namespace ttlpred::interop
