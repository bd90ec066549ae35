// `ttlpred predict` end to end through the built program, its whole output checked against
// golden files (tests/golden.hpp says how to refresh them): csv and jsonl on a small
// committed trace (tests/golden/cli-trace.csv: a job without a request, one without a
// submit time, one bad row) and the test model (test_model_file.hpp), on the scalar kernels.
// Streams: results on stdout, notes and errors on stderr, nothing else on either.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "golden.hpp"
#include "model/model_file.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

const std::string& model() { return test::hour_scale_test_model("cli.model"); }

std::string trace() { return test::golden_path("cli-trace.csv"); }

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

TEST(PredictCli, CsvMatchesTheGoldenFile) {
  std::string out, err;
  const int rc = test::run_cli_split("predict --model '" + model() + "' --data '" + trace() + "' --isa scalar", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(test::golden_mismatch("predict.csv", out), "");
  // Row 16 is skipped (cpu_cores is not a number), said on stderr with file and line.
  EXPECT_NE(err.find("cli-trace.csv:17"), std::string::npos) << err;
  EXPECT_NE(err.find("cpu_cores"), std::string::npos) << err;
  const auto lines = lines_of(out);
  ASSERT_EQ(lines.size(), 16u);  // header + jobs 1..15
  EXPECT_EQ(lines[0], "job_id,expected_wall_s,safe_ttl_s,capped");
  // Job 15 (no submit time) sits at the 60 s floor: the network's own answer, finite and
  // below it (without the floor: 0.0 s, safe 1.8 s), not a NaN, which would answer the
  // job's request (7200 s) instead (bound_seconds).
  EXPECT_EQ(lines[15], "15,60.0,110.2,0");
  std::string raw;
  ASSERT_EQ(test::run_cli_split("predict --model '" + model() + "' --data '" + trace() + "' --isa scalar --min-seconds 0", &raw, nullptr), 0);
  EXPECT_EQ(lines_of(raw).at(15), "15,0.0,1.8,0");
}

TEST(PredictCli, JsonlMatchesTheGoldenFileAndTheCsvNumbers) {
  std::string csv, jsonl, err;
  const std::string base = "predict --model '" + model() + "' --data '" + trace() + "' --isa scalar";
  const int rc = test::run_cli_split(base + " --format jsonl", &jsonl, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(test::golden_mismatch("predict.jsonl", jsonl), "");
  ASSERT_EQ(test::run_cli_split(base, &csv, nullptr), 0);
  const auto j = lines_of(jsonl), c = lines_of(csv);
  ASSERT_EQ(j.size() + 1, c.size());
  for (std::size_t i = 0; i < j.size(); ++i) {
    const auto o = nlohmann::json::parse(j[i]);
    std::ostringstream same;
    same << o["job_id"].get<double>() << ',';
    char buf[128];
    std::snprintf(buf, sizeof buf, "%.1f,%.1f,%d", o["expected_wall_s"].get<double>(), o["safe_ttl_s"].get<double>(),
                  o["capped"].get<bool>() ? 1 : 0);
    EXPECT_EQ(same.str() + buf, c[i + 1]);
  }
}

TEST(PredictCli, OutFileLeavesStdoutEmptyAndSaysSoOnStderr) {
  const std::string path = test::temp_dir() + "/p.csv";
  std::string out, err;
  const int rc = test::run_cli_split("predict --model '" + model() + "' --data '" + trace() + "' --isa scalar --out '" + path + "'",
                                     &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("wrote 15 predictions to " + path), std::string::npos) << err;
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  EXPECT_EQ(test::golden_mismatch("predict.csv", buf.str()), "");
}

TEST(PredictCli, RefusalsExitOneOnStderrOnly) {
  std::string out, err;
  int rc = test::run_cli_split("predict --model '" + model() + "' --data '" + trace() + "' --format xml", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("--format must be csv or jsonl, not 'xml'"), std::string::npos) << err;
  rc = test::run_cli_split("predict --model /no/such.model --data '" + trace() + "'", &out, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("/no/such.model"), std::string::npos) << err;
  rc = test::run_cli_split("predict --model '" + model() + "' --data '" + trace() + "' --alpha 1.5", &out, &err);
  EXPECT_EQ(rc, 1);
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("alpha must be in (0, 1)"), std::string::npos) << err;
}

TEST(InspectCliGolden, TextSummaryOfTheCliTraceFromStandardInput) {
  std::string out, err;
  const int rc = test::run_cli_split("inspect - < '" + trace() + "'", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(test::golden_mismatch("inspect.txt", out), "");
  EXPECT_EQ(err, "");
}

}  // namespace
}  // namespace ttlpred
