// `ttlpred bench`: latency of every compiled variant against oneDNN peers on the same MLP
// shape, one thread by default. Inputs rotate through a pool larger than the last-level
// cache so that only the weights (as in a serving process) can be cache-resident.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "engine/variant.hpp"
#include "app/command_options.hpp"
#include "cli/commands.hpp"
#include "cli/serving_bench.hpp"
#include "util/latency.hpp"
#ifdef TTLPRED_HAVE_ONEDNN
#include "peers/onednn_peer.hpp"
#endif
#include "engine/plan.hpp"
#include "model/model_file.hpp"
#include "predict/device.hpp"
#include "quant/activation_ranges.hpp"
#include "quant/activation_ranges_io.hpp"
#include "util/error.hpp"
#ifdef TTLPRED_WITH_CUDA
#include <iostream>
#include <sstream>

#include "engine/cuda/cuda_plan.hpp"
#include "engine/cuda/gpu_bench.hpp"
#endif

namespace ttlpred::cli {

namespace {

struct BenchOptions {
  std::string variants = "all";
  std::string batches = "1,8,64,256,1024";
  std::string shape = "96,256,256,256,1";
  std::string model;
  std::string isa;
  int threads = 1;
  double seconds = 0.25;
  bool json = false;
  bool no_peers = false;
  std::string clock = "wall";
  std::string device = "cpu";
  std::string serving;  // a trace: time the serving path of --model on its jobs instead
  bool batch_given = false;
};

MlpModel random_model(const std::vector<std::size_t>& shape) {
  if (shape.size() < 2) throw Error("--shape needs at least inputs and outputs, e.g. 96,256,256,256,1");
  std::mt19937 rng(2026);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  MlpModel m;
  m.dense_inputs = static_cast<std::uint32_t>(shape[0]);
  for (std::size_t i = 1; i < shape.size(); ++i) {
    DenseLayer l;
    l.in = static_cast<std::uint32_t>(shape[i - 1]);
    l.out = static_cast<std::uint32_t>(shape[i]);
    const float a = std::sqrt(6.0f / static_cast<float>(l.in));
    l.weight.resize(std::size_t{l.in} * l.out);
    for (float& w : l.weight) w = a * u(rng);
    l.bias.resize(l.out);
    for (float& b : l.bias) b = 0.1f * u(rng);
    l.act = i + 1 == shape.size() ? Activation::None : Activation::Relu;
    m.layers.push_back(std::move(l));
  }
  return m;
}

std::string fmt_ratio(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

struct Row {
  std::string variant, isa;
  std::size_t batch;
  int threads;
  LatencyStats st;
};
struct PeerRow {
  std::string name;
  std::size_t batch;
  LatencyStats st;
};

// Runs `call(thread, iteration)` on `threads` threads at once; latencies of all calls pooled.
LatencyStats measure_threads(int threads, double seconds, BenchClock clock,
                                     const std::function<void(int, std::size_t)>& call) {
  if (threads == 1) return measure([&](std::size_t i) { call(0, i); }, seconds, 20, 2'000'000, clock);
  std::vector<double> all;
  std::mutex mu;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      std::vector<double> mine = measure_samples([&](std::size_t i) { call(t, i); }, seconds, 20, 2'000'000, clock);
      std::lock_guard<std::mutex> lock(mu);
      all.insert(all.end(), mine.begin(), mine.end());
    });
  for (auto& th : pool) th.join();
  return summarize(all);
}

// `--device cuda`: the CUDA backend's benchmark (engine/cuda/gpu_bench.hpp) on a random
// model of --shape, batch sizes the powers of two between the smallest and the largest of
// --batch (default 1 to 65536): host-to-host latency as a caller sees it, and device-only time.
void run_cuda_bench(const BenchOptions& o, int device) {
#ifdef TTLPRED_WITH_CUDA
  if (!o.model.empty()) throw Error("--device cuda benchmarks a random model of --shape; --model is CPU only");
  cuda::GpuBenchOptions g;
  const auto shape = parse_positive_list(o.shape, "--shape", 1u << 20);
  g.shape.assign(shape.begin(), shape.end());
  if (o.variants != "all") {
    std::stringstream in(o.variants);
    for (std::string v; std::getline(in, v, ',');)
      if (!v.empty()) g.variants.push_back(v);
  }
  if (o.batch_given) {
    const auto b = parse_positive_list(o.batches, "--batch", std::size_t{1} << 24);
    g.min_batch = *std::min_element(b.begin(), b.end());
    g.max_batch = *std::max_element(b.begin(), b.end());
  }
  g.seconds_per_point = o.seconds;
  g.device = device;
  if (const std::string problem = cuda::cuda_device_problem(g.device); !problem.empty())
    throw Error("--device " + o.device + ": CUDA: " + problem);
  std::ostringstream table, lines;
  cuda::run_gpu_bench(g, o.json ? static_cast<std::ostream&>(table) : std::cout, lines);
  if (!o.json) return;
  nlohmann::json j;
  j["device"] = "cuda";
  j["results"] = nlohmann::json::array();
  j["roofline"] = nlohmann::json::array();
  std::istringstream in(lines.str());
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    nlohmann::json row = nlohmann::json::parse(line);
    row["threads"] = 1;
    (row.contains("roofline") ? j["roofline"] : j["results"]).push_back(std::move(row));
  }
  std::printf("%s\n", j.dump(2).c_str());
#else
  (void)o;
  (void)device;  // unreachable: device_named refuses cuda in a build without the backend
#endif
}

void run_bench(const BenchOptions& o) {
  const DeviceChoice device = device_named(o.device);
  if (device.backend != nullptr) return run_cuda_bench(o, device.device);
  if (!o.serving.empty()) {
    if (!(o.seconds > 0.0) || o.seconds > 60.0) throw Error("--seconds must be in (0, 60]");
    return run_serving_bench({o.model, o.serving, engine::variants_from_list(o.variants), o.isa, o.seconds, o.json});
  }
  if (o.threads < 1 || o.threads > 256) throw Error("--threads must be between 1 and 256");
  if (!(o.seconds > 0.0) || o.seconds > 60.0) throw Error("--seconds must be in (0, 60]");
  if (o.clock != "wall" && o.clock != "thread") throw Error("--clock must be wall or thread, not '" + o.clock + "'");
  const BenchClock clock = o.clock == "wall" ? BenchClock::Wall : BenchClock::ThreadCpu;
  const std::vector<engine::Variant> variants = engine::variants_from_list(o.variants);
  const std::vector<std::size_t> batches = parse_positive_list(o.batches, "--batch", 1u << 20);
  // A model file's network (its calibration too, when it carries one), or a random one.
  ModelFile file;
  if (!o.model.empty()) file = load_model_file(o.model);
  const MlpModel model = o.model.empty() ? random_model(parse_positive_list(o.shape, "--shape", 1u << 20)) : file.mlp;
  const std::string shape_text = o.model.empty() ? o.shape : o.model;
  engine::CompileOptions copt;
  if (!o.isa.empty()) copt.isa = engine::isa_from_name(o.isa);

  // Inputs: standard normal features, like an encoder's standardized output. The pool holds
  // at least 64 MiB so that consecutive calls never find their inputs in cache.
  if (model.layers.empty()) throw Error(shape_text + ": the model has no layers");
  const std::size_t width = model.dense_inputs, outputs = model.layers.back().out;
  const std::size_t n_cat = model.embeddings.size();
  const std::size_t max_batch = *std::max_element(batches.begin(), batches.end());
  const std::size_t pool_rows = std::max<std::size_t>(max_batch * 4, (64u << 20) / (4 * std::max<std::size_t>(1, width)));
  std::vector<float> pool(pool_rows * width);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (float& v : pool) v = nd(rng);
  // Category indices, uniform over each column's vocabulary (pool_rows x n_cat).
  std::vector<std::uint32_t> cat_pool(pool_rows * n_cat);
  for (std::size_t r = 0; r < pool_rows; ++r)
    for (std::size_t j = 0; j < n_cat; ++j)
      cat_pool[r * n_cat + j] = static_cast<std::uint32_t>(rng() % model.embeddings[j].cardinality);
  quant::ActivationRangeOptions calib_opt;
  calib_opt.method = quant::RangeMethod::Percentile;
  const std::size_t calib_rows = std::min<std::size_t>(pool_rows, 2048);
  if (!file.int8_calibration.empty())
    copt.calibration = quant::parse_activation_ranges(file.int8_calibration, o.model + " int8 calibration");
  else  // calibrated here on the random inputs
    copt.calibration = quant::measure_activation_ranges(model, pool.data(), n_cat ? cat_pool.data() : nullptr, calib_rows, calib_opt);

  // Rows of the call-th input slot: a stride that visits all slots of the pool.
  auto slot_row = [&](std::size_t batch, std::size_t call) { return (call * 7919 % (pool_rows / batch)) * batch; };
  auto input_at = [&](std::size_t batch, std::size_t call) { return pool.data() + slot_row(batch, call) * width; };
  auto cats_at = [&](std::size_t batch, std::size_t call) {
    return n_cat ? cat_pool.data() + slot_row(batch, call) * n_cat : nullptr;
  };

  std::vector<Row> rows;
  std::vector<PeerRow> peers;
  for (engine::Variant v : variants) {
    const engine::Plan plan = engine::compile(model, v, copt);
    for (std::size_t b : batches) {
      std::vector<std::vector<float>> out(static_cast<std::size_t>(o.threads), std::vector<float>(b * outputs));
      const auto st = measure_threads(o.threads, o.seconds, clock, [&](int t, std::size_t i) {
        const std::size_t call = i + static_cast<std::size_t>(t) * 131;
        plan.predict(input_at(b, call), cats_at(b, call), b, out[static_cast<std::size_t>(t)].data());
      });
      rows.push_back({std::string(engine::variant_name(v)), std::string(engine::isa_name(plan.isa())), b, o.threads, st});
    }
  }
  // The oneDNN peers have no embedding lookups: they run only on dense-only models.
  const bool peers_possible = n_cat == 0;
  if (!o.no_peers && !peers_possible)
    std::fprintf(stderr, "ttlpred bench: oneDNN peers skipped: the model has embeddings\n");
#ifdef TTLPRED_HAVE_ONEDNN
  if (!o.no_peers && peers_possible)
    for (auto kind : {peers::OneDnnMlp::Kind::Fp32, peers::OneDnnMlp::Kind::Int8})
      for (std::size_t b : batches) {
        peers::OneDnnMlp peer(model, kind, b, &*copt.calibration, o.threads);
        std::vector<float> out(b * outputs);
        const auto st = measure([&](std::size_t i) { peer.run(input_at(b, i), out.data()); }, o.seconds, 20,
                                2'000'000, clock);
        peers.push_back({peers::OneDnnMlp::name(kind), b, st});
      }
#else
  if (!o.no_peers && peers_possible)
    std::fprintf(stderr, "ttlpred bench: oneDNN peers skipped: this build has no oneDNN (install libdnnl-dev and reconfigure)\n");
#endif

  if (o.json) {
    nlohmann::json j;
    j["results"] = nlohmann::json::array();
    for (const Row& r : rows)
      j["results"].push_back({{"variant", r.variant}, {"isa", r.isa}, {"batch", r.batch}, {"threads", r.threads},
                              {"median_us", r.st.median_us}, {"p99_us", r.st.p99_us},
                              {"per_sample_us", r.st.median_us / static_cast<double>(r.batch)}});
    j["peers"] = nlohmann::json::array();
    for (const PeerRow& p : peers)
      j["peers"].push_back({{"name", p.name}, {"batch", p.batch}, {"median_us", p.st.median_us},
                            {"per_sample_us", p.st.median_us / static_cast<double>(p.batch)}});
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  auto peer_median = [&](const std::string& name, std::size_t b) {
    for (const PeerRow& p : peers)
      if (p.name == name && p.batch == b) return p.st.median_us;
    return 0.0;
  };
  std::printf("model %s, %d thread(s), %s clock, %.2f s per case; ratio = our median / peer median (< 1: faster)\n",
              shape_text.c_str(), o.threads, o.clock.c_str(), o.seconds);
  std::printf("%-13s %-7s %6s %11s %11s %13s %14s %9s %9s\n", "variant", "isa", "batch", "median_us", "p99_us",
              "per_sample_us", "samples/s", "/onednn32", "/onednn8");
  for (const Row& r : rows) {
    const double f = peer_median("onednn_fp32", r.batch), q = peer_median("onednn_int8", r.batch);
    auto ratio = [&](double peer) { return peer > 0 ? fmt_ratio(r.st.median_us / peer) : std::string("-"); };
    std::printf("%-13s %-7s %6zu %11.2f %11.2f %13.4f %14.0f %9s %9s\n", r.variant.c_str(), r.isa.c_str(), r.batch,
                r.st.median_us, r.st.p99_us, r.st.median_us / static_cast<double>(r.batch),
                static_cast<double>(r.batch) * r.threads * 1e6 / r.st.median_us, ratio(f).c_str(), ratio(q).c_str());
  }
  for (const PeerRow& p : peers)
    std::printf("%-13s %-7s %6zu %11.2f %11.2f %13.4f %14.0f\n", p.name.c_str(), "onednn", p.batch, p.st.median_us,
                p.st.p99_us, p.st.median_us / static_cast<double>(p.batch),
                static_cast<double>(p.batch) * 1e6 / p.st.median_us);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto opts = std::make_shared<BenchOptions>();
  auto* cmd = app.add_subcommand("bench", "Latency of the compiled inference variants against oneDNN on one MLP shape");
  cmd->add_option("--variants", opts->variants, "'all' or a comma-separated list of:\n" + engine::variant_help_lines())
      ->capture_default_str();
  cmd->add_option("--batch", opts->batches, "comma-separated batch sizes")->capture_default_str();
  cmd->add_option("--shape", opts->shape, "random model: inputs,hidden...,outputs")->capture_default_str();
  cmd->add_option("--model", opts->model,
                  "model file to benchmark instead of a random --shape (random inputs; its int8 calibration "
                  "when it has one)");
  cmd->add_option("--isa", opts->isa, "pin the instruction set: scalar, avx2, avx512, avx512-vnni, avx512-bf16, avx512-amx (default: the best this CPU runs)");
  cmd->add_option("--threads", opts->threads,
                  "concurrent callers sharing one plan; oneDNN peers get this many OpenMP threads")
      ->capture_default_str();
  cmd->add_option("--seconds", opts->seconds, "timed seconds per variant and batch")->capture_default_str();
  cmd->add_flag("--json", opts->json, "print one JSON object: {results: [...], peers: [...]}");
  cmd->add_option("--clock", opts->clock,
                  "wall (caller latency) or thread (CPU time of the calling thread: for loaded machines; "
                  "oneDNN peers with more than one thread need wall)")
      ->capture_default_str();
  cmd->add_flag("--no-peers", opts->no_peers, "skip the oneDNN peers");
  cmd->add_option("--serving", opts->serving,
                  "trace: time the serving path of --model (a trained model file) on its jobs, one job a call, "
                  "stage by stage: history, encode, network, safe_ttl, and whole (wall clock; JSON key 'serving')");
  cmd->add_option("--device", opts->device,
                  "cpu, or cuda / cuda:N (the CUDA backend: batch 1 to 65536 unless --batch is given, host-to-host and "
                  "device-only time)")
      ->capture_default_str();
  cmd->callback([opts, cmd] {
    opts->batch_given = cmd->count("--batch") > 0;
    run_bench(*opts);
  });
}

}  // namespace ttlpred::cli
