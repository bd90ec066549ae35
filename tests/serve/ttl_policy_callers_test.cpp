// One job, one safe TTL, whoever asks (predict/ttl_policy.hpp): the service over HTTP,
// `eval`, `backtest` and `replay` (pipeline/online_scoring.hpp) and `simulate --calibration`
// (sim/online_ttl.hpp), fed the same predictions and the same outcomes in the same order,
// answer every job with the same TTL, to the bit, under each online method. (Static is the
// predictor's own answer everywhere: tests/predict/ttl_policy_test.cpp and
// ServeLearning.StaticAnswersAsThePredictorAndAnOlderModelsAnswerIsUnmatched.)
#include <gtest/gtest.h>

#include <cmath>
#include <algorithm>
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
    o.calibration.batch_guard = true;  // and the batch guard, counted alike by every caller
    o.clock = [] { return 1.8e9; };
    const std::string name = answering_calibration_name(m.method, m.log_level);
    SCOPED_TRACE(name);

    // Jobs come in bursts of four: all four answered (the batch guard divides the level of a
    // user's second, third ... job answered since that user's last outcome), then their
    // outcomes in the order they become known (a kill at its TTL), all before the next burst.
    // Every fifth job runs past its TTL (inside its request), the others half of it.
    test::TestServer server(o);
    httplib::Client c = server.client();
    const Predictor& predictor = server.service->model()->predictor;
    ASSERT_TRUE(predictor.model().safe_ttl.group_column.empty());
    constexpr int n = 40, burst = 4;
    std::vector<Prediction> preds(n);
    std::vector<double> served(n), wall(n), simulated_ttl(n);
    std::vector<std::string> user(n);
    JobTable table;
    int kills = 0;
    // The order a burst's outcomes become known: submit + (the TTL when killed, else the run).
    auto known = [&](int i) { return (i % burst) + std::min(wall[i], served[i]); };
    auto known_order = [&](int first) {
      std::vector<int> order(burst);
      std::iota(order.begin(), order.end(), first);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return known(a) < known(b); });
      return order;
    };
    for (int first = 0; first < n; first += burst) {
      for (int i = first; i < first + burst; ++i) {
        user[i] = i % 3 == 0 ? "alice" : "bob";
        const json answer = test::post_json(c, "/v1/predict", body(i + 1, user[i]), 200);
        preds[i].expected_wall_s = answer["expected_wall_s"].get<double>();
        served[i] = answer["safe_ttl_s"].get<double>();
        wall[i] = i % 5 == 2 ? served[i] * 1.5 : served[i] * 0.5;
        ASSERT_LT(wall[i], 72000) << "a kill must fall inside the request";
        kills += wall[i] > served[i] ? 1 : 0;
        JobRecord r;
        r[Field::SubmitTime] = 1e5 * first + (i - first);  // a burst's outcomes all come after its last submit
        r[Field::WaitTime] = 0;
        r[Field::WallTime] = wall[i];
        r[Field::RequestedTtl] = 72000;
        r.text(Field::User) = user[i];
        table.append(r);
      }
      for (const int i : known_order(first)) test::post_json(c, "/v1/outcomes", body(i + 1, user[i], wall[i]), 200);
    }
    EXPECT_EQ(server.service->calibration_method(), m.method);

    // eval, backtest and replay: the same predictions scored over the table.
    std::vector<std::size_t> rows(n);
    std::iota(rows.begin(), rows.end(), 0);
    const std::vector<std::uint32_t> groups(n, kNoGroup);
    const std::vector<std::uint32_t> keys = key_codes(table, rows, "user");
    TtlPolicy scoring(predictor, o.calibration);
    const std::vector<double> scored = score_online(table, rows, preds, groups, keys, scoring);

    // simulate: the broker asks at each submission, the job runs on the first host class, its
    // outcome comes as it ends; the same bursts.
    std::vector<OnlineJob> jobs(n);
    for (int i = 0; i < n; ++i)
      jobs[i] = TtlPolicy::job_of(preds[i], 72000, keys[i], kMissingNumber, TtlPolicy::text_key(user[i]));
    sim::OnlineTtl simulated(TtlPolicy(predictor, o.calibration), jobs, std::vector<int>(n, 1), 1, false);
    for (int first = 0; first < n; first += burst) {
      for (int i = first; i < first + burst; ++i) {
        simulated.decide(i, 1e5 * first + (i - first), std::span<double>(&simulated_ttl[i], 1));
        simulated.matched(i, 0);
      }
      for (const int i : known_order(first))
        simulated.ended(i, 1e5 * first + known(i), wall[i], 1, wall[i] > simulated_ttl[i]);
    }

    std::size_t guarded = 0;
    for (int i = 0; i < n; ++i) {
      EXPECT_EQ(scored[i], served[i]) << "job " << i;
      EXPECT_EQ(simulated_ttl[i], served[i]) << "job " << i;
      // The guard acted: a user's later job in a burst got a longer TTL than its first.
      if (i % burst != 0 && user[i] == "bob" && user[i - 1] == "bob" && served[i] > served[i - 1]) ++guarded;
    }
    EXPECT_GT(guarded, 0u);
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
