// Input an adversarial test of the service found mishandled by the trace readers: numbers
// beyond what the model stores, an oversized header line, an absurd SWF start time.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "data/trace_readers.hpp"
#include "trace_test_files.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

TEST(InputBounds, NumbersBeyondFloatRangeSkipTheRowNamingFileAndLine) {
  const std::string text = "user,wall_s\na,100\nb,1e300\nc,3.5e38\nd,200\n";
  ReadReport rep;
  const JobTable t = test::read_memory(read_csv, text, rep, "big.csv");
  EXPECT_EQ(t.rows(), 2u);  // training goes on with the others (it used to stop at "row 1")
  ASSERT_EQ(rep.examples.size(), 2u) << format_report(rep);
  EXPECT_EQ(rep.examples[0],
            "big.csv:3: field wall_s: out of range: \"1e300\" (above 3.4e38, the largest number the model stores)");
  EXPECT_EQ(rep.skipped[static_cast<std::size_t>(SkipReason::NotFinite)], 2u);
  // The archive readers too.
  std::string swf = "1 0 10 1e300 1 -1 -1 1 100 -1 1 1 1 1 1 1 -1 -1\n2 0 10 50 1 -1 -1 1 100 -1 1 1 1 1 1 1 -1 -1\n";
  const JobTable s = test::read_memory(read_swf, swf, rep, "big.swf");
  EXPECT_EQ(s.rows(), 1u) << format_report(rep);
  ASSERT_FALSE(rep.examples.empty());
  EXPECT_NE(rep.examples[0].find("big.swf:1: field run_time (SWF field 4): out of range"), std::string::npos) << rep.examples[0];
}

TEST(InputBounds, AHeaderLineOverTheLineLimitIsNamedAsSuch) {
  const std::string text = "user," + std::string(LineSource::kMaxLine + 10, 'x') + "\na,100\n";
  ReadReport rep;
  try {
    test::read_memory(read_csv, text, rep, "wide.csv");
    FAIL() << "an unreadable header was accepted";
  } catch (const InputError& e) {
    // It used to skip the header and report the first record as one that "names no schema field".
    EXPECT_NE(std::string(e.what()).find("wide.csv:1: CSV header line longer than 1048576 bytes"), std::string::npos)
        << e.what();
  }
}

TEST(InputBounds, AnAbsurdSwfStartTimeIsIgnoredWithAWarning) {
  const std::string text = "; UnixStartTime: 1e308\n1 5 10 50 1 -1 -1 1 100 -1 1 1 1 1 1 1 -1 -1\n";
  ReadReport rep;
  const JobTable t = test::read_memory(read_swf, text, rep, "start.swf");
  ASSERT_EQ(t.rows(), 1u);
  EXPECT_EQ(t.num(Field::SubmitTime)[0], 5.0);  // was inf
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_NE(rep.warnings[0].find("start.swf:1: UnixStartTime"), std::string::npos) << rep.warnings[0];
  EXPECT_NE(rep.warnings[0].find("ignored"), std::string::npos) << rep.warnings[0];
}

}  // namespace
}  // namespace ttlpred
