#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "data/csv_writer.hpp"
#include "data/trace_readers.hpp"
#include "trace_test_files.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

TEST(CsvReader, ReadsHeaderNamedColumnsWithQuotingAndUnknowns) {
  const std::string text =
      "job_id,user,wall_s,site,requested_ttl_s\r\n"
      "1,alice,3600,CERN,72000\r\n"
      "2,\"smith, john\",,\"He said \"\"hi\"\"\",\r\n"
      "\r\n"
      "3,\"multi\nline\",12.5,\"\",21600\n";
  ReadReport rep;
  const JobTable t = test::read_memory(read_csv, text, rep);
  ASSERT_EQ(t.rows(), 3u) << format_report(rep);
  EXPECT_EQ(rep.lines, 6u);
  EXPECT_EQ(rep.comment_lines, 2u);  // header + blank line
  EXPECT_EQ(rep.continuation_lines, 1u);
  EXPECT_TRUE(rep.all_lines_accounted());
  EXPECT_TRUE(rep.warnings.empty());
  JobRecord r;
  t.record(0, r);
  EXPECT_EQ(r[Field::JobId], 1);
  EXPECT_EQ(r.text(Field::User), "alice");
  EXPECT_EQ(r.text(Field::Site), "CERN");
  EXPECT_EQ(r[Field::RequestedTtl], 72000);
  EXPECT_FALSE(r.known(Field::Status));  // optional column absent
  t.record(1, r);
  EXPECT_EQ(r.text(Field::User), "smith, john");
  EXPECT_EQ(r.text(Field::Site), "He said \"hi\"");
  EXPECT_TRUE(std::isnan(r[Field::WallTime]));
  EXPECT_TRUE(std::isnan(r[Field::RequestedTtl]));
  t.record(2, r);
  EXPECT_EQ(r.text(Field::User), "multi\nline");
  EXPECT_EQ(r[Field::WallTime], 12.5);
  EXPECT_FALSE(r.known(Field::Site));
}

TEST(CsvReader, UnknownColumnsAreAWarningNotAnError) {
  ReadReport rep;
  const JobTable t = test::read_memory(read_csv, "user,colour,wall_s\nbob,red,5\n", rep);
  ASSERT_EQ(t.rows(), 1u);
  EXPECT_EQ(t.num(Field::WallTime)[0], 5);
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_EQ(rep.warnings[0], "unknown column \"colour\" (column 2) ignored");
}

// A misspelt schema column is named with the field it most likely meant and the two ways to
// read it; a name near none gets no guess.
TEST(CsvReader, AMisspeltColumnSuggestsTheFieldItMeant) {
  ReadReport rep;
  const JobTable t = test::read_memory(read_csv, "Submit_Time,wall_sec,usr,colour,queue\n1,5,bob,red,q\n", rep);
  ASSERT_EQ(t.rows(), 1u);
  ASSERT_EQ(rep.warnings.size(), 4u);
  EXPECT_EQ(rep.warnings[0],
            "unknown column \"Submit_Time\" (column 1) ignored; did you mean submit_time? (rename it, or --map submit_time=Submit_Time)");
  EXPECT_EQ(rep.warnings[1], "unknown column \"wall_sec\" (column 2) ignored; did you mean wall_s? (rename it, or --map wall_s=wall_sec)");
  EXPECT_EQ(rep.warnings[2], "unknown column \"usr\" (column 3) ignored; did you mean user? (rename it, or --map user=usr)");
  EXPECT_EQ(rep.warnings[3], "unknown column \"colour\" (column 4) ignored");
  // A header with no schema name at all is no header, and says which names were near one.
  try {
    test::read_memory(read_csv, "Submit_Time,wall_sec,colour\n1,5,red\n", rep, "near.csv");
    FAIL() << "read a file without a schema column";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("near.csv:1: no CSV header"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("; near names: \"Submit_Time\" -> submit_time, \"wall_sec\" -> wall_s"), std::string::npos)
        << e.what();
  }
}

TEST(CsvReader, FileWithoutHeaderIsFatalAndNamesTheFile) {
  ReadReport rep;
  try {
    test::read_memory(read_csv, "1,2,3\n4,5,6\n", rep, "nohead.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nohead.csv:1: no CSV header"), std::string::npos) << e.what();
  }
  EXPECT_THROW(test::read_memory(read_csv, "", rep, "empty.csv"), InputError);
  EXPECT_THROW(test::read_memory(read_csv, "user,user\nx,y\n", rep, "dup.csv"), InputError);
}

TEST(CsvReader, SkipsBadRowsByReasonWithLineAndField) {
  const std::string text =
      "job_id,user,wall_s\n"
      "1,a,10\n"
      "2,b\n"             // 3: column count
      "3,c,12x\n"         // 4
      "4,d,-3\n"          // 5
      "5,\"e\"x,3\n"      // 6: text after closing quote
      "6,f\x02,3\n"       // 7
      "7,\xC3\x28,3\n"    // 8: invalid UTF-8
      "8,g,inf\n"         // 9
      "9,\"open,4\n"      // 10: quote never closed (to the end of the file)
      "10,h,5\n";
  ReadReport rep;
  const JobTable t = test::read_memory(read_csv, text, rep, "bad.csv");
  EXPECT_EQ(t.rows(), 1u);
  EXPECT_TRUE(rep.all_lines_accounted()) << format_report(rep);
  ASSERT_EQ(rep.examples.size(), 8u) << format_report(rep);
  EXPECT_EQ(rep.examples[0], "bad.csv:3: 2 fields, header has 3");
  EXPECT_EQ(rep.examples[1], "bad.csv:4: field wall_s: not a number: \"12x\"");
  EXPECT_EQ(rep.examples[2], "bad.csv:5: field wall_s: negative value \"-3\"");
  EXPECT_EQ(rep.examples[3], "bad.csv:6: text after a closing quote");
  EXPECT_EQ(rep.examples[4], "bad.csv:7: control or binary byte 0x02");
  EXPECT_EQ(rep.examples[5], "bad.csv:8: field user: not UTF-8: \"\\xC3(\"");
  EXPECT_EQ(rep.examples[6], "bad.csv:9: field wall_s: not a finite number: \"inf\"");
  EXPECT_EQ(rep.examples[7], "bad.csv:10: quoted field not closed before the end of the file");
  EXPECT_EQ(rep.continuation_lines, 1u);
}

TEST(CsvReader, RoundTripsThroughCsvWriter) {
  JobTable src;
  JobRecord r;
  for (int i = 0; i < 50; ++i) {
    r.clear();
    r[Field::JobId] = i;
    r[Field::SubmitTime] = 1.7e9 + i * 37;
    r[Field::WallTime] = i * 123.25;
    r[Field::HostSpeed] = 1.0 / (i + 3);  // needs full double precision
    if (i % 3) r[Field::RequestedTtl] = 72000;
    r.text(Field::User) = i % 2 ? "aliprod" : "user, \"quoted\"\nnewline";
    r.text(Field::JobType) = i % 5 ? "MC" : "";
    r.text(Field::Site) = "ALICE::CERN::EOS";
    src.append(r);
  }
  for (const char* name : {"rt.csv", "rt.csv.gz"}) {
    const std::string path = test::temp_dir() + "/" + name;
    write_csv(src, path);
    ReadReport rep;
    const JobTable back = read_trace(path, rep);
    ASSERT_EQ(back.rows(), src.rows()) << format_report(rep);
    EXPECT_EQ(rep.skipped_total(), 0u);
    EXPECT_TRUE(rep.warnings.empty());
    EXPECT_TRUE(rep.all_lines_accounted());
    JobRecord a, b;
    for (std::size_t i = 0; i < src.rows(); ++i) {
      src.record(i, a);
      back.record(i, b);
      for (const auto& f : kFields) {
        if (is_category(f.field)) {
          EXPECT_EQ(a.text(f.field), b.text(f.field)) << f.name << " row " << i;
        } else if (std::isnan(a[f.field])) {
          EXPECT_TRUE(std::isnan(b[f.field])) << f.name << " row " << i;
        } else {
          EXPECT_EQ(a[f.field], b[f.field]) << f.name << " row " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace ttlpred
