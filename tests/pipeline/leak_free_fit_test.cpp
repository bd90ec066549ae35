// Leak-freeness of fitting beyond the history features: jobs submitted after the last
// training job (the scored part) cannot change anything the model file learns. Their run
// times, waits and every other field are changed wholesale, the model is fitted again with the same seed, and
// every learned section must come out byte-identical: network, encoder (so it was fitted on
// training rows only), target transform, safe-TTL calibration, history state, int8 ranges.
// Every field of theirs changes (renamed categories, scaled numbers), not only the outcome:
// a vocabulary or a column statistic fitted over all rows would move.
// Only the provenance's digest of the whole trace may (and must) differ.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "model/model_file.hpp"
#include "pipeline/fit_model.hpp"
#include "pipeline/quantize_model.hpp"
#include "pipeline/split.hpp"
#include "synth/generator.hpp"

namespace ttlpred {
namespace {

TEST(LeakFreeFit, ScoredJobsDoNotChangeAnyLearnedByte) {
  synth::GeneratorConfig g;
  g.jobs = 3000;
  g.seed = 9;
  const JobTable trace = synth::generate_table(g);
  const ChronologicalSplit split = chronological_split(trace, 0.8);
  const auto submit = split.jobs.num(Field::SubmitTime);
  const double last_train_submit = submit[split.train_rows - 1];

  // Every field of the scored rows changes but the submit time, which orders the split:
  // numbers scaled, categories renamed (values the training rows never had), so that any
  // statistic fitted over all rows instead of the training rows moves: the vocabulary, the
  // standardization of each column, the target's residual base, the calibrations.
  JobTable changed_trace;
  changed_trace.reserve(trace.rows());
  const auto trace_submit = trace.num(Field::SubmitTime);
  std::size_t changed = 0;
  JobRecord r;
  std::vector<std::string> renamed;  // keeps the new names alive while the row is appended
  for (std::size_t i = 0; i < trace.rows(); ++i) {
    trace.record(i, r);
    if (trace_submit[i] > last_train_submit) {  // NaN submit times stay too
      renamed.clear();
      renamed.reserve(kNumFields);
      for (const auto& f : kFields) {
        if (f.field == Field::SubmitTime || !r.known(f.field)) continue;
        if (is_category(f.field)) {
          renamed.push_back("leak-" + std::string(r.text(f.field)));
          r.text(f.field) = renamed.back();
        } else {
          r[f.field] = r[f.field] * 3 + 7;
        }
      }
      ++changed;
    }
    changed_trace.append(r);
  }
  ASSERT_GT(changed, 400u);
  const ChronologicalSplit changed_split = chronological_split(changed_trace, 0.8);
  ASSERT_EQ(changed_split.train_rows, split.train_rows);

  FitOptions o;
  o.train.hidden = {32, 32};
  o.train.max_epochs = 3;
  o.train.seed = 5;
  o.train.threads = 1;
  ModelFile a = fit_model(split, o, {});
  ModelFile b = fit_model(changed_split, o, {});
  add_int8_calibration(a, split.jobs, quant::ActivationRangeOptions{}, 65536, split.train_rows);
  add_int8_calibration(b, changed_split.jobs, quant::ActivationRangeOptions{}, 65536, changed_split.train_rows);

  for (std::size_t l = 0; l < a.mlp.layers.size(); ++l) EXPECT_EQ(a.mlp.layers[l].weight, b.mlp.layers[l].weight) << l;
  for (std::size_t e = 0; e < a.mlp.embeddings.size(); ++e)
    EXPECT_EQ(a.mlp.embeddings[e].table, b.mlp.embeddings[e].table) << e;
  EXPECT_EQ(a.encoder, b.encoder);
  EXPECT_EQ(a.history, b.history);
  EXPECT_EQ(a.int8_calibration, b.int8_calibration);
  EXPECT_FALSE(a.int8_calibration.empty());
  BinaryWriter ta, tb, sa, sb;
  a.target.write(ta);
  b.target.write(tb);
  EXPECT_EQ(ta.bytes(), tb.bytes());
  a.safe_ttl.write(sa);
  b.safe_ttl.write(sb);
  EXPECT_EQ(sa.bytes(), sb.bytes());
  EXPECT_EQ(a.meta.data_hash, b.meta.data_hash);
  EXPECT_EQ(a.provenance.last_train_submit, b.provenance.last_train_submit);
  // The check bites: the digest of the whole trace sees the change.
  EXPECT_NE(a.provenance.data_hash_all, b.provenance.data_hash_all);
}

}  // namespace
}  // namespace ttlpred
