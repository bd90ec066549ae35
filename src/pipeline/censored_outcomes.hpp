#pragma once
// Which recorded run times are only lower bounds: jobs killed at their limit. Their true run
// time is longer than recorded, so training on them as exact values biases the model (and
// the safe TTL calibrated on it) low; the trainer can treat them as lower bounds instead
// (train/mlp_trainer.hpp, `lower_bound`).
//
// A run time is censored when the job's status says it was killed at its limit (ALICE's
// ERROR_E: past TTL + 300 s; Slurm's TIMEOUT) or, whatever the status, when it reached its
// request: wall >= kReachedRequestShare x requested TTL. The SWF archives have no kill
// reason (a killed job is "failed", like any other failure), and batch systems stop a job
// at its limit give or take the polling interval: on KTH-SP2 3 739 of 28 481 jobs end within
// 1 % of their request or past it, 475 past it.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "data/job_table.hpp"

namespace ttlpred {

inline constexpr double kReachedRequestShare = 0.99;

// One record's rule (status text, run time, request; NaN where unknown).
bool is_censored_outcome(std::string_view status, double wall_s, double requested_ttl_s);

// Per row of t in [begin, end): 1 where the run time is censored, else 0.
std::vector<std::uint8_t> censored_outcomes(const JobTable& t, std::size_t begin, std::size_t end);

}  // namespace ttlpred
