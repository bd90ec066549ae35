// `ttlpred generate`: writes the synthetic ALICE trace (docs/synthetic-trace.md) and prints
// its summary. With the defaults it produces the embedded default data set.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "synth/generator.hpp"
#include "util/error.hpp"

namespace ttlpred::cli {

namespace {

struct GenerateOptions {
  synth::GeneratorConfig config;
  std::string out;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string iso_date(double unix_seconds) {
  const std::string d = synth::yyyymmdd(unix_seconds);
  return d.substr(0, 4) + "-" + d.substr(4, 2) + "-" + d.substr(6, 2);
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
  std::fputs(stats.format().c_str(), stdout);
  std::printf("time: %.2f s\n", secs);
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
  cmd->add_option("--out,-o", opts->out, "output file, .csv or .csv.gz (omit to print the summary only)");
  cmd->callback([opts] { run_generate(*opts); });
}

}  // namespace ttlpred::cli
