#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>

#include "test_support.hpp"

namespace ttlpred {
namespace {

// The CLI is a separate target; when only test_synth was built, there is nothing to run.
#define RUN_CLI_OR_SKIP(args, out)                                          \
  const int rc = test::run_cli(args, &out);                                 \
  if (rc == 127) GTEST_SKIP() << "build the ttlpred target to run this test"

// Each of `parts` is somewhere in the command's output.
void expect_lines_with(const std::string& out, std::initializer_list<const char*> parts) {
  for (const char* part : parts) EXPECT_NE(out.find(part), std::string::npos) << "'" << part << "' not in:\n" << out;
}

TEST(GenerateCommand, WritesTheTraceAndPrintsItsSummary) {
  const std::string dir = test::temp_dir();
  std::string out;
  RUN_CLI_OR_SKIP("generate --jobs 2000 --seed 3 --out '" + dir + "/t.csv'", out);
  ASSERT_EQ(rc, 0) << out;
  expect_lines_with(out, {"rows: 2000", "job types: MC ", "static-TTL RMSE: ", "oracle RMSE (expected_wall_s): ",
                          "wall time [h]: p10 "});
  std::ifstream in(dir + "/t.csv");
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 2001u);  // header + rows

  // Same seed, same bytes.
  std::string out2;
  ASSERT_EQ(test::run_cli("generate --jobs 2000 --seed 3 --out '" + dir + "/u.csv'", &out2), 0) << out2;
  std::ifstream a(dir + "/t.csv"), b(dir + "/u.csv");
  const std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(sa, sb);
}

TEST(GenerateCommand, FloorPrintsItsTableAndWritesOneLinePerScoredJob) {
  const std::string dir = test::temp_dir();
  std::string out;
  RUN_CLI_OR_SKIP("generate --jobs 5000 --floor 0.8 --floor-per-job '" + dir + "/f.csv'", out);
  ASSERT_EQ(rc, 0) << out;
  expect_lines_with(out, {"match-time floor over the rows after split 0.8", "\nall ", "HYPERLOOP, none finished"});
  EXPECT_EQ(out.find("warning"), std::string::npos) << out;
  std::ifstream in(dir + "/f.csv");
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "job_id,floor_s,finished_siblings,running_siblings_used");
  std::size_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 1000u);
  EXPECT_NE(test::run_cli("generate --jobs 100 --floor-per-job '" + dir + "/g.csv'", &out), 0);
  EXPECT_NE(out.find("--floor"), std::string::npos) << out;
}

TEST(GenerateCommand, RefusesBadOptionsWithAClearMessage) {
  const std::string dir = test::temp_dir();
  std::string out;
  RUN_CLI_OR_SKIP("generate --jobs 10 --out '" + dir + "/t.txt'", out);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("--out must end in .csv or .csv.gz"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir + "/t.txt"));
  EXPECT_NE(test::run_cli("generate --jobs 0", &out), 0);
  EXPECT_NE(out.find("--jobs"), std::string::npos) << out;
  EXPECT_NE(test::run_cli("generate --jobs 10 --out '" + dir + "/no/such/dir/t.csv'", &out), 0);
  EXPECT_NE(out.find("no/such/dir"), std::string::npos) << out;
}

}  // namespace
}  // namespace ttlpred
