// The model file's section-level refusals, each on a file crafted section by section and
// sealed with a valid checksum, so that the refusal tested is the section rule itself and
// not the checksum that would catch a random edit first: a duplicate section, trailing
// bytes inside a section, a missing required section, implausible network shapes, every check
// of the network read (model/mlp_check.cpp, through read_mlp); and the one thing the reader
// must tolerate, a section of a later build it does not know.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model/mlp_io.hpp"
#include "model/model_file.hpp"
#include "model_test_util.hpp"
#include "section_bytes.hpp"
#include "util/binary_io.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

constexpr std::uint32_t kMlpTag = test::section_tag::kMlp, kTargetTag = test::section_tag::kTarget;

std::vector<std::uint8_t> mlp_section(const MlpModel& m) {
  BinaryWriter s;
  write_mlp(s, m);
  return s.bytes();
}

std::vector<std::uint8_t> target_section() {
  TargetTransform t;
  t.kind = TargetKind::Hours;
  t.mean = 2.0;
  t.stddev = 0.5;
  BinaryWriter s;
  t.write(s);
  return s.bytes();
}

struct Crafted {
  BinaryWriter payload;
  Crafted& section(std::uint32_t tag, const std::vector<std::uint8_t>& body) {
    payload.put<std::uint32_t>(tag);
    payload.put_bytes(body);
    return *this;
  }
  // Version 1: the format without a residual base, which version 2 requires.
  std::vector<std::uint8_t> sealed(std::uint32_t version = 1) const {
    return seal_container(std::string_view(kModelFileMagic, 8), version, payload.bytes());
  }
};

std::string refusal(const std::vector<std::uint8_t>& bytes) { return test::model_file_refusal(bytes, "crafted.model"); }

TEST(ModelFileSections, MinimalFileOfTheTwoRequiredSectionsLoads) {
  Crafted c;
  c.section(kMlpTag, mlp_section(test::tiny_model())).section(kTargetTag, target_section());
  const ModelFile m = parse_model_file(c.sealed(), "crafted.model");
  EXPECT_EQ(m.mlp.dense_inputs, 3u);
  EXPECT_EQ(m.mlp.layers.size(), 3u);
  EXPECT_EQ(m.target.kind, TargetKind::Hours);
  EXPECT_EQ(m.target.mean, 2.0);
  EXPECT_TRUE(m.safe_ttl.empty());
  EXPECT_TRUE(m.encoder.empty());
}

TEST(ModelFileSections, UnknownSectionOfALaterBuildIsSkipped) {
  Crafted c;
  c.section(kMlpTag, mlp_section(test::tiny_model()))
      .section(42, {1, 2, 3, 4, 5})  // not a known tag: skipped, its body unread
      .section(kTargetTag, target_section());
  const ModelFile m = parse_model_file(c.sealed(), "crafted.model");
  EXPECT_EQ(m.mlp.layers.size(), 3u);
  EXPECT_EQ(m.target.stddev, 0.5);
}

TEST(ModelFileSections, RefusesDuplicateSection) {
  Crafted c;
  c.section(kMlpTag, mlp_section(test::tiny_model()))
      .section(kTargetTag, target_section())
      .section(kMlpTag, mlp_section(test::tiny_model()));
  const std::string msg = refusal(c.sealed());
  EXPECT_NE(msg.find("crafted.model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("duplicate architecture and weights section"), std::string::npos) << msg;
}

TEST(ModelFileSections, RefusesTrailingBytesInsideASection) {
  auto target = target_section();
  target.push_back(0);
  Crafted c;
  c.section(kMlpTag, mlp_section(test::tiny_model())).section(kTargetTag, target);
  const std::string msg = refusal(c.sealed());
  EXPECT_NE(msg.find("crafted.model (target transform section)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unexpected trailing bytes"), std::string::npos) << msg;
}

TEST(ModelFileSections, RefusesAFileWithoutWeightsOrWithoutTargetTransform) {
  Crafted no_mlp;
  no_mlp.section(kTargetTag, target_section());
  EXPECT_EQ(refusal(no_mlp.sealed()), "crafted.model: model file has no architecture/weights section");
  Crafted no_target;
  no_target.section(kMlpTag, mlp_section(test::tiny_model()));
  EXPECT_EQ(refusal(no_target.sealed()), "crafted.model: model file has no target transform section");
  Crafted empty;
  EXPECT_EQ(refusal(empty.sealed()), "crafted.model: model file has no architecture/weights section");
}

TEST(ModelFileSections, RefusesAVersion2FileWithoutItsResidualBase) {
  // Version 2 says the network's output is relative to a base: without it every answer
  // would decode wrong, so the file is refused rather than read as a version 1 one.
  Crafted c;
  c.section(kMlpTag, mlp_section(test::tiny_model())).section(kTargetTag, target_section());
  EXPECT_EQ(refusal(c.sealed(2)), "crafted.model: format version 2 model file has no residual base");
}

// A header whose shape fields are implausible is refused before anything of that size is
// allocated: the body that would follow is absent, and the error names the shape.
std::string shape_refusal(const std::vector<std::uint32_t>& header_words) {
  BinaryWriter s;
  for (std::uint32_t w : header_words) s.put<std::uint32_t>(w);
  Crafted c;
  c.section(kMlpTag, s.bytes()).section(kTargetTag, target_section());
  return refusal(c.sealed());
}

TEST(ModelFileSections, RefusesImplausibleShapes) {
  // dense inputs above 65536
  std::string msg = shape_refusal({70000});
  EXPECT_NE(msg.find("model claims 70000 dense inputs"), std::string::npos) << msg;
  EXPECT_NE(msg.find("crafted.model (architecture and weights section)"), std::string::npos) << msg;
  // more than 4096 embedding tables
  msg = shape_refusal({3, 5000});
  EXPECT_NE(msg.find("model claims 5000 embeddings"), std::string::npos) << msg;
  // an embedding of 2^27 rows, and one 2048 wide
  msg = shape_refusal({3, 1, 1u << 27, 2});
  EXPECT_NE(msg.find("embedding 0 has implausible shape 134217728 x 2"), std::string::npos) << msg;
  msg = shape_refusal({3, 1, 4, 2048});
  EXPECT_NE(msg.find("embedding 0 has implausible shape 4 x 2048"), std::string::npos) << msg;
  // more than 64 layers
  msg = shape_refusal({3, 0, 65});
  EXPECT_NE(msg.find("model claims 65 layers"), std::string::npos) << msg;
  // a layer 100000 wide (printed out x in)
  msg = shape_refusal({3, 0, 1, 3, 100000});
  EXPECT_NE(msg.find("layer 0 has implausible shape 100000 x 3"), std::string::npos) << msg;
}

TEST(ModelFileSections, RefusesAShapeWhoseWeightsAreMissing) {
  // A plausible 3 -> 1 layer whose weight vector is cut short: a truncation inside the
  // section, named as such rather than read past the end.
  BinaryWriter s;
  for (std::uint32_t w : {3u, 0u, 1u, 3u, 1u}) s.put<std::uint32_t>(w);
  s.put<std::uint8_t>(0);
  Crafted c;
  c.section(kMlpTag, s.bytes()).section(kTargetTag, target_section());
  const std::string msg = refusal(c.sealed());
  EXPECT_NE(msg.find("crafted.model (architecture and weights section)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

// Networks whose shapes are plausible but that the network check refuses, written by the
// real writer (it writes what it is given). The reader takes lists shorter than the shape
// says, so the size checks are reached too.
constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();

const test::Mutation<MlpModel> kNetworkMutations[] = {
    {"no layers", [](MlpModel& m) { m.layers.clear(); }, "invalid model: has no layers"},
    {"embedding without rows",
     [](MlpModel& m) {
       m.embeddings[0].cardinality = 0;
       m.embeddings[0].table.clear();
     },
     "model: embeddings[0].cardinality is 0 (needs at least the OOV row)"},
    {"embedding without width",
     [](MlpModel& m) {
       m.embeddings[0].dim = 0;
       m.embeddings[0].table.clear();
     },
     "model: embeddings[0].dim is 0"},
    {"embedding table cut short", [](MlpModel& m) { m.embeddings[0].table.pop_back(); },
     "model: embeddings[0].table has 7 values, expected cardinality*dim = 8"},
    {"NaN in an embedding table", [](MlpModel& m) { m.embeddings[0].table[3] = kNaNf; },
     "model: embeddings[0].table holds a non-finite value"},
    {"layer input unlike the previous output",
     [](MlpModel& m) {
       m.layers[1].in = 3;
       m.layers[1].weight.resize(3 * 4);
     },
     "model: layers[1].in is 3, expected 5 (previous layer's out)"},
    {"layer without outputs",
     [](MlpModel& m) {
       m.layers[0].out = 0;
       m.layers[0].weight.clear();
       m.layers[0].bias.clear();
     },
     "model: layers[0].out is 0"},
    {"layer without inputs",
     [](MlpModel& m) {
       m.dense_inputs = 0;
       m.embeddings.clear();
       m.layers[0].in = 0;
       m.layers[0].weight.clear();
     },
     "model: layers[0].in is 0"},
    {"weights cut short", [](MlpModel& m) { m.layers[0].weight.pop_back(); },
     "model: layers[0].weight has 24 values, expected out*in = 25"},
    {"biases cut short", [](MlpModel& m) { m.layers[0].bias.pop_back(); },
     "model: layers[0].bias has 4 values, expected out = 5"},
    {"NaN weight", [](MlpModel& m) { m.layers[2].weight[0] = kNaNf; }, "model: layers[2].weight holds a non-finite value"},
    {"infinite bias", [](MlpModel& m) { m.layers[1].bias[0] = std::numeric_limits<float>::infinity(); },
     "model: layers[1].bias holds a non-finite value"},
    {"activation past the last", [](MlpModel& m) { m.layers[0].act = static_cast<Activation>(9); },
     "model: layers[0].act is not a known activation (9)"},
    {"last layer with an activation", [](MlpModel& m) { m.layers.back().act = Activation::Relu; },
     "the last layer must have 1 to 17 outputs and no activation"},
};

TEST(ModelFileSections, EachNetworkCheckRefusesItsHostileNetwork) {
  const auto with_network = [](const MlpModel& m) {
    Crafted c;
    c.section(kMlpTag, mlp_section(m)).section(kTargetTag, target_section());
    return refusal(c.sealed());
  };
  test::expect_each_refused(kNetworkMutations, test::tiny_model(), with_network,
                            "crafted.model (architecture and weights section): model: invalid");
}

}  // namespace
}  // namespace ttlpred
