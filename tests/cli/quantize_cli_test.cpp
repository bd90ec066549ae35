// `ttlpred quantize` end to end: with the default --split 0.8 it calibrates on the training
// part of the trace only (the first 80 % of the jobs in submit order), which the test tells
// apart by giving the later jobs feature values far outside the earlier ones' ranges.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "model/model_file.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

// 200 jobs in submit order; `first` of them (all when 0) written. Jobs 161..200 ask for 1024
// cores and waited 10^6 s: ranges measured on them are far wider than on jobs 1..160.
std::string write_trace(const std::string& name, std::size_t first) {
  const std::string path = test::temp_dir() + "/" + name;
  std::ofstream f(path);
  f << "job_id,submit_time,user,job_type,cpu_cores,requested_ttl_s,wait_s,wall_s\n";
  const char* users[] = {"alice", "bob", "carol", "dave", "erin"};
  const char* types[] = {"MC", "USER", "MERGE"};
  for (std::size_t i = 0; i < (first ? first : 200); ++i) {
    const bool late = i >= 160;
    f << i + 1 << ',' << 1800000000 + 600 * i << ',' << users[i % 5] << ',' << types[i % 3] << ','
      << (late ? 1024 : 1 + i % 8) << ',' << 3600 + 100 * (i % 50) << ',' << (late ? 1000000 : 10 + i % 90) << ','
      << 100 + 37 * (i % 97) << '\n';
  }
  return path;
}

TEST(QuantizeCli, CalibratesOnTheTrainingPartOnly) {
  const std::string dir = test::temp_dir();
  const std::string model = dir + "/m.model";
  test::write_test_model(model, 4);
  const std::string full = write_trace("full.csv", 0), head = write_trace("head.csv", 160);
  std::string out, err;
  int rc = test::run_cli_split("quantize --model '" + model + "' --calib '" + full + "' --out '" + dir + "/split.model'", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  EXPECT_EQ(out, "calibrated 2 layers on up to 65536 rows of " + full + " (minmax); wrote " + dir + "/split.model\n");
  EXPECT_EQ(err, "");
  ASSERT_EQ(test::run_cli_split("quantize --model '" + model + "' --calib '" + head + "' --split 1 --out '" + dir + "/head.model'", &out, &err), 0) << err;
  ASSERT_EQ(test::run_cli_split("quantize --model '" + model + "' --calib '" + full + "' --split 1 --out '" + dir + "/all.model'", &out, &err), 0) << err;

  const ModelFile split = load_model_file(dir + "/split.model"), on_head = load_model_file(dir + "/head.model"),
                  on_all = load_model_file(dir + "/all.model"), plain = load_model_file(model);
  ASSERT_FALSE(split.int8_calibration.empty());
  EXPECT_TRUE(plain.int8_calibration.empty());
  // --split 0.8 of 200 jobs = exactly the 160-job file; the later jobs would widen the ranges.
  EXPECT_EQ(split.int8_calibration, on_head.int8_calibration);
  EXPECT_NE(split.int8_calibration, on_all.int8_calibration);
  // Only the calibration section changes: the network and encoder are the model's own.
  EXPECT_EQ(split.encoder, plain.encoder);
  EXPECT_EQ(split.mlp.layers[0].weight, plain.mlp.layers[0].weight);
}

TEST(QuantizeCli, RefusesASplitOutsideItsRange) {
  const std::string dir = test::temp_dir();
  std::string out, err;
  const int rc = test::run_cli_split("quantize --model x --calib y --out z --split 0", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  EXPECT_NE(rc, 0);
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("--split"), std::string::npos) << err;
}

}  // namespace
}  // namespace ttlpred
