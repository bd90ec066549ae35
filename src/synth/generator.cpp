#include "synth/generator.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "data/csv_writer.hpp"
#include "util/error.hpp"

namespace ttlpred::synth {

namespace {

constexpr double kDay = 86400.0;
constexpr double kFirstJobId = 3'000'000'000.0;  // JAliEn job ids were around 3e9 in 2024

// Submission follows the working day: +-25 % over the day (peak 14:00 UTC), 20 % fewer on
// weekends (assumption). The clock maps "fraction of the trace emitted" to a time, so the
// trace always spans exactly the configured days whatever the job count.
class ArrivalClock {
 public:
  ArrivalClock(double begin, double days) : begin_(begin) {
    const auto hours = static_cast<std::size_t>(std::ceil(days * 24.0));
    cumulative_.reserve(hours + 1);
    cumulative_.push_back(0.0);
    for (std::size_t h = 0; h < hours; ++h) {
      const double t = begin + 3600.0 * static_cast<double>(h);
      const double hour_of_day = std::fmod(t / 3600.0, 24.0);
      const auto day_of_week = static_cast<long long>(std::floor(t / kDay) + 4) % 7;  // 0 = Sunday
      double w = 1.0 + 0.25 * std::sin(2.0 * M_PI * (hour_of_day - 8.0) / 24.0);
      if (day_of_week == 0 || day_of_week == 6) w *= 0.8;
      const double span = std::min(1.0, days * 24.0 - static_cast<double>(h));  // last partial hour
      cumulative_.push_back(cumulative_.back() + w * span);
    }
  }
  double at(double fraction) const {
    const double target = std::clamp(fraction, 0.0, 1.0) * cumulative_.back();
    auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), target);
    const auto h = static_cast<std::size_t>(std::max<std::ptrdiff_t>(1, it - cumulative_.begin()) - 1);
    if (h + 1 >= cumulative_.size()) return begin_ + 3600.0 * static_cast<double>(h);
    const double in_hour = (target - cumulative_[h]) / (cumulative_[h + 1] - cumulative_[h]);
    return begin_ + 3600.0 * (static_cast<double>(h) + in_hour);
  }

 private:
  double begin_;
  std::vector<double> cumulative_;
};

// Sub-jobs per master: median and log-normal sigma, clamped to [1, max].
struct MasterSize {
  double median, sigma, max;
};
constexpr std::array<MasterSize, kNumJobTypes> kMasterSizes = {{
    {80, 0.8, 2000},   // MC: Split production:1-N
    {150, 0.9, 3000},  // RAW_RECO: one master per run, one sub-job per CTF chunk
    {60, 0.8, 1500},   // HYPERLOOP: one master per train and dataset
    {3, 0.5, 10},      // HL_MERGE
    {15, 1.0, 500},    // USER
    {5, 0.5, 20},      // MERGE
}};

double mean_master_size(JobType t) {
  const auto& m = kMasterSizes[static_cast<std::size_t>(t)];
  return m.median * std::exp(0.5 * m.sigma * m.sigma);
}

std::string_view executable_of(JobType t) {
  switch (t) {
    case JobType::MC: return "o2dpg_sim_workflow.sh";
    case JobType::RawReco: return "async_pass.sh";
    case JobType::Hyperloop: return "hyperloop_train.sh";
    case JobType::HlMerge: return "hyperloop_merge.sh";
    case JobType::User: return "user_analysis.sh";
    case JobType::Merge: return "merge_outputs.sh";
  }
  return "";
}

// Events (MC) or time frames (reconstruction) or analysed events per GB (AO2D), by system.
double tf_per_gb(Interaction i) { return i == Interaction::PbPb ? 3.0 : 10.0; }
double aod_events_per_gb(Interaction i) {
  switch (i) {
    case Interaction::pp: return 200000;
    case Interaction::PbPb: return 2000;
    default: return 20000;
  }
}

// Everything sub-jobs of one master share.
struct Master {
  JobType type = JobType::MC;
  const Production* prod = nullptr;
  const User* user = nullptr;
  std::string_view user_name, tag, pass, package, partition;
  Interaction interaction = Interaction::pp;
  double anchor_run = kMissingNumber;
  double version = 1;
  double ttl = kDefaultTtlS;
  int cores = 1;
  double memory_mb = 8192, workdir_mb = 10000, price = 1, rss_mb = 1000;
  double events_mult = 1;   // MC: this master's events per job relative to the nominal
  double file_gb = 1;       // RAW_RECO: this run's CTF size; HYPERLOOP: the dataset's AO2D size
};

class Emitter {
 public:
  Emitter(const GeneratorConfig& cfg, const World& w, const std::function<void(const JobRecord&)>& sink)
      : cfg_(cfg), w_(w), sink_(sink), rng_(Rng(cfg.seed).fork(100)), clock_(w.begin, cfg.days) {
    spacing_ = std::min(0.05, 0.5 * cfg.days * kDay / static_cast<double>(cfg.jobs));
    long_site_ = 0;
    for (std::size_t i = 0; i < w.sites.size(); ++i)
      if (w.sites[i].slot_lifetime_s > w.sites[long_site_].slot_lifetime_s) long_site_ = i;
    const DriftConfig& d = cfg.drift;
    auto from = [&](double day) { return day >= 0 ? w.begin + day * kDay : kNever; };
    slow_version_from_ = from(d.slow_version_day);
    slow_site_from_ = from(d.slow_site_day);
    heavy_user_from_ = from(d.heavy_user_day);
    if (!w.users.empty()) {
      heavy_user_ = w.users.front();
      for (const User& u : w.users) heavy_user_.s_per_file = std::max(heavy_user_.s_per_file, u.s_per_file);
      heavy_user_.name = kHeavyUserName;
      heavy_user_.s_per_file *= d.heavy_user_cost;
      heavy_user_.ttl = 86400;
      heavy_user_.package_lag_s = 0;
    }
  }

  void run() {
    while (emitted_ < cfg_.jobs) {
      const JobType type = choose_type();
      const auto& ms = kMasterSizes[static_cast<std::size_t>(type)];
      auto size = static_cast<std::uint64_t>(std::clamp(std::round(rng_.lognormal_median(ms.median, ms.sigma)), 1.0, ms.max));
      size = std::min(size, cfg_.jobs - emitted_);
      const double t0 = clock_.at(static_cast<double>(emitted_) / static_cast<double>(cfg_.jobs));
      master(type, size, t0);
    }
  }

 private:
  // Draws the next master's type: target share over mean master size, nudged towards the
  // target when the realised mix has drifted (so short traces still match the shares).
  JobType choose_type() {
    std::array<double, kNumJobTypes> w{};
    for (std::size_t k = 0; k < kNumJobTypes; ++k) {
      const auto t = kJobTypes[k];
      w[k] = model_of(t).share / mean_master_size(t);
      if (emitted_ > 0) {
        const double ratio = static_cast<double>(per_type_[k]) / static_cast<double>(emitted_) / model_of(t).share;
        w[k] *= std::clamp(std::exp(-4.0 * (ratio - 1.0)), 0.2, 5.0);
      }
    }
    return kJobTypes[WeightedPicker(w).pick(rng_)];
  }

  void master(JobType type, std::uint64_t size, double t0) {
    Master m;
    m.type = type;
    const auto& periods = w_.periods;
    switch (type) {
      case JobType::MC: {
        m.prod = &w_.mc[pick_production(w_.mc, t0, rng_)];
        const auto& per = periods[m.prod->period];
        m.user_name = "aliprod";
        m.anchor_run = static_cast<double>(rng_.between(per.first_run, per.last_run));
        const double u = rng_.uniform();
        m.events_mult = u < 0.8 ? 1.0 : u < 0.9 ? 0.5 : 2.0;
        m.memory_mb = 61440;  // O2DPG grid_submit.sh: 60 GB for 8 cores
        m.workdir_mb = 11000;
        m.price = 12;
        m.partition = "multicore_8";
        break;
      }
      case JobType::RawReco: {
        m.prod = &w_.reco[pick_production(w_.reco, t0, rng_)];
        const auto& per = periods[m.prod->period];
        m.user_name = "aliprod";
        m.anchor_run = static_cast<double>(rng_.between(per.first_run, per.last_run));
        m.file_gb = per.ctf_gb * rng_.uniform(0.9, 1.1);
        m.memory_mb = 8192.0 * 8;
        m.workdir_mb = 30000;
        m.partition = "multicore_8";
        break;
      }
      case JobType::Hyperloop:
      case JobType::HlMerge: {
        m.prod = &w_.trains[pick_production(w_.trains, t0, rng_)];
        m.user_name = "alihyperloop";
        m.file_gb = periods[m.prod->period].aod_gb;
        break;
      }
      case JobType::Merge: {
        m.prod = rng_.chance(0.7) ? &w_.mc[pick_production(w_.mc, t0, rng_)] : &w_.reco[pick_production(w_.reco, t0, rng_)];
        m.user_name = "aliprod";
        break;
      }
      case JobType::User: {
        m.user = &w_.users[w_.user_picker.pick(rng_)];
        // The drift's newcomer takes a share of the masters once it has arrived.
        if (t0 >= heavy_user_from_ && rng_.chance(cfg_.drift.heavy_user_share)) m.user = &heavy_user_;
        m.user_name = m.user->name;
        m.ttl = m.user->ttl;
        m.cores = m.user->cores;
        m.rss_mb = m.user->rss_mb;
        const auto& line = w_.o2physics;
        const auto& pkg = line.versions[line.latest_at(t0 - m.user->package_lag_s)];
        m.package = pkg.tag;
        m.version = pkg.cost_factor;
        const auto& per = periods[m.user->period];
        m.pass = per.pass;
        m.interaction = per.interaction;
        break;
      }
    }
    if (m.prod) {
      const auto& p = *m.prod;
      const auto& line = w_.packages_of(p.type);
      m.package = line.versions[p.package].tag;
      m.version = line.versions[p.package].cost_factor;
      m.tag = p.tag;
      m.pass = p.pass;
      m.interaction = periods[p.period].interaction;
      const bool merging = type == JobType::Merge || type == JobType::HlMerge;
      m.ttl = merging ? p.merge_ttl : p.ttl;
      m.cores = merging ? 1 : p.cores;
      m.rss_mb = merging ? 800 : p.rss_mb;
    }
    if (type != JobType::MC && type != JobType::RawReco) m.memory_mb = 8192.0 * m.cores;  // JAliEn default
    if (type == JobType::MC && t0 >= slow_version_from_) {
      m.version *= cfg_.drift.slow_version_factor;
      auto it = drift_tags_.find(std::string(m.package));
      if (it == drift_tags_.end()) it = drift_tags_.emplace(std::string(m.package), std::string(m.package) + "-drift").first;
      m.package = it->second;
    }

    const double master_id = next_id_++;
    for (std::uint64_t i = 0; i < size; ++i) {
      last_t_ = std::max(last_t_, t0 + static_cast<double>(i) * spacing_);
      job(m, master_id, i + 1 == size && size > 1, std::floor(last_t_));
    }
  }

  void job(const Master& m, double master_id, bool last_of_master, double submit) {
    JobRecord& r = rec_;
    r.clear();
    const auto& tm = model_of(m.type);
    r[Field::JobId] = next_id_++;
    r[Field::MasterJobId] = master_id;
    r[Field::SubmitTime] = submit;
    r.text(Field::User) = m.user_name;
    r.text(Field::JobType) = tm.name;
    r.text(Field::ProductionTag) = m.tag;
    r.text(Field::PassName) = m.pass;
    r[Field::AnchorRun] = m.anchor_run;
    r.text(Field::InteractionType) = interaction_name(m.interaction);
    r.text(Field::Package) = m.package;
    r.text(Field::Partition) = m.partition;
    r.text(Field::Executable) = executable_of(m.type);
    r[Field::CpuCores] = m.cores;
    r[Field::MemoryMb] = m.memory_mb;
    r[Field::WorkdirMb] = m.workdir_mb;
    r[Field::Price] = m.price;
    r[Field::RequestedTtl] = m.ttl;

    // Input of this sub-job (known at submission).
    double files = 0, bytes = 0, events = kMissingNumber;
    switch (m.type) {
      case JobType::MC:
        events = std::max(1.0, std::round(m.prod->events_per_job * m.events_mult));
        if (last_of_master) events = std::max(1.0, std::round(events * rng_.uniform(0.1, 1.0)));  // the remainder
        break;
      case JobType::RawReco:
        files = 1.0 + static_cast<double>(rng_.poisson(0.6));
        bytes = std::round(files * m.file_gb * rng_.uniform(0.85, 1.15) * 1e9);
        events = std::round(bytes / 1e9 * tf_per_gb(m.interaction));
        break;
      case JobType::Hyperloop:
        files = last_of_master ? static_cast<double>(rng_.between(1, m.prod->files_per_job)) : m.prod->files_per_job;
        bytes = std::round(files * m.file_gb * rng_.uniform(0.85, 1.15) * 1e9);
        events = std::round(bytes / 1e9 * aod_events_per_gb(m.interaction));
        break;
      case JobType::HlMerge:
        files = static_cast<double>(rng_.between(20, 400));
        bytes = std::round(files * rng_.uniform(20e6, 80e6));
        break;
      case JobType::Merge:
        files = static_cast<double>(rng_.between(10, 200));
        bytes = std::round(files * rng_.uniform(100e6, 500e6));
        break;
      case JobType::User:
        files = 1.0 + static_cast<double>(rng_.poisson(m.user->files_mean - 1.0));
        bytes = std::round(files * m.user->file_gb * rng_.uniform(0.85, 1.15) * 1e9);
        events = std::round(bytes / 1e9 * aod_events_per_gb(m.interaction));
        break;
    }
    r[Field::InputFiles] = files;
    r[Field::InputBytes] = bytes;
    r[Field::Events] = events;

    // Match: a slot whose remaining lifetime exceeds the TTL (job.ttl < agent.TTL).
    const double ttl = m.ttl;
    const WeightedPicker& sites = m.type == JobType::RawReco ? w_.t1_picker : w_.site_picker;
    std::size_t si = sites.pick(rng_);
    for (int tries = 0; tries < 16 && w_.sites[si].slot_lifetime_s - 600.0 <= ttl; ++tries) si = sites.pick(rng_);
    if (w_.sites[si].slot_lifetime_s - 600.0 <= ttl) si = long_site_;
    const Site& site = w_.sites[si];
    const HostGroup& host = site.hosts[site.host_picker.pick(rng_)];
    const CpuGeneration& cpu = kCpuCatalog[host.cpu];
    r[Field::WaitTime] = std::round(std::clamp(rng_.lognormal_median(tm.median_wait_s, 1.0), 5.0, 7 * kDay));
    r.text(Field::Site) = site.name;
    r.text(Field::Ce) = site.ces[rng_.below(site.ces.size())];
    r.text(Field::CpuModel) = cpu.model;
    r[Field::CpuMhz] = cpu.mhz;
    r[Field::HostSpeed] = host.speed;
    // Slot sizes by share of cores: half in 8-core slots, a third whole-node, the rest
    // 16/64/96 (alice-facts.md; the split of the rest is assumed).
    const double u = rng_.uniform();
    r[Field::SlotCores] = u < 0.50 ? 8 : u < 0.83 ? cpu.node_cores : u < 0.90 ? 16 : u < 0.95 ? 64 : 96;
    const double window = std::max(site.slot_lifetime_s - 600.0 - ttl, 0.0);
    r[Field::SlotTimeLeft] = std::round(ttl + 1.0 + rng_.uniform() * window);

    // Outcome: expected run time from the job's known fields, then mean-1 noise.
    double mean = 0;
    switch (m.type) {
      case JobType::MC: mean = mc_mean_s(events, m.prod->cost, m.version, host.speed); break;
      case JobType::RawReco: mean = reco_mean_s(bytes / 1e9, m.prod->cost, m.version, host.speed); break;
      case JobType::Hyperloop:
        mean = hyperloop_mean_s(bytes / 1e9, m.prod->cost, m.version, host.speed, m.cores, site.io_factor);
        break;
      case JobType::HlMerge:
      case JobType::Merge: mean = merge_mean_s(m.type, files, m.prod->merge_s_per_file, host.speed); break;
      case JobType::User: mean = user_mean_s(files, m.user->s_per_file, m.version, host.speed, m.cores); break;
    }
    // The drift's slowed site: its hosts are slower than their benchmark says.
    if (si == 0 && submit >= slow_site_from_) mean *= cfg_.drift.slow_site_factor;
    const double cap = ttl + kKillGraceS;
    const double raw = mean * rng_.lognormal_mean1(tm.noise_sigma);
    const bool killed = raw > cap;
    const double wall = std::max(1.0, std::round(std::min(raw, cap)));
    r[Field::WallTime] = wall;
    r[Field::ExpectedWall] = std::round(capped_lognormal_mean(mean, tm.noise_sigma, cap));
    r[Field::CpuTime] = std::round(wall * m.cores * std::clamp(tm.cpu_efficiency * rng_.lognormal_median(1.0, 0.05), 0.02, 1.0));
    r[Field::MaxRss] = std::round(std::min(m.rss_mb * rng_.lognormal_median(1.0, 0.1), m.memory_mb));
    r.text(Field::Status) = killed ? "ERROR_E" : "DONE";

    ++per_type_[static_cast<std::size_t>(m.type)];
    ++emitted_;
    sink_(r);
  }

  const GeneratorConfig& cfg_;
  const World& w_;
  const std::function<void(const JobRecord&)>& sink_;
  Rng rng_;
  ArrivalClock clock_;
  JobRecord rec_;
  double spacing_ = 0.05;
  double next_id_ = kFirstJobId;
  double last_t_ = 0;
  std::size_t long_site_ = 0;
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  double slow_version_from_ = kNever, slow_site_from_ = kNever, heavy_user_from_ = kNever;
  User heavy_user_{};
  std::map<std::string, std::string> drift_tags_;  // package tag -> its slowed release (stable storage)
  std::uint64_t emitted_ = 0;
  std::array<std::uint64_t, kNumJobTypes> per_type_{};
};

}  // namespace

const std::vector<Field>& generated_columns() {
  static const std::vector<Field> cols = [] {
    std::vector<Field> v;
    for (const auto& f : kFields)
      if (f.field != Field::Group && f.field != Field::Queue) v.push_back(f.field);
    return v;
  }();
  return cols;
}

TraceGenerator::TraceGenerator(const GeneratorConfig& config) : config_(config) {
  if (config_.jobs == 0) throw Error("generate: --jobs must be at least 1");
  // The world has ~30 new Hyperloop trains a day and masters scan the active ones: a
  // year keeps that cheap.
  if (!(config_.days > 0.0) || config_.days > 366.0) throw Error("generate: --days must be in (0, 366]");
  const DriftConfig& d = config_.drift;
  if (!(d.slow_version_factor > 0) || !(d.slow_site_factor > 0) || !(d.heavy_user_cost > 0))
    throw Error("generate: drift factors must be > 0");
  if (!(d.heavy_user_share >= 0 && d.heavy_user_share <= 1)) throw Error("generate: --drift-user-share must be in [0, 1]");
  world_ = build_world(config_.seed, config_.start_time, config_.days);
}

void TraceGenerator::run(const std::function<void(const JobRecord&)>& sink) const {
  Emitter(config_, world_, sink).run();
}

JobTable generate_table(const GeneratorConfig& config) {
  TraceGenerator gen(config);
  JobTable table;
  table.reserve(config.jobs);
  gen.run([&](const JobRecord& r) { table.append(r); });
  return table;
}

std::size_t generate_csv(const GeneratorConfig& config, const std::string& path, TraceStats* stats) {
  // One thread: generating costs ~0.4 s per million jobs, formatting and zlib the rest.
  // Handing records to a second thread was measured slower in CPU time (each record is
  // copied and crosses cores) and no faster on the shared 2-core machine.
  const TraceGenerator gen(config);
  CsvWriter out(path, generated_columns());
  gen.run([&](const JobRecord& r) {
    out.write(r);
    if (stats) stats->add(r);
  });
  out.close();
  return out.rows_written();
}

}  // namespace ttlpred::synth
