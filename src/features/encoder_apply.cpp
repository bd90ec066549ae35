// Applying a fitted encoder: one record (serving hot path, no allocation) or a batch of table
// rows (columnar, for training and evaluation). Both go through encoder_math.hpp.
#include <algorithm>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "features/encoder.hpp"
#include "features/encoder_math.hpp"
#include "features/log1p_float.hpp"

namespace ttlpred {

using encoder_math::column_value;
using encoder_math::standardize;

namespace {

// out[k] = standardize(column k, h[k]) for a block of history columns: (v - mean) * inv_std
// in double, rounded to float, 0 where v is not finite (v - v == 0 is false for inf and NaN).
// Two doubles a step on SSE2, the x86-64 baseline, with the scalar code's operations in its
// order, so the same bits.
void standardize_block(const float* h, const double* mean, const double* inv_std, float* out, std::size_t n) {
  std::size_t k = 0;
#if defined(__SSE2__)
  const __m128d zero = _mm_setzero_pd();
  for (; k + 4 <= n; k += 4) {
    const __m128 f = _mm_loadu_ps(h + k);
    const __m128d v0 = _mm_cvtps_pd(f), v1 = _mm_cvtps_pd(_mm_movehl_ps(f, f));
    __m128d t0 = _mm_mul_pd(_mm_sub_pd(v0, _mm_loadu_pd(mean + k)), _mm_loadu_pd(inv_std + k));
    __m128d t1 = _mm_mul_pd(_mm_sub_pd(v1, _mm_loadu_pd(mean + k + 2)), _mm_loadu_pd(inv_std + k + 2));
    t0 = _mm_and_pd(t0, _mm_cmpeq_pd(_mm_sub_pd(v0, v0), zero));
    t1 = _mm_and_pd(t1, _mm_cmpeq_pd(_mm_sub_pd(v1, v1), zero));
    _mm_storeu_ps(out + k, _mm_movelh_ps(_mm_cvtpd_ps(t0), _mm_cvtpd_ps(t1)));
  }
#endif
  for (; k < n; ++k) {
    const double v = h[k];
    const float s = static_cast<float>((v - mean[k]) * inv_std[k]);
    out[k] = v - v == 0.0 ? s : 0.0f;
  }
}

}  // namespace

void FeatureEncoder::prepare_serving() {
  ServingPlan p;
  // The longest run of history columns reading consecutive features.
  for (std::size_t j = 0; j < dense_.size();) {
    if (dense_[j].source != DenseSource::History) {
      ++j;
      continue;
    }
    std::size_t end = j + 1;
    while (end < dense_.size() && dense_[end].source == DenseSource::History &&
           dense_[end].index == dense_[end - 1].index + 1)
      ++end;
    if (end - j > p.block_size) {
      p.block_begin = j;
      p.block_size = end - j;
    }
    j = end;
  }
  if (p.block_size > 0) p.block_first_feature = dense_[p.block_begin].index;
  for (std::size_t j = 0; j < dense_.size(); ++j) {
    if (j >= p.block_begin && j < p.block_begin + p.block_size) {
      p.block_mean.push_back(dense_[j].mean);
      p.block_inv_std.push_back(dense_[j].inv_std);
    } else {
      p.other_columns.push_back(static_cast<std::uint32_t>(j));
    }
  }
  for (const CategoryColumn& c : cats_) p.vocabularies.emplace_back(c.vocabulary);
  serving_ = std::move(p);
}

void FeatureEncoder::encode_one(const JobRecord& r, const float* history_features, float* dense_out,
                                std::uint32_t* cats_out) const {
  // Same values as column_value and standardize, column by column (the history block goes
  // through standardize_block, the same operations two doubles a step). The
  // sin and cos columns of one period share its phase (an fmod of the submit time); a log1p
  // field takes log1p_then_float, the same bits.
  const ServingPlan& p = serving_;
  const double submit = r[Field::SubmitTime];
  double phase[2] = {std::nan(""), std::nan("")};  // day, week; computed at first use
  for (const std::uint32_t j : p.other_columns) {
    const DenseColumn& c = dense_[j];
    double v;
    if (c.source == DenseSource::Field && c.transform == NumericTransform::Log1p) {
      const double x = r[c.field];
      if (x >= 1.0) {
        dense_out[j] = features_detail::log1p_then_float(x, [&c](double y) { return (y - c.mean) * c.inv_std; });
        continue;
      }
      v = column_value(c, r, history_features);
    } else if (c.source == DenseSource::History || c.source == DenseSource::Field ||
               c.source == DenseSource::Missing || std::isnan(submit)) {
      v = column_value(c, r, history_features);
    } else {
      double& ph = phase[encoder_math::is_daily(c.source) ? 0 : 1];
      if (std::isnan(ph)) ph = encoder_math::cyclic_phase(c.source, submit);
      v = encoder_math::cyclic_of_phase(c.source, ph);
    }
    dense_out[j] = standardize(c, v);
  }
  if (p.block_size > 0)
    standardize_block(history_features + p.block_first_feature, p.block_mean.data(), p.block_inv_std.data(),
                      dense_out + p.block_begin, p.block_size);
  if (piecewise_width_ > 0) apply_piecewise(piecewise_, dense_out, dense_out + dense_.size());
  // Every column's probe address first, so that the lookups' cache misses overlap (one
  // column per category field; more, from a field listed twice, hash again below).
  std::uint64_t hash[kNumFields];
  const std::size_t nc = cats_.size(), hashed = std::min(nc, kNumFields);
  for (std::size_t j = 0; j < hashed; ++j) {
    hash[j] = VocabularyIndex::hash(r.text(cats_[j].field));
    p.vocabularies[j].prefetch(hash[j]);
  }
  for (std::size_t j = 0; j < nc; ++j) {
    const auto text = r.text(cats_[j].field);
    cats_out[j] = text.empty() ? 0u : p.vocabularies[j].find(text, j < hashed ? hash[j] : VocabularyIndex::hash(text));
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
  b.dense_width = dense_width();
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

  if (piecewise_width_ > 0)
    for (std::size_t i = 0; i < n; ++i) {
      float* row = b.dense.data() + i * b.dense_width;
      apply_piecewise(piecewise_, row, row + dense_.size());
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
