// `train --residual on` as scripts call it: the model names the history estimate each job
// type's output is relative to, is a format version 2 file, scores better than the static
// TTLs, answers every scored job in `predict` as `eval` does, and keeps its base through a
// fine-tune; a bad value names the option.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "model/model_file.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

nlohmann::json json_of(const std::string& out) { return nlohmann::json::parse(out.substr(out.find('{'))); }

TEST(ResidualCommand, AResidualModelIsScoredAndPredictedThroughItsBase) {
  const std::string dir = test::temp_dir();
  const std::string trace = "'" + dir + "/t.csv'", model = "'" + dir + "/m.ttlp'";
  if (!test::generate_trace(trace, 3000, 7)) GTEST_SKIP() << "build the ttlpred target to run this test";
  std::string out;
  ASSERT_EQ(test::run_cli("train --data " + trace + " --split 0.8 --epochs 3 --quiet --at match --residual on --out " + model,
                          &out),
            0)
      << out;
  const ModelFile m = load_model_file(dir + "/m.ttlp");
  ASSERT_FALSE(m.target.residual.empty());
  EXPECT_EQ(m.target.residual.group_cat, 1);  // the job type, the safe TTL's "auto" group column
  ASSERT_EQ(test::run_cli("model info " + model + " --json", &out), 0) << out;
  const auto bases = json_of(out).at("metrics").at("residual_base");
  ASSERT_TRUE(bases.is_object());
  EXPECT_FALSE(bases.empty());
  for (const auto& [job_type, columns] : bases.items()) {
    ASSERT_TRUE(columns.is_array() && !columns.empty()) << job_type;
    for (const auto& c : columns) EXPECT_EQ(c.get<std::string>().rfind("h_", 0), 0u) << job_type;
  }

  ASSERT_EQ(test::run_cli("eval --model " + model + " --data " + trace + " --split 0.8 --json --per-job '" + dir +
                              "/eval.csv'",
                          &out),
            0)
      << out;
  const auto e = json_of(out);
  EXPECT_GT(e.at("rows_scored").get<int>(), 500);
  EXPECT_LT(e.at("rmse_hours").get<double>(), e.at("baseline_rmse_hours").get<double>());
  ASSERT_EQ(test::run_cli("predict --model " + model + " --data " + trace + " --out '" + dir + "/p.csv'", &out), 0) << out;
  const auto scored = test::line_prefixes(dir + "/eval.csv", 4), predicted = test::line_prefixes(dir + "/p.csv", 4);
  ASSERT_GT(scored.size(), 500u);
  EXPECT_EQ(test::lines_found(scored, predicted), scored.size() - 1);

  // A fine-tune for the int8 variant keeps the base its starting model learned against.
  ASSERT_EQ(test::run_cli("train --data " + trace + " --split 0.8 --init " + model + " --qat int8 --epochs 1 --quiet --out '" +
                              dir + "/q.ttlp'",
                          &out),
            0)
      << out;
  EXPECT_EQ(load_model_file(dir + "/q.ttlp").target.residual, m.target.residual);

  EXPECT_NE(test::run_cli("train --data " + trace + " --residual yes --out '" + dir + "/x.ttlp'", &out), 0);
  EXPECT_NE(out.find("--residual"), std::string::npos) << out;
}

}  // namespace
}  // namespace ttlpred
