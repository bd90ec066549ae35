#pragma once
// A small but complete model file for the service tests (encoder fitted on a made-up table,
// random network of matching widths, safe-TTL calibration on made-up residuals), and an
// in-process server on an ephemeral port. Built here so that the tests do not wait for the
// trainer.
#include <httplib.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "data/job_table.hpp"
#include "features/encoder.hpp"
#include "features/history.hpp"
#include "model/model_file.hpp"
#include "model/safe_ttl.hpp"
#include "serve/http_server.hpp"
#include "serve/service.hpp"
#include "test_support.hpp"

namespace ttlpred::test {

// Service options for `model` with the batch limit the tests use.
inline serve::ServiceOptions options_for(const std::string& model) {
  serve::ServiceOptions o;
  o.model_path = model;
  o.max_batch = 300;
  return o;
}

inline const std::vector<std::string>& test_users() {
  static const std::vector<std::string> u = {"alice", "bob", "carol", "dave", "erin"};
  return u;
}

// `keys` picks the history keys: a model with other keys cannot take over a running state.
inline void write_test_model(const std::string& path, unsigned seed,
                             std::vector<HistoryKey> keys = {HistoryKey::All, HistoryKey::User}) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<std::string> types = {"MC", "USER", "MERGE"};
  JobTable t;
  JobRecord r;
  for (std::size_t i = 0; i < 300; ++i) {
    r.clear();
    r[Field::JobId] = static_cast<double>(i);
    r[Field::SubmitTime] = 1.7e9 + static_cast<double>(i) * 60;
    r.text(Field::User) = test_users()[i % test_users().size()];
    r.text(Field::JobType) = types[i % types.size()];
    r[Field::CpuCores] = static_cast<double>(1u << (i % 4));
    r[Field::RequestedTtl] = std::floor(3600 + u(rng) * 80000);
    r[Field::WaitTime] = 30;
    r[Field::WallTime] = std::floor(60 + u(rng) * 20000);
    t.append(r);
  }
  HistoryConfig cfg;
  cfg.keys = std::move(keys);
  cfg.ratio_stats = true;
  const HistoryMatrix hm = compute_history(t, cfg);
  std::vector<std::size_t> rows(t.rows());
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = i;
  EncoderOptions eo;
  eo.min_category_count = 1;
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

// Service + HTTP server in this process, on a free loopback port.
struct TestServer {
  std::unique_ptr<serve::Service> service;
  std::unique_ptr<serve::HttpServer> http;
  std::thread thread;
  int port = 0;

  explicit TestServer(serve::ServiceOptions so, serve::HttpOptions ho = {}) {
    ho.port = 0;
    if (ho.host.empty()) ho.host = "127.0.0.1";
    service = std::make_unique<serve::Service>(std::move(so));
    http = std::make_unique<serve::HttpServer>(*service, ho);
    port = http->bind();
    thread = std::thread([this] { http->run(); });
    // The library only marks itself running inside run(): wait for it, so that a stop()
    // right after construction is not lost.
    for (int i = 0; i < 500; ++i) {
      if (auto res = client().Get("/healthz"); res && res->status == 200) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }
  ~TestServer() {
    http->stop();
    thread.join();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_keep_alive(true);
    c.set_tcp_nodelay(true);
    c.set_read_timeout(10, 0);
    return c;
  }
};

// One test model (seed 1) per test binary, written on first use.
inline const std::string& shared_test_model() {
  static const std::string path = [] {
    const std::string p = temp_dir() + "/shared.model";
    write_test_model(p, 1);
    return p;
  }();
  return path;
}

}  // namespace ttlpred::test
