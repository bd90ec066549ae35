#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "features/encoder.hpp"
#include "features/encoder_math.hpp"
#include "feature_test_table.hpp"

namespace ttlpred {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<std::size_t> all_rows(const JobTable& t) {
  std::vector<std::size_t> r(t.rows());
  std::iota(r.begin(), r.end(), std::size_t{0});
  return r;
}

EncoderOptions only(std::vector<Field> fields) {
  EncoderOptions o;
  o.fields = std::move(fields);
  o.cyclic_time = false;
  return o;
}

TEST(Encoder, TransformsAndStandardizesByHand) {
  JobTable t;
  const double mhz[] = {1000, 2000, 3000, 4000};
  const double bytes[] = {0, 9, 99, 999};  // log1p: 0, ln 10, ln 100, ln 1000 (equally spaced)
  const double wait[] = {10, kNaN, 30, kNaN};
  for (int i = 0; i < 4; ++i) {
    JobRecord r;
    r[Field::CpuMhz] = mhz[i];
    r[Field::InputBytes] = bytes[i];
    r[Field::WaitTime] = wait[i];
    t.append(r);
  }
  const auto rows = all_rows(t);
  const auto e = FeatureEncoder::fit(t, rows, nullptr, nullptr, only({Field::InputBytes, Field::CpuMhz, Field::WaitTime}));
  EXPECT_EQ(e.dense_names(), (std::vector<std::string>{"log1p(input_bytes)", "cpu_mhz", "log1p(wait_s)", "missing(wait_s)"}));
  ASSERT_EQ(e.dense_width(), 4u);
  EXPECT_EQ(e.cat_width(), 0u);

  // Four equally spaced values: z = (x - mean) / population std = -3/sqrt(5), -1/sqrt(5), ...
  const double z[] = {-3 / std::sqrt(5.0), -1 / std::sqrt(5.0), 1 / std::sqrt(5.0), 3 / std::sqrt(5.0)};
  const auto b = e.encode_batch(t, rows, nullptr);
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(b.dense_row(i)[0], z[i], 1e-6) << i;
    EXPECT_NEAR(b.dense_row(i)[1], z[i], 1e-6) << i;
    EXPECT_NEAR(b.dense_row(i)[3], i % 2 == 0 ? -1.0 : 1.0, 1e-6) << i;  // indicator: mean 0.5, std 0.5
  }
  // wait: log1p(10), log1p(30) standardize to -1, +1; missing becomes 0 (the training mean).
  EXPECT_NEAR(b.dense_row(0)[2], -1.0, 1e-6);
  EXPECT_EQ(b.dense_row(1)[2], 0.0f);
  EXPECT_NEAR(b.dense_row(2)[2], 1.0, 1e-6);
  EXPECT_NEAR(e.dense_columns()[2].mean, (std::log1p(10.0) + std::log1p(30.0)) / 2, 1e-12);

  // Negative sizes are clamped to 0 before log1p rather than producing NaN.
  EXPECT_EQ(encoder_math::apply_transform(NumericTransform::Log1p, -5.0), 0.0);
  EXPECT_EQ(default_transform(Field::InputBytes), NumericTransform::Log1p);
  EXPECT_EQ(default_transform(Field::HostSpeed), NumericTransform::Identity);
}

TEST(Encoder, CyclicTimeFeatures) {
  using encoder_math::cyclic_value;
  const double monday = 4 * 86400.0;  // 1970-01-05 00:00 UTC was a Monday
  EXPECT_NEAR(cyclic_value(DenseSource::HourSin, monday + 6 * 3600), 1.0, 1e-12);
  EXPECT_NEAR(cyclic_value(DenseSource::HourCos, monday + 12 * 3600), -1.0, 1e-12);
  EXPECT_NEAR(cyclic_value(DenseSource::WeekSin, monday), 0.0, 1e-12);
  EXPECT_NEAR(cyclic_value(DenseSource::WeekCos, monday), 1.0, 1e-12);
  EXPECT_NEAR(cyclic_value(DenseSource::WeekCos, monday + 3.5 * 86400), -1.0, 1e-12);  // Thursday noon
  EXPECT_NEAR(cyclic_value(DenseSource::HourSin, -18 * 3600.0), 1.0, 1e-12);  // before 1970 too
  EXPECT_TRUE(std::isnan(cyclic_value(DenseSource::HourSin, kNaN)));
}

TEST(Encoder, VocabularyMinimumFrequencyAndUnknowns) {
  JobTable t;
  for (const char* u : {"a", "b", "a", "c", "b", "a", ""}) {
    JobRecord r;
    r.text(Field::User) = u;
    t.append(r);
  }
  auto opt = only({Field::User});
  opt.min_category_count = 2;
  const auto e = FeatureEncoder::fit(t, all_rows(t), nullptr, nullptr, opt);
  ASSERT_EQ(e.cat_width(), 1u);
  EXPECT_EQ(e.cat_names(), (std::vector<std::string>{"user"}));
  EXPECT_EQ(e.cat_cardinality(), (std::vector<std::uint32_t>{3}));  // OOV + a + b; c is too rare
  EXPECT_EQ(e.category_columns()[0].vocabulary, (std::vector<std::string>{"a", "b"}));  // most frequent first

  const auto b = e.encode_batch(t, all_rows(t), nullptr);
  EXPECT_EQ(b.cats, (std::vector<std::uint32_t>{1, 2, 1, 0, 2, 1, 0}));
  EXPECT_EQ(b.cat_cardinality, e.cat_cardinality());

  JobRecord r;
  std::uint32_t idx = 99;
  r.text(Field::User) = "never-seen";
  e.encode_one(r, nullptr, nullptr, &idx);
  EXPECT_EQ(idx, 0u);
  r.text(Field::User) = "b";
  e.encode_one(r, nullptr, nullptr, &idx);
  EXPECT_EQ(idx, 2u);

  // A column whose values are all rare says nothing: it is left out.
  opt.min_category_count = 4;
  EXPECT_EQ(FeatureEncoder::fit(t, all_rows(t), nullptr, nullptr, opt).cat_width(), 0u);
}

TEST(Encoder, RefusesOutcomeFieldsAndLateFields) {
  const JobTable t = test::random_feature_table(50, 2);
  const auto rows = all_rows(t);
  for (Field f : {Field::WallTime, Field::CpuTime, Field::MaxRss, Field::Status, Field::ExpectedWall}) {
    try {
      FeatureEncoder::fit(t, rows, nullptr, nullptr, only({f}));
      FAIL() << info(f).name << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("leak the target"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(info(f).name), std::string::npos) << e.what();
    }
  }
  auto submit_only = only({Field::Site});
  submit_only.max_phase = Phase::Submit;
  EXPECT_THROW(FeatureEncoder::fit(t, rows, nullptr, nullptr, submit_only), Error);

  // The default set: Submit/Match fields with values, no identifiers, no outcomes.
  const auto fields = default_feature_fields(t, rows, Phase::Match);
  for (Field f : fields) {
    EXPECT_NE(info(f).phase, Phase::Outcome) << info(f).name;
    EXPECT_NE(f, Field::JobId);
    EXPECT_NE(f, Field::MasterJobId);
    EXPECT_NE(f, Field::SubmitTime);
  }
  // package (in the table) is a drifting name: left out, like production_tag, pass_name, anchor_run.
  EXPECT_EQ(fields, (std::vector<Field>{Field::User, Field::JobType, Field::Queue, Field::CpuCores,
                                         Field::InputFiles, Field::InputBytes, Field::Events, Field::RequestedTtl,
                                         Field::WaitTime, Field::Site, Field::CpuMhz, Field::HostSpeed}));

  // History work rates per host speed read a match-time field: refused at submission time.
  const HistoryConfig hcfg = HistoryConfig::for_table(t);
  ASSERT_TRUE(hcfg.work_per_speed);
  const HistoryMatrix hm = compute_history(t, hcfg);
  auto at_submit = only({Field::CpuCores});
  at_submit.max_phase = Phase::Submit;
  try {
    FeatureEncoder::fit(t, rows, &hm, &hcfg, at_submit);
    FAIL() << "work rates per host speed accepted at submission";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("host_speed"), std::string::npos) << e.what();
  }
  HistoryConfig submit_cfg = hcfg;
  submit_cfg.work_per_speed = false;
  const HistoryMatrix hm2 = compute_history(t, submit_cfg);
  EXPECT_EQ(FeatureEncoder::fit(t, rows, &hm2, &submit_cfg, at_submit).history_width(), submit_cfg.width());
}

// A fitted encoder over the random table, with history features, trained on the first 70%.
struct Fitted {
  JobTable table;
  HistoryConfig history_config;
  HistoryMatrix history;
  FeatureEncoder encoder;
};
Fitted fit_random(std::size_t rows, unsigned seed, const EncoderOptions& options = {}) {
  Fitted f{test::random_feature_table(rows, seed), {}, {}, {}};
  f.history_config = HistoryConfig::for_table(f.table);
  f.history = compute_history(f.table, f.history_config);
  std::vector<std::size_t> train(rows * 7 / 10);
  std::iota(train.begin(), train.end(), std::size_t{0});
  f.encoder = FeatureEncoder::fit(f.table, train, &f.history, &f.history_config, options);
  return f;
}

TEST(Encoder, BatchEqualsOneByOne) {
  const Fitted f = fit_random(1000, 4);
  const auto& e = f.encoder;
  EXPECT_EQ(e.history_width(), f.history_config.width());
  EXPECT_GT(e.dense_width(), f.history_config.width() + 10);  // fields, cyclic time, indicators, history
  EXPECT_GE(e.cat_width(), 4u);
  const auto names = e.dense_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "missing(cpu_mhz)"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "hour_sin"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "h_user_log_mean_k"), names.end());

  // Every row, in a shuffled order, including rows never seen in training.
  std::vector<std::size_t> rows = all_rows(f.table);
  std::reverse(rows.begin(), rows.end());
  std::rotate(rows.begin(), rows.begin() + 137, rows.end());
  const EncodedBatch b = e.encode_batch(f.table, rows, &f.history);
  ASSERT_EQ(b.rows, rows.size());
  std::vector<float> dense(e.dense_width());
  std::vector<std::uint32_t> cats(e.cat_width());
  JobRecord r;
  std::size_t oov = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    f.table.record(rows[i], r);
    e.encode_one(r, f.history.row(rows[i]), dense.data(), cats.data());
    ASSERT_TRUE(test::same_bits(dense.data(), b.dense_row(i), dense.size())) << "row " << rows[i];
    for (std::size_t j = 0; j < cats.size(); ++j) {
      ASSERT_EQ(cats[j], b.cat_row(i)[j]);
      ASSERT_LT(cats[j], b.cat_cardinality[j]);
      oov += cats[j] == 0;
    }
    for (float v : dense) ASSERT_TRUE(std::isfinite(v));
  }
  EXPECT_GT(oov, 0u);

  // Training columns come out standardized over the training rows, every one of them: mean 0,
  // and the known values (missing ones encode to exactly 0, the training mean) have
  // population std 1; a constant column encodes to 0 everywhere.
  std::vector<std::size_t> train(700);
  std::iota(train.begin(), train.end(), std::size_t{0});
  const EncodedBatch tb = e.encode_batch(f.table, train, &f.history);
  std::size_t unit_std_columns = 0;
  for (std::size_t k = 0; k < e.dense_width(); ++k) {
    double sum = 0, sq = 0;
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < tb.rows; ++i) {
      const double v = tb.dense_row(i)[k];
      sum += v;
      sq += v * v;
      nonzero += v != 0.0;
    }
    EXPECT_NEAR(sum / static_cast<double>(tb.rows), 0.0, 1e-5) << names[k];
    if (nonzero == 0) continue;  // constant in training
    EXPECT_NEAR(sq / static_cast<double>(nonzero), 1.0, 1e-4) << names[k];
    ++unit_std_columns;
  }
  // The history feature the test table is built to vary is among the standardized ones.
  const std::size_t user_mean_k = static_cast<std::size_t>(std::find(names.begin(), names.end(), "h_user_log_mean_k") - names.begin());
  ASSERT_LT(user_mean_k, e.dense_width());
  EXPECT_GT(e.dense_columns()[user_mean_k].inv_std, 0.0);
  EXPECT_NE(e.dense_columns()[user_mean_k].inv_std, 1.0);
  EXPECT_GE(unit_std_columns, e.dense_width() / 2);
}

TEST(Encoder, SerializeRoundTripGivesIdenticalEncodings) {
  const Fitted f = fit_random(600, 8);
  const auto bytes = f.encoder.to_bytes();
  const FeatureEncoder back = FeatureEncoder::from_bytes(bytes, "encoder section");
  EXPECT_EQ(back.to_bytes(), bytes);
  EXPECT_EQ(back.dense_names(), f.encoder.dense_names());
  EXPECT_EQ(back.cat_cardinality(), f.encoder.cat_cardinality());
  EXPECT_EQ(back.history_config(), f.history_config);
  const auto rows = all_rows(f.table);
  const auto a = f.encoder.encode_batch(f.table, rows, &f.history);
  const auto b = back.encode_batch(f.table, rows, &f.history);
  EXPECT_TRUE(test::same_bits(a.dense.data(), b.dense.data(), a.dense.size()));
  EXPECT_EQ(a.cats, b.cats);
}

// The error an encoder payload sealed at `version` is refused with; "(accepted)" when it loads.
std::string refusal_of_payload(const std::vector<std::uint8_t>& payload, std::uint32_t version) {
  try {
    FeatureEncoder::from_bytes(seal_container("TTLENC", version, payload), "encoder section");
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Encoder, RefusesTruncatedCorruptedFutureOrLeakingBytes) {
  const Fitted f = fit_random(300, 6);
  const auto bytes = f.encoder.to_bytes();
  for (std::size_t cut = 0; cut < bytes.size(); cut += 1 + bytes.size() / 40) {
    std::vector<std::uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_THROW(FeatureEncoder::from_bytes(part, "encoder section"), Error) << "cut " << cut;
  }
  auto future = bytes;
  future[8] = 99;  // container version field
  try {
    FeatureEncoder::from_bytes(future, "encoder section");
    FAIL() << "future version accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
  }
  auto corrupted = bytes;
  corrupted[bytes.size() - 5] ^= 1;
  EXPECT_THROW(FeatureEncoder::from_bytes(corrupted, "encoder section"), Error);

  // A well-sealed payload that names an outcome field is refused too.
  auto payload = open_container(bytes, "TTLENC", 2, "x").payload;
  ASSERT_EQ(f.encoder.dense_columns()[0].source, DenseSource::Field);
  payload[9] = static_cast<std::uint8_t>(Field::WallTime);  // u64 count, u8 source, u8 field
  const std::string refused = refusal_of_payload(payload, 2);
  EXPECT_NE(refused.find("wall_s"), std::string::npos) << refused;
}

// Piecewise bins (EncoderOptions::piecewise_bins) come after the dense columns, which stay
// as they were to the bit; the bins are those of the dense values by the encoder's edges; one
// job and a batch agree; the bytes round-trip and refuse every truncation.
TEST(Encoder, PiecewiseBinsFollowTheDenseColumns) {
  EncoderOptions with_bins;
  with_bins.piecewise_bins = 6;
  const Fitted plain = fit_random(800, 5), f = fit_random(800, 5, with_bins);
  const FeatureEncoder& e = f.encoder;
  const std::size_t base = plain.encoder.dense_width();
  ASSERT_EQ(e.dense_columns().size(), base);
  // The numeric fields that vary get bins; history, cyclic time and indicators none.
  std::size_t fields = 0;
  for (const auto& c : e.dense_columns()) fields += c.source == DenseSource::Field;
  ASSERT_GE(e.piecewise_columns().size(), 3u);
  ASSERT_LE(e.piecewise_columns().size(), fields);
  ASSERT_EQ(e.dense_width(), base + piecewise_width(e.piecewise_columns()));
  EXPECT_EQ(e.piecewise_bins(), 6u);
  const auto names = e.dense_names();
  ASSERT_EQ(names.size(), e.dense_width());
  const auto& first = e.piecewise_columns()[0];
  EXPECT_EQ(names[base], names[first.column] + "_bin1");
  for (const auto& pc : e.piecewise_columns()) {
    EXPECT_LE(pc.bins(), 6u);
    EXPECT_EQ(e.dense_columns()[pc.column].source, DenseSource::Field);
  }

  const auto rows = all_rows(f.table);
  const EncodedBatch b = e.encode_batch(f.table, rows, &f.history);
  const EncodedBatch p = plain.encoder.encode_batch(f.table, rows, &f.history);
  std::vector<float> dense(e.dense_width());
  std::vector<std::uint32_t> cats(e.cat_width());
  JobRecord r;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_TRUE(test::same_bits(b.dense_row(i), p.dense_row(i), base)) << "row " << i;
    // By hand, from the edges.
    const float* bins = b.dense_row(i) + base;
    for (const auto& pc : e.piecewise_columns()) {
      const float x = b.dense_row(i)[pc.column];
      for (std::size_t t = 1; t < pc.edges.size(); ++t, ++bins) {
        const double lo = pc.edges[t - 1], hi = pc.edges[t];
        const double want = x < lo ? -1.0 : x >= hi ? 1.0 : 2.0 * (x - lo) / (hi - lo) - 1.0;
        ASSERT_NEAR(*bins, want, 1e-5) << "row " << i << " column " << pc.column << " bin " << t;
      }
    }
    f.table.record(rows[i], r);
    e.encode_one(r, f.history.row(rows[i]), dense.data(), cats.data());
    ASSERT_TRUE(test::same_bits(dense.data(), b.dense_row(i), dense.size())) << "row " << i;
  }

  const auto bytes = e.to_bytes();
  const FeatureEncoder back = FeatureEncoder::from_bytes(bytes, "encoder section");
  EXPECT_EQ(back.to_bytes(), bytes);
  EXPECT_EQ(back.piecewise_bins(), 6u);
  const EncodedBatch bb = back.encode_batch(f.table, rows, &f.history);
  EXPECT_TRUE(test::same_bits(bb.dense.data(), b.dense.data(), b.dense.size()));
  for (std::size_t cut = 0; cut < bytes.size(); cut += 1 + bytes.size() / 60) {
    std::vector<std::uint8_t> part(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_THROW(FeatureEncoder::from_bytes(part, "encoder section"), Error) << "cut " << cut;
  }
  // A sealed payload whose last edge falls below the one before it is refused by name.
  auto payload = open_container(bytes, "TTLENC", 5, "x").payload;
  const float lower = e.piecewise_columns().back().edges.front() - 1.0f;
  std::memcpy(payload.data() + payload.size() - sizeof(float), &lower, sizeof(float));
  const std::string refused = refusal_of_payload(payload, 5);
  EXPECT_NE(refused.find("strictly ascending"), std::string::npos) << refused;
}

// Version 5 carries the history configuration's optional bytes by flags: a configuration
// made for match time with censored work rates round-trips with its bins.
TEST(Encoder, PiecewiseBinsKeepAMatchTimeConfiguration) {
  JobTable t = test::random_feature_table(500, 9);
  HistoryConfig cfg = HistoryConfig::for_table(t);
  cfg.at = PredictionTime::Match;
  cfg.censored_rates = !cfg.work_fields.empty();
  const HistoryMatrix h = compute_history(t, cfg);
  const auto rows = all_rows(t);
  EncoderOptions o;
  o.piecewise_bins = 3;
  const FeatureEncoder e = FeatureEncoder::fit(t, rows, &h, &cfg, o);
  const FeatureEncoder back = FeatureEncoder::from_bytes(e.to_bytes(), "encoder section");
  EXPECT_EQ(back.history_config(), cfg);
  EXPECT_EQ(back.dense_width(), e.dense_width());
  EXPECT_EQ(back.to_bytes(), e.to_bytes());
}

// Version 1 encoders (model files written before the work-rate statistics) still load: their
// history configuration has no work fields, and they encode exactly as before.
TEST(Encoder, LoadsVersionOneBytes) {
  Fitted f{test::random_feature_table(400, 3), {}, {}, {}};
  f.history_config = HistoryConfig::for_table(f.table);
  f.history_config.work_fields.clear();
  f.history_config.work_per_speed = false;
  f.history = compute_history(f.table, f.history_config);
  const auto rows = all_rows(f.table);
  f.encoder = FeatureEncoder::fit(f.table, rows, &f.history, &f.history_config);
  // The version 2 payload ends with the history configuration's work fields (u64 count 0)
  // and per-speed flag (u8); version 1 ends before them.
  auto payload = open_container(f.encoder.to_bytes(), "TTLENC", 2, "x").payload;
  payload.resize(payload.size() - 9);
  const FeatureEncoder old = FeatureEncoder::from_bytes(seal_container("TTLENC", 1, payload), "v1 encoder");
  EXPECT_EQ(old.history_config(), f.history_config);
  EXPECT_EQ(old.to_bytes(), f.encoder.to_bytes());
  const auto a = f.encoder.encode_batch(f.table, rows, &f.history);
  const auto b = old.encode_batch(f.table, rows, &f.history);
  EXPECT_TRUE(test::same_bits(a.dense.data(), b.dense.data(), a.dense.size()));
}

TEST(Encoder, RefusesMismatchedHistory) {
  const Fitted f = fit_random(100, 1);
  HistoryMatrix narrow = f.history;
  narrow.width -= 1;
  EXPECT_THROW(f.encoder.encode_batch(f.table, all_rows(f.table), &narrow), Error);
  EXPECT_THROW(f.encoder.encode_batch(f.table, all_rows(f.table), nullptr), Error);
  std::vector<std::size_t> bad_rows = {f.table.rows()};
  EXPECT_THROW(f.encoder.encode_batch(f.table, bad_rows, &f.history), Error);
  EXPECT_THROW(FeatureEncoder::fit(f.table, bad_rows, nullptr, nullptr), Error);
  EXPECT_THROW(FeatureEncoder::fit(f.table, std::vector<std::size_t>{}, nullptr, nullptr), Error);
  EXPECT_THROW(FeatureEncoder::fit(f.table, all_rows(f.table), &f.history, nullptr), Error);
}

}  // namespace
}  // namespace ttlpred
