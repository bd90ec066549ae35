// The real SWF traces in ../shared/data/traces (skipped where shared/ is absent), read whole,
// and a damaged copy of one of them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "data/trace_readers.hpp"
#include "data/trace_summary.hpp"
#include "trace_test_files.hpp"
#include "util/file_io.hpp"

namespace ttlpred {
namespace {

struct Expected {
  const char* file;
  std::size_t jobs;
  std::size_t comment_lines;
  bool has_requested_time;
};
void PrintTo(const Expected& e, std::ostream* os) { *os << e.file; }

class RealTrace : public ::testing::TestWithParam<Expected> {};

TEST_P(RealTrace, ReadsEveryJob) {
  const Expected e = GetParam();
  const std::string path = test::shared_trace(e.file);
  if (path.empty()) GTEST_SKIP() << "shared traces not present";
  ReadReport rep;
  const JobTable t = read_trace(path, rep);
  EXPECT_EQ(rep.format, "swf");
  EXPECT_EQ(t.rows(), e.jobs);
  EXPECT_EQ(rep.skipped_total(), 0u) << format_report(rep);
  EXPECT_EQ(rep.comment_lines, e.comment_lines);
  EXPECT_TRUE(rep.all_lines_accounted());
  EXPECT_EQ(t.has_values(Field::RequestedTtl), e.has_requested_time);
  EXPECT_TRUE(t.has_values(Field::User));
  for (double w : t.num(Field::WallTime)) ASSERT_FALSE(std::isnan(w));
}

INSTANTIATE_TEST_SUITE_P(Shared, RealTrace,
                         ::testing::Values(Expected{"KTH-SP2__log.swf", 28489, 19, true},
                                           Expected{"CEA-curie_sample__log.swf", 29998, 1, true},
                                           Expected{"NASA-iPSC-1993-3.1-cln.swf.gz", 18239, 32, false}),
                         [](const auto& info) { return std::string(info.param.file).substr(0, 3); });

TEST(RealTrace, KthFieldValuesAndSummary) {
  const std::string path = test::shared_trace("KTH-SP2__log.swf");
  if (path.empty()) GTEST_SKIP() << "shared traces not present";
  ReadReport rep;
  const JobTable t = read_trace(path, rep);
  // First job: "1 0 964980 97225 56 -1 -1 56 210000 -1 1 1 1 -1 -1 -1 -1 -1", UnixStartTime 843480031
  JobRecord r;
  t.record(0, r);
  EXPECT_EQ(r[Field::SubmitTime], 843480031);
  EXPECT_EQ(r[Field::WaitTime], 964980);
  EXPECT_EQ(r[Field::WallTime], 97225);
  EXPECT_EQ(r[Field::SlotCores], 56);
  EXPECT_EQ(r[Field::RequestedTtl], 210000);
  EXPECT_EQ(r.text(Field::User), "1");
  EXPECT_EQ(r.text(Field::Status), "DONE");

  const TraceSummary s = summarize(t);
  EXPECT_EQ(s.wall.n, 28489u);
  EXPECT_EQ(s.with_wall_and_ttl, 28489u);
  EXPECT_EQ(s.past_ttl, 475u);  // counted independently with awk '$4 > $9'
  EXPECT_EQ(s.wall.percentiles.back().second, 226709);  // longest job
  const auto& status = *std::find_if(s.columns.begin(), s.columns.end(), [](auto& c) { return c.field == Field::Status; });
  EXPECT_EQ(status.distinct, 2u);
  EXPECT_EQ(status.top[0], (std::pair<std::string, std::size_t>{"DONE", 20541}));
  EXPECT_EQ(status.top[1], (std::pair<std::string, std::size_t>{"FAILED", 7948}));
}

// A copy of KTH-SP2 with truncated lines, letters in numeric fields and a binary blob: the
// damaged rows are reported with their line numbers, all others are still read.
TEST(RealTrace, DamagedCopyReportsLineNumbers) {
  const std::string path = test::shared_trace("KTH-SP2__log.swf");
  if (path.empty()) GTEST_SKIP() << "shared traces not present";
  const auto bytes = read_file_bytes(path);
  std::string text(bytes.begin(), bytes.end());
  std::vector<std::string> lines;
  for (std::size_t p = 0; p < text.size();) {
    const std::size_t nl = text.find('\n', p);
    lines.push_back(text.substr(p, nl - p));
    p = nl == std::string::npos ? text.size() : nl + 1;
  }
  ASSERT_EQ(lines.size(), 28508u);
  lines[99] = lines[99].substr(0, 20);      // line 100: truncated
  lines[199].replace(18, 1, "X");           // line 200: "4860" -> "4X60",: a letter in the wait time
  lines[299].assign("\x7f" "ELF\x02\x01\x01\0\0\0binary", 16);  // line 300: a binary blob
  lines[299].append(300, '\xff');
  std::string damaged;
  for (const auto& l : lines) {
    damaged += l;
    damaged += '\n';
  }
  damaged.append("\x1f\x8b\x08\0garbage-without-newline", 27);
  ReadReport rep;
  const JobTable t = read_trace(test::write_text_file("damaged.swf", damaged), rep);
  EXPECT_EQ(t.rows(), 28489u - 3);
  EXPECT_EQ(rep.skipped_total(), 4u);
  EXPECT_TRUE(rep.all_lines_accounted());
  ASSERT_EQ(rep.examples.size(), 4u);
  EXPECT_TRUE(rep.examples[0].ends_with("damaged.swf:100: 3 fields, SWF has 18")) << rep.examples[0];
  EXPECT_NE(rep.examples[1].find("damaged.swf:200: field wait_time (SWF field 3): not a number"), std::string::npos) << rep.examples[1];
  EXPECT_NE(rep.examples[2].find("damaged.swf:300: control or binary byte 0x7F at column 1"), std::string::npos) << rep.examples[2];
  EXPECT_NE(rep.examples[3].find("damaged.swf:28509: control or binary byte 0x1F"), std::string::npos) << rep.examples[3];
}

}  // namespace
}  // namespace ttlpred
