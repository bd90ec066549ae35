#include "synth/world.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>

namespace ttlpred::synth {

// Eight CPU generations from ~2013 to ~2023. Speeds are per-core throughput relative to a
// 2019-2020 reference host (assumption, shaped after HEPscore-like ratios): the spread
// from the oldest to the newest is 2.8x, inside the 2-3x of alice-facts.md.
const std::array<CpuGeneration, 8> kCpuCatalog = {{
    {"Intel Xeon E5-2650 v2", 2600, 0.50, 32},
    {"Intel Xeon E5-2630 v3", 2400, 0.58, 32},
    {"Intel Xeon E5-2680 v4", 2400, 0.68, 56},
    {"Intel Xeon Gold 6130", 2100, 0.78, 64},
    {"Intel Xeon Gold 6248R", 3000, 0.95, 96},
    {"AMD EPYC 7302", 3000, 1.00, 64},
    {"AMD EPYC 7543", 2800, 1.20, 128},
    {"AMD EPYC 9454", 2750, 1.40, 192},
}};

std::string_view interaction_name(Interaction i) {
  switch (i) {
    case Interaction::pp: return "pp";
    case Interaction::PbPb: return "PbPb";
    case Interaction::pPb: return "pPb";
    case Interaction::OO: return "OO";
  }
  return "pp";
}

std::size_t PackageLine::latest_at(double t) const {
  // Versions are sorted by release: the last one released at or before t.
  auto it = std::upper_bound(versions.begin(), versions.end(), t,
                             [](double x, const Package& p) { return x < p.released; });
  return it == versions.begin() ? 0 : static_cast<std::size_t>(it - versions.begin()) - 1;
}

const PackageLine& World::packages_of(JobType t) const {
  switch (t) {
    case JobType::MC: return o2sim;
    case JobType::RawReco: return async_reco;
    default: return o2physics;
  }
}

std::string yyyymmdd(double unix_seconds) {
  // Civil date from days since 1970-01-01 (H. Hinnant's algorithm, proleptic Gregorian).
  const long long z = static_cast<long long>(std::floor(unix_seconds / 86400.0)) + 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const long long doe = z - era * 146097;
  const long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long long mp = (5 * doy + 2) / 153;
  const long long d = doy - (153 * mp + 2) / 5 + 1;
  const long long m = mp < 10 ? mp + 3 : mp - 9;
  const long long y = yoe + era * 400 + (m <= 2);
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04lld%02lld%02lld", y, m, d);
  return buf;
}

std::size_t pick_production(const std::vector<Production>& ps, double t, Rng& rng) {
  double total = 0;
  for (const auto& p : ps)
    if (p.begin <= t && t < p.end) total += p.weight;
  if (total <= 0) {
    std::size_t best = 0;
    for (std::size_t i = 0; i < ps.size(); ++i)
      if (ps[i].begin <= t && ps[i].begin >= ps[best].begin) best = i;
    return best;
  }
  double x = rng.uniform() * total;
  std::size_t last = 0;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const auto& p = ps[i];
    if (!(p.begin <= t && t < p.end)) continue;
    last = i;
    if ((x -= p.weight) < 0) return i;
  }
  return last;  // rounding left x a hair above zero
}

double reco_core_s_per_gb(Interaction i) {
  switch (i) {
    case Interaction::pp: return 20000;
    case Interaction::PbPb: return 32000;
    case Interaction::pPb: return 24000;
    case Interaction::OO: return 24000;
  }
  return 20000;
}

double reco_nominal_gb(const DataPeriod& period) { return 2 * period.ctf_gb * 1.15; }
double train_nominal_gb(const Production& train, const DataPeriod& period) {
  return train.files_per_job * period.aod_gb * 1.15;
}

double mc_cost_per_event(double hours, double events_per_job) {
  return hours * 3600.0 * parallel_speedup(JobType::MC, 8) / events_per_job;
}

// Run-3 productions mostly keep grid_submit.sh's default TTL of 82000 s, older-style JDLs
// say 72000 s; either is raised when the p99 rule asks for more, up to 82000 s.
double mc_ttl(double base_ttl, double events_per_job, double cost, double version, double slow) {
  const double mean_slow = mc_mean_s(events_per_job, cost, version, slow);
  return std::max(base_ttl, static_ttl(lognormal_quantile(mean_slow, model_of(JobType::MC).noise_sigma, 0.99), 1.5, 1000,
                                       72000, 82000));
}

double reco_ttl(double gb_nominal, double cost, double version, double slow) {
  const double mean_slow = reco_mean_s(gb_nominal, cost, version, slow);
  return static_ttl(lognormal_quantile(mean_slow, model_of(JobType::RawReco).noise_sigma, 0.99), 1.5, 1000, 43200, 82000);
}

double train_ttl(double gb_nominal, double cost, double version, double slow, int cores, double slow_io) {
  const double mean_slow = hyperloop_mean_s(gb_nominal, cost, version, slow, cores, slow_io);
  return static_ttl(lognormal_quantile(mean_slow, model_of(JobType::Hyperloop).noise_sigma, 0.99), 1.5, 1800, 14400,
                    57600);
}

double merge_ttl(double s_per_file, double slow) {
  return static_ttl(lognormal_quantile(merge_mean_s(JobType::Merge, 200, s_per_file, slow), 0.25, 0.99), 1.5, 3600, 21600,
                    43200);
}

// Long analyses ask for more, most leave the default, a few ask for less; nobody checks it
// against the slowest host.
double user_ttl_habit(double typical, double u) {
  if (typical > 15000 && u < kUserTtlHabitBreaks[0]) return typical * 1.5 < 43200 ? 43200 : 86400;
  if (u < kUserTtlHabitBreaks[1]) return kDefaultTtlS;
  if (u < kUserTtlHabitBreaks[2]) return typical < 2500 ? 7200 : 43200;
  return 43200;
}

double user_typical_s(double files_mean, double s_per_file, int cores) {
  return user_mean_s(2.0 * files_mean, s_per_file, 1.0, 0.8, cores);
}

namespace {

constexpr double kDay = 86400.0;

// Names of the 60 computing centres. Names only: their sizes, hardware and storage are
// drawn at random and say nothing about the real centres.
constexpr std::array<std::string_view, kNumSites> kSiteNames = {
    "CERN",       "CNAF",        "FZK",        "CCIN2P3",    "KISTI_GSDC", "NIHAM",      "RAL",
    "SARA",       "NDGF",        "RRC-KI_T1",  "GSI",        "Torino",     "Bari",       "Catania",
    "Legnaro",    "Subatech",    "GRIF_IJCLab", "GRIF_IRFU", "Clermont",   "Strasbourg", "IHEP",
    "Hiroshima",  "Tsukuba",     "LBL_HPCS",   "ORNL",       "UPB",        "ISS",        "NIPNE",
    "ITEP",       "JINR",        "SPbSU",      "Troitsk",    "PNPI",       "Kosice",     "Prague",
    "Birmingham", "Oxford",      "Wuhan",      "Kolkata",    "Trieste",    "Cagliari",   "Padova",
    "Grenoble",   "Lyon_IP2I",   "Frankfurt",  "Muenster",   "Wigner",     "Athens",     "Istanbul",
    "Sao_Paulo",  "UNAM",        "Cape_Town",  "Bratislava", "Warsaw",     "Krakow",     "Vienna",
    "Copenhagen", "Bergen",      "Helsinki",   "Madrid_CIEMAT"};

constexpr std::array<std::string_view, 3> kCeKinds = {"ARC", "HTCondor", "Slurm"};

std::vector<Site> make_sites(Rng& rng, std::vector<double>& weights) {
  std::vector<Site> sites;
  sites.reserve(kNumSites);
  for (std::size_t i = 0; i < kNumSites; ++i) {
    Site s;
    s.name = kSiteNames[i];
    const auto n_ce = rng.between(1, 3);
    for (std::int64_t c = 0; c < n_ce; ++c)
      s.ces.push_back("ALICE::" + s.name + "::" + std::string(kCeKinds[static_cast<std::size_t>(c)]));
    // A site runs 2-4 consecutive CPU generations, its newest one 4-7 (it buys new nodes
    // and retires the oldest), the newer generations in larger numbers.
    const auto newest = rng.between(4, 7);
    const auto count = rng.between(2, 4);
    const double config = rng.lognormal_median(1.0, 0.04);  // memory, HT, power settings
    std::vector<double> host_w;
    for (auto g = std::max<std::int64_t>(0, newest - count + 1); g <= newest; ++g) {
      const auto& cpu = kCpuCatalog[static_cast<std::size_t>(g)];
      s.hosts.push_back({static_cast<std::size_t>(g), std::round(cpu.speed * config * 1000.0) / 1000.0});
      host_w.push_back(rng.uniform(0.5, 1.5) * (1.0 + 0.3 * static_cast<double>(g - newest + count)));
    }
    s.host_picker = WeightedPicker(host_w);
    s.io_factor = std::clamp(rng.lognormal_median(1.0, 0.3), 0.4, 2.0);
    // Slot windows of 24 to 72 h (alice-facts.md), 24 h (the pilot default) most often.
    const double u = rng.uniform();
    s.slot_lifetime_s = u < 0.5 ? 1 * kDay : u < 0.8 ? 2 * kDay : 3 * kDay;
    weights.push_back(rng.lognormal_median(1.0, 0.8) * (i < kNumT1 ? 3.0 : 1.0));
    sites.push_back(std::move(s));
  }
  return sites;
}

// Releases every `interval` from `from` to `to`, each changing the run time by a random
// factor with a slow upward drift (software grows heavier between optimisations).
PackageLine make_line(Rng& rng, double from, double to, double interval, const auto& name_of) {
  PackageLine line;
  double factor = 1.0;
  int k = 0;
  for (double t = from; t < to; t += interval, ++k) {
    line.versions.push_back({name_of(t, k), t, factor});
    factor *= std::exp(0.002 * interval / kDay + 0.03 * rng.normal());
  }
  return line;
}

std::string period_name(std::size_t index_in_year, int year) {
  // LHC22a, LHC22c, ...: one letter per period, as for the 2022-2024 runs.
  return "LHC" + std::to_string(year % 100) + static_cast<char>('a' + (2 * index_in_year) % 26);
}

Interaction draw_interaction(Rng& rng) {
  const double u = rng.uniform();
  return u < 0.60 ? Interaction::pp : u < 0.80 ? Interaction::PbPb : u < 0.90 ? Interaction::pPb : Interaction::OO;
}

std::vector<DataPeriod> make_periods(Rng& rng) {
  std::vector<DataPeriod> ps;
  const std::size_t n = 30;
  for (std::size_t i = 0; i < n; ++i) {
    DataPeriod p;
    const int year = 2022 + static_cast<int>(i / 12);
    p.name = period_name(i % 12, year);
    p.interaction = draw_interaction(rng);
    p.first_run = 520000 + static_cast<int>(i) * 1500 + static_cast<int>(rng.between(0, 500));
    p.last_run = p.first_run + static_cast<int>(rng.between(20, 800));
    p.passes = static_cast<int>(rng.between(1, 4));
    p.pass = "apass" + std::to_string(p.passes);
    const bool heavy = p.interaction == Interaction::PbPb;
    p.ctf_gb = heavy ? rng.uniform(2.5, 3.5) : rng.uniform(1.5, 3.0);
    p.aod_gb = rng.uniform(0.3, 2.0);
    p.weight = rng.lognormal_median(1.0, 0.7);
    ps.push_back(std::move(p));
  }
  return ps;
}

// Production start times: `initial` already running when the trace begins, then a Poisson
// stream of `per_day` new ones; each lives for a log-normal number of days.
template <class Fill>
void add_productions(Rng& rng, const World& w, std::vector<Production>& out, int initial, double per_day,
                     double median_life_days, Fill fill) {
  auto add = [&](double begin, double end) {
    Production p;
    p.begin = begin;
    p.end = end;
    p.weight = rng.lognormal_median(1.0, 0.8);
    fill(p, rng);
    out.push_back(std::move(p));
  };
  for (int i = 0; i < initial; ++i) {
    const double begin = w.begin - rng.uniform(0.0, 20.0) * kDay;
    const double life = rng.lognormal_median(median_life_days, 0.5) * kDay;
    add(begin, std::max(begin + life, w.begin + rng.uniform(0.2, 1.0) * median_life_days * kDay));
  }
  for (double t = w.begin + rng.exponential(kDay / per_day); t < w.end; t += rng.exponential(kDay / per_day))
    add(t, t + rng.lognormal_median(median_life_days, 0.5) * kDay);
  // Stable order by start so that a production's index says when it appeared.
  std::stable_sort(out.begin(), out.end(), [](const Production& a, const Production& b) { return a.begin < b.begin; });
}

double events_per_job(Interaction i) {
  switch (i) {
    case Interaction::pp: return 200;
    case Interaction::PbPb: return 20;
    case Interaction::pPb: return 100;
    case Interaction::OO: return 100;
  }
  return 100;
}

std::string mc_tag(std::size_t idx, double begin) {
  // LHC24a3b style: year of creation, then letter, digit, letter (unique per index).
  std::string s = "LHC" + yyyymmdd(begin).substr(2, 2);
  s += static_cast<char>('a' + (idx / 234) % 26);
  s += static_cast<char>('1' + (idx / 26) % 9);
  s += static_cast<char>('a' + idx % 26);
  return s;
}

std::string user_name(Rng& rng, std::unordered_set<std::string>& taken) {
  static constexpr std::array<std::string_view, 24> kSyllables = {"ka", "ro", "mi", "ne", "ta", "lu", "sa", "vi",
                                                                  "do", "be", "ri", "an", "el", "os", "ma", "ki",
                                                                  "zu", "pe", "li", "go", "ha", "ch", "st", "er"};
  for (;;) {
    std::string s(1, static_cast<char>('a' + rng.below(26)));
    const auto n = rng.between(2, 4);
    for (std::int64_t i = 0; i < n; ++i) s += kSyllables[rng.below(kSyllables.size())];
    if (taken.insert(s).second) return s;
  }
}

}  // namespace

World build_world(std::uint64_t seed, double begin, double days) {
  World w;
  w.begin = begin;
  w.end = begin + days * kDay;
  Rng root(seed);

  {
    Rng rng = root.fork(1);
    std::vector<double> weights, t1;
    w.sites = make_sites(rng, weights);
    w.site_picker = WeightedPicker(weights);
    t1.assign(weights.begin(), weights.begin() + kNumT1);
    w.t1_picker = WeightedPicker(t1);
    w.slowest_speed = 1e9;
    w.slowest_io = 1e9;
    for (const auto& s : w.sites) {
      w.slowest_io = std::min(w.slowest_io, s.io_factor);
      for (const auto& h : s.hosts) w.slowest_speed = std::min(w.slowest_speed, h.speed);
    }
  }
  {
    Rng rng = root.fork(2);
    const double from = w.begin - 70 * kDay;
    w.o2sim = make_line(rng, from, w.end, 2 * kDay,
                        [](double t, int) { return "VO_ALICE@O2sim::v" + yyyymmdd(t) + "-1"; });
    w.async_reco = make_line(rng, from, w.end, 7 * kDay, [](double, int k) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "VO_ALICE@O2PDPSuite::async-v1-01-%02d-1", k + 1);
      return std::string(buf);
    });
    w.o2physics = make_line(rng, from, w.end, 1 * kDay,
                            [](double t, int) { return "VO_ALICE@O2Physics::daily-" + yyyymmdd(t) + "-0000-1"; });
  }
  {
    Rng rng = root.fork(3);
    w.periods = make_periods(rng);
    std::vector<double> pw;
    for (const auto& p : w.periods) pw.push_back(p.weight);
    w.period_picker = WeightedPicker(pw);
  }
  const double slow = w.slowest_speed;

  // MC productions, anchored to a data period and its newest pass. The per-event cost is
  // set from the production's typical run time on the reference host (median 3 h, log-normal
  // spread 0.45), which is how a physics request is sized in practice.
  {
    Rng rng = root.fork(4);
    add_productions(rng, w, w.mc, 30, 1.5, 10.0, [&](Production& p, Rng& r) {
      p.type = JobType::MC;
      p.period = w.period_picker.pick(r);
      const auto& period = w.periods[p.period];
      p.pass = period.pass;
      p.package = w.o2sim.latest_at(p.begin);
      p.cores = 8;
      const double mult = r.uniform();
      p.events_per_job = events_per_job(period.interaction) * (mult < 0.2 ? 0.5 : mult < 0.8 ? 1.0 : 2.0);
      p.cost = mc_cost_per_event(kMcHoursPrior.draw(r), p.events_per_job);
      const double base_ttl = r.chance(kMcTtl82000Share) ? 82000.0 : 72000.0;
      p.ttl = mc_ttl(base_ttl, p.events_per_job, p.cost, w.o2sim.versions[p.package].cost_factor, slow);
      p.merge_s_per_file = kMergeCostPrior.draw(r);
      p.merge_ttl = merge_ttl(p.merge_s_per_file, slow);
      p.rss_mb = r.uniform(1500, 2600) * 8;
    });
    for (std::size_t i = 0; i < w.mc.size(); ++i) w.mc[i].tag = mc_tag(i, w.mc[i].begin);
  }
  // Reconstruction campaigns: a new pass over a data period.
  {
    Rng rng = root.fork(5);
    add_productions(rng, w, w.reco, 5, 0.25, 15.0, [&](Production& p, Rng& r) {
      p.type = JobType::RawReco;
      p.period = w.period_picker.pick(r);
      auto& period = w.periods[p.period];
      p.tag = period.name;
      p.pass = "apass" + std::to_string(++period.passes);
      p.package = w.async_reco.latest_at(p.begin);
      p.cores = 8;
      p.cost = reco_core_s_per_gb(period.interaction) * kRecoCostFactorPrior.draw(r);
      p.ttl = reco_ttl(reco_nominal_gb(period), p.cost, w.async_reco.versions[p.package].cost_factor, slow);
      p.merge_s_per_file = kMergeCostPrior.draw(r);
      p.merge_ttl = merge_ttl(p.merge_s_per_file, slow);
      p.rss_mb = r.uniform(2000, 3500) * 8;
    });
  }
  // Hyperloop trains: short-lived, many, each with its own wagons' CPU cost per GB.
  {
    Rng rng = root.fork(6);
    add_productions(rng, w, w.trains, 40, 30.0, 1.5, [&](Production& p, Rng& r) {
      p.type = JobType::Hyperloop;
      p.period = w.period_picker.pick(r);
      p.pass = w.periods[p.period].pass;
      p.package = w.o2physics.latest_at(p.begin);
      // Single-core unless the train needs more than 3.2 GB PSS (alice-facts.md).
      p.cores = r.chance(0.15) ? 2 : 1;
      p.rss_mb = p.cores == 2 ? r.uniform(3300, 6000) : r.uniform(800, 3200);
      p.cost = kTrainCostPrior.draw(r);
      p.files_per_job = static_cast<int>(r.between(5, 40));
      p.ttl = train_ttl(train_nominal_gb(p, w.periods[p.period]), p.cost, w.o2physics.versions[p.package].cost_factor, slow,
                        p.cores, w.slowest_io);
      p.merge_s_per_file = kHlMergeCostPrior.draw(r);
      p.merge_ttl = kDefaultTtlS;  // train merging jobs keep JAliEn's default
    });
    for (std::size_t i = 0; i < w.trains.size(); ++i) w.trains[i].tag = "hy_" + std::to_string(210000 + i * 7);
  }
  // Analysis users: heavy-tailed activity and cost; most keep JAliEn's default TTL.
  {
    Rng rng = root.fork(7);
    std::unordered_set<std::string> taken;
    std::vector<double> activity;
    for (int i = 0; i < 600; ++i) {
      User u;
      u.name = user_name(rng, taken);
      u.s_per_file = kUserCostPrior.draw(rng);
      u.files_mean = std::clamp(rng.lognormal_median(8.0, 0.8), 1.0, 100.0);
      u.file_gb = rng.uniform(0.2, 2.0);
      const double c = rng.uniform();
      u.cores = c < 0.85 ? 1 : c < 0.95 ? 2 : 8;
      u.package_lag_s = rng.exponential(7.0) * kDay;
      u.rss_mb = std::clamp(rng.lognormal_median(1500.0, 0.5), 300.0, 7000.0);
      u.period = w.period_picker.pick(rng);
      u.ttl = user_ttl_habit(user_typical_s(u.files_mean, u.s_per_file, u.cores), rng.uniform());
      activity.push_back(rng.pareto(1.0, 1.1));
      w.users.push_back(std::move(u));
    }
    w.user_picker = WeightedPicker(activity);
  }
  return w;
}

}  // namespace ttlpred::synth
