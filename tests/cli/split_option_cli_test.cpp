// --split is checked while the command line is parsed: a value outside (0, 1] is refused,
// naming the option, before the trace is read (a large trace would otherwise be read whole
// first) or the model loaded.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "test_support.hpp"

namespace ttlpred {
namespace {

struct SplitCase {
  const char* command;  // the command line before --split, with DATA and MODEL placeholders
  const char* split;
};

class SplitOption : public ::testing::TestWithParam<SplitCase> {};

std::string filled(std::string text, const std::string& data, const std::string& model) {
  for (auto [key, value] : {std::pair<std::string, std::string>{"DATA", data}, {"MODEL", model}})
    for (std::size_t at; (at = text.find(key)) != std::string::npos;) text.replace(at, key.size(), value);
  return text;
}

TEST_P(SplitOption, IsRefusedBeforeTheTraceIsRead) {
  const std::string dir = test::temp_dir();
  const std::string data = dir + "/trace.csv", model = dir + "/junk.model";
  std::ofstream(data) << "submit_time,wall_s,requested_ttl_s,user\n0,10,100,a\n1,20,100,b\n";
  std::ofstream(model) << "not a model";
  std::string out, err;
  const int rc = test::run_cli_split(filled(GetParam().command, data, model) + " --split " + GetParam().split, &out, &err);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  EXPECT_NE(rc, 0);
  EXPECT_NE(err.find(std::string("--split: must be in (0, 1] (the fraction of the jobs, in submit order, trained on), got ") +
                     GetParam().split),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("read "), std::string::npos) << "the trace was read first:\n" << err;
  EXPECT_EQ(err.find("not a model"), std::string::npos) << err;
}

INSTANTIATE_TEST_SUITE_P(EveryCommandThatSplits, SplitOption,
                         ::testing::Values(SplitCase{"train --data DATA --out MODEL.out", "1.5"},
                                           SplitCase{"train --data DATA --out MODEL.out", "0"},
                                           SplitCase{"train --data DATA --out MODEL.out", "-0.2"},
                                           SplitCase{"eval --model MODEL --data DATA", "1.01"},
                                           SplitCase{"report --model MODEL --data DATA --out MODEL.report", "0"},
                                           SplitCase{"pipeline --out MODEL.dir", "2"}),
                         [](const ::testing::TestParamInfo<SplitCase>& info) {
                           std::string name = std::string(info.param.command).substr(0, std::string(info.param.command).find(' '));
                           return name + "_" + std::to_string(info.index);
                         });

}  // namespace
}  // namespace ttlpred
