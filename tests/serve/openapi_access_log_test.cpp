// The service's contract and its access log: /openapi.json serves the repository's OpenAPI 3
// document, which names every route and every job field the service accepts; the JSON-lines
// access log writes one line per request, with the batch size, and nothing when off.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "data/schema.hpp"
#include "serve/job_json.hpp"
#include "serve/access_log.hpp"
#include "serve_test_util.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

TEST(OpenApi, ServedDocumentDescribesEveryRouteAndJobField) {
  test::TestServer s(test::options_for(test::shared_test_model()));
  auto c = s.client();
  const auto res = c.Get("/openapi.json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  const auto doc = nlohmann::json::parse(res->body);
  EXPECT_EQ(doc["openapi"], "3.0.3");
  for (const char* path : {"/v1/predict", "/v1/match", "/v1/outcomes", "/v1/started", "/healthz", "/readyz", "/metrics", "/admin/reload", "/openapi.json"})
    EXPECT_TRUE(doc["paths"].contains(path)) << path;
  const auto& job = doc["components"]["schemas"]["Job"]["properties"];
  for (const auto& f : kFields) {
    const bool accepted = f.phase != Phase::Outcome;
    EXPECT_EQ(job.contains(std::string(f.name)), accepted) << f.name;
  }
  // Every operation can answer 500 (an internal error; on outcomes a journal that cannot be
  // written), and the request's bounds are the readers' (serve/job_json.hpp).
  for (const auto& [path, ops] : doc["paths"].items())
    for (const auto& [method, op] : ops.items()) EXPECT_TRUE(op["responses"].contains("500")) << method << " " << path;
  EXPECT_EQ(job["requested_ttl_s"]["maximum"].get<double>(), serve::kMaxRequestedTtlS);
  EXPECT_TRUE(job["requested_ttl_s"]["exclusiveMinimum"].get<bool>());
  // The repository's file is the served one.
  std::ifstream in(test::source_path("docs/openapi.json"));
  EXPECT_EQ(nlohmann::json::parse(in), doc);
  EXPECT_EQ(c.Post("/openapi.json", "", "application/json")->status, 405);
}

TEST(AccessLog, OneJsonLinePerRequestWithBatchSize) {
  const std::string path = test::temp_dir() + "/access.log";
  serve::HttpOptions ho;
  ho.access_log = path;
  {
    test::TestServer s(test::options_for(test::shared_test_model()), ho);
    auto c = s.client();
    ASSERT_EQ(c.Post("/v1/predict", R"([{"user":"alice"},{"user":"bob"},{"user":"carol"}])", "application/json")->status, 200);
    ASSERT_EQ(c.Post("/v1/predict", R"({"user":"alice","colour":"red"})", "application/json")->status, 400);
    ASSERT_EQ(c.Get("/nowhere")->status, 404);
  }
  std::ifstream in(path);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["endpoint"] != "healthz") lines.push_back(std::move(j));  // the test server's own readiness wait
  }
  ASSERT_EQ(lines.size(), 3u);
  const auto& ok = lines[0];
  EXPECT_EQ(ok["endpoint"], "predict");
  EXPECT_EQ(ok["method"], "POST");
  EXPECT_EQ(ok["path"], "/v1/predict");
  EXPECT_EQ(ok["status"], 200);
  EXPECT_EQ(ok["batch"], 3);
  EXPECT_GT(ok["latency_s"].get<double>(), 0);
  EXPECT_EQ(ok["time"].get<std::string>().size(), 24u);  // 2026-12-01T10:20:00.123Z
  EXPECT_EQ(lines[1]["status"], 400);
  EXPECT_EQ(lines[1]["batch"], 0);
  EXPECT_EQ(lines[2]["endpoint"], "other");
  EXPECT_EQ(lines[2]["status"], 404);
}

TEST(AccessLog, BatchSizesFromTheServicesReplies) {
  EXPECT_EQ(serve::batch_size_of_reply("predict", R"({"expected_wall_s":1,"safe_ttl_s":2,"capped":false,"model_version":"x"})"), 1u);
  EXPECT_EQ(serve::batch_size_of_reply("predict", R"({"model_version":"x","predictions":[{"expected_wall_s":1,"safe_ttl_s":2},{"expected_wall_s":1,"safe_ttl_s":2}]})"), 2u);
  EXPECT_EQ(serve::batch_size_of_reply("match", R"({"model_version":"x","matches":[],"considered":17})"), 17u);
  EXPECT_EQ(serve::batch_size_of_reply("outcomes", R"({"accepted":5,"history_observed":9,"durable":false})"), 5u);
  EXPECT_EQ(serve::batch_size_of_reply("healthz", R"({"status":"ok"})"), 0u);
}

TEST(AccessLog, UnwritableDestinationIsAnErrorNamingIt) {
  try {
    serve::AccessLog log("/nonexistent-folder/access.log");
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-folder/access.log: cannot open the access log"), std::string::npos);
  }
}

}  // namespace
}  // namespace ttlpred
