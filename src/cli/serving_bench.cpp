#include "cli/serving_bench.hpp"

#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <span>

#include "app/command_options.hpp"
#include "util/latency.hpp"
#include "predict/predictor.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {

namespace {

// Jobs taken from the trace, spread over it; the pool is larger than the calls of one timed
// stage touch at once, so that each call sees a different job.
constexpr std::size_t kPool = 4096;

struct StageRow {
  std::string variant, isa, stage;
  LatencyStats st;
};

// Everything each stage reads, prepared for every pooled job by running the stages before it.
struct Prepared {
  std::vector<JobRecord> jobs;
  std::vector<float> hist, dense, z;
  std::vector<std::uint32_t> cats;
};

Prepared prepare(const Predictor& p, const JobTable& table, const HistoryState& history) {
  Prepared x;
  const FeatureEncoder& enc = p.encoder();
  const std::size_t hw = history.width(), dw = enc.dense_width(), cw = enc.cat_width();
  x.jobs.resize(kPool);
  x.hist.resize(kPool * hw);
  x.dense.resize(kPool * dw);
  x.cats.resize(kPool * cw);
  x.z.resize(kPool * p.backend().outputs());  // the mean and any quantile heads
  for (std::size_t i = 0; i < kPool; ++i) {
    table.record((i * 7919) % table.rows(), x.jobs[i]);
    history.features(x.jobs[i], x.hist.data() + i * hw);
    enc.encode_one(x.jobs[i], x.hist.data() + i * hw, x.dense.data() + i * dw, x.cats.data() + i * cw);
  }
  p.backend().predict(x.dense.data(), cw ? x.cats.data() : nullptr, kPool, x.z.data());
  return x;
}

}  // namespace

void run_serving_bench(const ServingBenchOptions& o) {
  if (o.model.empty()) throw Error("--serving needs --model FILE (a trained model with its encoder)");
  const JobTable table = app::load_trace(o.trace, true);
  if (table.rows() == 0) throw Error(o.trace + ": no jobs to time the serving path on");
  const ModelFile file = load_model_file(o.model);
  std::vector<StageRow> rows;
  std::size_t keys = 0, history_width = 0, dense_width = 0, cat_width = 0;
  for (engine::Variant v : o.variants) {
    PredictorOptions po;
    po.variant = v;
    if (!o.isa.empty()) po.isa = engine::isa_from_name(o.isa);
    const Predictor p(file, po, o.model);
    const HistoryState history = p.initial_history();
    const Prepared x = prepare(p, table, history);
    const FeatureEncoder& enc = p.encoder();
    const std::size_t hw = history.width(), dw = enc.dense_width(), cw = enc.cat_width();
    keys = history.config().keys.size();
    history_width = hw;
    dense_width = dw;
    cat_width = cw;
    const int g = p.group_cat_index();
    const std::size_t width = p.backend().outputs();
    std::vector<float> hist(hw), dense(dw), z(width);
    std::vector<std::uint32_t> cats(cw);
    std::vector<Prediction> out(1);
    const std::string name(engine::variant_name(v)), isa(p.backend().target());
    auto time = [&](const char* stage, const std::function<void(std::size_t)>& fn) {
      rows.push_back({name, isa, stage, measure(fn, o.seconds)});
    };
    time("history", [&](std::size_t i) { history.features(x.jobs[i % kPool], hist.data()); });
    time("encode", [&](std::size_t i) {
      const std::size_t j = i % kPool;
      enc.encode_one(x.jobs[j], x.hist.data() + j * hw, dense.data(), cats.data());
    });
    time("network", [&](std::size_t i) {
      const std::size_t j = i % kPool;
      p.backend().predict(x.dense.data() + j * dw, cw ? x.cats.data() + j * cw : nullptr, 1, z.data());
    });
    time("safe_ttl", [&](std::size_t i) {
      const std::size_t j = i % kPool;
      const std::uint32_t group = g < 0 ? kNoGroup : x.cats[j * cw + static_cast<std::size_t>(g)];
      out[0] = p.finish(x.z.data() + j * width, 0.0f, x.jobs[j][Field::RequestedTtl], group);
    });
    time("whole", [&](std::size_t i) { p.predict(std::span(&x.jobs[i % kPool], 1), history, out); });
  }

  if (o.json) {
    nlohmann::json j;
    j["serving"] = nlohmann::json::array();
    for (const StageRow& r : rows)
      j["serving"].push_back({{"variant", r.variant}, {"isa", r.isa}, {"stage", r.stage},
                              {"median_us", r.st.median_us}, {"p99_us", r.st.p99_us}});
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::printf("serving path of %s on %s, one job per call, wall clock, %.2f s per stage\n", o.model.c_str(),
              o.trace.c_str(), o.seconds);
  std::printf("history: %zu keys, %zu features; encoder: %zu dense, %zu categorical columns\n", keys, history_width,
              dense_width, cat_width);
  std::printf("%-13s %-11s %-9s %10s %10s\n", "variant", "isa", "stage", "median_us", "p99_us");
  for (const StageRow& r : rows)
    std::printf("%-13s %-11s %-9s %10.3f %10.3f\n", r.variant.c_str(), r.isa.c_str(), r.stage.c_str(), r.st.median_us,
                r.st.p99_us);
}

}  // namespace ttlpred::cli
