// The feature encoder reader's guards (features/encoder_io.cpp), each met by a hostile payload
// in a valid container. A model file carries the encoder as opaque bytes in their own sealed
// container, and `serve --model` and /admin/reload read it; anyone can recompute a checksum,
// so truncating or flipping a byte (which the checksum catches first) does not test these
// guards. Here a real fitted encoder's bytes are decoded into a mirror of the format, one field
// is broken, and the payload is sealed again: each refusal must name its guard.
#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>
#include <vector>

#include "features/encoder.hpp"
#include "section_payloads.hpp"

namespace ttlpred {
namespace {

using test::EncoderPayload;

const std::vector<std::uint8_t>& real_encoder_bytes() {
  static const std::vector<std::uint8_t> bytes = test::fitted_section_encoder().to_bytes();
  return bytes;
}

EncoderPayload real_encoder() { return test::mirror_of<EncoderPayload>(real_encoder_bytes()); }

std::string refusal(const EncoderPayload& p) {
  return test::error_of([&] { FeatureEncoder::from_bytes(test::sealed(p), "hostile encoder"); });
}

// The first dense column of `source` (DenseSource), which the fixture has.
EncoderPayload::Dense& first_column(EncoderPayload& p, DenseSource source) {
  for (auto& c : p.dense)
    if (c.source == static_cast<std::uint8_t>(source)) return c;
  throw std::logic_error("the fixture encoder has no such column");
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(EncoderSection, MirrorRewritesTheRealSectionByteForByte) {
  const EncoderPayload p = real_encoder();
  // The newest format, with every part the mutations below break.
  EXPECT_EQ(p.version, 4u);
  EXPECT_EQ(test::sealed(p), real_encoder_bytes());
  EXPECT_GT(p.history_width, 0u);
  ASSERT_FALSE(p.cats.empty());
  EXPECT_GE(p.cats[0].values.size(), 2u);
  EXPECT_EQ(refusal(p), "(accepted)");
}

const test::Mutation<EncoderPayload> kEncoderMutations[] = {
    {"dense column count larger than the payload", [](EncoderPayload& p) { p.n_dense = 1u << 30; },
     "dense columns do not fit"},
    {"dense column source past the last", [](EncoderPayload& p) { p.dense[0].source = 7; },
     "unknown dense column source 7"},
    {"field number past the schema", [](EncoderPayload& p) { p.dense[0].field = static_cast<std::uint8_t>(kNumFields); },
     "unknown field number"},
    {"outcome field as a feature",
     [](EncoderPayload& p) { first_column(p, DenseSource::Field).field = static_cast<std::uint8_t>(Field::WallTime); },
     "'wall_s' is an outcome field"},
    {"transform past the last", [](EncoderPayload& p) { p.dense[0].transform = 2; }, "unknown transform 2"},
    {"numeric column on a category field",
     [](EncoderPayload& p) { first_column(p, DenseSource::Field).field = static_cast<std::uint8_t>(Field::User); },
     "numeric column reads category field 'user'"},
    {"NaN column mean", [](EncoderPayload& p) { p.dense[0].mean = kNaN; }, "bad column statistics"},
    {"infinite inverse deviation", [](EncoderPayload& p) { p.dense[0].inv_std = kInf; }, "bad column statistics"},
    {"zero inverse deviation", [](EncoderPayload& p) { p.dense[0].inv_std = 0.0; }, "bad column statistics"},
    {"more category columns than fields", [](EncoderPayload& p) { p.n_cats = kNumFields + 1; },
     "category columns is more than there are fields"},
    {"category column on a numeric field",
     [](EncoderPayload& p) { p.cats[0].field = static_cast<std::uint8_t>(Field::CpuCores); },
     "category column reads numeric field 'cpu_cores'"},
    {"vocabulary count past the index range", [](EncoderPayload& p) { p.cats[0].n_values = 0xFFFFFFFFu; },
     "vocabulary of 4294967295 values does not fit"},
    {"vocabulary count larger than the payload", [](EncoderPayload& p) { p.cats[0].n_values = 1u << 30; },
     "values does not fit"},
    {"vocabulary value twice", [](EncoderPayload& p) { p.cats[0].values[1] = p.cats[0].values[0]; },
     "appears twice in the vocabulary of"},
    {"history width unlike the configuration's", [](EncoderPayload& p) { p.history_width += 1; },
     "history features do not match the history configuration"},
    {"history column past the history width",
     [](EncoderPayload& p) {
       first_column(p, DenseSource::History).index = static_cast<std::uint32_t>(p.history_width);
     },
     "is out of range"},
    {"a history configuration guard", [](EncoderPayload& p) { p.history.ratio = 2; }, "history config: bad ratio flag"},
    {"trailing bytes", [](EncoderPayload& p) { p.trailing = {0}; }, "encoder: trailing bytes"},
};

TEST(EncoderSection, EachGuardRefusesItsHostilePayload) {
  test::expect_each_refused(kEncoderMutations, real_encoder(), refusal, "hostile encoder: ");
}

}  // namespace
}  // namespace ttlpred
