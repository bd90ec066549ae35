#pragma once
// A small valid model with deterministic weights, what a refused model file says, and a model
// file with one section's bytes replaced and the file sealed again: shared by the model tests
// and the tests of what reads a model file's sections.
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "model/mlp.hpp"
#include "model/model_file.hpp"
#include "util/binary_io.hpp"

namespace ttlpred::test {

inline MlpModel tiny_model() {
  MlpModel m;
  m.dense_inputs = 3;
  m.embeddings.push_back({4, 2, {0.f, 0.f, .1f, .2f, .3f, .4f, .5f, .6f}});
  const std::uint32_t widths[] = {5, 4, 1};
  std::uint32_t in = m.first_layer_inputs();
  float v = 0.01f;
  for (std::uint32_t out : widths) {
    DenseLayer d;
    d.in = in;
    d.out = out;
    for (std::uint32_t i = 0; i < in * out; ++i) d.weight.push_back(v += 0.01f);
    for (std::uint32_t o = 0; o < out; ++o) d.bias.push_back(-v);
    d.act = out == 1 ? Activation::None : Activation::Relu;
    m.layers.push_back(std::move(d));
    in = out;
  }
  return m;
}

// What parse_model_file says when it refuses `bytes` read as file `name`; "(accepted)" when
// it does not.
inline std::string model_file_refusal(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  try {
    parse_model_file(bytes, name);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(accepted)";
}

// Section tags as the model file format numbers them (model_file.cpp).
namespace section_tag {
inline constexpr std::uint32_t kMlp = 1, kTarget = 2, kSafeTtl = 3, kEncoder = 4, kHistory = 5, kInt8Calibration = 6,
                               kQuantileHeads = 11, kQuantileTtl = 12;
}

// `model_file` (sealed bytes) with the body of its section `tag` replaced by `body` (added at
// the end where it has none), sealed again with its format version and a correct checksum:
// what a hand-edited file whose checksum was recomputed looks like.
inline std::vector<std::uint8_t> with_section_body(const std::vector<std::uint8_t>& model_file, std::uint32_t tag,
                                                   const std::vector<std::uint8_t>& body) {
  const OpenedContainer opened =
      open_container(model_file, std::string_view(kModelFileMagic, 8), kModelFileVersion, "model to edit");
  BinaryReader r(opened.payload, "model to edit");
  BinaryWriter out;
  bool replaced = false;
  while (!r.at_end()) {
    const auto t = r.get<std::uint32_t>();
    const auto b = r.get_bytes();
    out.put<std::uint32_t>(t);
    out.put_bytes(t == tag ? body : b);
    replaced = replaced || t == tag;
  }
  if (!replaced) {
    out.put<std::uint32_t>(tag);
    out.put_bytes(body);
  }
  return seal_container(std::string_view(kModelFileMagic, 8), opened.version, out.bytes());
}

}  // namespace ttlpred::test
