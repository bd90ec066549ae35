// The service and `ttlpred predict` give one answer, and every answer is bounded and says
// when it was capped (docs/service.md, "Bounds" and "Jobs without a submit time"); the
// admin token can stay off the command line.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "pipeline/predict_history.hpp"
#include "serve/admin_token.hpp"
#include "serve/service.hpp"
#include "serve_test_util.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;

// The test model, with a history state holding finished jobs (the state a trained model
// carries): what a job without a submit time must be predicted from, by both paths.
std::string model_with_history(const std::string& dir) {
  const std::string path = dir + "/hist.ttlp";
  test::write_test_model(path, 11);
  ModelFile m = load_model_file(path);
  const FeatureEncoder enc = FeatureEncoder::from_bytes(m.encoder, path);
  HistoryState state(enc.history_config());
  JobRecord r;
  for (int i = 0; i < 40; ++i) {
    r.clear();
    r.text(Field::User) = "alice";
    r.text(Field::JobType) = "MC";
    r[Field::RequestedTtl] = 72000;
    r[Field::WallTime] = 20000 + 500 * i;
    state.observe(r);
  }
  m.history = state.to_bytes();
  save_model_file(path, m);
  return path;
}

json service_predict(serve::Service& s, const std::string& body) {
  const serve::Reply r = s.predict(body);
  EXPECT_EQ(r.status, 200) << r.body;
  return json::parse(r.body);
}

TEST(Answers, JobWithoutSubmitTimeGetsOneAnswerFromPredictAndTheService) {
  const std::string dir = test::temp_dir();
  const std::string model = model_with_history(dir);
  std::ofstream(dir + "/one.csv") << "user,job_type,requested_ttl_s\nalice,MC,72000\n";

  serve::ServiceOptions so;
  so.model_path = model;
  serve::Service service(so);
  const json s = service_predict(service, R"({"user":"alice","job_type":"MC","requested_ttl_s":72000})");

  std::string out;
  const int rc = test::run_cli("predict --model '" + model + "' --data '" + dir + "/one.csv' --format jsonl", &out);
  if (rc == 127) GTEST_SKIP() << "build the ttlpred target to run this test";
  ASSERT_EQ(rc, 0) << out;
  const json c = json::parse(out.substr(out.find('{')));
  // predict prints one decimal; the service the exact double.
  EXPECT_NEAR(c["expected_wall_s"].get<double>(), s["expected_wall_s"].get<double>(), 0.051) << out << s.dump();
  EXPECT_NEAR(c["safe_ttl_s"].get<double>(), s["safe_ttl_s"].get<double>(), 0.051) << out << s.dump();

  // The library paths under both: the table walk and the service's state agree bit for bit.
  const Predictor p = Predictor::load(model, {});
  JobTable t;
  JobRecord r;
  r.text(Field::User) = "alice";
  r.text(Field::JobType) = "MC";
  r[Field::RequestedTtl] = 72000;
  t.append(r);
  const HistoryMatrix hm = predict_history(p, t).features;
  const std::vector<std::size_t> rows = {0};
  const Prediction batch = p.predict_rows(t, rows, hm).at(0);
  EXPECT_EQ(batch.expected_wall_s, s["expected_wall_s"].get<double>());
  EXPECT_EQ(batch.safe_ttl_s, s["safe_ttl_s"].get<double>());
  // The history matters here: an empty history (what predict used to give such a job) answers otherwise.
  const HistoryMatrix empty = compute_history(t, p.encoder().history_config());
  EXPECT_NE(p.predict_rows(t, rows, empty).at(0).expected_wall_s, batch.expected_wall_s);
}

// A model whose network answers about `hours` for every job, through `kind`.
std::string model_answering(const std::string& dir, TargetKind kind, double t_mean) {
  const std::string path = dir + "/m" + std::to_string(static_cast<int>(kind)) + ".ttlp";
  test::write_test_model(path, 3);
  ModelFile m = load_model_file(path);
  m.target.kind = kind;
  m.target.mean = t_mean;
  m.target.stddev = 1e-6;  // the network's output barely moves the answer
  save_model_file(path, m);
  return path;
}

TEST(Answers, SafeTtlWithoutRequestIsCappedAtMaxTtlAndTheReplySaysSo) {
  const std::string dir = test::temp_dir();
  serve::ServiceOptions so;
  so.model_path = model_answering(dir, TargetKind::Log1p, std::log1p(300.0));  // 300 h, 12.5 days
  serve::Service capped(so);
  const json r = service_predict(capped, R"({"user":"bob"})");
  EXPECT_EQ(r["safe_ttl_s"].get<double>(), 259200.0);  // 72 h: the longest ALICE slot
  EXPECT_EQ(r["expected_wall_s"].get<double>(), 259200.0);
  EXPECT_EQ(r["capped"], true);
  // A job whose request is below the cap is bounded by its request, not marked capped.
  const json q = service_predict(capped, R"({"user":"bob","requested_ttl_s":72000})");
  EXPECT_EQ(q["safe_ttl_s"].get<double>(), 72000.0);
  EXPECT_EQ(q["capped"], false);
  // A request above the cap stands (HPC queues grant more than 72 h): the request bounds it.
  const json l = service_predict(capped, R"({"user":"bob","requested_ttl_s":400000})");
  EXPECT_GT(l["safe_ttl_s"].get<double>(), 259200.0);
  EXPECT_LE(l["safe_ttl_s"].get<double>(), 400000.0);
  EXPECT_EQ(l["capped"], false);

  so.predictor.max_ttl_s = 0;  // no cap: what every answer used to be
  serve::Service uncapped(so);
  const json u = service_predict(uncapped, R"({"user":"bob"})");
  EXPECT_GT(u["safe_ttl_s"].get<double>(), 300 * 3600.0);
  EXPECT_EQ(u["capped"], false);

  so.predictor.max_ttl_s = 30;  // below the floor: refused at start, naming the option
  EXPECT_THROW({ serve::Service bad(so); }, Error);
}

// A model made for match time is served (its running set: running_set_test.cpp); a reload
// across prediction times is refused, because the history state is made for one of them.
TEST(Answers, AModelMadeForMatchTimeIsServedAndNoReloadCrossesPredictionTimes) {
  const std::string dir = test::temp_dir();
  serve::ServiceOptions so;
  so.model_path = dir + "/match.ttlp";
  test::write_test_model(so.model_path, 3, {HistoryKey::All, HistoryKey::User}, PredictionTime::Match);
  serve::Service match(so);
  EXPECT_EQ(match.predict(R"({"user":"alice"})").status, 200);
  so.model_path = dir + "/submit.ttlp";
  test::write_test_model(so.model_path, 3);
  serve::Service s(so);
  EXPECT_NE(s.reload_from(dir + "/match.ttlp"), "");
  EXPECT_NE(match.reload_from(dir + "/submit.ttlp"), "");
}

TEST(Answers, NegativeRunTimesAreFlooredAtMinSecondsNotZero) {
  const std::string dir = test::temp_dir();
  serve::ServiceOptions so;
  // An hours-target network that outputs -2 h: it decodes to exactly 0 s.
  so.model_path = model_answering(dir, TargetKind::Hours, -2.0);
  so.predictor.min_seconds = 0;
  serve::Service raw(so);
  EXPECT_EQ(service_predict(raw, R"({"user":"bob"})")["expected_wall_s"].get<double>(), 0.0);

  so.predictor.min_seconds = PredictorOptions::kDefaultMinSeconds;
  serve::Service floored(so);
  const json r = service_predict(floored, R"({"user":"bob"})");
  EXPECT_EQ(r["expected_wall_s"].get<double>(), 60.0);
  EXPECT_GE(r["safe_ttl_s"].get<double>(), 60.0);
  // A request shorter than the floor is still the job's hard limit.
  const json q = service_predict(floored, R"({"user":"bob","requested_ttl_s":30})");
  EXPECT_EQ(q["expected_wall_s"].get<double>(), 30.0);
  EXPECT_EQ(q["safe_ttl_s"].get<double>(), 30.0);
}

TEST(Answers, AuthorizationMatchesOnlyTheWholeBearerToken) {
  EXPECT_TRUE(serve::authorization_matches("Bearer s3cret", "s3cret"));
  for (const char* wrong : {"", "Bearer ", "Bearer s3cre", "Bearer s3crett", "Bearer S3cret", "bearer s3cret",
                            "Bearer  s3cret", "Basic s3cret", "s3cret", "Bearer s3creT"})
    EXPECT_FALSE(serve::authorization_matches(wrong, "s3cret")) << wrong;
}

TEST(Answers, AdminTokenComesFromAFileOrTheEnvironment) {
  const std::string dir = test::temp_dir();
  const std::string file = dir + "/token";
  std::ofstream(file) << "s3cret-token\n";
  ::chmod(file.c_str(), 0600);
  serve::AdminToken t = serve::resolve_admin_token({"", file, "from-env"});
  EXPECT_EQ(t.token, "s3cret-token");  // the file wins over the environment, line break dropped
  EXPECT_TRUE(t.warnings.empty());
  t = serve::resolve_admin_token({"", "", "from-env"});
  EXPECT_EQ(t.token, "from-env");
  EXPECT_EQ(t.source, serve::kAdminTokenEnv);
  t = serve::resolve_admin_token({"on-the-command-line", "", nullptr});
  EXPECT_EQ(t.token, "on-the-command-line");  // the old flag still works, with a warning
  ASSERT_EQ(t.warnings.size(), 1u);
  EXPECT_NE(t.warnings[0].find("ps"), std::string::npos);
  EXPECT_EQ(serve::resolve_admin_token({"", "", nullptr}).token, "");

  ::chmod(file.c_str(), 0644);
  EXPECT_EQ(serve::resolve_admin_token({"", file, nullptr}).warnings.size(), 1u);  // others may read it
  EXPECT_THROW(serve::resolve_admin_token({"a", file, nullptr}), Error);  // both at once
  std::ofstream(dir + "/empty") << "\n";
  try {
    serve::resolve_admin_token({"", dir + "/empty", nullptr});
    ADD_FAILURE() << "an empty token file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(dir + "/empty"), std::string::npos) << e.what();
  }
  EXPECT_THROW(serve::resolve_admin_token({"", dir + "/missing", nullptr}), Error);

  // The server takes the file's token: the right bearer reloads, none is refused.
  std::string out;
  if (test::run_cli("--version", &out) == 127) return;
  const std::string model = dir + "/m.ttlp";
  test::write_test_model(model, 5);
  ::chmod(file.c_str(), 0600);
  serve::HttpOptions ho;
  ho.admin_token = serve::resolve_admin_token({"", file, nullptr}).token;
  serve::ServiceOptions so;
  so.model_path = model;
  test::TestServer s(so, ho);
  auto c = s.client();
  EXPECT_EQ(c.Post("/admin/reload", "", "application/json")->status, 401);
  httplib::Headers h = {{"Authorization", "Bearer s3cret-token"}};
  EXPECT_EQ(c.Post("/admin/reload", h, "", "application/json")->status, 200);
}

}  // namespace
}  // namespace ttlpred
