// The online calibrator's state reader guards (OnlineCalibrator::read_state,
// model/online_calibration.cpp), each met by a hostile state. A service saves this state with
// its history snapshot and restores it on start; a refused one is logged and the model's level
// used instead, so the guards are all that stands between a hand-edited snapshot (its checksum
// recomputed) and the TTLs the service answers with. A real learned state is decoded into a
// mirror of its format, one field is broken, and each refusal must name its guard.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "model/calibration_fixtures.hpp"
#include "model/online_calibration.hpp"
#include "section_bytes.hpp"
#include "util/binary_io.hpp"

namespace ttlpred {
namespace {

using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kAlpha = 0.1;

// The state as OnlineCalibrator::write_state puts it; the calibration at its end is kept as
// bytes (model/safe_ttl.cpp's layout, tested in safe_ttl_io_test.cpp).
struct OnlineState {
  struct Key {
    std::uint32_t key = 0;
    double offset = 0;
    std::uint64_t n = 0;
  };
  struct Outcome {
    float wall_s = 0, pred_s = 0, requested_s = 0;
    std::uint32_t group = 0;
  };
  std::uint32_t version = 0;
  std::uint8_t method = 0;
  double alpha = 0;
  std::uint64_t outcomes = 0, kills = 0;
  double level = 0;
  std::uint64_t n_levels = 0;
  std::vector<double> levels;
  std::uint64_t n_weights = 0;
  std::vector<double> weights;
  std::uint64_t n_keys = 0;
  std::vector<Key> keys;
  std::uint64_t n_window = 0;
  std::vector<Outcome> window;
  std::uint64_t since_refit = 0;
  std::vector<std::uint8_t> calibration;
  std::vector<std::uint8_t> trailing;
};

template <class IO>
void layout(IO& io, OnlineState& s) {
  io(s.version);
  io(s.method);
  io(s.alpha);
  io(s.outcomes);
  io(s.kills);
  io(s.level);
  io.counted(s.n_levels, s.levels);
  for (auto& v : s.levels) io(v);
  io.counted(s.n_weights, s.weights);
  for (auto& v : s.weights) io(v);
  io.counted(s.n_keys, s.keys);
  for (auto& k : s.keys) {
    io(k.key);
    io(k.offset);
    io(k.n);
  }
  io.counted(s.n_window, s.window);
  for (auto& o : s.window) {
    io(o.wall_s);
    io(o.pred_s);
    io(o.requested_s);
    io(o.group);
  }
  io(s.since_refit);
  io.rest(s.calibration);
}

// Two experts, so that the expert lists are there to break.
OnlineCalibrationOptions two_experts() {
  OnlineCalibrationOptions o;
  o.method = OnlineMethod::MultiAci;
  o.gammas = {0.01, 0.1};
  return o;
}

OnlineJob job_at(double pred_s) {
  OnlineJob j;
  j.pred_s = pred_s;
  return j;
}

// The state of a calibrator that has seen a kill and a finished job.
std::vector<std::uint8_t> learned_state_bytes() {
  OnlineCalibrator c(test::hundred_residuals(), kAlpha, two_experts());
  c.observe(c.decide(job_at(100)), 1000);
  c.observe(c.decide(job_at(100)), 50);
  BinaryWriter w;
  c.write_state(w);
  return w.take();
}

OnlineState learned_state() { return test::decoded<OnlineState>(learned_state_bytes()); }

std::string refusal(const OnlineState& s, const OnlineCalibrationOptions& options = two_experts()) {
  OnlineCalibrator reader(test::hundred_residuals(), kAlpha, options);
  const std::vector<std::uint8_t> bytes = test::encoded(s);
  BinaryReader r(bytes, "hostile learned state");
  return test::error_of([&] { reader.read_state(r); });
}

TEST(OnlineCalibrationState, MirrorRewritesTheRealStateByteForByte) {
  const OnlineState s = learned_state();
  EXPECT_EQ(test::encoded(s), learned_state_bytes());
  EXPECT_EQ(s.levels.size(), 2u);
  EXPECT_EQ(s.outcomes, 2u);
  EXPECT_EQ(refusal(s), "(accepted)");
}

const test::Mutation<OnlineState> kStateMutations[] = {
    {"another format version", [](OnlineState& s) { s.version = 2; }, "online calibration state has an unknown version"},
    {"another method", [](OnlineState& s) { s.method = static_cast<std::uint8_t>(OnlineMethod::Aci); },
     "online calibration state was written by another method than multi-aci"},
    {"another alpha", [](OnlineState& s) { s.alpha = 0.2; }, "online calibration state was written for alpha 0.200000"},
    {"more kills than outcomes", [](OnlineState& s) { s.kills = s.outcomes + 1; },
     "online calibration state counts more kills than outcomes"},
    {"NaN level", [](OnlineState& s) { s.level = kNaN; }, "online calibration level is not finite"},
    {"more experts than the options",
     [](OnlineState& s) {
       s.levels.push_back(kAlpha);
       s.n_levels = s.levels.size();
     },
     "online calibration state has 3 experts, the options 2"},
    {"fewer weights than experts",
     [](OnlineState& s) {
       s.weights.pop_back();
       s.n_weights = s.weights.size();
     },
     "experts, the options 2"},
    {"NaN expert level", [](OnlineState& s) { s.levels[0] = kNaN; }, "online calibration expert state is not finite"},
    {"negative expert weight", [](OnlineState& s) { s.weights[1] = -0.5; }, "online calibration expert state is not finite"},
    {"infinite expert weight", [](OnlineState& s) { s.weights[1] = std::numeric_limits<double>::infinity(); },
     "online calibration expert state is not finite"},
    {"key count past the bound", [](OnlineState& s) { s.n_keys = (1u << 24) + 1; },
     "online calibration state claims 16777217 keys"},
    {"NaN key offset",
     [](OnlineState& s) {
       s.keys.push_back({7, kNaN, 3});
       s.n_keys = s.keys.size();
     },
     "online calibration key offset is not finite"},
    {"window larger than its size", [](OnlineState& s) { s.n_window = two_experts().window + 1; },
     "online calibration window holds more outcomes than its size"},
    {"NaN outcome in the window",
     [](OnlineState& s) {
       s.window.push_back({std::numeric_limits<float>::quiet_NaN(), 100, 0, 0});
       s.n_window = s.window.size();
     },
     "online calibration window holds a non-finite outcome"},
    {"empty calibration", [](OnlineState& s) { s.calibration = test::written(SafeTtlCalibration{}); },
     "online calibration state carries an empty calibration"},
    {"hostile calibration",
     [](OnlineState& s) {
       SafeTtlCalibration c = test::hundred_residuals();
       c.floor_s = -1;
       s.calibration = test::written(c);
     },
     "safe-TTL floor must be a positive number"},
};

TEST(OnlineCalibrationState, EachGuardRefusesItsHostileState) {
  test::expect_each_refused(kStateMutations, learned_state(), [](const OnlineState& s) { return refusal(s); },
                            "hostile learned state: ");
}

// A level stepped in log space only scales, so a state whose level is at or below zero (an
// additive rule's) is refused where the options step in log space.
TEST(OnlineCalibrationState, ALogLevelReaderRefusesALevelItCannotTake) {
  OnlineCalibrationOptions aci_log;
  aci_log.method = OnlineMethod::Aci;
  aci_log.log_level = true;
  OnlineCalibrator c(test::hundred_residuals(), kAlpha, aci_log);
  BinaryWriter w;
  c.write_state(w);
  OnlineState s = test::decoded<OnlineState>(w.bytes());
  EXPECT_EQ(refusal(s, aci_log), "(accepted)");
  s.level = 0.0;
  EXPECT_THAT(refusal(s, aci_log), HasSubstr("online calibration state holds level 0.000000, which a level stepped in "
                                             "log space cannot take"));
}

}  // namespace
}  // namespace ttlpred
