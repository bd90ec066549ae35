#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "data/trace_readers.hpp"
#include "trace_test_files.hpp"

namespace ttlpred {
namespace {

constexpr std::string_view kSwf =
    "; Version: 2.2\n"
    "; UnixStartTime: 1000000\n"
    ";\n"
    "    1   0  30  3600  8  100  2048  16  7200  4096  1  12  3  5  2  1  -1  -1\n"
    "    2  60  -1    -1  4   -1    -1   4    -1    -1  0   7  3 -1 -1 -1  -1  -1\n"
    "\n"
    "3\t120\t0\t10\t1\t-1\t-1\t1\t60\t-1\t5\t7\t3\t-1\t-1\t-1\t2\t30\n";

TEST(SwfReader, MapsEveryFieldOntoTheSchema) {
  ReadReport rep;
  const JobTable t = test::read_memory(read_swf, kSwf, rep);
  ASSERT_EQ(t.rows(), 3u);
  EXPECT_EQ(rep.lines, 7u);
  EXPECT_EQ(rep.comment_lines, 4u);
  EXPECT_EQ(rep.skipped_total(), 0u);
  EXPECT_TRUE(rep.all_lines_accounted());
  EXPECT_EQ(rep.format, "swf");

  JobRecord r;
  t.record(0, r);
  EXPECT_EQ(r[Field::JobId], 1);
  EXPECT_EQ(r[Field::SubmitTime], 1000000);  // shifted by UnixStartTime
  EXPECT_EQ(r[Field::WaitTime], 30);
  EXPECT_EQ(r[Field::WallTime], 3600);
  EXPECT_EQ(r[Field::SlotCores], 8);
  EXPECT_EQ(r[Field::CpuTime], 800);  // 100 s per processor x 8
  EXPECT_EQ(r[Field::MaxRss], 2);     // 2048 KB
  EXPECT_EQ(r[Field::CpuCores], 16);
  EXPECT_EQ(r[Field::RequestedTtl], 7200);
  EXPECT_EQ(r[Field::MemoryMb], 4);
  EXPECT_EQ(r.text(Field::Status), "DONE");
  EXPECT_EQ(r.text(Field::User), "12");
  EXPECT_EQ(r.text(Field::Group), "3");
  EXPECT_EQ(r.text(Field::Executable), "5");
  EXPECT_EQ(r.text(Field::Queue), "2");
  EXPECT_EQ(r.text(Field::Partition), "1");
  EXPECT_FALSE(r.known(Field::Site));

  t.record(1, r);
  EXPECT_EQ(r[Field::SubmitTime], 1000060);
  EXPECT_TRUE(std::isnan(r[Field::WaitTime]));
  EXPECT_TRUE(std::isnan(r[Field::WallTime]));
  EXPECT_TRUE(std::isnan(r[Field::CpuTime]));
  EXPECT_TRUE(std::isnan(r[Field::RequestedTtl]));
  EXPECT_EQ(r.text(Field::Status), "FAILED");
  EXPECT_FALSE(r.known(Field::Executable));

  t.record(2, r);  // tab-separated works too
  EXPECT_EQ(r[Field::WallTime], 10);
  EXPECT_EQ(r.text(Field::Status), "CANCELLED");
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_NE(rep.notes[0].find("UnixStartTime 1000000"), std::string::npos);
}

// Integer fields longer than 18 digits leave the one-pass integer path (its 64-bit
// accumulator would overflow: found by fuzz_trace_readers, undefined behaviour under UBSan)
// for the general one, which reads them as doubles.
TEST(SwfReader, IntegerFieldsOfMoreThan18DigitsAreReadAsDoubles) {
  ReadReport rep;
  const JobTable t = test::read_memory(
      read_swf, "17777777777777777777777 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 3 -1 -1 -1\n999999999999999999 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 3 -1 -1 -1\n", rep);
  ASSERT_EQ(t.rows(), 2u) << rep.skipped_total();
  JobRecord r;
  t.record(0, r);
  EXPECT_DOUBLE_EQ(r[Field::JobId], 1.7777777777777777777777e22);
  t.record(1, r);
  EXPECT_EQ(r[Field::JobId], 999999999999999999.0);  // 18 digits: the integer path, rounded to a double
  EXPECT_EQ(r[Field::WallTime], 10);
}

TEST(SwfReader, WithoutHeaderSubmitTimesStayRelative) {
  ReadReport rep;
  const JobTable t = test::read_memory(read_swf, "1 5 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n", rep);
  ASSERT_EQ(t.rows(), 1u);
  EXPECT_EQ(t.num(Field::SubmitTime)[0], 5);
  EXPECT_TRUE(rep.notes.empty());
}

TEST(SwfReader, AleaField20IsTheQueueName) {
  ReadReport rep;
  const JobTable t = test::read_memory(
      read_swf,
      "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 3 -1 -1 -1 -1 q_long\n"
      "2 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 3 -1 -1 -1 -1 -1\n",
      rep);
  ASSERT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.text(Field::Queue, 0), "q_long");
  EXPECT_EQ(t.text(Field::Queue, 1), "3");  // no name: the numeric queue of field 15
}

TEST(SwfReader, StatusCodesForCheckpointedJobs) {
  ReadReport rep;
  std::string text;
  for (int s : {2, 3, 4, 9}) text += "1 0 0 10 1 -1 -1 1 60 -1 " + std::to_string(s) + " 1 1 -1 -1 -1 -1 -1\n";
  const JobTable t = test::read_memory(read_swf, text, rep);
  ASSERT_EQ(t.rows(), 4u);
  EXPECT_EQ(t.text(Field::Status, 0), "PARTIAL");
  EXPECT_EQ(t.text(Field::Status, 1), "DONE");
  EXPECT_EQ(t.text(Field::Status, 2), "FAILED");
  EXPECT_EQ(t.text(Field::Status, 3), "OTHER");
}

TEST(SwfReader, SkipsBadRowsByReasonWithLineAndField) {
  const std::string text =
      "; header\n"
      "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"
      "2 0 0 10 1 -1\n"                                      // line 3: truncated
      "3 0 0 1O 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"      // line 4: letter O in run time
      "4 0 0 nan 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"     // line 5
      "5 0 -5 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"     // line 6: negative wait
      "6 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 \x01\n"    // line 7: control byte
      "7 0 0 1e400 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n"   // line 8: out of range
      "8 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1 x \xff\xfe\n"  // line 9: Alea queue not UTF-8
      "9 0 0 10.5 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n";  // line 10: fractional is fine
  ReadReport rep;
  const JobTable t = test::read_memory(read_swf, text, rep, "bad.swf");
  EXPECT_EQ(t.rows(), 2u);
  EXPECT_EQ(t.num(Field::WallTime)[1], 10.5);
  EXPECT_EQ(rep.skipped_count(SkipReason::TooFewFields), 1u);
  EXPECT_EQ(rep.skipped_count(SkipReason::NotANumber), 1u);
  EXPECT_EQ(rep.skipped_count(SkipReason::NotFinite), 2u);
  EXPECT_EQ(rep.skipped_count(SkipReason::Negative), 1u);
  EXPECT_EQ(rep.skipped_count(SkipReason::ControlBytes), 1u);
  EXPECT_EQ(rep.skipped_count(SkipReason::InvalidUtf8), 1u);
  EXPECT_TRUE(rep.all_lines_accounted());
  ASSERT_EQ(rep.examples.size(), 7u);
  EXPECT_EQ(rep.examples[0], "bad.swf:3: 6 fields, SWF has 18");
  EXPECT_EQ(rep.examples[1], "bad.swf:4: field run_time (SWF field 4): not a number: \"1O\"");
  EXPECT_EQ(rep.examples[2], "bad.swf:5: field run_time (SWF field 4): not a finite number: \"nan\"");
  EXPECT_NE(rep.examples[3].find("bad.swf:6: field wait_time (SWF field 3): negative value \"-5\""), std::string::npos);
  EXPECT_EQ(rep.examples[4], "bad.swf:7: control or binary byte 0x01 at column 44");
  EXPECT_NE(rep.examples[6].find("bad.swf:9: field queue (SWF field 20): not UTF-8"), std::string::npos);
  const std::string printed = format_report(rep);
  EXPECT_NE(printed.find("skipped        1  too few fields"), std::string::npos) << printed;
}

TEST(SwfReader, KeepsAtMostTwentyExamplesButCountsAll) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "junk line\n";
  ReadReport rep;
  test::read_memory(read_swf, text, rep);
  EXPECT_EQ(rep.skipped_count(SkipReason::TooFewFields), 100u);
  EXPECT_EQ(rep.examples.size(), ReadReport::kMaxExamples);
  EXPECT_NE(format_report(rep).find("... and 80 more"), std::string::npos);
}

}  // namespace
}  // namespace ttlpred
