#pragma once
// A small but complete model file for tests that need one without waiting for the trainer:
// an encoder fitted on a made-up table (users, job types, cores, requests, history features),
// a random network of matching widths, a safe-TTL calibration on made-up residuals. Used by
// the service and predictor tests.
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "features/encoder.hpp"
#include "features/history.hpp"
#include "model/model_file.hpp"
#include "model/safe_ttl.hpp"
#include "test_support.hpp"

namespace ttlpred::test {

inline const std::vector<std::string>& test_users() {
  static const std::vector<std::string> u = {"alice", "bob", "carol", "dave", "erin"};
  return u;
}

// `keys` picks the history keys: a model with other keys cannot take over a running state.
// With JobTypeSystem the jobs get a collision system (interaction_type) too.
// `at`: the prediction time its history configuration is made for. `censored_rates` (match
// time only): events as the work field, its rates with the running jobs as lower bounds.
// `piecewise_bins`: the encoder's piecewise-linear bins (EncoderOptions), 0 for none.
inline void write_test_model(const std::string& path, unsigned seed,
                             std::vector<HistoryKey> keys = {HistoryKey::All, HistoryKey::User},
                             PredictionTime at = PredictionTime::Submit, bool censored_rates = false,
                             std::uint32_t piecewise_bins = 0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<std::string> types = {"MC", "USER", "MERGE"};
  const bool systems = std::find(keys.begin(), keys.end(), HistoryKey::JobTypeSystem) != keys.end();
  JobTable t;
  JobRecord r;
  for (std::size_t i = 0; i < 300; ++i) {
    r.clear();
    r[Field::JobId] = static_cast<double>(i);
    r[Field::SubmitTime] = 1.7e9 + static_cast<double>(i) * 60;
    r.text(Field::User) = test_users()[i % test_users().size()];
    r.text(Field::JobType) = types[i % types.size()];
    if (systems) r.text(Field::InteractionType) = i % 6 < 3 ? "pp" : "PbPb";
    r[Field::CpuCores] = static_cast<double>(1u << (i % 4));
    r[Field::RequestedTtl] = std::floor(3600 + u(rng) * 80000);
    r[Field::WaitTime] = 30;
    r[Field::WallTime] = std::floor(60 + u(rng) * 20000);
    if (censored_rates) r[Field::Events] = std::floor(r[Field::WallTime] / static_cast<double>(8 + i % 5));  // 8-12 s an event
    t.append(r);
  }
  HistoryConfig cfg;
  cfg.keys = std::move(keys);
  cfg.ratio_stats = true;
  cfg.at = at;
  if (censored_rates) cfg.work_fields = {Field::Events};
  cfg.censored_rates = censored_rates;
  const HistoryMatrix hm = compute_history(t, cfg);
  std::vector<std::size_t> rows(t.rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  EncoderOptions eo;
  eo.min_category_count = 1;
  eo.piecewise_bins = piecewise_bins;
  const FeatureEncoder enc = FeatureEncoder::fit(t, rows, &hm, &cfg, eo);

  ModelFile m;
  std::uniform_real_distribution<float> w(-1.0f, 1.0f);
  m.mlp.dense_inputs = static_cast<std::uint32_t>(enc.dense_width());
  for (std::uint32_t card : enc.cat_cardinality()) {
    Embedding e{card, 2, {}};
    for (std::uint32_t k = 0; k < card * 2; ++k) e.table.push_back(0.5f * w(rng));
    m.mlp.embeddings.push_back(std::move(e));
  }
  std::uint32_t in = m.mlp.first_layer_inputs();
  for (std::uint32_t out : {8u, 1u}) {
    DenseLayer l;
    l.in = in;
    l.out = out;
    const float a = std::sqrt(3.0f / static_cast<float>(in));
    for (std::uint32_t k = 0; k < in * out; ++k) l.weight.push_back(a * w(rng));
    for (std::uint32_t k = 0; k < out; ++k) l.bias.push_back(0.1f * w(rng));
    l.act = out == 1 ? Activation::None : Activation::Relu;
    m.mlp.layers.push_back(std::move(l));
    in = out;
  }
  m.target.kind = TargetKind::Log1p;
  m.target.mean = std::log1p(1.0);  // about an hour
  m.target.stddev = 0.5;
  std::vector<float> wall, pred;
  std::normal_distribution<double> noise(0, 0.3);
  for (int i = 0; i < 500; ++i) {
    const double p = 600 + u(rng) * 7200;
    pred.push_back(static_cast<float>(p));
    wall.push_back(static_cast<float>(p * std::exp(noise(rng))));
  }
  m.safe_ttl = calibrate_safe_ttl(wall, pred, {});
  m.encoder = enc.to_bytes();
  m.meta.created_utc = "2026-11-29T00:00:00Z";
  save_model_file(path, m);
}

// The test model (seed 1) with a narrower, lower target: answers of about an hour rather
// than days, which fall below most requests, so that tests comparing answers compare the
// network's own numbers and not only the bounds.
inline void write_hour_scale_test_model(const std::string& path) {
  write_test_model(path, 1);
  ModelFile m = load_model_file(path);
  m.target.stddev = 0.05;
  m.target.mean -= 1.2;
  save_model_file(path, m);
}

// The path of an hour-scale test model `name` in the temp folder, written on the first call
// for that name: what the tests that only read a model share.
inline const std::string& hour_scale_test_model(const std::string& name) {
  static std::map<std::string, std::string> written;  // name -> path
  auto it = written.find(name);
  if (it == written.end()) {
    const std::string path = temp_dir() + "/" + name;
    write_hour_scale_test_model(path);
    it = written.emplace(name, path).first;
  }
  return it->second;
}

}  // namespace ttlpred::test
