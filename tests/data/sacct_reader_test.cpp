// The Slurm sacct reader on the hand-written sample (tests/data/samples/slurm-sacct.sacct),
// every value checked against what its line says, and on broken lines.
#include <gtest/gtest.h>

#include <cmath>

#include "job_log_samples.hpp"
#include "trace_test_files.hpp"

namespace ttlpred {
namespace {

constexpr double kMar1At8 = 1709280000;  // 2024-03-01T08:00:00Z

TEST(SacctReader, ReadsTheSampleJobByJob) {
  ReadReport rep;
  const JobTable t = read_trace(test::job_log_sample("slurm-sacct.sacct"), rep);
  EXPECT_EQ(rep.format, "sacct");
  ASSERT_EQ(t.rows(), 8u) << format_report(rep);
  EXPECT_EQ(rep.lines, 11u);
  EXPECT_EQ(rep.comment_lines, 3u);  // header + two job steps
  EXPECT_EQ(rep.skipped_total(), 0u);
  EXPECT_TRUE(rep.all_lines_accounted());
  EXPECT_TRUE(rep.warnings.empty()) << format_report(rep);

  JobRecord r;
  t.record(0, r);  // 4101: completed
  EXPECT_EQ(r[Field::JobId], 4101);
  EXPECT_EQ(r.text(Field::User), "alice");
  EXPECT_EQ(r.text(Field::Group), "physics");  // the account, there being no Group field
  EXPECT_EQ(r.text(Field::Partition), "cpu");
  EXPECT_EQ(r.text(Field::Queue), "normal");  // the QOS
  EXPECT_EQ(r[Field::SubmitTime], kMar1At8);
  EXPECT_EQ(r[Field::WaitTime], 30);
  EXPECT_EQ(r[Field::WallTime], 4200);
  EXPECT_EQ(r[Field::RequestedTtl], 7200);
  EXPECT_EQ(r[Field::CpuCores], 4);
  EXPECT_EQ(r[Field::MemoryMb], 16384);
  EXPECT_EQ(r.text(Field::Status), "COMPLETED");

  t.record(1, r);  // 4102: hit its time limit, a censored outcome
  EXPECT_EQ(r.text(Field::Status), "TIMEOUT");
  EXPECT_EQ(r[Field::WallTime], 86400);
  EXPECT_EQ(r[Field::RequestedTtl], 86400);
  EXPECT_EQ(r[Field::MemoryMb], 32000);  // 4000 MB per CPU x 8 CPUs
  EXPECT_EQ(r[Field::WaitTime], 600);

  t.record(2, r);  // 4103: 30:00 is minutes:seconds
  EXPECT_EQ(r[Field::RequestedTtl], 1800);
  EXPECT_EQ(r[Field::WallTime], 120);

  t.record(3, r);  // 4104: cancelled before it started
  EXPECT_EQ(r.text(Field::Status), "CANCELLED");
  EXPECT_TRUE(std::isnan(r[Field::WallTime]));
  EXPECT_TRUE(std::isnan(r[Field::WaitTime]));
  EXPECT_TRUE(std::isnan(r[Field::RequestedTtl]));  // UNLIMITED

  t.record(4, r);  // 4105_1: array task, its own id from JobIDRaw
  EXPECT_EQ(r[Field::JobId], 4106);
  EXPECT_EQ(r[Field::MasterJobId], 4105);
  EXPECT_EQ(r[Field::WallTime], 1800);
  t.record(5, r);
  EXPECT_EQ(r[Field::JobId], 4107);
  EXPECT_EQ(r.text(Field::Status), "OUT_OF_MEMORY");

  t.record(6, r);  // 4108: still running: Elapsed is time so far, not a run time
  EXPECT_TRUE(std::isnan(r[Field::WallTime]));
  EXPECT_EQ(r[Field::RequestedTtl], 14400);
  t.record(7, r);  // 4109: pending
  EXPECT_EQ(r[Field::RequestedTtl], 216000);
  EXPECT_TRUE(std::isnan(r[Field::WaitTime]));

  const std::string notes = format_report(rep);
  EXPECT_NE(notes.find("2 job-step lines"), std::string::npos) << notes;
  EXPECT_NE(notes.find("1 jobs hit their time limit (State TIMEOUT): censored"), std::string::npos) << notes;
}

TEST(SacctReader, BadFieldsAreSkippedWithFileLineAndField) {
  ReadReport rep;
  const std::string path = test::write_text_file(
      "broken.sacct",
      "JobID|Submit|Elapsed|Timelimit|ReqMem|State|Colour\n"
      "1|2024-03-01T08:00:00|01:00:00|02:00:00|4G|COMPLETED|red\n"
      "2|yesterday|01:00:00|02:00:00|4G|COMPLETED|red\n"
      "3|2024-03-01T08:00:00|one hour|02:00:00|4G|COMPLETED|red\n"
      "4|2024-03-01T08:00:00|01:00:00|02:00:00|4Q|COMPLETED|red\n"
      "5|2024-03-01T08:00:00|01:00:00|COMPLETED\n"
      "x7|2024-03-01T08:00:00|01:00:00|02:00:00|4G|COMPLETED|red\n");
  const JobTable t = read_trace(path, rep);
  EXPECT_EQ(t.rows(), 1u);
  EXPECT_EQ(rep.skipped_total(), 5u);
  EXPECT_TRUE(rep.all_lines_accounted());
  const std::string text = format_report(rep);
  EXPECT_NE(text.find("broken.sacct:3: field Submit: not a sacct timestamp"), std::string::npos) << text;
  EXPECT_NE(text.find("broken.sacct:4: field Elapsed: not a Slurm duration"), std::string::npos) << text;
  EXPECT_NE(text.find("broken.sacct:5: field ReqMem: not a memory request"), std::string::npos) << text;
  EXPECT_NE(text.find("broken.sacct:6: 4 fields, header has 7"), std::string::npos) << text;
  EXPECT_NE(text.find("broken.sacct:7: field JobID: not a Slurm job id"), std::string::npos) << text;
  EXPECT_NE(text.find("unknown sacct field \"Colour\""), std::string::npos) << text;
}

TEST(SacctReader, TellsItsFormatByContentAndRefusesAHeaderWithoutJobId) {
  ReadReport rep;
  const std::string path = test::write_text_file("no-extension.txt", "JobID|ElapsedRaw|State\n7|600|COMPLETED\n");
  const JobTable t = read_trace(path, rep);
  EXPECT_EQ(rep.format, "sacct");
  ASSERT_EQ(t.rows(), 1u);
  JobRecord r;
  t.record(0, r);
  EXPECT_EQ(r[Field::WallTime], 600);
  const std::string bad = test::write_text_file("nojob.sacct", "User|State\nalice|COMPLETED\n");
  try {
    read_trace(bad, rep);
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("nojob.sacct:1: no sacct header"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ttlpred
