#include "pipeline/model_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "data/trace_readers.hpp"
#include "util/error.hpp"
#include "util/percent_text.hpp"

namespace ttlpred {
namespace {

// A field the model relies on: known in at least this share of its training rows.
constexpr float kReliedOnShare = 0.5f;
// A category column speaks the model's vocabulary when this share of its values is in it.
constexpr double kSharedVocabulary = 0.05;

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

bool column_known(const JobTable& t, Field f, std::size_t row) {
  return is_category(f) ? t.codes(f)[row] != kMissingCode : !std::isnan(t.num(f)[row]);
}

std::string fraction_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

std::string percent(double share) { return percent_text(share, 1); }

}  // namespace

std::vector<Field> encoder_input_fields(const FeatureEncoder& encoder) {
  std::vector<bool> used(kNumFields, false);
  for (const auto& c : encoder.dense_columns())
    if (c.source == DenseSource::Field || c.source == DenseSource::Missing) used[index_of(c.field)] = true;
  for (const auto& c : encoder.category_columns()) used[index_of(c.field)] = true;
  std::vector<Field> out;
  for (const auto& f : kFields)
    if (used[index_of(f.field)]) out.push_back(f.field);
  return out;
}

std::vector<TrainingProvenance::FieldCoverage> field_coverage(const JobTable& t, const std::vector<Field>& fields,
                                                              std::size_t rows) {
  rows = std::min(rows, t.rows());
  std::vector<TrainingProvenance::FieldCoverage> out;
  for (Field f : fields) {
    std::size_t known = 0;
    for (std::size_t i = 0; i < rows; ++i) known += column_known(t, f, i) ? 1 : 0;
    out.push_back({std::string(info(f).name), rows ? static_cast<float>(known) / static_cast<float>(rows) : 0.0f});
  }
  return out;
}

ModelCheck check_schema(const ModelFile& model, const FeatureEncoder& encoder, const JobTable& trace,
                        const std::string& trace_format, const std::string& what) {
  ModelCheck c;
  const TrainingProvenance& p = model.provenance;
  const std::string trained_on =
      p.empty() ? std::string("its training data")
                : "a " + (p.trace_format.empty() ? std::string("trace") : p.trace_format + " trace") +
                      (p.trace_name.empty() ? std::string() : " (" + p.trace_name + ")");
  if (other_trace_formats(p.trace_format, trace_format))
    c.warnings.push_back(what + " was trained on " + trained_on + ", not on " + trace_format);

  // The fields relied on, from the provenance (with shares) or, for older files, the encoder.
  std::vector<Field> relied;
  if (!p.fields.empty()) {
    for (const auto& f : p.fields)
      if (auto field = field_by_name(f.name); field && f.known_share >= kReliedOnShare) relied.push_back(*field);
  } else {
    relied = encoder_input_fields(encoder);
  }
  std::vector<std::string> absent, absent_submit;
  std::size_t submit_fields = 0;
  for (Field f : relied) {
    const bool submit = info(f).phase == Phase::Submit;
    submit_fields += submit ? 1 : 0;
    if (trace.has_values(f)) continue;
    absent.emplace_back(info(f).name);
    if (submit) absent_submit.emplace_back(info(f).name);
  }
  if (!absent.empty())
    c.warnings.push_back("the trace has no value in " + std::to_string(absent.size()) + " of the " +
                         std::to_string(relied.size()) + " fields " + what +
                         " was trained with; its predictions use training means for them: " + join(absent));

  // Category values the model never saw are the unknown category for it.
  bool shares_categories = false;  // some column the trace has speaks the model's vocabulary
  for (const auto& col : encoder.category_columns()) {
    if (std::find(relied.begin(), relied.end(), col.field) == relied.end() || !trace.has_values(col.field)) continue;
    const auto& dict = trace.dict(col.field);
    std::vector<bool> seen(dict.size());
    for (std::uint32_t code = 0; code < dict.size(); ++code) seen[code] = col.index.count(dict.value(code)) > 0;
    std::size_t known = 0, in_vocabulary = 0;
    for (auto code : trace.codes(col.field)) {
      if (code == kMissingCode) continue;
      ++known;
      in_vocabulary += seen[code] ? 1 : 0;
    }
    const double share = known ? static_cast<double>(in_vocabulary) / static_cast<double>(known) : 1.0;
    shares_categories |= share >= kSharedVocabulary;
    if (share < 0.5)
      c.warnings.push_back("only " + percent(share) + " of the trace's " + std::string(info(col.field).name) +
                           " values are known to " + what + "; the others read as unknown");
  }

  // Few fields is not enough to refuse: a broker's job may be described by a handful (user,
  // job_type, request). Another kind of job also reads differently: another trace format, or
  // category values the model has never seen in any column.
  const bool other_format = other_trace_formats(p.trace_format, trace_format);
  if (submit_fields > 0 && 2 * absent_submit.size() > submit_fields && (other_format || !shares_categories))
    c.refusal = what + " was trained on " + trained_on + " whose jobs are described by fields this trace" +
                (trace_format.empty() ? std::string() : " (" + trace_format + ")") + " does not have: " +
                std::to_string(absent_submit.size()) + " of its " + std::to_string(submit_fields) +
                " submit-time fields are absent (" + join(absent_submit) +
                "). Its answers here would be guesses from training means; train a model on this kind of trace";
  return c;
}

std::size_t trained_rows(const ModelFile& model) {
  // meta.data_hash is table_digest(eligible jobs, train rows): "<crc32 hex>-<rows>".
  const std::string& hash = model.meta.data_hash;
  const auto dash = hash.rfind('-');
  if (dash != std::string::npos && dash + 1 < hash.size() &&
      hash.find_first_not_of("0123456789", dash + 1) == std::string::npos && hash.size() - dash <= 19)
    return std::stoull(hash.substr(dash + 1));
  return 0;
}

bool begins_with_training_jobs(const ModelFile& model, const ChronologicalSplit& split) {
  const std::size_t trained = trained_rows(model);
  return trained > 0 && split.jobs.rows() >= trained && table_digest(split.jobs, trained) == model.meta.data_hash;
}

ModelCheck check_split_overlap(const ModelFile& model, const ChronologicalSplit& split, const std::string& what) {
  ModelCheck c;
  const std::size_t trained = trained_rows(model);
  if (trained == 0) {
    c.warnings.push_back(what + " does not record its training rows: cannot check that no scored job was trained on");
    return c;
  }
  const TrainingProvenance& p = model.provenance;
  const std::string trained_text =
      "trained on the first " + std::to_string(trained) + " eligible jobs" +
      (p.empty() ? std::string() : " (--split " + fraction_text(p.split) + " of " + std::to_string(p.eligible_rows) + ")");
  if (!begins_with_training_jobs(model, split)) {
    c.warnings.push_back(what + " was " + trained_text + " of " +
                         (p.trace_name.empty() ? std::string("another trace") : p.trace_name) +
                         ", which this trace does not begin with: cannot check that no scored job was trained on");
    return c;
  }
  if (split.train_rows < trained) {
    c.overlap_rows = trained - split.train_rows;
    c.refusal = "--split " + fraction_text(split.fraction) + " scores jobs " +
                std::to_string(split.train_rows + 1) + ".." + std::to_string(split.jobs.rows()) + " of this trace, and " +
                what + " was " + trained_text + " of this same data: " + std::to_string(c.overlap_rows) +
                " scored jobs were learned from (" + percent(static_cast<double>(c.overlap_rows) /
                                                              static_cast<double>(split.scored_rows())) +
                " of those scored), so the scores would flatter it. Use --split " +
                (p.empty() ? "matching the training" : fraction_text(p.split)) + " or more";
  } else if (split.train_rows > trained) {
    c.warnings.push_back("--split " + fraction_text(split.fraction) + " leaves " +
                         std::to_string(split.train_rows - trained) + " jobs that " + what +
                         " never saw unscored (it was " + trained_text + ")");
  }
  return c;
}

void enforce(const ModelCheck& check, bool allow, const std::string& override_flag) {
  for (const auto& w : check.warnings) std::fprintf(stderr, "ttlpred: warning: %s\n", w.c_str());
  if (check.refusal.empty()) return;
  if (!allow) throw Error(check.refusal + " (" + override_flag + " to run anyway)");
  std::fprintf(stderr, "ttlpred: WARNING (%s): %s\n", override_flag.c_str(), check.refusal.c_str());
}

}  // namespace ttlpred
