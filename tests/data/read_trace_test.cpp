#include <gtest/gtest.h>

#include <string>

#include "data/trace_readers.hpp"
#include "trace_test_files.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

constexpr std::string_view kSwfRow = "1 0 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n";
const std::string kGwfRow =
    "1\t100\t5\t10\t1\t3000\t-1\t1\t60\t-1\t1\tu\tg\te\tq\tp\ts\ts\tUNITARY\t-1\t-1\t-1\t-1\t-1\t-1\t-1\t-1\tvo\t-1\n";

std::string expect_input_error(const std::string& path, TraceFormat f = TraceFormat::Auto) {
  ReadReport rep;
  try {
    read_trace(path, rep, f);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InputError for " << path;
  return "";
}

TEST(ReadTrace, ChoosesTheFormatByExtension) {
  EXPECT_EQ(detect_format("a.csv"), TraceFormat::Csv);
  EXPECT_EQ(detect_format("a.SWF"), TraceFormat::Swf);
  EXPECT_EQ(detect_format("/x/y/a.gwf.gz"), TraceFormat::Gwf);
  EXPECT_EQ(detect_format("a.csv.gz"), TraceFormat::Csv);
}

TEST(ReadTrace, ChoosesTheFormatByContentWithoutExtension) {
  EXPECT_EQ(detect_format(test::write_text_file("swf_log", "; comment\n;\n" + std::string(kSwfRow))), TraceFormat::Swf);
  EXPECT_EQ(detect_format(test::write_text_file("gwf_log", "# GWF\n" + kGwfRow)), TraceFormat::Gwf);
  EXPECT_EQ(detect_format(test::write_text_file("csv_log", "job_id,wall_s\n1,2\n")), TraceFormat::Csv);
  EXPECT_EQ(detect_format(test::write_gzip_file("swf_log.gz", std::string(kSwfRow))), TraceFormat::Swf);
  const std::string msg = expect_input_error(test::write_text_file("mystery.txt", "hello world\n"));
  EXPECT_NE(msg.find("mystery.txt: cannot tell the trace format"), std::string::npos) << msg;
}

TEST(ReadTrace, ReadsGzipLikePlain) {
  std::string text = "; UnixStartTime: 100\n";
  for (int i = 0; i < 1000; ++i) text += std::to_string(i + 1) + " " + std::to_string(i) + " 0 10 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1\n";
  ReadReport plain_rep, gz_rep;
  const JobTable plain = read_trace(test::write_text_file("t.swf", text), plain_rep);
  const JobTable gz = read_trace(test::write_gzip_file("t.swf.gz", text), gz_rep);
  ASSERT_EQ(plain.rows(), 1000u);
  ASSERT_EQ(gz.rows(), 1000u);
  EXPECT_EQ(gz.num(Field::SubmitTime)[999], 100 + 999);
  EXPECT_EQ(gz_rep.lines, plain_rep.lines);
  EXPECT_EQ(gz_rep.format, "swf");
  EXPECT_TRUE(gz_rep.path.ends_with("t.swf.gz"));
}

TEST(ReadTrace, ExplicitFormatOverridesTheExtension) {
  ReadReport rep;
  const JobTable t = read_trace(test::write_text_file("jobs.txt", kGwfRow), rep, TraceFormat::Gwf);
  EXPECT_EQ(t.rows(), 1u);
  EXPECT_EQ(t.text(Field::Site, 0), "s");
}

TEST(ReadTrace, MissingFileIsAnInputErrorNamingIt) {
  const std::string msg = expect_input_error("/no/such/trace.swf");
  EXPECT_NE(msg.find("/no/such/trace.swf: cannot open"), std::string::npos) << msg;
  const std::string msg2 = expect_input_error("/no/such/trace");
  EXPECT_NE(msg2.find("/no/such/trace: cannot open"), std::string::npos) << msg2;
}

TEST(ReadTrace, DirectoryIsAnInputError) {
  const std::string dir = test::temp_dir();
  const std::string msg = expect_input_error(dir, TraceFormat::Swf);
  EXPECT_NE(msg.find(dir + ": cannot open: is a directory"), std::string::npos) << msg;
}

TEST(ReadTrace, FormatNamesRoundTrip) {
  for (auto f : {TraceFormat::Auto, TraceFormat::Csv, TraceFormat::Swf, TraceFormat::Gwf})
    EXPECT_EQ(format_by_name(format_name(f)), f);
  EXPECT_FALSE(format_by_name("xml").has_value());
}

}  // namespace
}  // namespace ttlpred
