#include <onnx/checker.h>

#include "interop/onnx_graph.hpp"
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

}  // namespace

onnx::ModelProto mlp_to_onnx(const MlpModel& mlp, const std::string& doc) {
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
  if (!mlp.embeddings.empty()) {
    add_io(g.add_input(), kCategoriesInput, onnx::TensorProto::INT64, static_cast<std::int64_t>(mlp.embeddings.size()));
    std::vector<std::string> parts = {kDenseInput};
    for (std::size_t i = 0; i < mlp.embeddings.size(); ++i) {
      const auto& e = mlp.embeddings[i];
      const std::string id = std::to_string(i);
      auto* idx = g.add_initializer();
      idx->set_name("category_index_" + id);
      idx->set_data_type(onnx::TensorProto::INT64);
      idx->add_int64_data(static_cast<std::int64_t>(i));  // a scalar: Gather drops the axis
      add_float_tensor(g, "embedding_" + id, {e.cardinality, e.dim}, e.table);
      int_attr(add_node(g, "Gather", "category_" + id, {kCategoriesInput, "category_index_" + id}, "category_" + id), "axis", 1);
      int_attr(add_node(g, "Gather", "embed_" + id, {"embedding_" + id, "category_" + id}, "embedded_" + id), "axis", 0);
      parts.push_back("embedded_" + id);
    }
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
    add_float_tensor(g, "weight_" + id, {layer.out, layer.in}, layer.weight);
    add_float_tensor(g, "bias_" + id, {layer.out}, layer.bias);
    const std::string lin = last && layer.act == Activation::None ? std::string(kOutput) : "linear_" + id;
    int_attr(add_node(g, "Gemm", "dense_" + id, {x, "weight_" + id, "bias_" + id}, lin), "transB", 1);
    x = lin;
    if (layer.act != Activation::None) {
      const std::string out = last ? std::string(kOutput) : "hidden_" + id;
      auto* n = add_node(g, layer.act == Activation::Relu ? "Relu" : "LeakyRelu", "activation_" + id, {x}, out);
      if (layer.act == Activation::LeakyRelu) {
        auto* a = n->add_attribute();
        a->set_name("alpha");
        a->set_type(onnx::AttributeProto::FLOAT);
        a->set_f(kLeakyReluSlope);
      }
      x = out;
    }
  }
  add_io(g.add_output(), kOutput, onnx::TensorProto::FLOAT, mlp.layers.back().out);
  try {
    onnx::checker::check_model(m);
  } catch (const std::exception& e) {
    throw Error(std::string("ONNX export: the graph fails onnx's checker: ") + e.what());
  }
  return m;
}

}  // namespace ttlpred::interop
