// `--device` on predict, eval and serve, through the built program: `--device cpu` is the
// default (the same bytes out), and every way `--device cuda` cannot run is one line on
// stderr naming why, exit 1, nothing on stdout: a build without the CUDA backend says how to
// get one; a CUDA build on a host without a GPU names the CUDA problem; a variant the CUDA
// backend does not run is refused naming it and the ones it runs. Which of the first two a
// run sees depends on the build (predict/device.hpp: build_has_cuda_backend, the same
// library the program links) and the host: each test asserts the case it is in.
#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace ttlpred
