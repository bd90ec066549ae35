// `ttlpred generate`: writes the synthetic ALICE trace (docs/synthetic-trace.md) and prints
// its summary. With the defaults it produces the embedded default data set.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "synth/generator.hpp"
#include "synth/match_floor.hpp"
#include "util/error.hpp"
#include "util/file_io.hpp"

namespace ttlpred::cli {

namespace {

struct GenerateOptions {
  synth::GeneratorConfig config;
  std::string out;
  double floor_split = -1;  // < 0: no floor
  std::string floor_per_job;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string iso_date(double unix_seconds) {
  const std::string d = synth::yyyymmdd(unix_seconds);
  return d.substr(0, 4) + "-" + d.substr(4, 2) + "-" + d.substr(6, 2);
}

// The match-time floor (synth/match_floor.hpp) over the rows after --floor, as a table, and
// per scored job into --floor-per-job.
void print_floor(const GenerateOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  synth::FloorOptions fo;
  fo.split = o.floor_split;
  const synth::MatchFloor f = synth::match_time_floor(o.config, fo, [](std::size_t done, std::size_t total) {
    std::fprintf(stderr, "\rmatch-time floor: %zu of %zu jobs", done, total);
    if (done == total) std::fputc('\n', stderr);
  });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\nmatch-time floor over the rows after split %g: the best RMSE from what the broker knows at each job's\n"
              "start (its row, the world's shared constants, its production's or user's static TTL, and the\n"
              "outcomes and running times of the jobs that share its latent cost); docs/synthetic-trace.md\n",
              o.floor_split);
  std::printf("%-28s %8s %10s %10s %12s\n", "rows", "jobs", "floor h", "oracle h", "excess h^2");
  const double n_all = static_cast<double>(f.buckets.front().jobs);
  for (const auto& b : f.buckets) {
    if (b.jobs == 0) continue;
    // Excess as a share of the mean squared error over all scored rows, so rows add up.
    std::printf("%-28s %8zu %10.3f %10.3f %12.4f\n", b.name.c_str(), b.jobs, b.floor_rmse_h(), b.oracle_rmse_h(),
                (b.floor_sq_s2 - b.oracle_sq_s2) / n_all / (3600.0 * 3600.0));
  }
  if (f.mean_mismatches || f.ttl_unexplained)
    std::printf("warning: %zu rows' expected_wall_s not reproduced, %zu latent costs' TTL unexplained\n", f.mean_mismatches,
                f.ttl_unexplained);
  std::printf("floor time: %.1f s\n", secs);
  if (!o.floor_per_job.empty())
    write_file_atomic_stream(o.floor_per_job, [&](std::FILE* out) {
      std::fputs("job_id,floor_s,finished_siblings,running_siblings_used\n", out);
      for (const auto& j : f.jobs) std::fprintf(out, "%.0f,%.1f,%u,%u\n", j.job_id, j.floor_s, j.finished, j.running);
    });
}

void run_generate(const GenerateOptions& o) {
  if (!o.out.empty() && !ends_with(o.out, ".csv") && !ends_with(o.out, ".csv.gz"))
    throw Error("generate: --out must end in .csv or .csv.gz, got '" + o.out + "'");
  const auto t0 = std::chrono::steady_clock::now();
  synth::TraceStats stats;
  if (o.out.empty()) {
    synth::TraceGenerator gen(o.config);
    gen.run([&](const JobRecord& r) { stats.add(r); });
  } else {
    synth::generate_csv(o.config, o.out, &stats);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("synthetic ALICE trace: %llu jobs, seed %llu, %.0f days from %s -> %s\n",
              static_cast<unsigned long long>(o.config.jobs), static_cast<unsigned long long>(o.config.seed),
              o.config.days, iso_date(o.config.start_time).c_str(),
              o.out.empty() ? "(not written: no --out)" : o.out.c_str());
  const auto& d = o.config.drift;
  if (d.slow_version_day >= 0)
    std::printf("drift: MC jobs run a release %.2fx slower from day %g\n", d.slow_version_factor, d.slow_version_day);
  if (d.slow_site_day >= 0)
    std::printf("drift: the hosts of the first tier-1 site run %.2fx slower from day %g\n", d.slow_site_factor, d.slow_site_day);
  if (d.heavy_user_day >= 0)
    std::printf("drift: %s submits %.0f%% of the user-analysis masters from day %g\n", synth::kHeavyUserName,
                100 * d.heavy_user_share, d.heavy_user_day);
  std::fputs(stats.format().c_str(), stdout);
  std::printf("time: %.2f s\n", secs);
  if (o.floor_split >= 0) print_floor(o);
}

}  // namespace

void add_generate_command(CLI::App& app) {
  auto opts = std::make_shared<GenerateOptions>();
  auto* cmd = app.add_subcommand("generate", "Generate the synthetic ALICE-like job trace and print its summary");
  cmd->add_option("--jobs,-n", opts->config.jobs, "number of jobs (the embedded default trace has 1,000,000)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{200'000'000}));
  cmd->add_option("--seed,-s", opts->config.seed, "random seed; the same seed gives the same trace")
      ->capture_default_str();
  cmd->add_option("--days", opts->config.days, "simulated span in days")->capture_default_str()->check(CLI::Range(0.01, 366.0));
  auto& d = opts->config.drift;
  cmd->add_option("--drift-version-day", d.slow_version_day,
                  "drift: from this day of the span on, MC jobs run a new software release that is slower (off: < 0)")
      ->capture_default_str();
  cmd->add_option("--drift-version-factor", d.slow_version_factor, "drift: run-time factor of that release")
      ->capture_default_str();
  cmd->add_option("--drift-site-day", d.slow_site_day,
                  "drift: from this day on, the hosts of the first tier-1 site slow down (off: < 0)")
      ->capture_default_str();
  cmd->add_option("--drift-site-factor", d.slow_site_factor, "drift: run-time factor of that site's hosts")
      ->capture_default_str();
  cmd->add_option("--drift-user-day", d.heavy_user_day,
                  "drift: from this day on, a new heavy user (newcomer_heavy) submits user analysis (off: < 0)")
      ->capture_default_str();
  cmd->add_option("--drift-user-share", d.heavy_user_share, "drift: share of the user-analysis masters that user submits")
      ->capture_default_str();
  cmd->add_option("--drift-user-cost", d.heavy_user_cost,
                  "drift: that user's work per input file, in multiples of the heaviest existing user's")
      ->capture_default_str();
  cmd->add_option("--out,-o", opts->out, "output file, .csv or .csv.gz (omit to print the summary only)");
  auto* floor = cmd->add_option("--floor", opts->floor_split,
                                "also print the match-time floor: the best RMSE any predictor can reach from what the "
                                "broker knows, over the rows after this split (as eval --split)")
                    ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--floor-per-job", opts->floor_per_job, "with --floor: write each scored job's floor prediction (CSV)")
      ->needs(floor);
  cmd->callback([opts] { run_generate(*opts); });
}

}  // namespace ttlpred::cli
