#include "sim/sim_input.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "pipeline/split_history.hpp"
#include "synth/rng.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {

SimTrace prepare_trace(JobTable trace, double split, const Predictor* predictor, bool host_classes) {
  if (!(split >= 0 && split < 1)) throw Error("simulate: --split must be in [0, 1), got " + std::to_string(split));
  SimTrace t{chronological_split(std::move(trace), split > 0 ? split : 1.0), 0, {}, nullptr, {}};
  t.first_row = split > 0 ? t.split.train_rows : 0;
  t.predictor = predictor;
  if (t.rows() == 0) throw Error("simulate: no job left to simulate after the split");
  if (host_classes) t.hosts = find_host_classes(t.split.jobs, t.first_row);
  if (predictor) {
    const HistoryMatrix history = split_history(t.split, predictor->encoder().history_config());
    std::vector<std::size_t> rows(t.rows());
    std::iota(rows.begin(), rows.end(), t.first_row);
    t.predictions = predictor->predict_rows(t.split.jobs, rows, history);
    if (host_classes) predict_on_host_classes(t.hosts, t.split, t.first_row, history, *predictor);
  }
  return t;
}

namespace {
double value_or(double v, double fallback) { return std::isnan(v) ? fallback : v; }
}  // namespace

std::vector<BatchJob> batch_jobs(const SimTrace& t) {
  const JobTable& j = t.split.jobs;
  const auto id = j.num(Field::JobId), submit = j.num(Field::SubmitTime), wall = j.num(Field::WallTime),
             req = j.num(Field::RequestedTtl), cores = j.num(Field::CpuCores), slot = j.num(Field::SlotCores);
  const auto user = j.codes(Field::User);
  std::vector<BatchJob> out(t.rows());
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::size_t r = t.first_row + k;
    BatchJob& b = out[k];
    b.id = static_cast<std::int64_t>(value_or(id[r], static_cast<double>(r)));
    b.submit = submit[r];
    b.run = wall[r];
    b.request = value_or(req[r], 0);
    b.procs = static_cast<int>(std::max(1.0, value_or(cores[r], value_or(slot[r], 1))));
    b.user = user[r];
    if (!t.predictions.empty()) {
      b.model_expected = t.predictions[k].expected_wall_s;
      b.model_safe = t.predictions[k].safe_ttl_s;
    }
  }
  return out;
}

std::vector<GridJob> grid_jobs(const SimTrace& t, GridTtl policy, double default_ttl_s) {
  if (policy == GridTtl::Model && t.predictions.empty()) throw Error("simulate: --ttl model needs --model");
  const JobTable& j = t.split.jobs;
  const auto id = j.num(Field::JobId), submit = j.num(Field::SubmitTime), wall = j.num(Field::WallTime),
             req = j.num(Field::RequestedTtl), cores = j.num(Field::CpuCores);
  std::vector<GridJob> out(t.rows());
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::size_t r = t.first_row + k;
    GridJob& g = out[k];
    g.id = static_cast<std::int64_t>(value_or(id[r], static_cast<double>(r)));
    g.submit = submit[r];
    // With host classes the work is in seconds on a host of speed 1, run at the slot's speed.
    g.work = t.hosts.empty() ? wall[r] : wall[r] * t.hosts.row_speed[k];
    g.cores = static_cast<int>(std::max(1.0, value_or(cores[r], 1)));
    const double requested = value_or(req[r], 0);
    const double static_ttl = requested > 0 ? requested : default_ttl_s;
    g.ttl = policy == GridTtl::Model ? t.predictions[k].safe_ttl_s : static_ttl;
    // A kill shows the model's TTL was too short for this job: its resubmission gets the
    // static TTL, which the model's never exceeds (it is capped at the request).
    g.retry_ttl = static_ttl;
  }
  return out;
}

double cores_for_load(const SimTrace& t, double load) {
  const JobTable& j = t.split.jobs;
  const auto submit = j.num(Field::SubmitTime), wall = j.num(Field::WallTime), cores = j.num(Field::CpuCores);
  double work = 0, lo = INFINITY, hi = -INFINITY;
  for (std::size_t r = t.first_row; r < j.rows(); ++r) {
    work += wall[r] * std::max(1.0, value_or(cores[r], 1));
    lo = std::min(lo, submit[r]);
    hi = std::max(hi, submit[r]);
  }
  const double span = std::max(hi - lo, 3600.0);
  return work / span / load;
}

std::vector<SlotKind> slots_from_trace(const SimTrace& t, double total_cores, std::uint64_t seed) {
  const JobTable& j = t.split.jobs;
  const auto slot = j.num(Field::SlotCores), cores = j.num(Field::CpuCores);
  synth::Rng rng(seed ^ 0x51075u);
  std::vector<SlotKind> out;
  double sum = 0;
  const std::size_t n = j.rows() - t.first_row;
  while (sum < total_cores) {
    const std::size_t r = t.first_row + static_cast<std::size_t>(rng.below(n));
    SlotKind s;
    s.cores = static_cast<int>(value_or(slot[r], std::max(8.0, value_or(cores[r], 1))));
    const double u = rng.uniform();
    s.lifetime_s = u < 0.5 ? 86400 : u < 0.8 ? 172800 : 259200;
    s.speed = 1;
    if (!t.hosts.empty()) {
      s.host_class = t.hosts.row_class[r - t.first_row];
      s.speed = t.hosts.classes[s.host_class].speed;
    }
    out.push_back(s);
    sum += s.cores;
  }
  return out;
}

}  // namespace ttlpred::sim
