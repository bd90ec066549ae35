#include "synth/match_floor.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "synth/latent_grid.hpp"
#include "util/error.hpp"
#include "util/thread_pool.hpp"

namespace ttlpred::synth {

double FloorBucket::floor_rmse_h() const { return jobs ? std::sqrt(floor_sq_s2 / static_cast<double>(jobs)) / 3600 : 0; }
double FloorBucket::oracle_rmse_h() const { return jobs ? std::sqrt(oracle_sq_s2 / static_cast<double>(jobs)) / 3600 : 0; }

namespace {

// Which latent constant a job's run time hangs on (world.hpp's priors, in this order).
enum class Kind : std::uint8_t { McHours, RecoFactor, TrainCost, Merge, HlMerge, User };

const LatentPrior& prior_of(Kind k) {
  switch (k) {
    case Kind::McHours: return kMcHoursPrior;
    case Kind::RecoFactor: return kRecoCostFactorPrior;
    case Kind::TrainCost: return kTrainCostPrior;
    case Kind::Merge: return kMergeCostPrior;
    case Kind::HlMerge: return kHlMergeCostPrior;
    case Kind::User: return kUserCostPrior;
  }
  return kMcHoursPrior;
}

// One job as the floor sees it: its mean is a + b theta for the latent theta of `latent`.
struct Run {
  double start = 0, end = 0, wall = 0, cap = 0, a = 0, b = 0, sigma = 0, expected = 0, job_id = 0;
  std::uint32_t latent = 0;
  std::uint32_t scored = 0;  // 1 + index into MatchFloor::jobs, 0 when the row is not scored
  std::uint8_t type = 0;
  bool killed = false;
};

// One latent constant: whose it is, the static TTL its jobs carry, and its jobs.
struct Latent {
  Kind kind = Kind::McHours;
  const Production* prod = nullptr;
  const User* user = nullptr;
  double ttl = 0;
  std::vector<std::uint32_t> runs;
};

// The world's lookups from row text to latent owners and shared constants.
class WorldIndex {
  // Map::find by text, throwing the owner's kind and name when it is not there.
  template <class Map, class Key>
  static typename Map::mapped_type find(const Map& m, const Key& k, const char* what) {
    auto it = m.find(std::string(k));
    if (it == m.end()) throw Error(std::string("match floor: unknown ") + what + " '" + std::string(k) + "'");
    return it->second;
  }

 public:
  explicit WorldIndex(const World& w) : w_(w) {
    for (const auto& p : w.mc) mc_.emplace(p.tag, &p);
    for (const auto& p : w.reco) reco_.emplace(p.tag + "/" + p.pass, &p);
    for (const auto& p : w.trains) trains_.emplace(p.tag, &p);
    for (const auto& u : w.users) users_.emplace(u.name, &u);
    for (const auto* line : {&w.o2sim, &w.async_reco, &w.o2physics})
      for (const auto& v : line->versions) versions_.emplace(v.tag, v.cost_factor);
    for (const auto& s : w.sites) io_.emplace(s.name, s.io_factor);
  }
  const World& world() const { return w_; }
  const Production& mc(std::string_view tag) const { return *find(mc_, tag, "MC production"); }
  const Production* mc_or_null(std::string_view tag) const {
    auto it = mc_.find(std::string(tag));
    return it == mc_.end() ? nullptr : it->second;
  }
  const Production& reco(std::string_view tag, std::string_view pass) const {
    return *find(reco_, std::string(tag) + "/" + std::string(pass), "reconstruction campaign");
  }
  const Production& train(std::string_view tag) const { return *find(trains_, tag, "Hyperloop train"); }
  const User& user(std::string_view name) const { return *find(users_, name, "user"); }
  double version(std::string_view tag) const { return find(versions_, tag, "package"); }
  double io(std::string_view site) const { return find(io_, site, "site"); }
  double version_of(const Production& p) const { return w_.packages_of(p.type).versions[p.package].cost_factor; }

 private:
  const World& w_;
  std::map<std::string, const Production*> mc_, reco_, trains_;
  std::map<std::string, const User*> users_;
  std::map<std::string, double> versions_, io_;
};

JobType type_of(std::string_view name) {
  for (auto t : kJobTypes)
    if (model_of(t).name == name) return t;
  throw Error("match floor: unknown job type '" + std::string(name) + "'");
}

// P(observed TTL | theta): the TTL rules of build_world, evaluated at theta.
double ttl_likelihood(const Latent& l, const WorldIndex& wi, double theta) {
  const World& w = wi.world();
  const double slow = w.slowest_speed;
  auto same = [&](double ttl) { return ttl == l.ttl ? 1.0 : 0.0; };
  switch (l.kind) {
    case Kind::McHours: {
      const Production& p = *l.prod;
      const double cost = mc_cost_per_event(theta, p.events_per_job), v = wi.version_of(p);
      return kMcTtl82000Share * same(mc_ttl(82000, p.events_per_job, cost, v, slow)) +
             (1 - kMcTtl82000Share) * same(mc_ttl(72000, p.events_per_job, cost, v, slow));
    }
    case Kind::RecoFactor: {
      const Production& p = *l.prod;
      const auto& period = w.periods[p.period];
      return same(reco_ttl(reco_nominal_gb(period), reco_core_s_per_gb(period.interaction) * theta, wi.version_of(p), slow));
    }
    case Kind::TrainCost: {
      const Production& p = *l.prod;
      return same(train_ttl(train_nominal_gb(p, w.periods[p.period]), theta, wi.version_of(p), slow, p.cores, w.slowest_io));
    }
    case Kind::Merge: return same(merge_ttl(theta, slow));
    case Kind::HlMerge: return 1.0;  // the default TTL, whatever the cost
    case Kind::User: {
      // The habit's uniform draw only matters through which break interval it falls in.
      const double typical = user_typical_s(l.user->files_mean, theta, l.user->cores);
      double p = 0, from = 0;
      for (std::size_t i = 0; i <= kUserTtlHabitBreaks.size(); ++i) {
        const double to = i < kUserTtlHabitBreaks.size() ? kUserTtlHabitBreaks[i] : 1.0;
        p += (to - from) * same(user_ttl_habit(typical, 0.5 * (from + to)));
        from = to;
      }
      return p;
    }
  }
  return 1.0;
}

// The latent's true value, to check the reconstruction against expected_wall_s.
double true_theta(const Latent& l, const World& w) {
  switch (l.kind) {
    case Kind::McHours: return l.prod->cost / mc_cost_per_event(1.0, l.prod->events_per_job);
    case Kind::RecoFactor: return l.prod->cost / reco_core_s_per_gb(w.periods[l.prod->period].interaction);
    case Kind::TrainCost: return l.prod->cost;
    case Kind::Merge:
    case Kind::HlMerge: return l.prod->merge_s_per_file;
    case Kind::User: return l.user->s_per_file;
  }
  return 0;
}

// A survival term log P(Z > z) with z below this is above -1e-17: it changes nothing.
constexpr double kNegligibleZ = -8.5;

class FloorBuilder {
 public:
  FloorBuilder(const TraceGenerator& gen, const FloorOptions& o) : wi_(gen.world()), o_(o) {}

  void add(const JobRecord& r, bool scored, MatchFloor& out) {
    const JobType type = type_of(r.text(Field::JobType));
    const double speed = r[Field::HostSpeed], files = r[Field::InputFiles], gb = r[Field::InputBytes] / 1e9;
    const int cores = static_cast<int>(r[Field::CpuCores]);
    Kind kind{};
    const Production* prod = nullptr;
    const User* user = nullptr;
    // The job's mean is affine in theta: a = mean(0), b = mean(1) - mean(0).
    Run run;
    auto set_mean = [&run](auto mean) {
      run.a = mean(0.0);
      run.b = mean(1.0) - run.a;
    };
    switch (type) {
      case JobType::MC: {
        prod = &wi_.mc(r.text(Field::ProductionTag));
        const double v = wi_.version(r.text(Field::Package)), events = r[Field::Events], epj = prod->events_per_job;
        kind = Kind::McHours;
        set_mean([=](double t) { return mc_mean_s(events, mc_cost_per_event(t, epj), v, speed); });
        break;
      }
      case JobType::RawReco: {
        prod = &wi_.reco(r.text(Field::ProductionTag), r.text(Field::PassName));
        const double v = wi_.version(r.text(Field::Package));
        const double base = reco_core_s_per_gb(wi_.world().periods[prod->period].interaction);
        kind = Kind::RecoFactor;
        set_mean([=](double t) { return reco_mean_s(gb, base * t, v, speed); });
        break;
      }
      case JobType::Hyperloop: {
        prod = &wi_.train(r.text(Field::ProductionTag));
        const double v = wi_.version(r.text(Field::Package)), io = wi_.io(r.text(Field::Site));
        kind = Kind::TrainCost;
        set_mean([=](double t) { return hyperloop_mean_s(gb, t, v, speed, cores, io); });
        break;
      }
      case JobType::HlMerge:
      case JobType::Merge: {
        const std::string_view tag = r.text(Field::ProductionTag);
        if (type == JobType::HlMerge) prod = &wi_.train(tag);
        else if (!(prod = wi_.mc_or_null(tag))) prod = &wi_.reco(tag, r.text(Field::PassName));
        kind = type == JobType::HlMerge ? Kind::HlMerge : Kind::Merge;
        set_mean([=](double t) { return merge_mean_s(type, files, t, speed); });
        break;
      }
      case JobType::User: {
        user = &wi_.user(r.text(Field::User));
        const double v = wi_.version(r.text(Field::Package));
        kind = Kind::User;
        set_mean([=](double t) { return user_mean_s(files, t, v, speed, cores); });
        break;
      }
    }
    const void* owner = prod ? static_cast<const void*>(prod) : static_cast<const void*>(user);
    auto [it, fresh] = ids_.try_emplace({static_cast<int>(kind), owner}, static_cast<std::uint32_t>(latents_.size()));
    if (fresh) latents_.push_back({kind, prod, user, r[Field::RequestedTtl], {}});
    Latent& l = latents_[it->second];

    run.start = r[Field::SubmitTime] + r[Field::WaitTime];
    run.wall = r[Field::WallTime];
    run.end = run.start + run.wall;
    run.cap = r[Field::RequestedTtl] + kKillGraceS;
    run.sigma = model_of(type).noise_sigma;
    run.expected = r[Field::ExpectedWall];
    run.job_id = r[Field::JobId];
    run.latent = it->second;
    run.type = static_cast<std::uint8_t>(type);
    run.killed = r.text(Field::Status) == "ERROR_E";
    if (std::abs(std::round(capped_lognormal_mean(run.a + run.b * true_theta(l, wi_.world()), run.sigma, run.cap)) -
                 run.expected) > 1.0)
      ++out.mean_mismatches;
    if (scored) {
      out.jobs.push_back({run.job_id, 0, 0, 0});
      run.scored = static_cast<std::uint32_t>(out.jobs.size());
    }
    l.runs.push_back(static_cast<std::uint32_t>(runs_.size()));
    runs_.push_back(run);
  }

  void solve(MatchFloor& out, const FloorProgress& progress) {
    std::vector<LatentGrid> grids;
    for (std::size_t k = 0; k < 6; ++k) grids.emplace_back(prior_of(static_cast<Kind>(k)), o_.grid_points);
    // Only latents with a scored job; the largest first, for balance across threads.
    std::vector<std::uint32_t> pending;
    for (std::uint32_t i = 0; i < latents_.size(); ++i)
      if (std::any_of(latents_[i].runs.begin(), latents_[i].runs.end(), [&](auto r) { return runs_[r].scored; }))
        pending.push_back(i);
    std::stable_sort(pending.begin(), pending.end(),
                     [&](auto x, auto y) { return latents_[x].runs.size() > latents_[y].runs.size(); });
    std::vector<std::uint8_t> unexplained(latents_.size(), 0);
    ThreadPool pool(o_.threads);
    const std::size_t batch = 64;
    std::size_t done_runs = 0, total_runs = 0;
    for (auto i : pending) total_runs += latents_[i].runs.size();
    for (std::size_t from = 0; from < pending.size(); from += batch) {
      const std::size_t n = std::min(batch, pending.size() - from);
      pool.run(n, [&](std::size_t t, int) {
        const std::uint32_t id = pending[from + t];
        unexplained[id] = solve_one(latents_[id], grids[static_cast<std::size_t>(latents_[id].kind)], out) ? 0 : 1;
      });
      for (std::size_t t = 0; t < n; ++t) done_runs += latents_[pending[from + t]].runs.size();
      if (progress) progress(done_runs, total_runs);
    }
    out.ttl_unexplained = static_cast<std::size_t>(std::count(unexplained.begin(), unexplained.end(), 1));
    tally(out);
  }

 private:
  // Walks one latent's jobs in time order; returns false when its TTL explained no grid value.
  bool solve_one(const Latent& l, const LatentGrid& grid, MatchFloor& out) const {
    const auto& theta = grid.values();
    const std::size_t g = theta.size();
    std::vector<double> logp = grid.log_prior();
    bool ttl_used = false;
    {
      std::vector<double> lik(g);
      for (std::size_t i = 0; i < g; ++i) lik[i] = ttl_likelihood(l, wi_, theta[i]);
      if (std::any_of(lik.begin(), lik.end(), [](double x) { return x > 0; })) {
        ttl_used = true;
        for (std::size_t i = 0; i < g; ++i) logp[i] += lik[i] > 0 ? std::log(lik[i]) : -1e300;
      }
    }
    std::vector<std::uint32_t> by_start = l.runs, by_end = l.runs, scored;
    auto start_less = [&](auto x, auto y) { return runs_[x].start < runs_[y].start; };
    std::stable_sort(by_start.begin(), by_start.end(), start_less);
    std::stable_sort(by_end.begin(), by_end.end(), [&](auto x, auto y) { return runs_[x].end < runs_[y].end; });
    for (auto r : by_start)
      if (runs_[r].scored) scored.push_back(r);

    std::set<std::pair<double, std::uint32_t>> running;  // (start, run) of jobs started and not yet ended
    std::size_t next_start = 0, next_end = 0;
    std::uint32_t finished = 0;
    std::vector<double> lp(g);
    for (auto j : scored) {
      const Run& job = runs_[j];
      const double now = job.start;
      for (; next_start < by_start.size() && runs_[by_start[next_start]].start < now; ++next_start)
        running.emplace(runs_[by_start[next_start]].start, by_start[next_start]);
      for (; next_end < by_end.size() && runs_[by_end[next_end]].end <= now; ++next_end) {
        const Run& f = runs_[by_end[next_end]];
        running.erase({f.start, by_end[next_end]});
        for (std::size_t i = 0; i < g; ++i) {
          const double m = f.a + f.b * theta[i];
          logp[i] += f.killed ? log_survival_of_run(f.cap, m, f.sigma) : log_density_of_run(f.wall, m, f.sigma);
        }
        ++finished;
      }
      lp = logp;
      std::uint32_t used = 0;  // running siblings whose survival term moved the posterior
      if (!running.empty()) {
        // Only points the finished jobs and the TTL leave possible; the mean grows with theta,
        // so a running job whose survival term is ~0 at the smallest such point is ~0 at all.
        const double top = *std::max_element(logp.begin(), logp.end());
        std::size_t first = 0, last = g;
        while (logp[first] < top - 40) ++first;
        while (logp[last - 1] < top - 40) --last;
        std::size_t considered = 0;
        for (auto it = running.begin(); it != running.end() && considered < o_.max_running; ++it, ++considered) {
          const Run& s = runs_[it->second];
          const double log_elapsed = std::log(now - s.start) + 0.5 * s.sigma * s.sigma;
          auto z_at = [&](std::size_t i) { return (log_elapsed - std::log(s.a + s.b * theta[i])) / s.sigma; };
          if (z_at(first) < kNegligibleZ) continue;
          ++used;
          for (std::size_t i = first; i < last; ++i) {
            const double z = z_at(i);
            if (z < kNegligibleZ) break;
            lp[i] += log_normal_tail(z);
          }
        }
      }
      const std::vector<double> w = posterior_weights(lp);
      double pred = 0;
      for (std::size_t i = 0; i < g; ++i)
        if (w[i] > 0) pred += w[i] * capped_lognormal_mean(job.a + job.b * theta[i], job.sigma, job.cap);
      out.jobs[job.scored - 1] = {job.job_id, pred, finished, used};
    }
    return ttl_used;
  }

  void tally(MatchFloor& out) const {
    out.buckets.clear();
    out.buckets.push_back({"all"});
    for (auto t : kJobTypes) out.buckets.push_back({std::string(model_of(t).name)});
    for (auto t : kJobTypes) out.buckets.push_back({std::string(model_of(t).name) + ", none finished"});
    for (const Run& r : runs_) {
      if (!r.scored) continue;
      const FloorJob& j = out.jobs[r.scored - 1];
      const double fe = j.floor_s - r.wall, oe = r.expected - r.wall;
      auto add = [&](FloorBucket& b) {
        ++b.jobs;
        b.floor_sq_s2 += fe * fe;
        b.oracle_sq_s2 += oe * oe;
      };
      add(out.buckets[0]);
      add(out.buckets[1 + r.type]);
      if (j.finished == 0) add(out.buckets[1 + kNumJobTypes + r.type]);
    }
  }

  WorldIndex wi_;
  FloorOptions o_;
  std::vector<Run> runs_;
  std::vector<Latent> latents_;
  std::map<std::pair<int, const void*>, std::uint32_t> ids_;
};

}  // namespace

MatchFloor match_time_floor(const GeneratorConfig& config, const FloorOptions& options, const FloorProgress& progress) {
  if (config.drift.any()) throw Error("match floor: a drift scenario's hidden factors have no prior; turn the drift off");
  if (!(options.split > 0 && options.split < 1)) throw Error("match floor: the split must be in (0, 1)");
  const TraceGenerator gen(config);
  const auto first_scored = static_cast<std::uint64_t>(std::floor(options.split * static_cast<double>(config.jobs)));
  MatchFloor out;
  FloorBuilder b(gen, options);
  std::uint64_t row = 0;
  gen.run([&](const JobRecord& r) { b.add(r, row++ >= first_scored, out); });
  b.solve(out, progress);
  return out;
}

}  // namespace ttlpred::synth
