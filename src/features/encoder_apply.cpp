// Applying a fitted encoder: one record (serving hot path, no allocation) or a batch of table
// rows (columnar, for training and evaluation). Both go through encoder_math.hpp.
#include <algorithm>

#include "features/encoder.hpp"
#include "features/encoder_math.hpp"

namespace ttlpred {

using encoder_math::column_value;
using encoder_math::standardize;

void FeatureEncoder::encode_one(const JobRecord& r, const float* history_features, float* dense_out,
                                std::uint32_t* cats_out) const {
  // Most columns are history features (7 keys x 14 statistics by default): read those
  // directly, so that only the few others take column_value's switch; the sin and cos
  // columns of one period share its phase (an fmod of the submit time). Same values as
  // column_value either way.
  const double submit = r[Field::SubmitTime];
  double phase[2] = {std::nan(""), std::nan("")};  // day, week; computed at first use
  for (std::size_t j = 0; j < dense_.size(); ++j) {
    const DenseColumn& c = dense_[j];
    double v;
    if (c.source == DenseSource::History) {
      v = history_features[c.index];
    } else if (c.source == DenseSource::Field || c.source == DenseSource::Missing || std::isnan(submit)) {
      v = column_value(c, r, history_features);
    } else {
      double& ph = phase[encoder_math::is_daily(c.source) ? 0 : 1];
      if (std::isnan(ph)) ph = encoder_math::cyclic_phase(c.source, submit);
      v = encoder_math::cyclic_of_phase(c.source, ph);
    }
    dense_out[j] = standardize(c, v);
  }
  for (std::size_t j = 0; j < cats_.size(); ++j) {
    const auto text = r.text(cats_[j].field);
    std::uint32_t idx = 0;
    if (!text.empty()) {
      // Heterogeneous lookup: the string_view is hashed and compared in place, no std::string.
      auto it = cats_[j].index.find(text);
      if (it != cats_[j].index.end()) idx = it->second;
    }
    cats_out[j] = idx;
  }
}

EncodedBatch FeatureEncoder::encode_batch(const JobTable& t, std::span<const std::size_t> rows,
                                          const HistoryMatrix* history) const {
  const std::size_t n = rows.size();
  for (auto r : rows)
    if (r >= t.rows()) throw Error("encoder: row " + std::to_string(r) + " is past the table's " + std::to_string(t.rows()) + " rows");
  if (history_width_ > 0 && (history == nullptr || history->width != history_width_ || history->rows != t.rows()))
    throw Error("encoder: fitted with " + std::to_string(history_width_) +
                " history features; give a history matrix with that width and one row per table row");

  EncodedBatch b;
  b.rows = n;
  b.dense_width = dense_.size();
  b.cat_width = cats_.size();
  b.cat_cardinality = cat_cardinality();
  b.dense.resize(n * b.dense_width);
  b.cats.resize(n * b.cat_width);

  // Columns read from table fields: per column, gather the raw values into a contiguous
  // buffer, transform and standardize it (simple loops the compiler vectorizes where the math
  // allows), then scatter into the row-major output.
  std::vector<double> values(n);
  std::vector<float> column(n);
  std::vector<std::size_t> history_columns;
  const auto submit = t.num(Field::SubmitTime);
  for (std::size_t j = 0; j < dense_.size(); ++j) {
    const DenseColumn& c = dense_[j];
    switch (c.source) {
      case DenseSource::History:
        history_columns.push_back(j);
        continue;
      case DenseSource::Field: {
        const auto col = t.num(c.field);
        for (std::size_t i = 0; i < n; ++i) values[i] = col[rows[i]];
        if (c.transform != NumericTransform::Identity)
          for (std::size_t i = 0; i < n; ++i) values[i] = encoder_math::apply_transform(c.transform, values[i]);
        break;
      }
      case DenseSource::Missing:
        if (is_category(c.field)) {
          const auto codes = t.codes(c.field);
          for (std::size_t i = 0; i < n; ++i) values[i] = codes[rows[i]] == kMissingCode ? 1.0 : 0.0;
        } else {
          const auto col = t.num(c.field);
          for (std::size_t i = 0; i < n; ++i) values[i] = std::isnan(col[rows[i]]) ? 1.0 : 0.0;
        }
        break;
      default:
        for (std::size_t i = 0; i < n; ++i) values[i] = encoder_math::cyclic_value(c.source, submit[rows[i]]);
        break;
    }
    for (std::size_t i = 0; i < n; ++i) column[i] = standardize(c, values[i]);
    float* out = b.dense.data() + j;
    for (std::size_t i = 0; i < n; ++i) out[i * b.dense_width] = column[i];
  }

  // History columns are already row-major in the history matrix: walk it row by row, so each
  // row's features are read from one or two cache lines instead of one line per value.
  if (!history_columns.empty()) {
    for (std::size_t i = 0; i < n; ++i) {
      const float* h = history->row(rows[i]);
      float* out = b.dense.data() + i * b.dense_width;
      for (auto j : history_columns) out[j] = standardize(dense_[j], h[dense_[j].index]);
    }
  }

  std::vector<std::uint32_t> lut;
  for (std::size_t j = 0; j < cats_.size(); ++j) {
    const CategoryColumn& c = cats_[j];
    // The table's dictionary code -> vocabulary index, once per distinct value.
    const auto& dict = t.dict(c.field);
    lut.assign(dict.size(), 0);
    for (std::uint32_t code = 0; code < dict.size(); ++code) {
      auto it = c.index.find(dict.value(code));
      if (it != c.index.end()) lut[code] = it->second;
    }
    const auto codes = t.codes(c.field);
    std::uint32_t* out = b.cats.data() + j;
    for (std::size_t i = 0; i < n; ++i) {
      const auto code = codes[rows[i]];
      out[i * b.cat_width] = code == kMissingCode ? 0u : lut[code];
    }
  }
  return b;
}

}  // namespace ttlpred
