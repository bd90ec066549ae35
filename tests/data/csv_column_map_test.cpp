// CSV with ISO-8601 instants and a column map (--map): the database-export sample
// (tests/data/samples/db-export-iso.csv) read without renaming anything.
#include <gtest/gtest.h>

#include <cmath>

#include "data/csv_column_map.hpp"
#include "job_log_samples.hpp"
#include "trace_test_files.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

constexpr double kMar1At8 = 1709280000;  // 2024-03-01T08:00:00Z
constexpr const char* kSampleMap =
    "id=JobNumber,user=Owner,queue=Queue,submit=SubmitTime,start=StartTime,end=EndTime,cores=Cores,"
    "limit=LimitSeconds,state=FinalState";

TEST(CsvColumnMap, ReadsADatabaseExportWithIsoTimes) {
  TraceReadOptions o;
  o.column_map = parse_csv_column_map(kSampleMap);
  ReadReport rep;
  const JobTable t = read_trace(test::job_log_sample("db-export-iso.csv"), rep, o);
  ASSERT_EQ(t.rows(), 4u) << format_report(rep);
  EXPECT_EQ(rep.skipped_total(), 0u);
  EXPECT_TRUE(rep.warnings.empty()) << format_report(rep);
  JobRecord r;
  t.record(0, r);
  EXPECT_EQ(r[Field::JobId], 9001);
  EXPECT_EQ(r.text(Field::User), "alice");
  EXPECT_EQ(r.text(Field::Queue), "long");
  EXPECT_EQ(r[Field::SubmitTime], kMar1At8);
  EXPECT_EQ(r[Field::WaitTime], 30);
  EXPECT_EQ(r[Field::WallTime], 4200);
  EXPECT_EQ(r[Field::CpuCores], 4);
  EXPECT_EQ(r[Field::RequestedTtl], 7200);
  EXPECT_EQ(r.text(Field::Status), "DONE");
  t.record(1, r);  // space instead of T, no zone: UTC
  EXPECT_EQ(r[Field::SubmitTime], kMar1At8 + 300);
  EXPECT_EQ(r[Field::WaitTime], 600);
  EXPECT_EQ(r[Field::WallTime], 1800);
  t.record(2, r);  // +02:00 offset, fractional end
  EXPECT_EQ(r[Field::SubmitTime], kMar1At8);
  EXPECT_EQ(r[Field::WaitTime], 0);
  EXPECT_DOUBLE_EQ(r[Field::WallTime], 5400.5);
  t.record(3, r);  // never started
  EXPECT_TRUE(std::isnan(r[Field::WallTime]));
  EXPECT_TRUE(std::isnan(r[Field::WaitTime]));
}

TEST(CsvColumnMap, IsoSubmitTimeAndDerivedColumnsWithoutAMap) {
  ReadReport rep;
  const std::string path = test::write_text_file(
      "iso.csv", "job_id,submit_time,start_time,end_time\n1,2024-03-01T08:00:00Z,1709280060,2024-03-01T08:11:00Z\n"
                 "2,2024-03-01T08:00:00Z,2024-03-01T08:10:00Z,2024-03-01T08:05:00Z\n3,March 1st,,\n");
  const JobTable t = read_trace(path, rep);
  ASSERT_EQ(t.rows(), 1u) << format_report(rep);
  JobRecord r;
  t.record(0, r);
  EXPECT_EQ(r[Field::WaitTime], 60);
  EXPECT_EQ(r[Field::WallTime], 600);
  const std::string text = format_report(rep);
  EXPECT_NE(text.find("iso.csv:3: field end_time: ends before its start_time"), std::string::npos) << text;
  EXPECT_NE(text.find("iso.csv:4: field submit_time: neither a number nor an ISO-8601 date-time: \"March 1st\""),
            std::string::npos)
      << text;
}

TEST(CsvColumnMap, BadMapsAreClearErrors) {
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([] { parse_csv_column_map("colour=Paint"); }).find("--map: unknown target 'colour'"), std::string::npos);
  EXPECT_NE(message([] { parse_csv_column_map("submit"); }).find("'submit' has no '='"), std::string::npos);
  EXPECT_NE(message([] { parse_csv_column_map("submit=A,submit_time=B"); }).find("submit_time mapped twice"), std::string::npos);
  TraceReadOptions o;
  o.column_map = parse_csv_column_map("submit=Submitted");
  ReadReport rep;
  const std::string path = test::write_text_file("export.csv", "Id,SubmitTime\n1,2024-03-01\n");
  const std::string m = message([&] { read_trace(path, rep, o); });
  EXPECT_NE(m.find("export.csv:1: --map submit=Submitted: the header has no column \"Submitted\""), std::string::npos) << m;
  o.format = TraceFormat::Swf;
  EXPECT_NE(message([&] { read_trace(path, rep, o); }).find("--map applies to CSV only"), std::string::npos);
}

TEST(CsvColumnMap, MatchesHeaderNamesIgnoringCaseAndMappedColumnWins) {
  TraceReadOptions o;
  o.column_map = parse_csv_column_map("wall_s=RUNTIME");
  ReadReport rep;
  const std::string path = test::write_text_file("both.csv", "job_id,wall_s,RunTime\n1,5,600\n");
  const JobTable t = read_trace(path, rep, o);
  ASSERT_EQ(t.rows(), 1u);
  JobRecord r;
  t.record(0, r);
  EXPECT_EQ(r[Field::WallTime], 600);
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_NE(rep.warnings[0].find("--map reads wall_s from another column"), std::string::npos) << rep.warnings[0];
}

}  // namespace
}  // namespace ttlpred
