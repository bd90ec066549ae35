// The history state reader's guards (features/history_io.cpp) and those of the history
// configuration it reads first (HistoryConfig::read, features/history_config.cpp), each met by
// a hostile payload in a valid container. A model file carries the history state as opaque
// bytes in their own sealed container and a service restores it on start and reload; anyone
// can recompute a checksum, so a truncated or flipped byte (which the checksum catches first)
// does not test these guards. Here a real learned state (keys, running jobs, pooled spreads)
// is decoded into a mirror of the format, one field is broken, and the payload is sealed again:
// each refusal must name its guard.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "features/history.hpp"
#include "section_payloads.hpp"

namespace ttlpred {
namespace {

using test::HistoryPayload;

const std::vector<std::uint8_t>& real_state_bytes() {
  static const std::vector<std::uint8_t> bytes = test::learned_section_state().to_bytes();
  return bytes;
}

HistoryPayload real_state() { return test::mirror_of<HistoryPayload>(real_state_bytes()); }

std::string refusal(const HistoryPayload& p) {
  return test::error_of([&] { HistoryState::from_bytes(test::sealed(p), "hostile history"); });
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(HistorySection, MirrorRewritesTheRealSectionByteForByte) {
  const HistoryPayload p = real_state();
  // The newest format, with every part the mutations below break.
  EXPECT_EQ(p.version, 5u);
  EXPECT_EQ(test::sealed(p), real_state_bytes());
  EXPECT_GE(p.keys.size(), 2u);
  EXPECT_EQ(p.running.size(), 3u);
  EXPECT_GE(p.pools.size(), 2u);
  ASSERT_FALSE(p.config.work.empty());
  EXPECT_EQ(p.running[0].log_work.size(), p.config.work.size());
  EXPECT_EQ(refusal(p), "(accepted)");
}

const test::Mutation<HistoryPayload> kStateMutations[] = {
    {"key count larger than the payload", [](HistoryPayload& p) { p.n_keys = 1ull << 40; }, "keys do not fit in the file"},
    {"key that counts no job", [](HistoryPayload& p) { p.keys[0].count = 0; }, "key entry 0 is inconsistent"},
    {"ring position past k", [](HistoryPayload& p) { p.keys[0].ring_pos = p.config.last_k; }, "key entry 0 is inconsistent"},
    {"ratio ring position past k", [](HistoryPayload& p) { p.keys[0].ratio_pos = p.config.last_k; },
     "key entry 0 is inconsistent"},
    {"more ratios than jobs", [](HistoryPayload& p) { p.keys[0].ratio_count = p.keys[0].count + 1; },
     "key entry 0 is inconsistent"},
    {"NaN moving average", [](HistoryPayload& p) { p.keys[0].ewma = kNaN; }, "key entry 0 is inconsistent"},
    {"more work rates than jobs", [](HistoryPayload& p) { p.keys[0].work[0].count = p.keys[0].count + 1; },
     "key entry 0 is inconsistent"},
    {"infinite sum of log rates", [](HistoryPayload& p) { p.keys[0].work[0].sum_log_rate = kInf; },
     "key entry 0 is inconsistent"},
    {"negative squared deviations", [](HistoryPayload& p) { p.keys[0].work[0].m2 = -1.0; }, "key entry 0 is inconsistent"},
    {"infinite squared deviations", [](HistoryPayload& p) { p.keys[0].work[0].m2 = kInf; }, "key entry 0 is inconsistent"},
    {"key entry twice", [](HistoryPayload& p) { p.keys[1].key = p.keys[0].key; }, "key entry 1 is duplicated"},
    {"last update after the last observed job", [](HistoryPayload& p) { p.last_seen[0] = p.observed + 1; },
     "a key's last update is after the last observed job"},
    {"running job count larger than the payload", [](HistoryPayload& p) { p.n_running = 1ull << 40; },
     "running jobs do not fit in the file"},
    {"running job with a key kind past the last",
     [](HistoryPayload& p) { p.running[0].present |= 1u << kNumHistoryKeys; }, "running job 0 names an unknown key kind"},
    {"running job with infinite work",
     [](HistoryPayload& p) { p.running[0].log_work[0] = std::numeric_limits<float>::infinity(); },
     "running job 0 has an infinite work"},
    {"running job without a finite start", [](HistoryPayload& p) { p.running[0].start = kNaN; },
     "running job 0 has no finite start time"},
    {"running job twice", [](HistoryPayload& p) { p.running[1].job = p.running[0].job; }, "running job 1 is duplicated"},
    {"more pooled spreads than the state keeps",
     [](HistoryPayload& p) { p.n_pools = kMaxSpreadPools + kNumHistoryKeys * kMaxWorkFields + 1; },
     "pooled spreads, more than the state keeps"},
    {"NaN pooled sum of squares", [](HistoryPayload& p) { p.pools[0].m2 = kNaN; },
     "pooled spread 0 is not a finite sum of squares"},
    {"negative pooled sum of squares", [](HistoryPayload& p) { p.pools[0].m2 = -1.0; },
     "pooled spread 0 is not a finite sum of squares"},
    {"pooled spread twice", [](HistoryPayload& p) { p.pools[1].pool = p.pools[0].pool; }, "pooled spread 1 is duplicated"},
    {"trailing bytes", [](HistoryPayload& p) { p.trailing = {0}; }, "history: trailing bytes after the last key"},
};

TEST(HistorySection, EachGuardRefusesItsHostilePayload) {
  test::expect_each_refused(kStateMutations, real_state(), refusal, "hostile history: ");
}

// The configuration's guards, met inside a history section (the encoder reads the same
// configuration the same way). Two of HistoryConfig::validate's checks cannot be met by a
// reader: an unknown prediction time (the byte is refused first, as a bad prediction time)
// and censored rates without match time (its flag exists only where the prediction time says
// match). More than three work fields are refused by the list read itself.
const test::Mutation<HistoryPayload> kConfigMutations[] = {
    {"ratio flag not 0 or 1", [](HistoryPayload& p) { p.config.ratio = 2; }, "history config: bad ratio flag"},
    {"work field number past the schema",
     [](HistoryPayload& p) { p.config.work[0] = static_cast<std::uint8_t>(kNumFields); },
     "history config: unknown work field number"},
    {"work-per-speed flag not 0 or 1", [](HistoryPayload& p) { p.config.per_speed = 2; },
     "history config: bad work-per-speed flag"},
    {"prediction time byte of submit time", [](HistoryPayload& p) { p.config.at = 0; },
     "history config: bad prediction time 0"},
    {"censored-rates flag of 0", [](HistoryPayload& p) { p.config.censored = 0; }, "history config: bad censored-rates flag"},
    {"last k of 0", [](HistoryPayload& p) { p.config.last_k = 0; }, "last_k must be 1..16, got 0"},
    {"last k past the ring", [](HistoryPayload& p) { p.config.last_k = kMaxLastK + 1; }, "last_k must be 1..16, got 17"},
    {"NaN moving-average weight", [](HistoryPayload& p) { p.config.ewma_alpha = kNaN; }, "ewma_alpha must be in (0, 1]"},
    {"key kind past the last", [](HistoryPayload& p) { p.config.keys[0] = kNumHistoryKeys; }, "unknown key kind 11"},
    {"key kind twice", [](HistoryPayload& p) { p.config.keys[1] = p.config.keys[0]; }, "key 'all' listed twice"},
    {"more work fields than the list holds",
     [](HistoryPayload& p) {
       p.config.n_work = kMaxWorkFields + 1;
       p.config.work.resize(kMaxWorkFields + 1, p.config.work[0]);
     },
     "array of 4 elements does not fit"},
    {"work field that measures no work",
     [](HistoryPayload& p) { p.config.work[0] = static_cast<std::uint8_t>(Field::CpuCores); },
     "cannot measure work (events, input_bytes or input_files)"},
    {"work field twice", [](HistoryPayload& p) { p.config.work[1] = p.config.work[0]; }, "work field 'events' listed twice"},
    {"work per host speed without work fields",
     [](HistoryPayload& p) {
       p.config.n_work = 0;
       p.config.work.clear();
       p.config.per_speed = 1;
     },
     "work per host speed without work fields"},
};

TEST(HistorySection, EachConfigurationGuardRefusesItsHostilePayload) {
  ASSERT_EQ(real_state().config.keys[0], static_cast<std::uint8_t>(HistoryKey::All));
  ASSERT_EQ(real_state().config.work[0], static_cast<std::uint8_t>(Field::Events));
  test::expect_each_refused(kConfigMutations, real_state(), refusal, "hostile history: ");
}

}  // namespace
}  // namespace ttlpred
