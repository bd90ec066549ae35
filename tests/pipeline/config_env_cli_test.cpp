// `--config FILE` and TTLPRED_<COMMAND>_<OPTION> variables of `ttlpred train` (serve shares
// the code): the file sets options, a variable wins over the file, the command line over
// both, and a key that is no option is an error naming the file and key.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test_support.hpp"

namespace ttlpred {
namespace {

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

int first_width(const std::string& model) {
  std::string out;
  if (test::run_cli("model info --json '" + model + "'", &out) != 0) return -1;
  return nlohmann::json::parse(out)["architecture"]["layers"][0]["out"].get<int>();
}

TEST(ConfigCli, TrainReadsAConfigFileAndEnvironmentVariables) {
  const std::string dir = test::temp_dir();
  std::string out;
  int rc = test::run_cli("generate --jobs 600 --seed 3 --out '" + dir + "/trace.csv'", &out);
  if (rc == 127) GTEST_SKIP() << "ttlpred not built";
  ASSERT_EQ(rc, 0) << out;
  const std::string toml = write(dir + "/train.toml", "# options of ttlpred train\ndata = \"" + dir +
                                                          "/trace.csv\"\nepochs = 1\nhidden = \"8\"\nquiet = true\n");
  rc = test::run_cli("train --config '" + toml + "' --out '" + dir + "/a.model'", &out);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_EQ(first_width(dir + "/a.model"), 8);

  ::setenv("TTLPRED_TRAIN_HIDDEN", "12", 1);
  rc = test::run_cli("train --config '" + toml + "' --out '" + dir + "/b.model'", &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(first_width(dir + "/b.model"), 12);  // the variable wins over the file
  rc = test::run_cli("train --config '" + toml + "' --hidden 6 --out '" + dir + "/c.model'", &out);
  ::unsetenv("TTLPRED_TRAIN_HIDDEN");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(first_width(dir + "/c.model"), 6);  // the command line wins over both

  const std::string ini = write(dir + "/train.ini", "[train]\ndata=" + dir + "/trace.csv\nepochs=1\nhidden=10\n");
  rc = test::run_cli("train --config '" + ini + "' --quiet --out '" + dir + "/d.model'", &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_EQ(first_width(dir + "/d.model"), 10);

  const std::string bad = write(dir + "/bad.toml", "modle = \"x\"\n");
  rc = test::run_cli("train --config '" + bad + "' --data x --out y", &out);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(out.find("bad.toml: 'modle' is not an option of ttlpred train"), std::string::npos) << out;
}

}  // namespace
}  // namespace ttlpred
