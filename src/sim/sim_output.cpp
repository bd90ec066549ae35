#include "sim/sim_output.hpp"

#include <cstdio>
#include <filesystem>

#include "util/error.hpp"
#include "util/file_io.hpp"

namespace ttlpred::sim {

nlohmann::json metrics_json(const BatchMetrics& m) {
  return {{"jobs", m.jobs},
          {"avg_bounded_slowdown", m.avg_bounded_slowdown},
          {"mean_wait_s", m.mean_wait_s},
          {"max_wait_s", m.max_wait_s},
          {"utilization", m.utilization},
          {"makespan_s", m.makespan_s},
          {"corrections", m.corrections},
          {"backfilled", m.backfilled},
          {"cpu_hours_used", m.cpu_hours_used}};
}

nlohmann::json metrics_json(const GridMetrics& m) {
  return {{"jobs", m.jobs},
          {"completed", m.completed},
          {"failed", m.failed},
          {"never_matched", m.never_matched},
          {"days", m.days},
          {"jobs_completed_per_day", m.jobs_completed_per_day},
          {"mean_wait_s", m.mean_wait_s},
          {"p95_wait_s", m.p95_wait_s},
          {"wasted_slot_core_hours", m.wasted_core_hours},
          {"wasted_slot_core_hours_ttl", m.wasted_core_hours_ttl},
          {"idle_exit_core_hours", m.idle_exit_core_hours},
          {"cpu_hours_used", m.cpu_hours_used},
          {"cpu_hours_lost_to_kills", m.cpu_hours_lost_to_kills},
          {"kills", m.kills},
          {"jobs_killed", m.jobs_killed},
          {"resubmissions", m.resubmissions},
          {"matches_rejected_for_ttl", m.matches_rejected_for_ttl},
          {"pilots", m.pilots},
          {"early_exits", m.early_exits},
          {"utilization", m.utilization},
          {"makespan_s", m.makespan_s}};
}

namespace {

void write_hours(const std::string& path, const std::vector<HourSample>& hours) {
  write_file_atomic_stream(path, [&](std::FILE* f) {
    std::fprintf(f, "hour,utilization,queue_length,wasted_core_hours\n");
    for (std::size_t h = 0; h < hours.size(); ++h)
      std::fprintf(f, "%zu,%.6g,%.6g,%.6g\n", h, hours[h].utilization, hours[h].queue_length, hours[h].wasted_core_hours);
  });
}

void make_dir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("simulate: cannot create --out folder " + dir + ": " + ec.message());
}

const char* status_name(GridStatus s) {
  switch (s) {
    case GridStatus::Done: return "DONE";
    case GridStatus::Failed: return "ERROR_E";
    case GridStatus::NeverMatched: return "NEVER_MATCHED";
  }
  return "?";
}

}  // namespace

void write_batch_outputs(const std::string& dir, const std::vector<BatchJob>& jobs, const BatchResult& r) {
  make_dir(dir);
  write_file_atomic_stream(dir + "/schedule.csv", [&](std::FILE* f) {
    std::fprintf(f, "job_id,submit,start,end,procs,wait_s,run_s,bounded_slowdown,corrections,killed_at_request\n");
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const auto& o = r.outcomes[j];
      const double wait = o.start - jobs[j].submit, run = o.end - o.start;
      std::fprintf(f, "%lld,%.0f,%.0f,%.0f,%d,%.0f,%.0f,%.6g,%d,%d\n", static_cast<long long>(jobs[j].id), jobs[j].submit,
                   o.start, o.end, jobs[j].procs, wait, run, bounded_slowdown(wait, run), o.corrections,
                   o.killed_at_request ? 1 : 0);
    }
  });
  write_hours(dir + "/timeseries.csv", r.hours);
}

void write_grid_outputs(const std::string& dir, const std::vector<GridJob>& jobs, const GridResult& r) {
  make_dir(dir);
  write_file_atomic_stream(dir + "/schedule.csv", [&](std::FILE* f) {
    std::fprintf(f, "job_id,submit,start,end,cores,ttl_s,wait_s,attempts,kills,status\n");
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const auto& o = r.outcomes[j];
      std::fprintf(f, "%lld,%.0f,%.0f,%.0f,%d,%.0f,%.0f,%d,%d,%s\n", static_cast<long long>(jobs[j].id), jobs[j].submit,
                   o.start, o.end, jobs[j].cores, o.first_ttl_s >= 0 ? o.first_ttl_s : jobs[j].ttl, o.wait_s, o.attempts, o.kills, status_name(o.status));
    }
  });
  write_hours(dir + "/timeseries.csv", r.hours);
}

}  // namespace ttlpred::sim
