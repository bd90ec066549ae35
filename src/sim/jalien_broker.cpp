#include "sim/jalien_broker.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "sim/event_queue.hpp"
#include "sim/min_tree.hpp"
#include "synth/rng.hpp"
#include "util/error.hpp"

namespace ttlpred::sim {
namespace {

// Tie order at one instant: jobs end (freeing cores and asking again), then jobs arrive,
// then new pilots start and ask.
constexpr int kJobEnd = 0, kJobArrive = 1, kPilotStart = 2;

struct Payload {
  std::uint32_t a = 0;  // job position (end, arrive) or slot (pilot start)
  std::uint32_t b = 0;  // pilot (end)
  bool killed = false;  // job end: killed; pilot start: the slot's first pilot
};

struct Pilot {
  std::size_t slot = 0;
  double start = 0;     // when its lifetime began (may be before the simulation's start)
  double lifetime = 0;
  int free = 0;
  int running = 0;
  double born = 0;      // when it joined the simulation
  bool alive = false;
};

class Broker {
 public:
  Broker(const std::vector<GridJob>& jobs, const GridConfig& config)
      : config_(config), rng_(config.seed), series_(0) {
    if (config.slots.empty()) throw Error("simulate: the grid has no pilot slots");
    order_.resize(jobs.size());
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return jobs[a].submit < jobs[b].submit; });
    jobs_.reserve(jobs.size());
    for (std::size_t i : order_) jobs_.push_back(jobs[i]);
    int max_cores = 0;
    for (const auto& s : config.slots) max_cores = std::max(max_cores, s.cores);
    for (const auto& j : jobs_) {
      if (j.cores > max_cores)
        throw Error("simulate: job " + std::to_string(j.id) + " needs " + std::to_string(j.cores) +
                    " cores, more than any pilot slot offers (" + std::to_string(max_cores) + ")");
      if (std::find(core_classes_.begin(), core_classes_.end(), j.cores) == core_classes_.end())
        core_classes_.push_back(j.cores);
    }
    std::sort(core_classes_.begin(), core_classes_.end());
    source_ = config.oracle ? nullptr : config.ttl_source;
    classes_ = source_ ? source_->classes() : 1;
    if (classes_ == 0) throw Error("simulate: the TTL source has no host class");
    ttl_.resize(jobs_.size() * classes_);
    for (std::size_t p = 0; p < jobs_.size(); ++p)
      std::fill_n(ttl_.begin() + static_cast<std::ptrdiff_t>(p * classes_), classes_, jobs_[p].ttl);
    // One tree per (core class, host class): a pilot of host class h is matched by the TTLs
    // given for h.
    trees_.assign(core_classes_.size() * classes_, MinTree(jobs_.size()));
    waiting_in_class_.assign(core_classes_.size(), 0);
    out_.resize(jobs_.size());
    queued_at_.resize(jobs_.size());
    pilots_.resize(config.slots.size());
    max_threshold_.assign(classes_, 0.0);
    for (const auto& s : config.slots) {
      if (classes_ > 1 && s.host_class >= classes_)
        throw Error("simulate: a pilot slot is on host class " + std::to_string(s.host_class) + ", the TTL source has " +
                    std::to_string(classes_));
      double& m = max_threshold_[host_class(s)];
      m = std::max(m, threshold(s.lifetime_s - config.safety_margin_s, s.speed));
    }
    t0_ = jobs_.empty() ? 0 : jobs_.front().submit;
    t_last_submit_ = jobs_.empty() ? 0 : jobs_.back().submit;
    series_ = TimeSeries(t0_);
  }

  GridResult run() {
    for (std::size_t p = 0; p < jobs_.size(); ++p) events_.push(jobs_[p].submit, kJobArrive, Payload{u32(p), 0, false});
    // Slots are in their steady state when the trace starts: each pilot is already a
    // uniform fraction of the way through its lifetime (or a fixed age, for tests). They
    // ask after the first jobs have arrived.
    initial_start_.resize(config_.slots.size());
    for (std::size_t s = 0; s < config_.slots.size(); ++s) {
      const double age = config_.initial_age_s >= 0 ? config_.initial_age_s : rng_.uniform() * config_.slots[s].lifetime_s;
      initial_start_[s] = t0_ - age;
      events_.push(t0_, kPilotStart, Payload{u32(s), 0, true});
    }
    remaining_ = jobs_.size();
    while (!events_.empty() && remaining_ > 0) {
      const auto e = events_.pop();
      series_.advance(e.time);
      if (e.kind == kJobArrive) arrive(e.payload.a, e.time);
      else if (e.kind == kJobEnd) job_end(e.payload, e.time);
      else start_pilot(e.payload.a, e.time, e.payload.killed ? initial_start_[e.payload.a] : e.time);
      series_.set_busy(busy_cores_);
      series_.set_capacity(live_cores_);
      series_.set_queue(static_cast<double>(waiting_));
    }
    GridResult r;
    r.hours = series_.finish(std::max(t0_, last_time_));
    finish_metrics();
    r.metrics = m_;
    r.outcomes.resize(jobs_.size());
    for (std::size_t p = 0; p < jobs_.size(); ++p) r.outcomes[order_[p]] = out_[p];
    return r;
  }

 private:
  static std::uint32_t u32(std::size_t v) { return static_cast<std::uint32_t>(v); }

  // The key a job is matched by on host class h and the pilot-side bound it must stay under.
  double key(std::size_t p, std::size_t h) const { return config_.oracle ? jobs_[p].work : ttl_[p * classes_ + h]; }
  std::size_t host_class(const SlotKind& s) const { return classes_ > 1 ? s.host_class : 0; }
  MinTree& tree(std::size_t core_class, std::size_t h) { return trees_[core_class * classes_ + h]; }
  double threshold(double time_left, double speed) const {
    return config_.oracle ? (time_left - config_.kill_margin_s) * speed : time_left;
  }
  std::size_t class_of(int cores) const {
    return static_cast<std::size_t>(std::lower_bound(core_classes_.begin(), core_classes_.end(), cores) - core_classes_.begin());
  }

  double time_left(const Pilot& pilot, double t) const {
    double left = pilot.lifetime - (t - pilot.start);
    if (config_.proxy_lifetime_s > 0)
      left = std::min(left, config_.proxy_lifetime_s - (t - pilot.start) - config_.proxy_margin_s);
    return left - config_.safety_margin_s;
  }

  void arrive(std::size_t p, double t) {
    last_time_ = t;
    if (source_) source_->decide(order_[p], t, std::span<double>(ttl_.data() + p * classes_, classes_));
    bool matchable = false;
    for (std::size_t h = 0; h < classes_; ++h) matchable = matchable || key(p, h) < max_threshold_[h];
    if (!matchable) {  // no pilot could ever take it
      out_[p].status = GridStatus::NeverMatched;
      ++m_.never_matched;
      --remaining_;
      return;
    }
    enqueue(p, t);
  }

  void enqueue(std::size_t p, double t) {
    queued_at_[p] = t;
    const std::size_t c = class_of(jobs_[p].cores);
    for (std::size_t h = 0; h < classes_; ++h) tree(c, h).set(p, key(p, h));
    ++waiting_in_class_[c];
    ++waiting_;
  }

  void dequeue(std::size_t p) {
    const std::size_t c = class_of(jobs_[p].cores);
    for (std::size_t h = 0; h < classes_; ++h) tree(c, h).set(p, MinTree::kEmpty);
    --waiting_in_class_[c];
    --waiting_;
  }

  void start_pilot(std::size_t slot, double t, double lifetime_start) {
    last_time_ = t;
    const SlotKind& kind = config_.slots[slot];
    // A slot runs one pilot at a time, so the pilot is known by its slot.
    pilots_[slot] = Pilot{slot, lifetime_start, kind.lifetime_s, kind.cores, 0, t, true};
    ++m_.pilots;
    live_cores_ += kind.cores;
    ask(slot, t);
  }

  // The pilot asks for work until its cores are full or nothing fits; a pilot left with
  // nothing to run exits.
  void ask(std::size_t pi, double t) {
    Pilot& pilot = pilots_[pi];
    const SlotKind& kind = config_.slots[pilot.slot];
    const std::size_t h = host_class(kind);
    bool ttl_rejected = false;
    while (pilot.free > 0) {
      const double bound = threshold(time_left(pilot, t), kind.speed);
      std::size_t best = MinTree::npos;
      bool fitting_waits = false;
      for (std::size_t c = 0; c < core_classes_.size() && core_classes_[c] <= pilot.free; ++c) {
        if (waiting_in_class_[c] == 0) continue;
        fitting_waits = true;
        best = std::min(best, tree(c, h).first_below(bound));
      }
      if (best == MinTree::npos) {
        if (fitting_waits) {
          ++m_.matches_rejected_for_ttl;
          ttl_rejected = true;
        }
        break;
      }
      run_job(best, pi, t);
    }
    if (pilot.running == 0) exit_pilot(pi, t, ttl_rejected);
  }

  void run_job(std::size_t p, std::size_t pi, double t) {
    dequeue(p);
    Pilot& pilot = pilots_[pi];
    const SlotKind& kind = config_.slots[pilot.slot];
    const GridJob& job = jobs_[p];
    pilot.free -= job.cores;
    ++pilot.running;
    busy_cores_ += job.cores;
    GridJobOutcome& o = out_[p];
    o.wait_s += t - queued_at_[p];
    o.start = t;
    o.host_speed = kind.speed;
    ++o.attempts;
    const std::size_t h = host_class(kind);
    if (source_ && o.attempts == 1) source_->matched(order_[p], h);
    const double run = job.work / kind.speed;
    const double ttl = config_.oracle ? run + config_.kill_margin_s : ttl_[p * classes_ + h];
    if (o.attempts == 1) o.first_ttl_s = ttl;
    const bool killed = run > ttl + config_.kill_margin_s;
    const double duration = killed ? ttl + config_.kill_margin_s : run;
    events_.push(t + duration, kJobEnd, Payload{u32(p), u32(pi), killed});
  }

  void job_end(const Payload& e, double t) {
    last_time_ = t;
    const std::size_t p = e.a, pi = e.b;
    const GridJob& job = jobs_[p];
    GridJobOutcome& o = out_[p];
    o.end = t;
    const double core_hours = job.cores * (t - o.start) / 3600;
    m_.cpu_hours_used += core_hours;
    Pilot& pilot = pilots_[pi];
    pilot.free += job.cores;
    --pilot.running;
    busy_cores_ -= job.cores;
    // The source answered the first attempt only; the broker posts every outcome now.
    if (source_ && o.attempts == 1) source_->ended(order_[p], t, t - o.start, job.cores, e.killed);
    if (source_ && o.attempts > 1)
      source_->retry_ended(order_[p], host_class(config_.slots[pilot.slot]), t, t - o.start, e.killed);
    if (e.killed) {
      if (o.kills == 0) ++m_.jobs_killed;
      ++o.kills;
      ++m_.kills;
      m_.cpu_hours_lost_to_kills += core_hours;
      series_.add_waste(t, core_hours);
      if (o.attempts <= config_.max_retries) {
        ++m_.resubmissions;
        if (jobs_[p].retry_ttl > 0)
          std::fill_n(ttl_.begin() + static_cast<std::ptrdiff_t>(p * classes_), classes_, jobs_[p].retry_ttl);
        enqueue(p, t);
      } else {
        o.status = GridStatus::Failed;
        ++m_.failed;
        --remaining_;
      }
    } else {
      o.status = GridStatus::Done;
      m_.cpu_hours_done += core_hours;
      ++m_.completed;
      if (t <= t_last_submit_) ++completed_in_window_;
      --remaining_;
    }
    ask(pi, t);
  }

  void exit_pilot(std::size_t pi, double t, bool ttl_rejected) {
    Pilot& pilot = pilots_[pi];
    const SlotKind& kind = config_.slots[pilot.slot];
    live_cores_ -= kind.cores;
    pilot.alive = false;
    pilot_core_seconds_ += kind.cores * (t - pilot.born);
    const double left = pilot.lifetime - (t - pilot.start);
    if (left > 0) {
      // Leaving with jobs still waiting gives up slot time the VO had work for: waste.
      // Leaving an empty queue hands back a slot nobody needed: counted apart.
      const double core_hours = kind.cores * left / 3600;
      ++m_.early_exits;
      if (waiting_ > 0) {
        m_.wasted_core_hours += core_hours;
        if (ttl_rejected) m_.wasted_core_hours_ttl += core_hours;
        series_.add_waste(t, core_hours);
      } else {
        m_.idle_exit_core_hours += core_hours;
      }
    }
    // The slot's next pilot; exponential gaps are what a steady pilot submission rate gives.
    const double gap = -config_.pilot_gap_mean_s * std::log(1 - rng_.uniform());
    events_.push(t + gap, kPilotStart, Payload{u32(pilot.slot), 0, false});
  }

  void finish_metrics() {
    m_.jobs = jobs_.size();
    m_.days = (t_last_submit_ - t0_) / 86400;
    m_.jobs_completed_per_day = m_.days > 0 ? static_cast<double>(completed_in_window_) / m_.days : 0;
    std::vector<double> waits;
    waits.reserve(m_.completed);
    for (const auto& o : out_)
      if (o.status == GridStatus::Done) waits.push_back(o.wait_s);
    if (!waits.empty()) {
      m_.mean_wait_s = std::accumulate(waits.begin(), waits.end(), 0.0) / static_cast<double>(waits.size());
      const std::size_t k = static_cast<std::size_t>(std::ceil(0.95 * static_cast<double>(waits.size()))) - 1;
      std::nth_element(waits.begin(), waits.begin() + static_cast<std::ptrdiff_t>(k), waits.end());
      m_.p95_wait_s = waits[k];
    }
    // Pilots still alive at the end count up to the end.
    double held = pilot_core_seconds_;
    for (const auto& pilot : pilots_)
      if (pilot.alive) held += config_.slots[pilot.slot].cores * (last_time_ - pilot.born);
    m_.utilization = held > 0 ? m_.cpu_hours_used * 3600 / held : 0;
    m_.makespan_s = last_time_ - t0_;
  }

  GridConfig config_;
  synth::Rng rng_;
  std::vector<std::size_t> order_;
  std::vector<GridJob> jobs_;
  std::vector<int> core_classes_;
  TtlSource* source_ = nullptr;
  std::size_t classes_ = 1;
  std::vector<double> ttl_;            // [job position x host class]
  std::vector<double> max_threshold_;  // per host class
  std::vector<MinTree> trees_;         // [core class x host class]
  std::vector<std::size_t> waiting_in_class_;
  std::vector<GridJobOutcome> out_;
  std::vector<double> queued_at_;
  std::vector<double> initial_start_;
  std::vector<Pilot> pilots_;
  EventQueue<Payload> events_;
  GridMetrics m_;
  TimeSeries series_;
  double t0_ = 0, t_last_submit_ = 0, last_time_ = 0;
  double busy_cores_ = 0, live_cores_ = 0, pilot_core_seconds_ = 0;
  std::size_t waiting_ = 0, remaining_ = 0, completed_in_window_ = 0;
};

}  // namespace

GridResult simulate_jalien(const std::vector<GridJob>& jobs, const GridConfig& config) {
  return Broker(jobs, config).run();
}

}  // namespace ttlpred::sim
