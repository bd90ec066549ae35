// End-to-end tests of the service over HTTP on an in-process server: every endpoint, the
// error cases, metrics, admin token, hot reload under load.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "serve/job_json.hpp"
#include "serve_test_util.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;

struct Models {
  std::string a, b, other_history, garbage;
  Models() {
    const std::string dir = test::temp_dir();
    a = dir + "/a.model";
    b = dir + "/b.model";
    other_history = dir + "/other.model";
    garbage = dir + "/garbage.model";
    test::write_test_model(a, 1);
    test::write_test_model(b, 2);
    test::write_test_model(other_history, 3, {HistoryKey::All});
    std::FILE* f = std::fopen(garbage.c_str(), "wb");
    std::fputs("not a model file", f);
    std::fclose(f);
  }
};
const Models& models() {
  static Models m;
  return m;
}

using test::options_for;

using test::post_json;

const char* kJob = R"({"user":"alice","job_type":"MC","requested_ttl_s":72000,"cpu_cores":1,"submit_time":1.8e9})";

TEST(ServeHttp, PredictOneJobMatchesThePredictorDirectly) {
  test::TestServer s(options_for(models().a));
  auto c = s.client();
  const json r = post_json(c, "/v1/predict", kJob, 200);
  ASSERT_EQ(r["model_version"].get<std::string>().size(), 16u);
  EXPECT_EQ(r["model_version"], s.service->model_version());

  // The same job through the library: the service adds nothing but transport.
  auto direct = serve::load_model(models().a, {});
  const json job = json::parse(kJob);
  JobRecord rec;
  serve::job_from_json(job, serve::JobUse::Predict, -1, rec);
  Prediction p;
  direct->predictor.predict(std::span<const JobRecord>(&rec, 1), direct->predictor.initial_history(),
                            std::span<Prediction>(&p, 1));
  EXPECT_DOUBLE_EQ(r["expected_wall_s"].get<double>(), p.expected_wall_s);
  EXPECT_DOUBLE_EQ(r["safe_ttl_s"].get<double>(), p.safe_ttl_s);
  EXPECT_GT(p.expected_wall_s, 0);
  EXPECT_GE(p.safe_ttl_s, p.expected_wall_s);
  EXPECT_LE(p.safe_ttl_s, 72000);
  EXPECT_EQ(direct->version, s.service->model_version());
}

TEST(ServeHttp, PredictBatchKeepsOrderAndAgreesWithSingles) {
  test::TestServer s(options_for(models().a));
  auto c = s.client();
  json batch = json::array();
  for (int i = 0; i < 4; ++i)
    batch.push_back({{"user", test::test_users()[static_cast<std::size_t>(i)]}, {"requested_ttl_s", 3600.0 * (i + 1)}});
  const json r = post_json(c, "/v1/predict", batch.dump(), 200);
  ASSERT_EQ(r["predictions"].size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    const json one = post_json(c, "/v1/predict", batch[i].dump(), 200);
    EXPECT_DOUBLE_EQ(r["predictions"][i]["safe_ttl_s"].get<double>(), one["safe_ttl_s"].get<double>());
    EXPECT_LE(one["safe_ttl_s"].get<double>(), 3600.0 * static_cast<double>(i + 1));  // capped at the request
  }
  EXPECT_EQ(post_json(c, "/v1/predict", "[]", 200)["predictions"].size(), 0u);
}

TEST(ServeHttp, BadInputGets4xxNamingTheFieldAndJob) {
  serve::ServiceOptions so = options_for(models().a);
  so.max_batch = 3;
  serve::HttpOptions ho;
  ho.max_body = 2000;
  test::TestServer s(so, ho);
  auto c = s.client();
  EXPECT_NE(post_json(c, "/v1/predict", "{\"user\": ", 400)["error"].get<std::string>().find("malformed JSON"), std::string::npos);
  json e = post_json(c, "/v1/predict", R"([{"user":"a"},{"reqested_ttl_s":5}])", 400);
  EXPECT_EQ(e["field"], "reqested_ttl_s");
  EXPECT_EQ(e["index"], 1);
  e = post_json(c, "/v1/predict", R"({"cpu_cores":"four"})", 400);
  EXPECT_EQ(e["field"], "cpu_cores");
  EXPECT_NE(e["error"].get<std::string>().find("number"), std::string::npos);
  EXPECT_EQ(post_json(c, "/v1/predict", R"({"user":7})", 400)["field"], "user");
  EXPECT_EQ(post_json(c, "/v1/predict", R"({"requested_ttl_s":-1})", 400)["field"], "requested_ttl_s");
  EXPECT_EQ(post_json(c, "/v1/predict", R"({"memory_mb":1e999})", 400)["error"].get<std::string>().substr(0, 9), "malformed");
  EXPECT_EQ(post_json(c, "/v1/predict", R"({"wall_s":5})", 400)["field"], "wall_s");  // an outcome leaks the answer
  EXPECT_EQ(post_json(c, "/v1/predict", "7", 400).count("error"), 1u);
  EXPECT_NE(post_json(c, "/v1/predict", "[{},{},{},{}]", 413)["error"].get<std::string>().find("--max-batch"), std::string::npos);
  EXPECT_EQ(post_json(c, "/v1/predict", std::string(3000, ' '), 413).count("error"), 1u);  // --max-body
  auto res = c.Get("/nope");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(json::parse(res->body)["error"], "no such endpoint");
  // The server is still fine after all that.
  EXPECT_EQ(post_json(c, "/v1/predict", R"({"user":"bob"})", 200).count("safe_ttl_s"), 1u);
  EXPECT_EQ(s.service->metrics().errors(serve::Endpoint::Predict), 10u);
}

TEST(ServeHttp, MatchReturnsTheJobsThatFitInBrokerOrder) {
  test::TestServer s(options_for(models().a));
  auto c = s.client();
  json jobs = json::array();
  for (int i = 0; i < 8; ++i)
    jobs.push_back({{"job_id", 100 + i}, {"user", test::test_users()[static_cast<std::size_t>(i) % 5]},
                    {"requested_ttl_s", 1800.0 * (i + 1)}, {"cpu_cores", i % 3 == 2 ? 8 : 1}, {"price", i % 4}});
  json preds = post_json(c, "/v1/predict", jobs.dump(), 200)["predictions"];
  // A time left between the smallest and the largest safe TTL, so that some fit and some not.
  std::vector<double> ttl;
  for (const auto& p : preds) ttl.push_back(p["safe_ttl_s"].get<double>());
  std::vector<double> sorted = ttl;
  std::sort(sorted.begin(), sorted.end());
  const double time_left = sorted[4];
  json req = {{"slot", {{"slot_time_left_s", time_left}, {"slot_cores", 4}}}, {"jobs", jobs}};
  json r = post_json(c, "/v1/match", req.dump(), 200);
  std::vector<long> want;
  for (long i = 0; i < 8; ++i)
    if (ttl[static_cast<std::size_t>(i)] <= time_left && i % 3 != 2) want.push_back(i);
  std::vector<long> got;
  for (const auto& m : r["matches"]) {
    got.push_back(m["index"].get<long>());
    EXPECT_EQ(m["job_id"].get<long>(), 100 + m["index"].get<long>());
    EXPECT_LE(m["safe_ttl_s"].get<double>(), time_left);
  }
  EXPECT_EQ(got, want);
  EXPECT_EQ(r["considered"], 8);
  // By price, highest first, ties in input order; and a limit.
  req["order"] = "price";
  req["limit"] = 2;
  r = post_json(c, "/v1/match", req.dump(), 200);
  std::stable_sort(want.begin(), want.end(), [&](long a, long b) { return a % 4 > b % 4; });
  want.resize(std::min<std::size_t>(2, want.size()));
  got.clear();
  for (const auto& m : r["matches"]) got.push_back(m["index"].get<long>());
  EXPECT_EQ(got, want);
  EXPECT_EQ(post_json(c, "/v1/match", R"({"jobs":[]})", 400)["field"], "slot");
  EXPECT_EQ(post_json(c, "/v1/match", R"({"slot":{},"jobs":[]})", 400)["field"], "slot.slot_time_left_s");
  EXPECT_EQ(post_json(c, "/v1/match", R"({"slot":{"slot_time_left_s":5,"user":"x"},"jobs":[]})", 400)["field"], "slot.user");
  json e = post_json(c, "/v1/match", R"({"slot":{"slot_time_left_s":5},"jobs":[{},{"site":"CERN"}]})", 400);
  EXPECT_EQ(e["field"], "site");
  EXPECT_EQ(e["index"], 1);
}

// Orders with unknown keys, and the slot's match-time fields reaching the prediction.
TEST(ServeHttp, MatchByAgeAndPriceWithUnknownsAndSlotFieldsInThePrediction) {
  test::TestServer s(options_for(models().a));
  auto c = s.client();
  // Every job fits (a slot of 10^9 s): only the order is tested.
  const json jobs = json::array({{{"user", "alice"}, {"submit_time", 1.8e9 + 300}, {"price", 5}},
                                 {{"user", "bob"}},  // no submit time, no price
                                 {{"user", "carol"}, {"submit_time", 1.8e9 + 100}, {"price", 9}},
                                 {{"user", "dave"}, {"submit_time", 1.8e9 + 200}}});
  json req = {{"slot", {{"slot_time_left_s", 1e9}}}, {"jobs", jobs}, {"order", "age"}};
  auto indices = [&](const json& reply) {
    std::vector<long> out;
    for (const auto& m : reply["matches"]) out.push_back(m["index"].get<long>());
    return out;
  };
  // Oldest submission first, the job without a submit time last.
  EXPECT_EQ(indices(post_json(c, "/v1/match", req.dump(), 200)), (std::vector<long>{2, 3, 0, 1}));
  // Highest price first, unknown prices last in input order.
  req["order"] = "price";
  EXPECT_EQ(indices(post_json(c, "/v1/match", req.dump(), 200)), (std::vector<long>{2, 0, 1, 3}));
  req["order"] = "input";
  EXPECT_EQ(indices(post_json(c, "/v1/match", req.dump(), 200)), (std::vector<long>{0, 1, 2, 3}));

  // The slot's wait_s (a match-time field the test model encodes) is the job's for the
  // prediction: the match answers what /v1/predict answers for the job with that field, and
  // two slots that differ in it answer differently.
  const json job = {{"user", "erin"}, {"job_type", "MC"}, {"cpu_cores", 2}, {"requested_ttl_s", 80000}};
  double previous = -1;
  for (double wait : {5.0, 50000.0}) {
    json one = job;
    one["wait_s"] = wait;
    const json direct = post_json(c, "/v1/predict", one.dump(), 200);
    const json m = post_json(c, "/v1/match", json{{"slot", {{"slot_time_left_s", 1e9}, {"wait_s", wait}}}, {"jobs", {job}}}.dump(), 200);
    ASSERT_EQ(m["matches"].size(), 1u);
    EXPECT_EQ(m["matches"][0]["expected_wall_s"], direct["expected_wall_s"]) << wait;
    EXPECT_EQ(m["matches"][0]["safe_ttl_s"], direct["safe_ttl_s"]) << wait;
    EXPECT_NE(m["matches"][0]["expected_wall_s"].get<double>(), previous);
    previous = m["matches"][0]["expected_wall_s"].get<double>();
  }
}

TEST(ServeHttp, OutcomesUpdateTheHistoryAllOrNothing) {
  test::TestServer s(options_for(models().a));
  auto c = s.client();
  const std::string job = R"({"user":"alice","requested_ttl_s":72000})";
  const double before = post_json(c, "/v1/predict", job, 200)["expected_wall_s"].get<double>();
  const std::uint64_t observed0 = s.service->history_observed();
  json e = post_json(c, "/v1/outcomes", R"([{"user":"alice","wall_s":50000},{"user":"alice","status":"DONE"}])", 400);
  EXPECT_EQ(e["field"], "wall_s");
  EXPECT_EQ(e["index"], 1);
  EXPECT_EQ(s.service->history_observed(), observed0);  // the valid first one was not applied either
  json outcomes = json::array();
  for (int i = 0; i < 20; ++i)
    outcomes.push_back({{"user", "alice"}, {"wall_s", 60000}, {"requested_ttl_s", 72000}, {"status", "DONE"}});
  json r = post_json(c, "/v1/outcomes", outcomes.dump(), 200);
  EXPECT_EQ(r["accepted"], 20);
  EXPECT_EQ(r["durable"], false);
  EXPECT_EQ(r["history_observed"].get<std::uint64_t>(), observed0 + 20);
  EXPECT_NE(post_json(c, "/v1/predict", job, 200)["expected_wall_s"].get<double>(), before);
}

TEST(ServeHttp, HealthReadinessAndMetrics) {
  test::TestServer s(options_for(models().a));
  auto c = s.client();
  auto h = c.Get("/healthz");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  auto rz = c.Get("/readyz");
  ASSERT_TRUE(rz);
  EXPECT_EQ(rz->status, 200);
  EXPECT_EQ(json::parse(rz->body)["model_version"], s.service->model_version());
  // Draining (what `serve` does on SIGTERM): not ready, so that a balancer stops sending
  // work; health and predictions still answer for the requests already on their way.
  s.service->set_ready(false);
  {
    auto draining = c.Get("/readyz");
    ASSERT_TRUE(draining);
    EXPECT_EQ(draining->status, 503);
    EXPECT_EQ(draining->body, R"({"ready":false})");
    auto alive = c.Get("/healthz");
    ASSERT_TRUE(alive);
    EXPECT_EQ(alive->status, 200);
    post_json(c, "/v1/predict", kJob, 200);  // one request, one prediction: counted below
  }
  s.service->set_ready(true);
  {
    auto again = c.Get("/readyz");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 200);
  }
  for (int i = 0; i < 3; ++i) post_json(c, "/v1/predict", R"([{"user":"a"},{"user":"b"}])", 200);
  post_json(c, "/v1/predict", "{", 400);
  post_json(c, "/v1/outcomes", R"({"user":"a","wall_s":10})", 200);
  auto m = c.Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->status, 200);
  EXPECT_NE(m->get_header_value("Content-Type").find("text/plain"), std::string::npos);
  const std::string& t = m->body;
  EXPECT_NE(t.find("ttlpred_requests_total{endpoint=\"predict\"} 5\n"), std::string::npos) << t;
  EXPECT_NE(t.find("ttlpred_request_errors_total{endpoint=\"predict\"} 1\n"), std::string::npos);
  EXPECT_NE(t.find("ttlpred_predictions_total 7\n"), std::string::npos);
  EXPECT_NE(t.find("ttlpred_outcomes_total 1\n"), std::string::npos);
  EXPECT_NE(t.find("ttlpred_request_duration_seconds_count{endpoint=\"predict\"} 5\n"), std::string::npos);
  EXPECT_NE(t.find("ttlpred_request_duration_seconds_bucket{endpoint=\"predict\",le=\"+Inf\"} 5\n"), std::string::npos);
  EXPECT_NE(t.find("ttlpred_model_info{version=\"" + s.service->model_version() + "\"} 1\n"), std::string::npos);
  EXPECT_NE(t.find("ttlpred_history_observed_jobs 1\n"), std::string::npos);
  EXPECT_NE(t.find("ttlpred_history_keys 2\n"), std::string::npos);  // All and user "a"
  EXPECT_NE(t.find("ttlpred_requests_total{endpoint=\"readyz\"} 3\n"), std::string::npos) << t;
}

TEST(ServeHttp, AdminReloadNeedsTheTokenWhenSetAndOffLoopback) {
  serve::HttpOptions ho;
  ho.admin_token = "s3cret";
  test::TestServer s(options_for(models().a), ho);
  auto c = s.client();
  EXPECT_EQ(post_json(c, "/admin/reload", "", 401)["field"], "Authorization");
  httplib::Headers auth = {{"Authorization", "Bearer s3cret"}};
  auto res = c.Post("/admin/reload", auth, "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  // A wrong token, and a right one sent twice, are refused like a missing one.
  httplib::Headers wrong = {{"Authorization", "Bearer s3cre"}};
  res = c.Post("/admin/reload", wrong, "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401) << res->body;
  res = c.Post("/v1/outcomes", wrong, R"([{"user":"alice","wall_s":60}])", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401) << res->body;
  EXPECT_FALSE(serve::is_loopback("0.0.0.0"));
  EXPECT_TRUE(serve::is_loopback("127.0.0.1"));
  EXPECT_TRUE(serve::is_loopback("::1"));
}

// Listening beyond loopback (every interface: the test still reaches it on 127.0.0.1) with
// no token configured: the admin endpoints and /v1/outcomes answer 403, whoever asks, while
// predictions are served. With a token configured there, the token decides.
TEST(ServeHttp, OffLoopbackWithoutATokenRefusesAdminAndOutcomesWith403) {
  serve::HttpOptions ho;
  ho.host = "0.0.0.0";
  test::TestServer s(options_for(models().a), ho);
  auto c = s.client();
  const json refused = post_json(c, "/admin/reload", "", 403);
  EXPECT_NE(refused.dump().find("beyond loopback"), std::string::npos) << refused.dump();
  post_json(c, "/v1/outcomes", R"([{"user":"alice","wall_s":60}])", 403);
  httplib::Headers any = {{"Authorization", "Bearer anything"}};
  auto res = c.Post("/admin/reload", any, "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 403) << res->body;
  post_json(c, "/v1/predict", kJob, 200);

  serve::HttpOptions with_token = ho;
  with_token.admin_token = "s3cret";
  test::TestServer t(options_for(models().a), with_token);
  auto d = t.client();
  post_json(d, "/admin/reload", "", 401);
  res = d.Post("/admin/reload", {{"Authorization", "Bearer s3cret"}}, "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
}

TEST(ServeHttp, ReloadUnderLoadDropsNothingAndRefusesBadModels) {
  test::TestServer s(options_for(models().a));
  const std::string version_a = s.service->model_version();
  std::atomic<int> ok{0}, failed{0};
  std::set<std::string> versions_seen;
  test::StoppableThread hammer([&](const std::atomic<bool>& stop) {
    auto c = s.client();
    const std::string body = R"([{"user":"alice"},{"user":"bob","requested_ttl_s":9000}])";
    while (!stop.load()) {
      auto res = c.Post("/v1/predict", body, "application/json");
      if (res && res->status == 200 && json::parse(res->body)["predictions"].size() == 2) {
        ++ok;
        versions_seen.insert(json::parse(res->body)["model_version"].get<std::string>());
      } else {
        ++failed;
      }
    }
  });
  auto c = s.client();
  std::string version_b;
  for (int i = 0; i < 6; ++i) {
    const std::string& path = i % 2 == 0 ? models().b : models().a;
    json r = post_json(c, "/admin/reload", json{{"path", path}}.dump(), 200);
    EXPECT_EQ(r["reloaded"], true);
    if (i == 0) version_b = r["model_version"];
    // Refused files leave the current model serving, and the reply says why.
    json bad = post_json(c, "/admin/reload", json{{"path", models().garbage}}.dump(), 422);
    EXPECT_EQ(bad["reloaded"], false);
    EXPECT_NE(bad["error"].get<std::string>().find(models().garbage), std::string::npos);
    EXPECT_EQ(bad["model_version"], r["model_version"]);
    json other = post_json(c, "/admin/reload", json{{"path", models().other_history}}.dump(), 422);
    EXPECT_NE(other["error"].get<std::string>().find("history"), std::string::npos);
    EXPECT_EQ(post_json(c, "/admin/reload", json{{"path", "/no/such/file"}}.dump(), 422)["reloaded"], false);
    // Event-driven, not a fixed sleep: the hammer gets two answers from this model before the
    // next reload, however slow the host (up to 10 s).
    const int seen = ok.load() + failed.load();
    for (int k = 0; k < 10000 && ok.load() + failed.load() < seen + 2; ++k)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  hammer.stop_and_join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GE(ok.load(), 12);  // two per model served, at least
  EXPECT_NE(version_a, version_b);
  EXPECT_EQ(s.service->model_version(), version_a);  // the last good reload was model a
  EXPECT_TRUE(versions_seen.count(version_a));
  EXPECT_EQ(post_json(c, "/admin/reload", R"({"file":"x"})", 400)["field"], "file");
}

TEST(ServeHttp, SlowClientIsDroppedAfterTheReadTimeout) {
  serve::HttpOptions ho;
  ho.read_timeout_s = 1;
  ho.keep_alive_timeout_s = 1;
  test::TestServer s(options_for(models().a), ho);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(s.port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  // Only a hang guard: a server that left the connection hanging would leave recv waiting
  // here for a minute, and the 408 below would be missing.
  const timeval hang_guard{60, 0};
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &hang_guard, sizeof hang_guard), 0);
  // Promises 100 bytes of body, sends one, then goes quiet.
  const std::string partial = "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{";
  ASSERT_EQ(send(fd, partial.data(), partial.size(), 0), static_cast<ssize_t>(partial.size()));
  const auto start = std::chrono::steady_clock::now();
  char buf[4096];
  std::string got;
  ssize_t n;
  while ((n = recv(fd, buf, sizeof buf, 0)) > 0) got.append(buf, static_cast<std::size_t>(n));
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(fd);
  EXPECT_GE(waited, 0.5);  // not before its read timeout (a lower bound: a slow host only adds)
  EXPECT_EQ(got.rfind("HTTP/1.1 408 ", 0), 0u) << got;  // dropped by the server, not left hanging
  EXPECT_NE(got.find("\"error\":\"request timeout"), std::string::npos) << got;
  // Others are still served.
  auto c = s.client();
  EXPECT_EQ(post_json(c, "/v1/predict", R"({"user":"bob"})", 200).count("safe_ttl_s"), 1u);
}

}  // namespace
}  // namespace ttlpred
