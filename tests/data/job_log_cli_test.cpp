// `ttlpred inspect` and `ttlpred train` on Slurm sacct and on a database-style CSV with ISO
// times and a column map, through the built program (skipped where it is not built).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "job_log_samples.hpp"
#include "trace_test_files.hpp"

namespace ttlpred {
namespace {

constexpr const char* kDbMap =
    "id=JobNumber,user=Owner,queue=Queue,submit=SubmitTime,start=StartTime,end=EndTime,cores=Cores,"
    "limit=LimitSeconds,state=FinalState";

// "2024-03-01T08:00:00" plus `s` seconds, as sacct and ISO-8601 write it.
std::string iso(long s, const char* zone = "") {
  const long base = 1709280000 + s;  // 2024-03-01T08:00:00Z
  const long day = base / 86400, sec = base % 86400;
  // March 2024 only: day 19783 is 2024-03-01.
  char buf[40];
  std::snprintf(buf, sizeof buf, "2024-03-%02ldT%02ld:%02ld:%02ld%s", day - 19783 + 1, sec / 3600, sec / 60 % 60, sec % 60, zone);
  return buf;
}

// 300 jobs (train needs 191 to fit and calibrate) whose run time depends on the user and cores, as sacct writes them; every tenth
// hits its limit (TIMEOUT).
std::string sacct_trace() {
  std::string t = "JobID|User|Account|Partition|QOS|Submit|Start|End|Elapsed|Timelimit|ReqCPUS|ReqMem|State\n";
  const char* users[] = {"alice", "bob", "carol"};
  for (int i = 0; i < 300; ++i) {
    const int cores = 1 << (i % 3);
    const long limit = 7200;
    long wall = 600 + 900L * (i % 3) + 300L * cores + (i * 37) % 300;
    const bool timeout = i % 10 == 9;
    if (timeout) wall = limit;
    const long submit = 600L * i, start = submit + 30;
    char line[400];
    std::snprintf(line, sizeof line, "%d|%s|acct%d|cpu|normal|%s|%s|%s|%02ld:%02ld:%02ld|02:00:00|%d|%dG|%s\n", 5000 + i,
                  users[i % 3], i % 2, iso(submit).c_str(), iso(start).c_str(), iso(start + wall).c_str(), wall / 3600,
                  wall / 60 % 60, wall % 60, cores, 2 * cores, timeout ? "TIMEOUT" : "COMPLETED");
    t += line;
    t += std::to_string(5000 + i) + ".batch||acct||||" + iso(start) + "|" + iso(start + wall) + "|00:00:01||" +
         std::to_string(cores) + "||COMPLETED\n";
  }
  return t;
}

std::string db_export_trace() {
  std::string t = "JobNumber,Owner,Queue,SubmitTime,StartTime,EndTime,Cores,LimitSeconds,FinalState\n";
  const char* users[] = {"alice", "bob", "carol"};
  for (int i = 0; i < 300; ++i) {
    const int cores = 1 << (i % 3);
    const long wall = 600 + 900L * (i % 3) + 300L * cores + (i * 37) % 300;
    const long submit = 600L * i, start = submit + 60;
    t += std::to_string(9000 + i) + "," + users[i % 3] + "," + (i % 2 ? "long" : "short") + "," + iso(submit, "Z") + "," +
         iso(start, "Z") + "," + iso(start + wall, "Z") + "," + std::to_string(cores) + ",7200,DONE\n";
  }
  return t;
}

TEST(JobLogCli, InspectReadsTheSacctSample) {
  std::string out;
  const int rc = test::run_cli("inspect --json '" + test::job_log_sample("slurm-sacct.sacct") + "'", &out);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["format"], "sacct");
  EXPECT_EQ(j["rows"], 8);
  EXPECT_EQ(j["columns"]["status"]["distinct"], 7);  // COMPLETED TIMEOUT FAILED CANCELLED OUT_OF_MEMORY RUNNING PENDING
}

TEST(JobLogCli, InspectReadsTheIsoCsvWithAColumnMap) {
  std::string out;
  const int rc = test::run_cli("inspect --json --map '" + std::string(kDbMap) + "' '" + test::job_log_sample("db-export-iso.csv") + "'", &out);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["format"], "csv");
  EXPECT_EQ(j["rows"], 4);
  EXPECT_EQ(j["skipped"]["total"], 0);
  EXPECT_EQ(j["columns"]["wall_s"]["known"], 3);
  // Without the map the export's header names no schema column: refused, naming the file.
  const int bad = test::run_cli("inspect --format csv '" + test::job_log_sample("db-export-iso.csv") + "'", &out);
  EXPECT_EQ(bad, 1);
  EXPECT_NE(out.find("db-export-iso.csv:1: no CSV header"), std::string::npos) << out;
}

TEST(JobLogCli, TrainsOnSacctAndOnAMappedIsoCsv) {
  const std::string dir = test::temp_dir();
  const std::string sacct = test::write_text_file("jobs.sacct", sacct_trace());
  const std::string csv = test::write_text_file("jobs-export.csv", db_export_trace());
  std::string out;
  int rc = test::run_cli("train --data '" + sacct + "' --out '" + dir + "/sacct.model' --epochs 3 --hidden 16 --quiet", &out);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("(sacct)"), std::string::npos) << out;
  rc = test::run_cli("model info --json '" + dir + "/sacct.model'", &out);
  ASSERT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["training"]["trace_format"], "sacct");
  EXPECT_EQ(j["training"]["eligible_rows"], 300);
  EXPECT_EQ(j["training"]["train_rows"], 240);

  rc = test::run_cli("train --data '" + csv + "' --map '" + kDbMap + "' --out '" + dir + "/csv.model' --epochs 3 --hidden 16 --quiet", &out);
  ASSERT_EQ(rc, 0) << out;
  rc = test::run_cli("model info --json '" + dir + "/csv.model'", &out);
  ASSERT_EQ(rc, 0) << out;
  j = nlohmann::json::parse(out);
  EXPECT_EQ(j["training"]["trace_format"], "csv");
  EXPECT_EQ(j["training"]["train_rows"], 240);
  EXPECT_EQ(j["architecture"]["layers"][0]["out"], 16);
  EXPECT_EQ(j["variant"], "fp32-fused");
  EXPECT_FALSE(j["training"]["data_hash"].get<std::string>().empty());
}

}  // namespace
}  // namespace ttlpred
