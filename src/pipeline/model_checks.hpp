#pragma once
// Checks that a model is asked only what it can answer, before eval or predict run it:
//  - schema: the trace must carry the job description the model learned from. An ALICE
//    model read on an SWF trace sees none of its job fields, predicts from training means,
//    and its safe TTL kills half the jobs (measured: 47.6% on KTH-SP2) without a word.
//  - overlap: `eval` must not score jobs the model learned from. The model file names its
//    training rows (meta.data_hash: a digest of the first N eligible jobs, and N); when the
//    scored trace starts with those very jobs, a smaller split would score them.
// Each check returns what it found; enforce() prints warnings and refuses (or, with the
// override flag, only warns loudly). The rules are in docs/data-format.md, "Model checks".
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "features/encoder.hpp"
#include "model/model_file.hpp"
#include "pipeline/split.hpp"

namespace ttlpred {

struct ModelCheck {
  std::vector<std::string> warnings;
  std::string refusal;  // "" when the model may be applied
  std::size_t overlap_rows = 0;  // overlap check: scored rows the model learned from
};

// The raw fields a fitted encoder reads (numeric, missing-indicator and category columns;
// not the history features, which follow from the keys), in schema order.
std::vector<Field> encoder_input_fields(const FeatureEncoder& encoder);

// Share of `rows` rows of `t` (the first ones) with a known value, per field.
std::vector<TrainingProvenance::FieldCoverage> field_coverage(const JobTable& t, const std::vector<Field>& fields,
                                                              std::size_t rows);

// The model (`what` names it) against a trace read as `trace_format` ("csv", "swf", "gwf").
// Refused when more than half of the submit-phase fields the model relies on (known in at
// least half of its training rows; every encoder field for files without provenance) have
// no value anywhere in the trace, AND the trace is of another format than the training one
// or none of its category columns has 5% of its values in the model's vocabulary: that is
// another kind of job. Sparse jobs of the right kind (a CSV of user, job_type, request) are
// only warned about. Warned about: another trace format, any relied-on field absent from the
// trace, and category columns whose values are mostly (more than half of the trace's known
// values) outside the model's vocabulary.
ModelCheck check_schema(const ModelFile& model, const FeatureEncoder& encoder, const JobTable& trace,
                        const std::string& trace_format, const std::string& what);

// How many eligible jobs the model was trained on, from its data digest (meta.data_hash:
// "<crc32 hex>-<rows>"); 0 when the file does not record it.
std::size_t trained_rows(const ModelFile& model);
// True when the eligible jobs of `split` begin with the model's training jobs (the digest
// matches): the same data the model learned from.
bool begins_with_training_jobs(const ModelFile& model, const ChronologicalSplit& split);

// Rows of `split` that the model learned from and `split` would score. Refused when there
// are any; warned about when the split leaves unseen jobs unscored, or when the trace does
// not begin with the model's training jobs (overlap cannot be checked then).
ModelCheck check_split_overlap(const ModelFile& model, const ChronologicalSplit& split, const std::string& what);

// Prints each warning to stderr ("ttlpred: warning: ..."); throws Error with the refusal
// (and how to override it with `override_flag`) unless `allow`, when it is printed as a
// warning instead.
void enforce(const ModelCheck& check, bool allow, const std::string& override_flag);

}  // namespace ttlpred
