// One job, one safe TTL, whoever asks (predict/ttl_policy.hpp): the service over HTTP,
// `eval`, `backtest` and `replay` (pipeline/online_scoring.hpp) and `simulate --calibration`
// (sim/online_ttl.hpp), fed the same predictions and the same outcomes in the same order,
// answer every job with the same TTL, to the bit, under each online method. (Static is the
// predictor's own answer everywhere: tests/predict/ttl_policy_test.cpp and
// ServeLearning.StaticAnswersAsThePredictorAndAnOlderModelsAnswerIsUnmatched.)
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "pipeline/online_scoring.hpp"
#include "predict/ttl_policy.hpp"
#include "serve_test_util.hpp"
#include "sim/online_ttl.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;

std::string body(int id, const std::string& user, double wall_s = -1) {
  std::string b = "{\"job_id\":" + std::to_string(id) + ",\"user\":\"" + user +
                  "\",\"job_type\":\"MC\",\"requested_ttl_s\":72000";
  if (wall_s >= 0) b += ",\"wall_s\":" + json(wall_s).dump();
  return b + "}";
}

struct Method {
  OnlineMethod method;
  bool log_level;
};

TEST(TtlPolicyCallers, ServeEvalAndSimulateGiveEveryJobTheSameTtl) {
  for (const Method m : {Method{OnlineMethod::Aci, false}, Method{OnlineMethod::AciCapped, false},
                         Method{OnlineMethod::Aci, true}, Method{OnlineMethod::Mondrian, false},
                         Method{OnlineMethod::MultiAci, false}}) {
    serve::ServiceOptions o = test::options_for(test::hour_scale_test_model("policy_callers.model"));
    o.calibration.method = m.method;
    o.calibration.log_level = m.log_level;
    o.calibration.gamma = 0.05;  // large, so that every outcome moves the level
    o.calibration_key = "user";
    o.clock = [] { return 1.8e9; };
    const std::string name = answering_calibration_name(m.method, m.log_level);
    SCOPED_TRACE(name);

    // The service: each job answered, then its outcome posted before the next job comes;
    // every fifth job runs past its TTL (inside its request), the others half of it.
    test::TestServer server(o);
    httplib::Client c = server.client();
    const Predictor& predictor = server.service->model()->predictor;
    ASSERT_TRUE(predictor.model().safe_ttl.group_column.empty());
    constexpr int n = 40;
    std::vector<Prediction> preds(n);
    std::vector<double> served(n), wall(n);
    JobTable table;
    for (int i = 0; i < n; ++i) {
      const std::string user = i % 3 == 0 ? "alice" : "bob";
      const json answer = test::post_json(c, "/v1/predict", body(i + 1, user), 200);
      preds[i].expected_wall_s = answer["expected_wall_s"].get<double>();
      served[i] = answer["safe_ttl_s"].get<double>();
      wall[i] = i % 5 == 2 ? served[i] * 1.5 : served[i] * 0.5;
      ASSERT_LT(wall[i], 72000) << "a kill must fall inside the request";
      test::post_json(c, "/v1/outcomes", body(i + 1, user, wall[i]), 200);
      JobRecord r;
      r[Field::SubmitTime] = 1e5 * i;  // each outcome, even a kill at its TTL, known before the next submit
      r[Field::WaitTime] = 0;
      r[Field::WallTime] = wall[i];
      r[Field::RequestedTtl] = 72000;
      r.text(Field::User) = user;
      table.append(r);
    }
    EXPECT_EQ(server.service->calibration_method(), m.method);

    // eval, backtest and replay: the same predictions scored over the table.
    std::vector<std::size_t> rows(n);
    std::iota(rows.begin(), rows.end(), 0);
    const std::vector<std::uint32_t> groups(n, kNoGroup);
    const std::vector<std::uint32_t> keys = key_codes(table, rows, "user");
    TtlPolicy scoring(predictor, o.calibration);
    const std::vector<double> scored = score_online(table, rows, preds, groups, keys, scoring);

    // simulate: the broker asks at each submission, the job runs on the first host class,
    // its outcome comes as it ends.
    std::vector<OnlineJob> jobs(n);
    for (int i = 0; i < n; ++i) jobs[i] = TtlPolicy::job_of(preds[i], 72000, keys[i]);
    sim::OnlineTtl simulated(TtlPolicy(predictor, o.calibration), jobs, std::vector<int>(n, 1), 1, false);

    int kills = 0;
    for (int i = 0; i < n; ++i) {
      double ttl = 0;
      simulated.decide(i, 1e5 * i, std::span<double>(&ttl, 1));
      EXPECT_EQ(scored[i], served[i]) << "job " << i;
      EXPECT_EQ(ttl, served[i]) << "job " << i;
      simulated.matched(i, 0);
      simulated.ended(i, 1e5 * i + wall[i], wall[i], 1, wall[i] > ttl);
      kills += wall[i] > served[i] ? 1 : 0;
    }
    EXPECT_EQ(kills, 8);
    EXPECT_EQ(scoring.kills(), 8u);
    // The level a job of a key none of them has seen would be answered at (mondrian: the
    // global level; the service's key is a hash of the user, the table's a category code).
    const std::uint32_t unseen = 1000;
    EXPECT_EQ(simulated.policy().level(unseen), scoring.level(unseen));
    EXPECT_EQ(server.service->calibration_level(), scoring.level(unseen));
  }
}

}  // namespace
}  // namespace ttlpred
