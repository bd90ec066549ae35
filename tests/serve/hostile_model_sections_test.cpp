// A model file with one hostile section and a correct checksum, through load_model: the loader
// of `serve --model` and of /admin/reload. The model file keeps the encoder, the history state
// and the int8 calibration as opaque bytes its own reader never checks, and anyone can
// recompute a checksum; each such file must be refused with an error that names the file, the
// section and the guard (not crash, not load). One hostile section of each kind: the three
// opaque ones, and the network and the safe-TTL calibration that the model file reader reads
// itself. The guards one by one are tested with each reader (tests/features/*_io_test.cpp,
// tests/model/*_io_test.cpp, tests/quant/calibration_io_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "features/section_payloads.hpp"
#include "model/mlp_io.hpp"
#include "model/model_test_util.hpp"
#include "quant/activation_ranges.hpp"
#include "quant/activation_ranges_io.hpp"
#include "serve/service.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"
#include "util/file_io.hpp"

namespace ttlpred {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace tag = test::section_tag;

// The test model for match time with censored work rates, with a history state that has seen
// a few jobs and an int8 calibration of its network: every section a service reads.
struct RealModel {
  ModelFile model;
  std::vector<std::uint8_t> bytes;
};

const RealModel& real_model() {
  static const RealModel real = [] {
    const std::string path = test::temp_dir() + "/real.model";
    test::write_test_model(path, 7, {HistoryKey::All, HistoryKey::User}, PredictionTime::Match, true);
    ModelFile m = load_model_file(path);
    HistoryState history(FeatureEncoder::from_bytes(m.encoder, path).history_config());
    JobRecord r;
    for (int i = 0; i < 12; ++i) {
      r.clear();
      r.text(Field::User) = test::test_users()[static_cast<std::size_t>(i) % 3];
      r[Field::SubmitTime] = 1.7e9 + 60.0 * i;
      r[Field::WaitTime] = 30;
      r[Field::WallTime] = 600.0 + 100.0 * i;
      r[Field::Events] = 50.0 + i;
      history.observe(r);
    }
    m.history = history.to_bytes();
    const std::vector<float> dense(4 * m.mlp.dense_inputs, 0.5f);
    const std::vector<std::uint32_t> cats(4 * m.mlp.embeddings.size(), 1);
    m.int8_calibration = quant::activation_ranges_bytes(quant::measure_activation_ranges(m.mlp, dense.data(), cats.data(), 4));
    return RealModel{m, model_file_bytes(m)};
  }();
  return real;
}

// What load_model says of `bytes` written to the file `name`.
std::string load_refusal(const std::string& name, const std::vector<std::uint8_t>& bytes, std::string* path_out) {
  const std::string path = test::temp_dir() + "/" + name;
  write_file_atomic(path, bytes);
  *path_out = path;
  return test::error_of([&] { serve::load_model(path, PredictorOptions{}); });
}

struct HostileFile {
  const char* name;
  std::function<std::vector<std::uint8_t>(const RealModel&)> make;
  const char* section;  // how the error names the section
  const char* guard;
};

const HostileFile kHostileFiles[] = {
    {"encoder-vocabulary-twice.model",
     [](const RealModel& real) {
       auto p = test::mirror_of<test::EncoderPayload>(real.model.encoder);
       p.cats[0].values[1] = p.cats[0].values[0];
       return test::with_section_body(real.bytes, tag::kEncoder, test::sealed(p));
     },
     "(encoder section)", "appears twice in the vocabulary"},
    {"history-key-twice.model",
     [](const RealModel& real) {
       auto p = test::mirror_of<test::HistoryPayload>(real.model.history);
       p.keys[1].key = p.keys[0].key;
       return test::with_section_body(real.bytes, tag::kHistory, test::sealed(p));
     },
     "(history section)", "history: key entry 1 is duplicated"},
    {"int8-nan-range.model",
     [](const RealModel& real) {
       quant::ActivationRanges t = quant::parse_activation_ranges(real.model.int8_calibration, "real");
       t.layer_inputs[0].lo = std::numeric_limits<float>::quiet_NaN();
       return test::with_section_body(real.bytes, tag::kInt8Calibration, quant::activation_ranges_bytes(t));
     },
     "int8 calibration", "layer 0 range [nan, "},
    {"network-nan-weight.model",
     [](const RealModel& real) {
       MlpModel mlp = real.model.mlp;
       mlp.layers[0].weight[0] = std::numeric_limits<float>::quiet_NaN();
       BinaryWriter w;
       write_mlp(w, mlp);
       return test::with_section_body(real.bytes, tag::kMlp, w.bytes());
     },
     "(architecture and weights section)", "layers[0].weight holds a non-finite value"},
    {"safe-ttl-nan-floor.model",
     [](const RealModel& real) {
       SafeTtlCalibration c = real.model.safe_ttl;
       c.floor_s = std::numeric_limits<double>::quiet_NaN();
       return test::with_section_body(real.bytes, tag::kSafeTtl, test::written(c));
     },
     "(safe-TTL calibration section)", "safe-TTL floor must be a positive number"},
};

TEST(HostileModelSections, TheRealModelAndItsResealedSectionsLoad) {
  const RealModel& real = real_model();
  std::string path;
  EXPECT_EQ(load_refusal("real-again.model", real.bytes, &path), "(accepted)");
  // The mirrors rewrite the opaque sections as they were: what the hostile files change is
  // the one field each breaks.
  auto resealed = test::with_section_body(
      real.bytes, tag::kEncoder, test::sealed(test::mirror_of<test::EncoderPayload>(real.model.encoder)));
  resealed = test::with_section_body(resealed, tag::kHistory,
                                     test::sealed(test::mirror_of<test::HistoryPayload>(real.model.history)));
  EXPECT_EQ(resealed, real.bytes);
}

TEST(HostileModelSections, LoadModelRefusesEachNamingFileSectionAndGuard) {
  for (const auto& f : kHostileFiles) {
    std::string path;
    const std::string msg = load_refusal(f.name, f.make(real_model()), &path);
    EXPECT_THAT(msg, AllOf(HasSubstr(path), HasSubstr(f.section), HasSubstr(f.guard))) << f.name;
  }
}

}  // namespace
}  // namespace ttlpred
