// `--device` on predict, eval and serve, through the built program: `--device cpu` is the
// default (the same bytes out), and every way `--device cuda` cannot run is one line on
// stderr naming why, exit 1, nothing on stdout: a build without the CUDA backend says how to
// get one; a CUDA build on a host without a GPU names the CUDA problem; a variant the CUDA
// backend does not run is refused naming it and the ones it runs. Which of the first two a
// run sees depends on the build (predict/device.hpp: build_has_cuda_backend, the same
// library the program links) and the host: each test asserts the case it is in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "golden.hpp"
#include "predict/device.hpp"
#include "test_model_file.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

const std::string& model() { return test::hour_scale_test_model("device-cli.model"); }
std::string trace() { return test::golden_path("cli-trace.csv"); }
std::string predict_args() { return "predict --model '" + model() + "' --data '" + trace() + "'"; }

// One line on stderr, nothing on stdout, exit 1.
void expect_refusal(int rc, const std::string& out, const std::string& err) {
  EXPECT_EQ(rc, 1) << err;
  EXPECT_EQ(out, "");
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.find('\n'), err.size() - 1) << err;
  EXPECT_EQ(err.rfind("ttlpred: error: ", 0), 0u) << err;
}

TEST(DeviceCli, CpuIsTheDefaultByteForByteForPredictAndEval) {
  std::string plain, cpu, err;
  int rc = test::run_cli_split(predict_args(), &plain, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << err;
  ASSERT_EQ(test::run_cli_split(predict_args() + " --device cpu", &cpu, &err), 0) << err;
  EXPECT_EQ(cpu, plain);
  EXPECT_GT(plain.size(), 100u);
  for (const char* format : {" --format jsonl", " --format jsonl --isa scalar"}) {
    ASSERT_EQ(test::run_cli_split(predict_args() + format, &plain, &err), 0) << err;
    ASSERT_EQ(test::run_cli_split(predict_args() + format + " --device cpu", &cpu, &err), 0) << err;
    EXPECT_EQ(cpu, plain) << format;
  }
  const std::string eval = "eval --model '" + model() + "' --data '" + trace() + "' --split 0.5 --allow-overlap --json";
  ASSERT_EQ(test::run_cli_split(eval, &plain, &err), 0) << err;
  ASSERT_EQ(test::run_cli_split(eval + " --device cpu", &cpu, &err), 0) << err;
  EXPECT_EQ(cpu, plain);
  EXPECT_NE(plain.find("\"isa\""), std::string::npos) << plain;
}

TEST(DeviceCli, AnUnknownDeviceIsRefusedNamingTheChoices) {
  for (const char* device : {"gpu", "cuda1", "cuda:", "cuda:x", "CPU"}) {
    std::string out, err;
    const int rc = test::run_cli_split(predict_args() + " --device " + device, &out, &err);
    if (rc == 127) GTEST_SKIP() << "ttlpred not built";
    expect_refusal(rc, out, err);
    EXPECT_NE(err.find("--device must be cpu, cuda or cuda:N"), std::string::npos) << err;
    EXPECT_NE(err.find(std::string("'") + device + "'"), std::string::npos) << err;
  }
}

// predict, eval and serve: each refuses cuda before reading its trace or opening a port.
TEST(DeviceCli, CudaIsRefusedWithTheReasonOnEveryCommand) {
  const std::string commands[] = {
      predict_args() + " --device cuda --variant fp32",
      "eval --model '" + model() + "' --data '" + trace() + "' --split 0.5 --device cuda --variant fp32",
      "serve --model '" + model() + "' --listen 127.0.0.1:0 --device cuda --variant fp32",
  };
  for (const std::string& cmd : commands) {
    std::string out, err;
    const int rc = test::run_cli_split(cmd, &out, &err);
    if (rc == 127) GTEST_SKIP() << "ttlpred not built";
    if (build_has_cuda_backend() && rc == 0) GTEST_SKIP() << "a CUDA GPU is here: nothing is refused";
    expect_refusal(rc, out, err);
    if (build_has_cuda_backend()) {
      // This host has no usable GPU: CUDA's own reason, not a crash.
      EXPECT_NE(err.find("CUDA: "), std::string::npos) << err;
      EXPECT_TRUE(err.find("no usable GPU: cudaGetDeviceCount: cuda") != std::string::npos ||
                  err.find("is not there (") != std::string::npos)
          << err;
    } else {
      EXPECT_NE(err.find("--device cuda: this build has no CUDA backend"), std::string::npos) << err;
      EXPECT_NE(err.find("-DTTLPRED_CUDA=ON"), std::string::npos) << err;
      EXPECT_NE(err.find("docs/gpu-backend.md"), std::string::npos) << err;
    }
  }
}

TEST(DeviceCli, CudaRefusesAVariantItDoesNotRunNamingTheOnesItRuns) {
  std::string out, err;
  const int rc = test::run_cli_split(predict_args() + " --device cuda --variant bf16", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  expect_refusal(rc, out, err);
  if (!build_has_cuda_backend()) {
    // The build is refused first: a variant list of a backend that is not there would mislead.
    EXPECT_NE(err.find("this build has no CUDA backend"), std::string::npos) << err;
    return;
  }
  // Before any GPU is looked for: the same answer on a host with or without one.
  EXPECT_NE(err.find("the cuda backend does not run variant 'bf16' (it runs: fp32, fp16, int8-static)"),
            std::string::npos)
      << err;
}

TEST(DeviceCli, IsaPinsTheCpuAndIsRefusedWithCuda) {
  std::string out, err;
  const int rc = test::run_cli_split(predict_args() + " --device cuda --isa avx2", &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  expect_refusal(rc, out, err);
  if (build_has_cuda_backend()) {
    EXPECT_NE(err.find("--isa avx2 pins the CPU's instruction set; it does not apply to --device cuda"),
              std::string::npos)
        << err;
  }
}

// The times of a `predict` CSV (job_id,expected_wall_s,safe_ttl_s,capped), job by job; the
// job ids and capped flags in `keys`.
std::vector<double> times_of(const std::string& csv, std::vector<std::string>* keys) {
  std::istringstream in(csv);
  std::string line, field;
  std::vector<double> out;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream row(line);
    for (int f = 0; std::getline(row, field, ','); ++f)
      if (f == 1 || f == 2)
        out.push_back(std::stod(field));
      else
        keys->push_back(field);
  }
  return out;
}

// Where a GPU is (a CUDA build on a host with one): `--device cuda` answers what the CPU
// answers, job by job, for every variant the CUDA backend runs. Each backend's variant is
// within the variant's tolerance of the exact network (tests/engine/variants_test.cpp,
// tests/engine_cuda/), so the two differ by less than twice what the variant costs: the
// bound is twice the CPU variant's largest relative distance from the CPU's fp32 answer on
// these jobs (fp16: 8.8e-4, int8-static: 6.8e-2 on this model), plus fp32's own 1e-4 and
// the CSV's 0.1 s rounding. int8-static runs on the model quantized on the same trace.
TEST(DeviceCli, CudaAnswersWhatTheCpuAnswersForEveryVariantItRuns) {
  if (!build_has_cuda_backend()) GTEST_SKIP() << "this build has no CUDA backend (no nvcc; docs/gpu-backend.md)";
  const std::string quantized = test::temp_dir() + "/device-cli-int8.model";
  std::string out, err;
  ASSERT_EQ(test::run_cli_split("quantize --model '" + model() + "' --calib '" + trace() + "' --out '" + quantized + "'", &out, &err), 0)
      << err;
  const std::string args = "predict --model '" + quantized + "' --data '" + trace() + "' --variant ";
  std::vector<std::string> reference_keys;
  ASSERT_EQ(test::run_cli_split(args + "fp32 --device cpu", &out, &err), 0) << err;
  const std::vector<double> fp32 = times_of(out, &reference_keys);
  ASSERT_EQ(fp32.size(), 2u * 15u);
  for (const char* variant : {"fp32", "fp16", "int8-static"}) {
    SCOPED_TRACE(variant);
    std::string cpu_csv, gpu_csv;
    const int rc = test::run_cli_split(args + variant + " --device cuda", &gpu_csv, &err);
    if (rc != 0) GTEST_SKIP() << "no usable GPU here: " << err;
    ASSERT_EQ(test::run_cli_split(args + variant + " --device cpu", &cpu_csv, &err), 0) << err;
    std::vector<std::string> cpu_keys, gpu_keys;
    const std::vector<double> cpu = times_of(cpu_csv, &cpu_keys), gpu = times_of(gpu_csv, &gpu_keys);
    ASSERT_EQ(gpu.size(), cpu.size());
    EXPECT_EQ(gpu_keys, cpu_keys);
    double cost = 0;  // the variant's largest relative distance from fp32 on the CPU
    for (std::size_t i = 0; i < cpu.size(); ++i) cost = std::max(cost, std::abs(cpu[i] - fp32[i]) / std::max(fp32[i], 1.0));
    for (std::size_t i = 0; i < cpu.size(); ++i)
      EXPECT_NEAR(gpu[i], cpu[i], (2 * cost + 1e-4) * std::max(cpu[i], gpu[i]) + 0.1)
          << "job " << cpu_keys[2 * (i / 2)] << (i % 2 ? " safe_ttl_s" : " expected_wall_s");
  }
}

}  // namespace
}  // namespace ttlpred
