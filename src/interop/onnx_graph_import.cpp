// Reading an MLP out of an ONNX graph. The graph is walked in its (topological) node order
// and every value is given a role: the dense input, the category input, one category
// column, an embedded column, the feature vector, the output of layer k. A node is accepted
// only when its inputs have the roles the MLP shape needs; anything else is refused with the
// node named, so a graph that is not a plain MLP never becomes a silently wrong model.
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <type_traits>
#include <vector>

#include <onnx/checker.h>

#include "interop/onnx_graph.hpp"
#include "model/quantile_heads.hpp"
#include "util/error.hpp"

namespace ttlpred::interop {

namespace {

struct Tensor {
  std::vector<std::int64_t> dims;
  std::vector<double> values;
};

enum class Role { Dense, Categories, CategoryColumn, Embedded, Features, LayerOut };
struct Value {
  Role role;
  std::size_t index = 0;  // category column, or layer
};

class Importer {
 public:
  Importer(const onnx::GraphProto& g, std::string what) : g_(g), what_(std::move(what)) {}

  MlpModel run() {
    for (const auto& t : g_.initializer()) consts_[t.name()] = tensor(t, "initializer " + t.name());
    find_inputs();
    for (int i = 0; i < g_.node_size(); ++i) node(g_.node(i));
    return finish();
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw Error(what_ + ": " + why); }
  [[noreturn]] void fail(const onnx::NodeProto& n, const std::string& why) const {
    fail("node '" + (n.name().empty() ? n.output_size() ? n.output(0) : std::string("?") : n.name()) + "' (op " +
         n.op_type() + "): " + why);
  }

  // values <- the n values of element type T: from raw_data (little-endian) when it is set,
  // else from the typed field.
  template <class T, class Typed>
  void take_values(const onnx::TensorProto& t, const Typed& typed, std::size_t n, const std::string& where,
                   std::vector<double>& values) const {
    const std::string& raw = t.raw_data();
    const std::size_t got = raw.empty() ? static_cast<std::size_t>(typed.size()) : raw.size() / sizeof(T);
    if (got != n) fail(where + ": " + std::to_string(got) + " values for shape of " + std::to_string(n));
    if (raw.empty()) {
      values.assign(typed.begin(), typed.end());
      return;
    }
    if constexpr (std::is_same_v<T, float>)
      if (raw.size() % sizeof(T)) fail(where + ": raw data not a whole number of floats");
    values.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, raw.data() + sizeof(T) * i, sizeof(T));
      values[i] = static_cast<double>(v);
    }
  }

  Tensor tensor(const onnx::TensorProto& t, const std::string& where) const {
    Tensor out;
    std::int64_t count = 1;
    for (auto d : t.dims()) {
      if (d < 0 || d > (1 << 28)) fail(where + ": dimension " + std::to_string(d) + " out of range");
      out.dims.push_back(d);
      count *= d;
      if (count > (1 << 28)) fail(where + ": more than 2^28 values");
    }
    if (t.data_location() == onnx::TensorProto::EXTERNAL) fail(where + ": external data is not supported (save the model with its weights inside)");
    const auto n = static_cast<std::size_t>(count);
    auto check = [&](std::size_t got) {
      if (got != n) fail(where + ": " + std::to_string(got) + " values for shape of " + std::to_string(n));
    };
    switch (t.data_type()) {
      case onnx::TensorProto::FLOAT: take_values<float>(t, t.float_data(), n, where, out.values); break;
      case onnx::TensorProto::DOUBLE: take_values<double>(t, t.double_data(), n, where, out.values); break;
      case onnx::TensorProto::INT64: take_values<std::int64_t>(t, t.int64_data(), n, where, out.values); break;
      case onnx::TensorProto::INT32:
        check(static_cast<std::size_t>(t.int32_data_size()));
        out.values.assign(t.int32_data().begin(), t.int32_data().end());
        break;
      default: fail(where + ": tensor element type " + std::to_string(t.data_type()) + " is not supported (float, double, int64, int32)");
    }
    for (double v : out.values)
      if (!std::isfinite(v)) fail(where + ": a value is not finite");
    return out;
  }

  void find_inputs() {
    for (const auto& in : g_.input()) {
      if (consts_.count(in.name())) continue;  // older exporters list initializers as inputs
      const auto& tt = in.type().tensor_type();
      if (tt.shape().dim_size() != 2)
        fail("input '" + in.name() + "' has rank " + std::to_string(tt.shape().dim_size()) + "; expected [batch, features]");
      const int elem = tt.elem_type();
      if (elem == onnx::TensorProto::FLOAT && !dense_name_) {
        dense_name_ = in.name();
        if (tt.shape().dim(1).has_dim_value()) dense_width_ = tt.shape().dim(1).dim_value();
        values_[in.name()] = {Role::Dense};
      } else if ((elem == onnx::TensorProto::INT64 || elem == onnx::TensorProto::INT32) && !categories_name_) {
        categories_name_ = in.name();
        values_[in.name()] = {Role::Categories};
      } else {
        fail("input '" + in.name() + "': a ttlpred model reads one float input (the dense features) and at most one "
             "integer input (the category indices)");
      }
    }
    if (!dense_name_) fail("the graph has no float input (the dense features)");
  }

  const Value* value(const onnx::NodeProto& n, int i) {
    if (i >= n.input_size()) fail(n, "missing input " + std::to_string(i));
    const auto it = values_.find(n.input(i));
    return it == values_.end() ? nullptr : &it->second;
  }
  const Tensor* constant(const onnx::NodeProto& n, int i) {
    if (i >= n.input_size()) return nullptr;
    const auto it = consts_.find(n.input(i));
    return it == consts_.end() ? nullptr : &it->second;
  }
  std::optional<std::int64_t> int_attr(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return a.i();
    return std::nullopt;
  }
  std::optional<float> float_attr(const onnx::NodeProto& n, const std::string& name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return a.f();
    return std::nullopt;
  }
  void set(const onnx::NodeProto& n, Value v) {
    if (n.output_size() < 1) fail(n, "no output");
    values_[n.output(0)] = v;
  }

  // The value a dense layer may read: the features (first layer) or the previous layer.
  void check_layer_input(const onnx::NodeProto& n, const Value* in) {
    if (!in) fail(n, "input '" + n.input(0) + "' is not the features or a previous layer's output");
    if (layers_.empty()) {
      if (in->role == Role::Dense && !embedded_.empty()) fail(n, "the first layer reads the dense input alone, leaving the embeddings unused");
      if (in->role != Role::Dense && in->role != Role::Features) fail(n, "the first layer must read the features");
    } else if (in->role != Role::LayerOut || in->index + 1 != layers_.size()) {
      fail(n, "a layer must read the output of the layer before it (ttlpred runs a plain stack of layers)");
    }
  }

  void node(const onnx::NodeProto& n) {
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx") fail(n, "operator domain '" + n.domain() + "' is not supported");
    if (op == "Constant") {
      for (const auto& a : n.attribute())
        if (a.name() == "value") {
          consts_[n.output(0)] = tensor(a.t(), "Constant " + n.output(0));
          return;
        }
      fail(n, "only a Constant with a 'value' tensor is supported");
    }
    if (op == "Identity" || op == "Dropout" || op == "Flatten") {
      const Value* in = value(n, 0);
      if (!in) fail(n, "input '" + n.input(0) + "' is not a value of the network");
      if (op == "Flatten" && int_attr(n, "axis").value_or(1) != 1) fail(n, "only Flatten with axis 1 (a no-op on [batch, n])");
      set(n, *in);
      return;
    }
    if (op == "Gather") {
      const Value* data = value(n, 0);
      const std::int64_t axis = int_attr(n, "axis").value_or(0);
      if (data && data->role == Role::Categories) {
        const Tensor* idx = constant(n, 1);
        if (!idx || idx->values.size() != 1 || axis != 1)
          fail(n, "a category column is taken with Gather(categories, constant index, axis=1)");
        set(n, {Role::CategoryColumn, static_cast<std::size_t>(idx->values[0])});
        return;
      }
      const Tensor* table = constant(n, 0);
      const Value* col = value(n, 1);
      if (!table || table->dims.size() != 2 || !col || col->role != Role::CategoryColumn || axis != 0)
        fail(n, "an embedding is Gather(float table [cardinality, dim], category column, axis=0)");
      if (embedded_.count(col->index)) fail(n, "category column " + std::to_string(col->index) + " embedded twice");
      Embedding e;
      e.cardinality = static_cast<std::uint32_t>(table->dims[0]);
      e.dim = static_cast<std::uint32_t>(table->dims[1]);
      e.table.assign(table->values.begin(), table->values.end());
      embedded_[col->index] = std::move(e);
      set(n, {Role::Embedded, col->index});
      return;
    }
    if (op == "Concat") {
      const std::int64_t axis = int_attr(n, "axis").value_or(0);
      if (axis != 1 && axis != -1) fail(n, "features are concatenated along axis 1");
      const Value* first = value(n, 0);
      if (!first || first->role != Role::Dense) fail(n, "the first input must be the dense features, then the embeddings");
      for (int i = 1; i < n.input_size(); ++i) {
        const Value* v = value(n, i);
        if (!v || v->role != Role::Embedded || v->index != static_cast<std::size_t>(i - 1))
          fail(n, "input " + std::to_string(i) + " ('" + n.input(i) + "') must be the embedding of category column " +
                      std::to_string(i - 1) + " (ttlpred concatenates them in column order)");
      }
      if (static_cast<std::size_t>(n.input_size() - 1) != embedded_.size())
        fail(n, "every embedded category column must be concatenated");
      set(n, {Role::Features});
      return;
    }
    if (op == "Gemm" || op == "MatMul") {
      check_layer_input(n, value(n, 0));
      const Tensor* w = constant(n, 1);
      if (!w || w->dims.size() != 2) fail(n, "the weight (input 1) must be a constant 2-D tensor");
      bool trans_b = false;
      if (op == "Gemm") {
        if (int_attr(n, "transA").value_or(0) != 0) fail(n, "transA=1 is not supported");
        trans_b = int_attr(n, "transB").value_or(0) != 0;
        if (std::abs(float_attr(n, "alpha").value_or(1.f) - 1.f) > 0 || std::abs(float_attr(n, "beta").value_or(1.f) - 1.f) > 0)
          fail(n, "alpha and beta other than 1 are not supported");
      }
      DenseLayer l;
      l.in = static_cast<std::uint32_t>(trans_b ? w->dims[1] : w->dims[0]);
      l.out = static_cast<std::uint32_t>(trans_b ? w->dims[0] : w->dims[1]);
      l.act = Activation::None;
      l.weight.resize(static_cast<std::size_t>(l.in) * l.out);
      for (std::uint32_t o = 0; o < l.out; ++o)
        for (std::uint32_t i = 0; i < l.in; ++i)
          l.weight[static_cast<std::size_t>(o) * l.in + i] =
              static_cast<float>(trans_b ? w->values[static_cast<std::size_t>(o) * l.in + i] : w->values[static_cast<std::size_t>(i) * l.out + o]);
      l.bias.assign(l.out, 0.f);
      if (!layers_.empty() && layers_.back().out != l.in)
        fail(n, "reads " + std::to_string(l.in) + " values, the layer before gives " + std::to_string(layers_.back().out));
      if (op == "Gemm" && n.input_size() > 2 && !n.input(2).empty()) add_bias(n, l, 2);
      layers_.push_back(std::move(l));
      set(n, {Role::LayerOut, layers_.size() - 1});
      return;
    }
    if (op == "Add") {
      const Value* a = value(n, 0);
      const Value* b = value(n, 1);
      const int bias_at = a ? 1 : 0;
      const Value* layer = a ? a : b;
      if (!layer || layer->role != Role::LayerOut || layer->index + 1 != layers_.size() || layers_.back().act != Activation::None ||
          !constant(n, bias_at))
        fail(n, "only a bias Add (the output of MatMul or Gemm plus a constant) is supported");
      add_bias(n, layers_.back(), bias_at);
      set(n, *layer);
      return;
    }
    if (op == "Relu" || op == "LeakyRelu") {
      const Value* in = value(n, 0);
      if (!in || in->role != Role::LayerOut || in->index + 1 != layers_.size() || layers_.back().act != Activation::None)
        fail(n, "an activation must follow a dense layer (Gemm, or MatMul and Add)");
      if (op == "LeakyRelu") {
        const float alpha = float_attr(n, "alpha").value_or(0.01f);
        if (std::abs(alpha - kLeakyReluSlope) > 1e-6f)
          fail(n, "LeakyRelu alpha " + std::to_string(alpha) + " is not supported (ttlpred's engine uses 0.01)");
      }
      layers_.back().act = op == "Relu" ? Activation::Relu : Activation::LeakyRelu;
      set(n, *in);
      return;
    }
    fail(n, "unsupported op; ttlpred imports MLPs built of Gemm, MatMul, Add, Relu, LeakyRelu(alpha 0.01), "
            "Gather and Concat (embeddings), Identity, Dropout, Flatten and Constant");
  }

  void add_bias(const onnx::NodeProto& n, DenseLayer& l, int input) {
    const Tensor* b = constant(n, input);
    if (!b) fail(n, "the bias (input " + std::to_string(input) + ") must be a constant");
    if (b->values.size() != l.out)
      fail(n, "bias has " + std::to_string(b->values.size()) + " values, the layer " + std::to_string(l.out) + " outputs");
    for (std::uint32_t o = 0; o < l.out; ++o) l.bias[o] += static_cast<float>(b->values[o]);
  }

  MlpModel finish() {
    if (g_.output_size() != 1) fail("the graph has " + std::to_string(g_.output_size()) + " outputs; a ttlpred model has one");
    const auto it = values_.find(g_.output(0).name());
    if (layers_.empty()) fail("the graph has no dense layer (Gemm or MatMul)");
    if (it == values_.end() || it->second.role != Role::LayerOut || it->second.index + 1 != layers_.size())
      fail("the output '" + g_.output(0).name() + "' is not the last dense layer's output");
    // 1: the run time; 1 + K: with K quantile heads (the sidecar's target says which, checked
    // by import_onnx once it is read).
    if (layers_.back().out < 1 || layers_.back().out > 1 + kMaxQuantileHeads)
      fail("the last layer has " + std::to_string(layers_.back().out) + " outputs; a run-time model has 1, or 1 + up to " +
           std::to_string(kMaxQuantileHeads) + " quantile heads");
    if (layers_.back().act != Activation::None) fail("the output passes through an activation; ttlpred's last layer is linear");
    MlpModel m;
    std::uint32_t emb_width = 0;
    for (std::size_t i = 0; i < embedded_.size(); ++i) {
      const auto e = embedded_.find(i);
      if (e == embedded_.end()) fail("category column " + std::to_string(i) + " is not embedded");
      emb_width += e->second.dim;
      m.embeddings.push_back(e->second);
    }
    if (layers_.front().in < emb_width) fail("the first layer reads fewer values than the embeddings give");
    m.dense_inputs = layers_.front().in - emb_width;
    if (dense_width_ && *dense_width_ != m.dense_inputs)
      fail("input '" + *dense_name_ + "' is " + std::to_string(*dense_width_) + " wide but the first layer reads " +
           std::to_string(m.dense_inputs) + " dense values");
    m.layers = std::move(layers_);
    return m;
  }

  const onnx::GraphProto& g_;
  std::string what_;
  std::map<std::string, Tensor> consts_;
  std::map<std::string, Value> values_;
  std::map<std::size_t, Embedding> embedded_;
  std::vector<DenseLayer> layers_;
  std::optional<std::string> dense_name_, categories_name_;
  std::optional<std::int64_t> dense_width_;
};

}  // namespace

MlpModel mlp_from_onnx(const onnx::ModelProto& model, const std::string& what) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    throw Error(what + ": not a valid ONNX model: " + e.what());
  }
  for (const auto& o : model.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") && (o.version() < 7 || o.version() > 17))
      throw Error(what + ": opset " + std::to_string(o.version()) + " is outside the supported 7-17");
  return Importer(model.graph(), what).run();
}

}  // namespace ttlpred::interop
