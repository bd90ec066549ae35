// The model file's section-level refusals, each on a file crafted section by section and
// sealed with a valid checksum, so that the refusal tested is the section rule itself and
// not the checksum that would catch a random edit first: a duplicate section, trailing
// bytes inside a section, a missing required section, implausible network shapes; and the
// one thing the reader must tolerate, a section of a later build it does not know.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/mlp_io.hpp"
#include "model/model_file.hpp"
#include "model_test_util.hpp"
#include "util/binary_io.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

// Section tags as the file format numbers them (model_file.cpp).
constexpr std::uint32_t kMlpTag = 1, kTargetTag = 2;

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

}  // namespace
}  // namespace ttlpred
