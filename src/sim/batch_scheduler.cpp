#include "sim/batch_scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <unordered_map>

#include "sim/event_queue.hpp"
#include "util/error.hpp"
#include "util/splitmix.hpp"

namespace ttlpred::sim {
namespace {

// Event kinds in tie order: at one instant, ends free processors first, then estimates
// that ran out are corrected, then arrivals join the queue; the scheduler then runs once.
constexpr int kFinish = 0, kExpire = 1, kArrive = 2;

struct Payload {
  std::size_t job;
  int stage;  // correction stage the expiry belongs to (stale ones are ignored)
};

class BatchSimulation {
 public:
  BatchSimulation(const std::vector<BatchJob>& jobs, const BatchConfig& config)
      : jobs_(jobs), config_(config), out_(jobs.size()), estimate_(jobs.size()), safe_(jobs.size()), est_end_(jobs.size()),
        stage_(jobs.size(), 0), started_(jobs.size(), 0), run_(jobs.size()), given_(jobs.size(), 0),
        model_answered_(jobs.size(), 0), evidence_(config.scale.candidates.size()), series_(first_submit(jobs)) {
    free_ = config.machine_procs;
    series_.set_capacity(config.machine_procs);
    scale_ = config.scale.candidates.empty() ? 1.0 : config.scale.candidates.front();
    next_choice_ = first_submit(jobs) + config.scale.every_s;
  }

  BatchResult run() {
    check_inputs();
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      const BatchJob& b = jobs_[j];
      run_[j] = b.request > 0 ? std::min(b.run, b.request) : b.run;
      out_[j].killed_at_request = b.request > 0 && b.run > b.request;
      events_.push(b.submit, kArrive, Payload{j, 0});
    }
    while (!events_.empty()) {
      const auto e = events_.pop();
      series_.advance(e.time);
      handle(e.time, e.kind, e.payload);
      if (events_.empty() || events_.top().time != e.time) schedule(e.time);
      series_.set_busy(config_.machine_procs - free_);
      series_.set_queue(static_cast<double>(queue_.size()));
    }
    BatchResult r;
    r.outcomes = std::move(out_);
    r.metrics = metrics(r.outcomes);
    r.hours = series_.finish(jobs_.empty() ? 0 : last_end_);
    return r;
  }

 private:
  static double first_submit(const std::vector<BatchJob>& jobs) {
    double t = jobs.empty() ? 0 : jobs.front().submit;
    for (const auto& j : jobs) t = std::min(t, j.submit);
    return t;
  }

  void check_inputs() const {
    if (config_.machine_procs <= 0) throw Error("simulate: the machine has no processors (give --procs)");
    if (config_.estimator == Estimator::Online && config_.source == nullptr)
      throw Error("simulate: the online estimator has no source");
    for (double c : config_.scale.candidates)
      if (!(c > 0 && c <= 1)) throw Error("simulate: an estimate scale must be in (0, 1], got " + std::to_string(c));
    if (config_.scale.candidates.empty()) throw Error("simulate: no estimate scale");
    if (!(config_.oracle_overestimate >= 0 && std::isfinite(config_.oracle_overestimate)))
      throw Error("simulate: the oracle's overestimate must be a finite number >= 0, got " +
                  std::to_string(config_.oracle_overestimate));
    for (const auto& b : jobs_) {
      if (b.procs > config_.machine_procs)
        throw Error("simulate: job " + std::to_string(b.id) + " needs " + std::to_string(b.procs) +
                    " processors, more than the machine's " + std::to_string(config_.machine_procs) +
                    " (give a larger --procs)");
      if ((config_.estimator == Estimator::Request || config_.estimator == Estimator::Last2 ||
           config_.estimator == Estimator::Online) &&
          !(b.request > 0))
        throw Error("simulate: job " + std::to_string(b.id) +
                    " has no requested time, which --ttl request, last2 and online need (use model or oracle)");
    }
  }

  // The true run time, overestimated by the job's own draw (a hash of the seed and the job's
  // index, so the draw does not depend on the order events happen in).
  double oracle_estimate(std::size_t j) const {
    if (config_.oracle_overestimate <= 0) return run_[j];
    const double u = SplitMix64(config_.oracle_seed ^ splitmix64_mix(static_cast<std::uint64_t>(j) + 1)).uniform();
    const double e = run_[j] * (1 + config_.oracle_overestimate * u);
    return jobs_[j].request > 0 ? std::min(e, jobs_[j].request) : e;
  }

  double last_two(const BatchJob& b) const {
    const auto it = last_two_.find(b.user);
    if (it == last_two_.end() || it->second.count < 2) return b.request;
    return std::min(b.request, 0.5 * (it->second.run[0] + it->second.run[1]));
  }

  // The estimate a job gets when it arrives at t (and its first correction, in safe_).
  double initial_estimate(std::size_t j, double t) {
    const BatchJob& b = jobs_[j];
    switch (config_.estimator) {
      case Estimator::Request: return b.request;
      case Estimator::Oracle: return oracle_estimate(j);
      case Estimator::Model: safe_[j] = b.model_safe; return model_answer(j, b.model_expected);
      case Estimator::Last2: return last_two(b);
      case Estimator::Online: {
        const auto e = config_.source->estimate(j, t);
        if (!e) return given_[j] = last_two(b);
        safe_[j] = e->safe_s;
        return model_answer(j, e->expected_s);
      }
    }
    return b.request;
  }

  // A model's expected time as the backfilling estimate: scaled, and kept unscaled for replays.
  double model_answer(std::size_t j, double expected) {
    given_[j] = expected;
    model_answered_[j] = 1;
    scale_sum_ += scale_;
    ++scale_count_;
    return scale_ * expected;
  }

  // Every `every_s`, the jobs submitted in the `window_s` before the oldest job still waiting
  // or running (so every one of them has ended: a replay of the last jobs to end alone would
  // hold the short ones and miss the long) simulated again alone, with each candidate scale
  // times the estimates they were given (their safe TTLs as the first correction), and the
  // replay pooled with the earlier ones. The least aggressive scale whose pooled average
  // bounded slowdown is within one standard error (of the paired per-job differences) of the
  // lowest answers from now on: a smaller scale must earn its place by more than the replays'
  // noise (the one-standard-error rule of cross-validation), and one noisy week does not undo
  // what the weeks before showed.
  void maybe_choose_scale(double t) {
    const EstimateScaleOptions& o = config_.scale;
    if (!o.chosen() || t < next_choice_) return;
    while (next_choice_ <= t) next_choice_ += o.every_s;
    while (complete_ < arrived_.size() && out_[arrived_[complete_]].end > 0) ++complete_;
    if (complete_ == 0) return;
    const double until = jobs_[arrived_[complete_ - 1]].submit;
    std::size_t first = complete_;
    while (first > 0 && jobs_[arrived_[first - 1]].submit >= until - o.window_s) --first;
    if (complete_ - first < o.min_jobs) return;
    BatchConfig replay{config_.policy, Estimator::Model, config_.machine_procs, nullptr, EstimateScaleOptions{}};
    std::vector<BatchJob> jobs(complete_ - first);
    std::vector<std::vector<double>> bsld(o.candidates.size(), std::vector<double>(jobs.size()));
    for (std::size_t k = 0; k < o.candidates.size(); ++k) {
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        const std::size_t j = arrived_[first + i];
        jobs[i] = jobs_[j];
        jobs[i].model_expected = model_answered_[j] ? o.candidates[k] * given_[j] : given_[j];
        jobs[i].model_safe = safe_[j];
      }
      const BatchResult r = BatchSimulation(jobs, replay).run();
      for (std::size_t i = 0; i < jobs.size(); ++i)
        bsld[k][i] = bounded_slowdown(r.outcomes[i].start - jobs[i].submit, run_[arrived_[first + i]]);
    }
    evidence_.add(bsld);
    scale_ = o.candidates[evidence_.pick()];
    ++replays_;
  }

  // The estimate after a job outlived `elapsed` seconds of it; never at or below elapsed.
  double corrected_estimate(std::size_t j, double elapsed) {
    const BatchJob& b = jobs_[j];
    if (stage_[j] == 1 && safe_[j] > elapsed) return safe_[j];
    if (b.request > elapsed) return b.request;
    return 2 * elapsed;  // no request to fall back to: double what it has run so far
  }

  void handle(double t, int kind, const Payload& p) {
    const std::size_t j = p.job;
    if (kind == kArrive) {
      maybe_choose_scale(t);
      if (config_.scale.chosen()) arrived_.push_back(j);
      estimate_[j] = std::max(1.0, initial_estimate(j, t));
      queue_.push_back(j);
    } else if (kind == kFinish) {
      free_ += jobs_[j].procs;
      running_.erase(std::find(running_.begin(), running_.end(), j));
      out_[j].end = t;
      last_end_ = std::max(last_end_, t);
      auto& u = last_two_[jobs_[j].user];
      u.run[1] = u.run[0];
      u.run[0] = run_[j];
      u.count = std::min(u.count + 1, 2);
      if (config_.source) config_.source->finished(j, t, run_[j]);
      if (out_[j].killed_at_request) series_.add_waste(t, jobs_[j].procs * run_[j] / 3600);
    } else if (kind == kExpire) {
      if (p.stage != stage_[j] || out_[j].end > 0 || est_end_[j] != t) return;  // stale
      ++stage_[j];
      ++out_[j].corrections;
      const double elapsed = t - out_[j].start;
      estimate_[j] = corrected_estimate(j, elapsed);
      est_end_[j] = out_[j].start + estimate_[j];
      arm_expiry(j);
    }
  }

  void arm_expiry(std::size_t j) {
    const double end = out_[j].start + run_[j];
    if (est_end_[j] < end) events_.push(est_end_[j], kExpire, Payload{j, stage_[j]});
  }

  void start(std::size_t j, double t) {
    free_ -= jobs_[j].procs;
    started_[j] = 1;
    running_.push_back(j);
    out_[j].start = t;
    est_end_[j] = t + estimate_[j];
    events_.push(t + run_[j], kFinish, Payload{j, 0});
    arm_expiry(j);
  }

  void schedule(double t) {
    std::size_t head = 0;
    while (head < queue_.size() && jobs_[queue_[head]].procs <= free_) start(queue_[head++], t);
    queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head));
    if (config_.policy == BatchPolicy::Fcfs || queue_.size() < 2 || free_ == 0) return;

    // The head's reservation: the earliest estimated time enough processors are free.
    const int need = jobs_[queue_.front()].procs;
    ends_.clear();
    for (std::size_t r : running_) ends_.emplace_back(std::max(est_end_[r], t), jobs_[r].procs);
    std::sort(ends_.begin(), ends_.end());
    int avail = free_;
    double shadow = t;
    for (const auto& [end, procs] : ends_) {
      avail += procs;
      shadow = end;
      if (avail >= need) break;
    }
    int extra = avail - need;

    candidates_.assign(queue_.begin() + 1, queue_.end());
    if (config_.policy == BatchPolicy::EasyPlusPlus)
      std::stable_sort(candidates_.begin(), candidates_.end(),
                       [&](std::size_t a, std::size_t b) { return estimate_[a] < estimate_[b]; });
    bool any = false;
    for (std::size_t c : candidates_) {
      if (free_ == 0) break;
      const int procs = jobs_[c].procs;
      if (procs > free_) continue;
      const bool ends_before_shadow = t + estimate_[c] <= shadow;
      if (!ends_before_shadow && procs > extra) continue;
      if (!ends_before_shadow) extra -= procs;
      start(c, t);
      ++backfilled_;
      any = true;
    }
    if (any) std::erase_if(queue_, [&](std::size_t q) { return started_[q] != 0; });
  }

  BatchMetrics metrics(const std::vector<BatchJobOutcome>& out) const {
    BatchMetrics m;
    m.jobs = jobs_.size();
    m.backfilled = backfilled_;
    if (jobs_.empty()) return m;
    double sum_bsld = 0, sum_wait = 0, work = 0;
    for (std::size_t j = 0; j < jobs_.size(); ++j) {
      const double wait = out[j].start - jobs_[j].submit;
      sum_bsld += bounded_slowdown(wait, run_[j]);
      sum_wait += wait;
      m.max_wait_s = std::max(m.max_wait_s, wait);
      m.corrections += static_cast<std::size_t>(out[j].corrections);
      work += run_[j] * jobs_[j].procs;
    }
    const double n = static_cast<double>(jobs_.size());
    m.avg_bounded_slowdown = sum_bsld / n;
    m.mean_wait_s = sum_wait / n;
    m.makespan_s = last_end_ - first_submit(jobs_);
    m.utilization = m.makespan_s > 0 ? work / (config_.machine_procs * m.makespan_s) : 0;
    m.cpu_hours_used = work / 3600;
    m.estimate_scale = scale_;
    m.estimate_scale_replays = replays_;
    m.mean_estimate_scale = scale_count_ > 0 ? scale_sum_ / static_cast<double>(scale_count_) : scale_;
    return m;
  }

  struct LastTwo {
    double run[2] = {0, 0};
    int count = 0;
  };

  const std::vector<BatchJob>& jobs_;
  BatchConfig config_;
  std::vector<BatchJobOutcome> out_;
  std::vector<double> estimate_, safe_, est_end_;  // safe_: the first correction (model, online)
  std::vector<int> stage_;
  std::vector<char> started_;
  std::vector<double> run_;
  std::vector<double> given_;          // the unscaled estimate each job was given on arrival
  std::vector<char> model_answered_;  // 1: the model answered it (its estimate is scaled)
  std::vector<std::size_t> arrived_;   // jobs in arrival order (for the replays)
  std::size_t complete_ = 0;           // arrived_[0, complete_) have all ended
  double scale_ = 1, next_choice_ = 0, scale_sum_ = 0;
  std::size_t scale_count_ = 0, replays_ = 0;
  ReplayEvidence evidence_;            // every replay so far, pooled
  EventQueue<Payload> events_;
  std::vector<std::size_t> queue_, running_, candidates_;
  std::vector<std::pair<double, int>> ends_;
  std::unordered_map<std::uint32_t, LastTwo> last_two_;
  int free_ = 0;
  double last_end_ = 0;
  std::size_t backfilled_ = 0;
  TimeSeries series_;
};

}  // namespace

double bounded_slowdown(double wait_s, double run_s, double threshold_s) {
  return std::max(1.0, (wait_s + run_s) / std::max(run_s, threshold_s));
}

BatchResult simulate_batch(const std::vector<BatchJob>& jobs, const BatchConfig& config) {
  return BatchSimulation(jobs, config).run();
}

}  // namespace ttlpred::sim
