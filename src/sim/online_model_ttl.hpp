#pragma once
// `simulate --scheduler jalien --ttl online`: the broker's TTLs from the service's learning
// loop (sim/online_model.hpp) from an empty start. Before the first model a job gets its
// static TTL; then the model's safe TTL, answered through the `--calibration` the service
// runs (static: the model's own; an online method: one TtlPolicy, rebased onto each retrained
// model's calibration as a service's reload does, so that its learned level is kept), fed
// by the outcomes of the attempts it answered.
//
// What the model learns, as JAliEn's statistics do (sim/jalien_stats.hpp): the run time of
// each job that finished (its first attempt, or the resubmission that finished), on the host
// the trace recorded. A killed attempt's run time is a lower bound and is not learnt. One
// TTL per job: host classes (`--host-speed slot`) are not supported here.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "model/online_calibration.hpp"
#include "sim/online_model.hpp"
#include "sim/online_ttl.hpp"
#include "sim/ttl_source.hpp"

namespace ttlpred::sim {

class OnlineModelTtl final : public TtlSource {
 public:
  // static_ttl[job], requested[job] (<= 0: none), cores[job], keys[job] (the mondrian key
  // codes) and batches[job] (the batch guard's keys, OnlineJob::batch) of the simulated jobs;
  // `model` answers them. Error on sizes that differ.
  OnlineModelTtl(std::unique_ptr<OnlineModel> model, SimCalibration calibration, OnlineCalibrationOptions options,
                 std::vector<double> static_ttl, std::vector<double> requested, std::vector<int> cores,
                 std::vector<std::uint32_t> keys, std::vector<std::uint32_t> batches);

  std::size_t classes() const override { return 1; }
  void decide(std::size_t job, double t, std::span<double> ttl) override;
  void matched(std::size_t job, std::size_t host_class) override;
  void ended(std::size_t job, double t, double ran_s, int cores, bool killed) override;
  void retry_ended(std::size_t job, std::size_t host_class, double t, double ran_s, bool killed) override;

  const OnlineModel& model() const { return *model_; }
  // The online calibration's level at the end (NaN with the static calibration or no model).
  double final_level() const;

 private:
  std::unique_ptr<OnlineModel> model_;
  SimCalibration calibration_;
  OnlineCalibrationOptions options_;
  std::vector<double> static_ttl_, requested_;
  std::vector<int> cores_;
  std::vector<std::uint32_t> keys_, batches_;  // mondrian and batch-guard keys
  std::optional<TtlPolicy> policy_;
  std::size_t calibrated_model_ = 0;  // the retrain count policy_ answers through
  CpuTimeWeights weights_;
  std::vector<std::optional<OnlineDecision>> pending_;  // per job: the policy's answer until it ends
};

}  // namespace ttlpred::sim
