#pragma once
// The model's TTLs for the broker, asked per job at submission and, with an online
// calibration, following the outcomes the broker posts as jobs end in simulated time: the
// deployed service's `--calibration` (model/online_calibration.hpp, through the safe-TTL
// policy `serve` and `eval --calibration` answer through: predict/ttl_policy.hpp), fed as
// the service is fed by /v1/outcomes. A job's outcome is known when its attempt ends; a
// killed job reports what the service would see: it ran its TTL + the kill margin (a lower
// bound of its run time), so it counts as a kill unless that is past its request.
//
// `aci-cpu` (and `mondrian-cpu`) is aci (mondrian) whose steps are weighted by CPU time, the
// price of a kill in the broker:
//   c_t = cores x seconds the attempt ran (what a kill loses, or what a completed job used)
//   m_t = mean of cores x expected run time over the jobs answered so far (at submission)
//   w_t = c_t / m_t
//   a_{t+1} = a_t + gamma * w_t * (target - err_t)
// At a fixed point the weighted steps cancel: sum_t c_t err_t / sum_t c_t = target, i.e. the
// CPU time lost to kills is the target share of the CPU time of the answered attempts (the
// count rule holds the share of jobs killed there instead; the killed jobs are the long
// ones, so their share of CPU time is larger). The normaliser keeps gamma's scale (with
// equal costs, equal to their expectation, every w_t is 1 and the rule is aci's); it is the
// mean over answered jobs, not over outcomes, because outcomes come shortest first: the
// first hours' outcomes are the short jobs, and a mean over them would make the first kill
// of a long job weigh hundreds of steps.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/online_calibration.hpp"
#include "predict/ttl_policy.hpp"
#include "sim/ttl_source.hpp"

namespace ttlpred::sim {

// What `simulate --calibration` names: a method of model/online_calibration.hpp (static,
// rolling, aci, aci-capped, multi-aci, mondrian), aci-cpu or mondrian-cpu, and aci, mondrian, aci-cpu,
// mondrian-cpu with a "-log" suffix (the level stepped in log space). Throws Error naming
// the accepted names.
struct SimCalibration {
  OnlineMethod method = OnlineMethod::Static;
  bool cpu_weighted = false;
  bool log_level = false;  // a "-log" suffix: OnlineCalibrationOptions::log_level
  std::string name = "static";
};
SimCalibration sim_calibration_from_name(std::string_view name);

// The weights of the aci-cpu rule above.
class CpuTimeWeights {
 public:
  // A job answered, of expected cost `cpu_s` (cores x expected run time; >= 0).
  void answered(double cpu_s);
  // The weight of the next outcome, of cost `cpu_s` (>= 0): 1 before any expected cost.
  double next(double cpu_s) const;
  double mean() const { return n_ ? sum_ / static_cast<double>(n_) : 0; }

 private:
  double sum_ = 0;
  std::uint64_t n_ = 0;
};

// TTLs from fixed per-(job, class) values: the model's static calibration on host classes.
class TableTtl final : public TtlSource {
 public:
  TableTtl(std::vector<double> ttl, std::size_t classes);  // ttl[job x classes + class]
  std::size_t classes() const override { return classes_; }
  void decide(std::size_t job, double t, std::span<double> ttl) override;
  void matched(std::size_t, std::size_t) override {}
  void ended(std::size_t, double, double, int, bool) override {}

 private:
  std::vector<double> ttl_;
  std::size_t classes_;
};

// TTLs through a safe-TTL policy, one OnlineJob per (job, class); `cores` per job.
class OnlineTtl final : public TtlSource {
 public:
  OnlineTtl(TtlPolicy policy, std::vector<OnlineJob> jobs, std::vector<int> cores, std::size_t classes,
            bool cpu_weighted);
  std::size_t classes() const override { return classes_; }
  void decide(std::size_t job, double t, std::span<double> ttl) override;
  void matched(std::size_t job, std::size_t host_class) override;
  void ended(std::size_t job, double t, double ran_s, int cores, bool killed) override;
  const TtlPolicy& policy() const { return policy_; }

 private:
  TtlPolicy policy_;
  std::vector<OnlineJob> jobs_;
  std::vector<int> cores_;
  std::size_t classes_;
  bool cpu_weighted_;
  CpuTimeWeights weights_;
  // Per job: its decisions per class from submission to match, then the one it ran under.
  std::vector<std::vector<OnlineDecision>> pending_;
};

}  // namespace ttlpred::sim
