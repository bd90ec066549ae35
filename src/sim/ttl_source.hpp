#pragma once
// Where the broker's TTLs come from when they are not fixed per job in advance: a source the
// broker asks when a job is submitted and tells when the attempt it answered ends, in
// simulated time. This is how the deployed service is used: the broker asks at submission
// and posts each outcome when the job ends, and the service's online calibration moves its
// level by what it has learned so far (sim/online_ttl.hpp). A source may also answer per
// host class (the hosts of one CPU generation): a pilot on a host of class h is matched
// against the TTL the source gave for h, as if the broker had asked at match time with the
// slot's host (sim/host_classes.hpp).
//
// The source knows jobs by their index in the vector given to simulate_jalien.
#include <cstddef>
#include <span>

namespace ttlpred::sim {

class TtlSource {
 public:
  virtual ~TtlSource() = default;
  // Host classes with a TTL of their own (1: one TTL per job, whatever the host).
  virtual std::size_t classes() const = 0;
  // The job's TTL on each class (`ttl.size() == classes()`), asked when it is submitted at
  // time t. Only a job's first attempt is asked: a resubmission after a kill gets the job's
  // retry TTL (GridJob::retry_ttl), which the source did not answer.
  virtual void decide(std::size_t job, double t, std::span<double> ttl) = 0;
  // The job was matched to a pilot on host class `host_class`: the other classes' answers
  // are no longer needed.
  virtual void matched(std::size_t job, std::size_t host_class) = 0;
  // The attempt the source answered ended at t after running `ran_s` seconds (on `cores`),
  // killed at its TTL + the kill margin or not: what the broker posts as the job's outcome.
  virtual void ended(std::size_t job, double t, double ran_s, int cores, bool killed) = 0;
  // A resubmission's attempt (which the source did not answer: it ran under the job's retry
  // TTL) ended at t on host class `host_class`. A source that learns from every finished job
  // takes it (JAliEn's statistics, sim/jalien_stats.hpp); the calibrations follow their own
  // answers only and ignore it.
  virtual void retry_ended(std::size_t /*job*/, std::size_t /*host_class*/, double /*t*/, double /*ran_s*/,
                           bool /*killed*/) {}
};

}  // namespace ttlpred::sim
