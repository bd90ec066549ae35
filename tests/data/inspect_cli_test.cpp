// `ttlpred inspect` end to end, through the built program (skipped where it is not built).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "trace_test_files.hpp"

namespace ttlpred {
namespace {

int inspect(const std::string& args, std::string* out) {
  const int rc = test::run_cli("inspect " + args, out);
  return rc;
}

TEST(InspectCli, TextSummaryOfASmallSwf) {
  const std::string path = test::write_text_file(
      "small.swf", "; UnixStartTime: 0\n1 0 0 100 1 -1 -1 1 60 -1 1 u1 1 -1 -1 -1 -1 -1\n2 0 0 30 1 -1 -1 1 60 -1 0 7 1 -1 -1 -1 -1 -1\nbad line\n");
  std::string out;
  const int rc = inspect("'" + path + "'", &out);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("1 rows kept, 2 skipped"), std::string::npos) << out;
  EXPECT_NE(out.find("field user_id (SWF field 12): not a number: \"u1\""), std::string::npos) << out;
  EXPECT_NE(out.find("small.swf:4: 2 fields, SWF has 18"), std::string::npos) << out;
  EXPECT_NE(out.find("ran past the requested time: 0 of 1 jobs"), std::string::npos) << out;
}

TEST(InspectCli, JsonIsOneObject) {
  const std::string path = test::write_text_file("small.csv", "job_id,wall_s,requested_ttl_s,site\n1,100,60,A\n2,30,60,B\n3,5,,A\n");
  std::string out;
  const int rc = inspect("--json '" + path + "'", &out);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << out;
  const auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["rows"], 3);
  EXPECT_EQ(j["format"], "csv");
  EXPECT_EQ(j["columns"]["site"]["distinct"], 2);
  EXPECT_EQ(j["past_requested_time"]["past"], 1);
  EXPECT_EQ(j["past_requested_time"]["jobs_with_both"], 2);
}

TEST(InspectCli, ErrorsGoToStderrWithExitCodeOne) {
  std::string out, err;
  int rc = test::run_cli_split("inspect /no/such/file.swf", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "");  // nothing on stdout, where a pipeline would read a summary
  EXPECT_NE(err.find("/no/such/file.swf: cannot open"), std::string::npos) << err;
  rc = test::run_cli_split("inspect --format xml /no/such/file.swf", &out, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("--format must be auto, csv, swf, gwf or sacct"), std::string::npos) << err;
  // And a good run says nothing on stderr: its summary is all on stdout.
  const std::string path = test::write_text_file("ok.csv", "job_id,wall_s\n1,100\n2,30\n");
  rc = test::run_cli_split("inspect '" + path + "'", &out, &err);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(err, "");
  EXPECT_NE(out.find("2 rows kept"), std::string::npos) << out;
}

}  // namespace
}  // namespace ttlpred
