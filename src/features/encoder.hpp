#pragma once
// The feature encoder: turns a job (its Submit- and Match-phase fields plus its history
// features) into what a model reads: standardized dense floats and category indices.
// Fitted on training rows only; serialized into the model file.
//
// Dense part, in order: numeric fields (log1p for sizes, counts and times), cyclic
// hour-of-day / day-of-week of the submit time, missing-indicator columns, then history
// features. Every dense column is standardized with the training mean and std; a missing
// value becomes 0 (the training mean) after standardization.
// Piecewise part (EncoderOptions::piecewise_bins: none by default here, a trained model's
// FitOptions asks for them): after the dense columns, the piecewise-linear bins of every
// numeric field's column (features/piecewise_encoding.hpp).
// Categorical part: one column per category field; vocabulary = values seen at least
// `min_category_count` times in training; index 0 = unknown / out of vocabulary.
// docs/features.md has the full list.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "data/job_record.hpp"
#include "data/job_table.hpp"
#include "model/model_input.hpp"
#include "features/history.hpp"
#include "features/piecewise_encoding.hpp"
#include "features/vocabulary_index.hpp"

namespace ttlpred {

enum class NumericTransform : std::uint8_t { Identity = 0, Log1p = 1 };
// log1p for sizes, counts and times (heavy-tailed, non-negative); identity otherwise.
NumericTransform default_transform(Field f);

// What a dense column is computed from.
enum class DenseSource : std::uint8_t {
  Field = 0,          // a numeric field through its transform
  HourSin, HourCos,   // hour of day (UTC) of submit_time on the unit circle
  WeekSin, WeekCos,   // time within the week of submit_time on the unit circle
  Missing,            // 1 when field `field` is unknown, else 0
  History,            // history feature number `index`
};

struct DenseColumn {
  DenseSource source = DenseSource::Field;
  Field field = Field::JobId;  // Field and Missing sources
  NumericTransform transform = NumericTransform::Identity;
  std::uint32_t index = 0;     // History source
  double mean = 0.0;           // of the transformed training values (missing ones left out)
  double inv_std = 1.0;        // 1 / std; 1 for a constant column
};

struct CategoryColumn {
  Field field = Field::User;
  std::vector<std::string> vocabulary;  // vocabulary[i] has index i + 1
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> index;  // value -> index
};

struct EncoderOptions {
  std::uint32_t min_category_count = 5;
  bool cyclic_time = true;
  // Latest phase a feature may come from: Match (default) for prediction at match time,
  // Submit for prediction at submission. Outcome is always refused.
  Phase max_phase = Phase::Match;
  // Explicit feature fields; empty = the default set (every Submit/Match field with values in
  // the training rows, minus identifiers: job_id, master_job_id, submit_time, and names of
  // productions, releases and runs: production_tag, package, pass_name, anchor_run).
  std::vector<Field> fields;
  // Bins of the piecewise-linear encoding of each numeric field's column (DenseSource::Field;
  // 2 to kMaxPiecewiseBins); 0: none. The bins come after the dense columns, which stay as
  // they are.
  std::uint32_t piecewise_bins = 0;
};

class FeatureEncoder {
 public:
  // Fits on `train_rows` of `t`. `history` (aligned with t's rows, may be null) supplies the
  // history features; its columns are named by `history_config`. Throws Error for an outcome
  // field, a field past max_phase, or a history matrix that does not match the config.
  static FeatureEncoder fit(const JobTable& t, std::span<const std::size_t> train_rows,
                            const HistoryMatrix* history, const HistoryConfig* history_config,
                            const EncoderOptions& options = {});

  // Every float a model reads before the categories: the dense columns, then their bins.
  std::size_t dense_width() const { return dense_.size() + piecewise_width_; }
  std::size_t cat_width() const { return cats_.size(); }
  std::size_t history_width() const { return history_width_; }
  // Cardinality per categorical column, OOV bucket included.
  std::vector<std::uint32_t> cat_cardinality() const;
  std::vector<std::string> dense_names() const;
  std::vector<std::string> cat_names() const;
  const std::vector<DenseColumn>& dense_columns() const { return dense_; }
  const std::vector<CategoryColumn>& category_columns() const { return cats_; }
  const std::vector<PiecewiseColumn>& piecewise_columns() const { return piecewise_; }
  // The bins per column it was fitted with (0: none): what a retrained candidate keeps.
  std::uint32_t piecewise_bins() const { return piecewise_bins_; }
  // The history configuration the encoder was fitted with (keys, k, ...): what a service
  // needs to build a matching HistoryState. Empty keys when fitted without history.
  const HistoryConfig& history_config() const { return history_config_; }

  // One job: dense_out gets dense_width() floats, cats_out cat_width() indices.
  // `history_features` holds history_width() floats (may be null when that is 0).
  // No heap allocation: this is the serving hot path.
  void encode_one(const JobRecord& r, const float* history_features, float* dense_out,
                  std::uint32_t* cats_out) const;
  // Rows `rows` of `t`, columnar; bit-identical to encode_one on each row.
  EncodedBatch encode_batch(const JobTable& t, std::span<const std::size_t> rows,
                            const HistoryMatrix* history) const;

  // A sealed container (magic "TTLENC"); from_bytes refuses truncated, corrupted or
  // future-version bytes and outcome fields.
  std::vector<std::uint8_t> to_bytes() const;
  static FeatureEncoder from_bytes(const std::vector<std::uint8_t>& bytes, const std::string& what);

 private:
  // What encode_one reads besides the columns, derived from them when the encoder is made
  // (fit, from_bytes: prepare_serving): the longest run of history columns that read
  // consecutive history features (fit lays all of them out so) as one block with its
  // statistics side by side, a loop without a branch per column; the other dense columns by
  // position; one VocabularyIndex per category column.
  struct ServingPlan {
    std::size_t block_begin = 0, block_size = 0;  // dense columns [begin, begin + size)
    std::uint32_t block_first_feature = 0;        // read history features [first, first + size)
    std::vector<double> block_mean, block_inv_std;
    std::vector<std::uint32_t> other_columns;
    std::vector<VocabularyIndex> vocabularies;
  };
  void prepare_serving();

  std::vector<DenseColumn> dense_;
  std::vector<PiecewiseColumn> piecewise_;
  std::size_t piecewise_width_ = 0;
  std::uint32_t piecewise_bins_ = 0;
  std::vector<CategoryColumn> cats_;
  std::size_t history_width_ = 0;
  HistoryConfig history_config_;
  ServingPlan serving_;
};

// The default feature fields of a table: Submit/Match fields with values in `rows`, minus
// identifiers and drifting names (see EncoderOptions::fields), up to `max_phase`.
std::vector<Field> default_feature_fields(const JobTable& t, std::span<const std::size_t> rows, Phase max_phase);

// Throws Error when `f` may not be a feature (outcome phase, or past max_phase).
void check_feature_field(Field f, Phase max_phase);

}  // namespace ttlpred
