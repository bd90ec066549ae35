#pragma once
// A small random job table for the feature tests, built here so that the tests do not depend
// on the synthetic trace generator. It has what makes history tricky: ties in submit time,
// unknown waits and wall times, jobs finishing long after later ones were submitted, unknown
// submit times, and rare category values.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "data/job_table.hpp"
#include "features/history.hpp"

namespace ttlpred::test {

// One job of a hand-computed history table: its times, user and request (NaN: unknown; a NaN
// wall is a job whose run time never becomes known).
inline void add_timed_job(JobTable& t, double submit, double wait, double wall, const char* user,
                          double requested = kMissingNumber) {
  JobRecord r;
  r[Field::SubmitTime] = submit;
  r[Field::WaitTime] = wait;
  r[Field::WallTime] = wall;
  r[Field::RequestedTtl] = requested;
  r.text(Field::User) = user;
  t.append(r);
}

// The history configuration of the hand-computed examples: the All and User keys, the last
// two run times, an EWMA of 0.5; each example sets what it adds on top.
inline HistoryConfig hand_history_config() {
  HistoryConfig c;
  c.keys = {HistoryKey::All, HistoryKey::User};
  c.last_k = 2;
  c.ewma_alpha = 0.5;
  return c;
}

inline JobTable random_feature_table(std::size_t rows, unsigned seed) {
  std::mt19937_64 rng(seed);
  auto uni = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng); };
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  std::vector<std::string> users, queues, types = {"MC", "USER", "MERGE"}, packages = {"v1", "v2", "v3"};
  // Appending rather than "literal" + to_string: g++ 12 reports a false -Wrestrict on the latter.
  auto named = [](std::string prefix, std::size_t i) { return prefix.append(std::to_string(i)); };
  for (std::size_t i = 0; i < 12; ++i) users.push_back(named("user", i));
  for (std::size_t i = 0; i < 3; ++i) queues.push_back(named("q", i));
  std::vector<std::string> rare;  // values seen once: below any min-frequency
  for (std::size_t i = 0; i < rows; ++i) rare.push_back(named("rare", i));

  // Work amounts come from a second generator, so the columns above keep their values.
  std::mt19937_64 rng_work(seed * 7919 + 17);
  auto uni_work = [&](double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng_work); };

  JobTable t;
  JobRecord r;
  for (std::size_t i = 0; i < rows; ++i) {
    r.clear();
    r[Field::JobId] = static_cast<double>(i);
    // Integer times in a narrow range: many jobs share a submit second.
    r[Field::SubmitTime] = pick(50) == 0 ? kMissingNumber : std::floor(uni(0, static_cast<double>(rows) * 20));
    r.text(Field::User) = users[pick(users.size())];
    if (pick(10) == 0) r.text(Field::User) = rare[i];
    if (pick(7) != 0) r.text(Field::Queue) = queues[pick(queues.size())];
    r.text(Field::JobType) = types[pick(types.size())];
    r.text(Field::Package) = packages[pick(packages.size())];
    if (pick(3) != 0) r[Field::MasterJobId] = static_cast<double>(pick(rows / 8 + 1));
    r[Field::InputBytes] = std::floor(std::exp(uni(0, 20)));
    r[Field::CpuCores] = static_cast<double>(1u << pick(4));
    r[Field::CpuMhz] = pick(5) == 0 ? kMissingNumber : std::floor(uni(2000, 3500));
    r[Field::RequestedTtl] = pick(6) == 0 ? kMissingNumber : std::floor(uni(600, 80000));
    r[Field::WaitTime] = pick(4) == 0 ? kMissingNumber : std::floor(uni(0, 600));
    // Heavy-tailed run times: some run far past the submissions of later jobs.
    r[Field::WallTime] = pick(20) == 0 ? kMissingNumber : std::floor(std::exp(uni(0, 9)));
    if (pick(5) != 0) r.text(Field::Site) = queues[pick(queues.size())];
    r.text(Field::Status) = "DONE";
    // Work: events (missing for a quarter, 0 for some), input files, host speed (missing for
    // a fifth: the match-time field the work-rate statistics divide by).
    const double u = uni_work(0, 1);
    r[Field::Events] = u < 0.25 ? kMissingNumber : u < 0.3 ? 0.0 : std::floor(std::exp(uni_work(0, 8)));
    r[Field::InputFiles] = std::floor(uni_work(0, 40));
    r[Field::HostSpeed] = uni_work(0, 1) < 0.2 ? kMissingNumber : uni_work(0.5, 1.5);
    t.append(r);
  }
  return t;
}

// Bitwise equality of float arrays (NaN == NaN when the bits agree).
inline bool same_bits(const float* a, const float* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(float)) == 0;
}

}  // namespace ttlpred::test
