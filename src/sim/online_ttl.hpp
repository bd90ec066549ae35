#pragma once
// The model's TTLs for the broker, asked per job at submission and, with an online
// calibration, following the outcomes the broker posts as jobs end in simulated time: the
// deployed service's `--calibration` (model/online_calibration.hpp, the same class `serve`
// and `eval --calibration` use), fed as the service is fed by /v1/outcomes. A job's outcome
// is known when its attempt ends; a killed job reports what the service would see: it ran
// its TTL + the kill margin (a lower bound of its run time), so it counts as a kill unless
// that is past its request.
//
// `aci-cpu` is aci whose steps are weighted by CPU time, the price of a kill in the broker:
//   c_t = cores x seconds the attempt ran (what a kill loses, or what a completed job used)
//   w_t = c_t / mean(c_1 .. c_t)          (the mean over the outcomes observed so far)
//   a_{t+1} = a_t + gamma * w_t * (target - err_t)
// At a fixed point the weighted steps cancel: sum_t c_t err_t / sum_t c_t = target, i.e. the
// CPU time lost to kills is the target share of the CPU time of the answered attempts (the
// count rule holds the share of jobs killed there instead; the killed jobs are the long
// ones, so their share of CPU time is larger). The normalisation by the running mean keeps
// gamma's scale: with equal costs every w_t is 1 and the rule is aci's.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/online_calibration.hpp"
#include "sim/ttl_source.hpp"

namespace ttlpred::sim {

// What `simulate --calibration` names: a method of model/online_calibration.hpp (static,
// rolling, aci, multi-aci, mondrian) or aci-cpu. Throws Error naming the accepted names.
struct SimCalibration {
  OnlineMethod method = OnlineMethod::Static;
  bool cpu_weighted = false;
  std::string name = "static";
};
SimCalibration sim_calibration_from_name(std::string_view name);

// The running-mean weights of the aci-cpu rule above.
class CpuTimeWeights {
 public:
  // The weight of the next outcome, of cost `cpu_s` (>= 0).
  double next(double cpu_s);
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

// TTLs through an online calibrator, one OnlineJob per (job, class).
class OnlineTtl final : public TtlSource {
 public:
  OnlineTtl(OnlineCalibrator calibrator, std::vector<OnlineJob> jobs, std::size_t classes, bool cpu_weighted);
  std::size_t classes() const override { return classes_; }
  void decide(std::size_t job, double t, std::span<double> ttl) override;
  void matched(std::size_t job, std::size_t host_class) override;
  void ended(std::size_t job, double t, double ran_s, int cores, bool killed) override;
  const OnlineCalibrator& calibrator() const { return calibrator_; }

 private:
  OnlineCalibrator calibrator_;
  std::vector<OnlineJob> jobs_;
  std::size_t classes_;
  bool cpu_weighted_;
  CpuTimeWeights weights_;
  // Per job: its decisions per class from submission to match, then the one it ran under.
  std::vector<std::vector<OnlineDecision>> pending_;
};

}  // namespace ttlpred::sim
