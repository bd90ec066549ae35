#include "sim/online_ttl.hpp"

#include <cmath>

#include "util/error.hpp"

namespace ttlpred::sim {

SimCalibration sim_calibration_from_name(std::string_view name) {
  SimCalibration c;
  c.name = std::string(name);
  // aci-cpu and mondrian-cpu (with or without "-log") are the simulator's own: the service has
  // no CPU time of a job when it answers. Every other name is one the service answers with.
  const LogSuffix s = split_log_suffix(name);
  if (s.base == "aci-cpu" || s.base == "mondrian-cpu") {
    c.method = s.base == "aci-cpu" ? OnlineMethod::Aci : OnlineMethod::Mondrian;
    c.cpu_weighted = true;
    c.log_level = s.log;
    return c;
  }
  try {
    const AnsweringCalibration a = answering_calibration_from_name(name);
    c.method = a.method;
    c.log_level = a.log_level;
  } catch (const Error&) {
    throw Error("simulate: unknown --calibration '" + std::string(name) +
                "' (expected static, rolling, aci, aci-capped, multi-aci, mondrian, aci-cpu, mondrian-cpu, or aci, mondrian, aci-cpu, "
                "mondrian-cpu with -log)");
  }
  return c;
}

namespace {
void check_cost(double cpu_s) {
  if (!(cpu_s >= 0) || !std::isfinite(cpu_s)) throw Error("simulate: a job's CPU time must be finite and >= 0");
}
}  // namespace

void CpuTimeWeights::answered(double cpu_s) {
  check_cost(cpu_s);
  sum_ += cpu_s;
  ++n_;
}

double CpuTimeWeights::next(double cpu_s) const {
  check_cost(cpu_s);
  const double m = mean();
  return m > 0 ? cpu_s / m : 1.0;
}

TableTtl::TableTtl(std::vector<double> ttl, std::size_t classes) : ttl_(std::move(ttl)), classes_(classes) {
  if (classes_ == 0 || ttl_.size() % classes_ != 0) throw Error("simulate: a TTL table needs one TTL per job and host class");
}

void TableTtl::decide(std::size_t job, double, std::span<double> ttl) {
  for (std::size_t h = 0; h < classes_; ++h) ttl[h] = ttl_[job * classes_ + h];
}

OnlineTtl::OnlineTtl(TtlPolicy policy, std::vector<OnlineJob> jobs, std::vector<int> cores, std::size_t classes,
                     bool cpu_weighted)
    : policy_(std::move(policy)), jobs_(std::move(jobs)), cores_(std::move(cores)), classes_(classes),
      cpu_weighted_(cpu_weighted) {
  if (classes_ == 0 || jobs_.size() != cores_.size() * classes_)
    throw Error("simulate: the online TTLs need one job per host class and the cores of each");
  pending_.resize(cores_.size());
}

void OnlineTtl::decide(std::size_t job, double, std::span<double> ttl) {
  auto& d = pending_[job];
  d.resize(classes_);
  for (std::size_t h = 0; h < classes_; ++h) {
    d[h] = policy_.decide(jobs_[job * classes_ + h]);
    ttl[h] = d[h].ttl_s;
  }
  policy_.answered(d[0]);  // one job, whatever number of host classes it was answered for
  // The expected cost on the first class (the most common host; the recorded one without classes).
  if (cpu_weighted_) weights_.answered(cores_[job] * jobs_[job * classes_].pred_s);
}

void OnlineTtl::matched(std::size_t job, std::size_t host_class) {
  auto& d = pending_[job];
  if (host_class >= d.size()) throw Error("simulate: a job was matched before its TTL was decided");
  if (host_class != 0) d[0] = d[host_class];
  d.resize(1);
  d.shrink_to_fit();
}

void OnlineTtl::ended(std::size_t job, double, double ran_s, int cores, bool) {
  auto& d = pending_[job];
  if (d.size() != 1) throw Error("simulate: an outcome came for a job that was not matched");
  const double weight = cpu_weighted_ ? weights_.next(cores * ran_s) : 1.0;
  policy_.observe(d[0], ran_s, weight);
  std::vector<OnlineDecision>().swap(d);
}

}  // namespace ttlpred::sim
