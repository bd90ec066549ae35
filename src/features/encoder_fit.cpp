// Fitting the encoder on training rows: which columns, their transforms, their statistics,
// and the category vocabularies.
#include <algorithm>
#include <cmath>

#include "features/encoder.hpp"
#include "features/encoder_math.hpp"

namespace ttlpred {
namespace {

using encoder_math::apply_transform;

bool is_identifier(Field f) { return f == Field::JobId || f == Field::MasterJobId || f == Field::SubmitTime; }

// Names of one production, software release or data run: every later period brings new
// values, so as features they let the network memorize productions that the jobs it will
// score never belong to (on the synthetic trace, validation RMSE rose after one epoch and the
// scored RMSE was 1.28 h with them, 1.03 h without). What they stand for reaches the model
// through the history keys (production, type_package) and their work rates instead.
bool is_drifting_name(Field f) {
  return f == Field::ProductionTag || f == Field::Package || f == Field::PassName || f == Field::AnchorRun;
}

// Mean and 1/std of the finite values; 0 and 1 when there are none or they are constant.
struct Moments {
  double mean = 0.0, inv_std = 1.0;
  std::size_t known = 0;
};
template <class ValueAt>
Moments moments(std::size_t n, ValueAt value_at) {
  Moments m;
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = value_at(i);
    if (std::isfinite(v)) {
      sum += v;
      ++m.known;
    }
  }
  if (m.known == 0) return m;
  m.mean = sum / static_cast<double>(m.known);
  double sq = 0.0;  // second pass: no cancellation for large-mean columns (anchor runs, times)
  for (std::size_t i = 0; i < n; ++i) {
    const double v = value_at(i);
    if (std::isfinite(v)) sq += (v - m.mean) * (v - m.mean);
  }
  const double sd = std::sqrt(sq / static_cast<double>(m.known));
  m.inv_std = sd > 1e-12 * std::max(1.0, std::abs(m.mean)) && std::isfinite(sd) ? 1.0 / sd : 1.0;
  return m;
}

bool column_has_values(const JobTable& t, Field f, std::span<const std::size_t> rows) {
  if (is_category(f)) {
    const auto c = t.codes(f);
    return std::any_of(rows.begin(), rows.end(), [&](std::size_t r) { return c[r] != kMissingCode; });
  }
  const auto v = t.num(f);
  return std::any_of(rows.begin(), rows.end(), [&](std::size_t r) { return !std::isnan(v[r]); });
}

}  // namespace

NumericTransform default_transform(Field f) {
  switch (f) {
    case Field::CpuCores:
    case Field::MemoryMb:
    case Field::WorkdirMb:
    case Field::InputFiles:
    case Field::InputBytes:
    case Field::Events:
    case Field::RequestedTtl:
    case Field::WaitTime:
    case Field::SlotCores:
    case Field::SlotTimeLeft:
    case Field::Price:  // JDL Price: small integers with a long tail
      return NumericTransform::Log1p;
    default:
      return NumericTransform::Identity;
  }
}

void check_feature_field(Field f, Phase max_phase) {
  const auto& fi = info(f);
  if (fi.phase == Phase::Outcome)
    throw Error("feature '" + std::string(fi.name) +
                "' is an outcome field (known only after the job ends); using it as a feature would leak the target");
  if (static_cast<int>(fi.phase) > static_cast<int>(max_phase))
    throw Error("feature '" + std::string(fi.name) + "' is known only at " + std::string(phase_name(fi.phase)) +
                " time, later than the prediction point (" + std::string(phase_name(max_phase)) + ")");
}

std::vector<Field> default_feature_fields(const JobTable& t, std::span<const std::size_t> rows, Phase max_phase) {
  std::vector<Field> out;
  for (const auto& fi : kFields) {
    if (fi.phase == Phase::Outcome || static_cast<int>(fi.phase) > static_cast<int>(max_phase)) continue;
    if (is_identifier(fi.field) || is_drifting_name(fi.field) || !column_has_values(t, fi.field, rows)) continue;
    out.push_back(fi.field);
  }
  return out;
}

FeatureEncoder FeatureEncoder::fit(const JobTable& t, std::span<const std::size_t> train_rows,
                                   const HistoryMatrix* history, const HistoryConfig* history_config,
                                   const EncoderOptions& options) {
  if (options.max_phase == Phase::Outcome) throw Error("encoder: max_phase may not be the outcome phase");
  if (train_rows.empty()) throw Error("encoder: no training rows to fit on");
  for (auto r : train_rows)
    if (r >= t.rows()) throw Error("encoder: training row " + std::to_string(r) + " is past the table's " + std::to_string(t.rows()) + " rows");
  if (history != nullptr) {
    if (history_config == nullptr) throw Error("encoder: history features given without their configuration");
    if (history->width != history_config->width() || history->rows != t.rows())
      throw Error("encoder: history matrix is " + std::to_string(history->rows) + " x " + std::to_string(history->width) +
                  ", expected " + std::to_string(t.rows()) + " x " + std::to_string(history_config->width()));
    // Work-rate history reads the job's own work fields (and host speed): they must be known
    // at the prediction point as well.
    try {
      for (auto f : history_config->work_fields) check_feature_field(f, options.max_phase);
      if (history_config->work_per_speed) check_feature_field(Field::HostSpeed, options.max_phase);
    } catch (const Error& err) {
      throw Error(std::string("encoder: history work rates: ") + err.what() +
                  "; build the history configuration without them (work_fields / work_per_speed)");
    }
  }

  std::vector<Field> fields = options.fields.empty() ? default_feature_fields(t, train_rows, options.max_phase) : options.fields;
  for (auto f : fields) check_feature_field(f, options.max_phase);

  FeatureEncoder e;
  const std::size_t n = train_rows.size();
  std::vector<Field> needs_indicator;

  for (auto f : fields) {
    if (is_category(f)) continue;
    DenseColumn c;
    c.source = DenseSource::Field;
    c.field = f;
    c.transform = default_transform(f);
    const auto col = t.num(f);
    const Moments m = moments(n, [&](std::size_t i) { return apply_transform(c.transform, col[train_rows[i]]); });
    if (m.known == 0) continue;  // nothing to learn from
    c.mean = m.mean;
    c.inv_std = m.inv_std;
    e.dense_.push_back(c);
    if (m.known < n) needs_indicator.push_back(f);
  }

  if (options.cyclic_time && column_has_values(t, Field::SubmitTime, train_rows)) {
    const auto submit = t.num(Field::SubmitTime);
    for (auto s : {DenseSource::HourSin, DenseSource::HourCos, DenseSource::WeekSin, DenseSource::WeekCos}) {
      DenseColumn c;
      c.source = s;
      c.field = Field::SubmitTime;
      const Moments m = moments(n, [&](std::size_t i) { return encoder_math::cyclic_value(s, submit[train_rows[i]]); });
      c.mean = m.mean;
      c.inv_std = m.inv_std;
      e.dense_.push_back(c);
    }
    if (std::find(needs_indicator.begin(), needs_indicator.end(), Field::SubmitTime) == needs_indicator.end() &&
        std::any_of(train_rows.begin(), train_rows.end(), [&](std::size_t r) { return std::isnan(submit[r]); }))
      needs_indicator.push_back(Field::SubmitTime);
  }

  for (auto f : needs_indicator) {
    DenseColumn c;
    c.source = DenseSource::Missing;
    c.field = f;
    const auto col = t.num(f);
    const Moments m = moments(n, [&](std::size_t i) { return std::isnan(col[train_rows[i]]) ? 1.0 : 0.0; });
    c.mean = m.mean;
    c.inv_std = m.inv_std;
    e.dense_.push_back(c);
  }

  if (history != nullptr) {
    e.history_config_ = *history_config;
    e.history_width_ = history->width;
    for (std::size_t j = 0; j < history->width; ++j) {
      DenseColumn c;
      c.source = DenseSource::History;
      c.index = static_cast<std::uint32_t>(j);
      const Moments m = moments(n, [&](std::size_t i) { return double{history->row(train_rows[i])[j]}; });
      c.mean = m.mean;
      c.inv_std = m.inv_std;
      e.dense_.push_back(c);
    }
  }

  for (auto f : fields) {
    if (!is_category(f)) continue;
    const auto codes = t.codes(f);
    const auto& dict = t.dict(f);
    std::vector<std::uint64_t> counts(dict.size(), 0);
    for (auto r : train_rows)
      if (codes[r] != kMissingCode) ++counts[codes[r]];
    std::vector<std::uint32_t> kept;
    for (std::uint32_t code = 0; code < counts.size(); ++code)
      if (counts[code] >= options.min_category_count && counts[code] > 0) kept.push_back(code);
    if (kept.empty()) continue;  // only rare values: the column would always read "unknown"
    // Most frequent first, then by value: the same training data gives the same indices.
    std::sort(kept.begin(), kept.end(), [&](std::uint32_t a, std::uint32_t b) {
      return counts[a] != counts[b] ? counts[a] > counts[b] : dict.value(a) < dict.value(b);
    });
    CategoryColumn c;
    c.field = f;
    for (auto code : kept) {
      c.vocabulary.emplace_back(dict.value(code));
      c.index.emplace(c.vocabulary.back(), static_cast<std::uint32_t>(c.vocabulary.size()));
    }
    e.cats_.push_back(std::move(c));
  }
  e.prepare_serving();
  if (options.piecewise_bins > 0) {
    // The edges are quantiles of the standardized values: the dense columns' own encoding
    // of (a sample of) the training rows, bins not yet added. Only the job's own numbers are
    // binned, not its history statistics, cyclic time or indicators (why: docs/ACCURACY.md).
    const std::size_t m = std::min(n, kPiecewiseSampleRows);
    std::vector<std::size_t> sample(m);
    for (std::size_t i = 0; i < m; ++i) sample[i] = train_rows[i * n / m];
    const EncodedBatch b = e.encode_batch(t, sample, history);
    std::vector<std::uint32_t> numeric;
    for (std::uint32_t j = 0; j < e.dense_.size(); ++j)
      if (e.dense_[j].source == DenseSource::Field) numeric.push_back(j);
    e.piecewise_ = fit_piecewise(b.dense, b.rows, b.dense_width, numeric, options.piecewise_bins);
    e.piecewise_width_ = piecewise_width(e.piecewise_);
    e.piecewise_bins_ = options.piecewise_bins;
  }
  return e;
}

std::vector<std::uint32_t> FeatureEncoder::cat_cardinality() const {
  std::vector<std::uint32_t> out;
  for (const auto& c : cats_) out.push_back(static_cast<std::uint32_t>(c.vocabulary.size() + 1));
  return out;
}

std::vector<std::string> FeatureEncoder::dense_names() const {
  const auto history_names = history_config_.feature_names();
  std::vector<std::string> out;
  for (const auto& c : dense_) {
    const std::string field(info(c.field).name);
    switch (c.source) {
      case DenseSource::Field: out.push_back(c.transform == NumericTransform::Log1p ? "log1p(" + field + ")" : field); break;
      case DenseSource::HourSin: out.push_back("hour_sin"); break;
      case DenseSource::HourCos: out.push_back("hour_cos"); break;
      case DenseSource::WeekSin: out.push_back("week_sin"); break;
      case DenseSource::WeekCos: out.push_back("week_cos"); break;
      case DenseSource::Missing: out.push_back("missing(" + field + ")"); break;
      case DenseSource::History:
        out.push_back(c.index < history_names.size() ? history_names[c.index] : "history_" + std::to_string(c.index));
        break;
    }
  }
  for (const PiecewiseColumn& pc : piecewise_) {
    const std::string base = out[pc.column];
    for (std::size_t t = 1; t <= pc.bins(); ++t) out.push_back(base + "_bin" + std::to_string(t));
  }
  return out;
}

std::vector<std::string> FeatureEncoder::cat_names() const {
  std::vector<std::string> out;
  for (const auto& c : cats_) out.emplace_back(info(c.field).name);
  return out;
}

}  // namespace ttlpred
