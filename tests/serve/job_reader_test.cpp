// JobReader (simdjson, falling back to nlohmann-json) against the reference: the service's
// nlohmann path as it was, nlohmann::json::parse + job_from_json. For every body, valid or
// not, both must give the same records (bit for bit), or the same error: status, message,
// field and job index.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../bench/load/load_job.hpp"  // the load test's bodies, checked here
#include "serve/job_json.hpp"

namespace ttlpred {
namespace {

using serve::JobReader;
using serve::JobUse;
using serve::RequestError;

struct Outcome {
  bool ok = false;
  int status = 0;
  std::string message, field;
  long index = -2;
  bool single = false;
  std::vector<std::vector<std::uint64_t>> num;  // bit patterns: NaN, -0 compared exactly
  std::vector<std::vector<std::string>> cat;

  void take(const std::vector<JobRecord>& records, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      num.emplace_back();
      cat.emplace_back();
      for (std::size_t f = 0; f < kNumFields; ++f) {
        num.back().push_back(std::bit_cast<std::uint64_t>(records[i].num[f]));
        cat.back().emplace_back(records[i].cat[f]);
      }
    }
  }
  void take(const RequestError& e) {
    status = e.status();
    message = e.what();
    field = e.field();
    index = e.index();
  }
};

// The service's /v1/predict and /v1/outcomes parsing before simdjson, written out here.
Outcome reference(std::string_view body, JobUse use, std::size_t max_batch) {
  Outcome o;
  try {
    // The service's one JSON parse (nlohmann with its depth and size bounds).
    const nlohmann::json j = serve::parse_json_body(body);
    const bool outcomes = use == JobUse::Outcome;
    o.single = j.is_object();
    if (!o.single && !j.is_array())
      throw RequestError(400, outcomes ? "the body must be an outcome object or an array of them"
                                       : "the body must be a job object or an array of jobs");
    const std::size_t n = o.single ? 1 : j.size();
    if (n > max_batch)
      throw RequestError(413, "batch of " + std::to_string(n) + (outcomes ? " outcomes" : " jobs") +
                                  " exceeds the limit of " + std::to_string(max_batch) + " (--max-batch)");
    std::vector<JobRecord> records(n);
    for (std::size_t i = 0; i < n; ++i)
      serve::job_from_json(o.single ? j : j[i], use, o.single ? -1 : static_cast<long>(i), records[i]);
    o.take(records, n);
    o.ok = true;
  } catch (const RequestError& e) {
    o.take(e);
  }
  return o;
}

Outcome with_reader(JobReader& reader, std::string_view body, JobUse use, std::size_t max_batch, bool* fast) {
  Outcome o;
  std::vector<JobRecord> records(2);  // shorter than most batches: read must grow it
  try {
    const JobReader::Jobs jobs = reader.read(body, use, max_batch, records);
    o.single = jobs.single;
    *fast = jobs.fast;
    o.take(records, jobs.count);
    o.ok = true;
  } catch (const RequestError& e) {
    o.take(e);
    *fast = false;
  }
  return o;
}

// Same answer as the reference; returns whether the reader took its fast path.
bool same(std::string_view body, JobUse use = JobUse::Predict, std::size_t max_batch = 64) {
  static JobReader reader;  // reused, as the service reuses one per thread
  const Outcome want = reference(body, use, max_batch);
  bool fast = false;
  const Outcome got = with_reader(reader, body, use, max_batch, &fast);
  const std::string shown = body.size() > 120 ? std::string(body.substr(0, 120)) + "..." : std::string(body);
  EXPECT_EQ(got.ok, want.ok) << shown << "\n  reference: " << want.message << "\n  reader: " << got.message;
  EXPECT_EQ(got.status, want.status) << shown;
  EXPECT_EQ(got.message, want.message) << shown;
  EXPECT_EQ(got.field, want.field) << shown;
  EXPECT_EQ(got.index, want.index) << shown;
  if (want.ok) {
    EXPECT_EQ(got.single, want.single) << shown;
  }
  EXPECT_EQ(got.num, want.num) << shown;
  EXPECT_EQ(got.cat, want.cat) << shown;
  if (!want.ok) {
    EXPECT_FALSE(fast) << shown;
  }
  return fast;
}

using load::load_job;

std::string array_of(int n) {
  std::string b = "[";
  for (int i = 0; i < n; ++i) {
    if (i) b += ",";
    b += load_job(i);
  }
  return b + "]";
}

TEST(JobReader, ValidBodiesTakeTheFastPathAndMatchTheReference) {
  EXPECT_TRUE(same(load_job(0)));
  EXPECT_TRUE(same(array_of(64)));
  EXPECT_TRUE(same(array_of(3)));  // after a longer batch: records beyond 3 are not returned
  EXPECT_TRUE(same("[]"));
  EXPECT_TRUE(same("{}"));
  EXPECT_TRUE(same(" \t\r\n[ {} , {\"user\" : \"a\"} ]\n "));
  EXPECT_TRUE(same(R"({"user":null,"cpu_cores":null,"site":null})"));
  EXPECT_TRUE(same(R"({"job_id":3100000000,"master_job_id":3099990000,"submit_time":1800000000.25,"user":"aliprod1",)"
                   R"("job_type":"MC","production_tag":"LHC24f1","pass_name":"apass4","anchor_run":544001,)"
                   R"("interaction_type":"PbPb","package":"VO_ALICE@O2PDPSuite::MC-prod-2024-v1-1","cpu_cores":8,)"
                   R"("memory_mb":16000,"input_bytes":1.5e9,"requested_ttl_s":72000,"wait_s":3,"site":"CERN",)"
                   R"("ce":"ce1","cpu_model":"EPYC","cpu_mhz":2450.5,"host_speed":1.1,"slot_cores":8,"slot_time_left_s":9e4})"));
  // Escapes, in values and keys; Unicode.
  EXPECT_TRUE(same(R"({"user":"al\u0069ce \"q\" \\ \/ \b\f\n\r\t","\u0075ser":"x"})"));
  EXPECT_TRUE(same("{\"user\":\"J\xc3\xbcrgen \xe2\x82\xac \xf0\x9f\x98\x80 \\ud83d\\ude00\",\"site\":\"\\u0000\"}"));
  // A repeated key counts as its last value, null included.
  EXPECT_TRUE(same(R"({"user":"a","user":"b"})"));
  EXPECT_TRUE(same(R"({"user":"a","user":null})"));
  EXPECT_TRUE(same(R"({"cpu_cores":4,"cpu_cores":null,"memory_mb":null,"memory_mb":7})"));
  // Numbers: zeros, extremes, integers beyond 2^53, long mantissas.
  EXPECT_TRUE(same(R"([{"cpu_cores":0},{"cpu_cores":-0},{"cpu_cores":-0.0},{"cpu_cores":0e5},{"cpu_cores":0.0E-7}])"));
  EXPECT_TRUE(same(R"([{"memory_mb":1e308},{"memory_mb":1.7976931348623157e308},{"memory_mb":4.9e-324},{"memory_mb":1e-400}])"));
  EXPECT_TRUE(same(R"([{"job_id":9007199254740993},{"job_id":9223372036854775807},{"job_id":9223372036854775808},)"
                   R"({"job_id":18446744073709551615}])"));
  EXPECT_TRUE(same(R"([{"price":0.30000000000000000000000000000001},{"price":1234567890123456789012.5e-3},)"
                   R"({"price":2.2250738585072011e-308},{"price":1E+2},{"price":1e-2}])"));
}

TEST(JobReader, JobIdsAreIntegersOrStringsOnBothPaths) {
  EXPECT_TRUE(same(R"([{"job_id":"alien-17"},{"job_id":1},{"job_id":null},{"job_id":"7","job_id":8},{"job_id":9,"job_id":"x"}])"));
  same(R"({"job_id":0})");  // simdjson cannot tell 0 from -0: nlohmann's answer (accepted)
  for (const char* bad : {R"({"job_id":1.5})", R"({"job_id":1e300})", R"({"job_id":-3})", R"({"job_id":-0})",
                          R"({"job_id":1.0})", R"({"job_id":true})", R"({"job_id":[1]})"}) {
    EXPECT_FALSE(same(bad)) << bad;
  }
}

TEST(JobReader, ValidBodiesSimdjsonRefusesAreReadByNlohmann) {
  // Integers beyond 64 bits: nlohmann reads them as doubles.
  EXPECT_FALSE(same(R"({"job_id":18446744073709551616})"));
  EXPECT_FALSE(same(R"([{"user":"a"},{"input_bytes":123456789012345678901234567890}])"));
  // A UTF-8 byte-order mark: nlohmann skips it.
  same("\xef\xbb\xbf{\"user\":\"a\"}");
}

TEST(JobReader, MalformedJsonIsTheReferenceError) {
  for (const char* body :
       {"", " ", "{", "{\"user\": ", "[", "[{}", "[{},]", "[1,]", "{\"user\":\"a\",}", "{'user':'a'}",
        "{user:\"a\"}", "{\"user\":\"a\"} x", "{}{}", "[{}] ]", "{\"user\" \"a\"}", "{\"user\":\"a\" \"site\":\"b\"}",
        "01", "{\"cpu_cores\":01}", "{\"cpu_cores\":1.}", "{\"cpu_cores\":.5}", "{\"cpu_cores\":+1}",
        "{\"cpu_cores\":1e}", "{\"cpu_cores\":1e+}", "{\"cpu_cores\":-}", "{\"cpu_cores\":0x10}", "{\"cpu_cores\":1_000}",
        "{\"user\":\"a\x01" "b\"}", "{\"user\":\"a\tb\"}", "{\"user\":\"a\\x\"}", "{\"user\":\"a\\u12\"}",
        "{\"user\":\"\xff\"}", "{\"user\":\"\xc0\xaf\"}", "{\"user\":\"\xed\xa0\x80\"}", "{\"user\":\"\xf4\x90\x80\x80\"}",
        "{\"user\":\"\xe2\x82\"}", "{\"us\xff\":1}", "{\"user\":\"\\ud800\"}", "{\"user\":\"\\udc00\"}",
        "{\"user\":\"\\ud800\\u0041\"}", "{\"user\":\"\\ud800x\"}", "{\f}", "{\v}", "/*c*/{}", "{} // c",
        "{\"user\":True}", "{\"user\":nul}", "{\"user\":\"a\"", "\"unterminated"}) {
    same(body);
  }
  // NUL bytes, before and after the document.
  same(std::string_view("{}\0", 3));
  same(std::string_view("{\"user\":\"a\0b\"}", 14));
  same(std::string_view("\0{}", 3));
}

TEST(JobReader, NanLikeAndHugeNumbers) {
  for (const char* body :
       {"{\"cpu_cores\":NaN}", "{\"cpu_cores\":nan}", "{\"cpu_cores\":Infinity}", "{\"cpu_cores\":-Infinity}",
        "{\"cpu_cores\":inf}", "{\"cpu_cores\":\"NaN\"}", "{\"memory_mb\":1e999}", "{\"memory_mb\":-1e999}",
        "{\"memory_mb\":1e309}", "{\"memory_mb\":1.8e308}", "[{\"user\":\"a\"},{\"memory_mb\":1e400}]",
        "{\"requested_ttl_s\":-1}", "{\"requested_ttl_s\":-1e-300}", "{\"requested_ttl_s\":-9223372036854775808}",
        "{\"requested_ttl_s\":-4.9e-324}", "{\"memory_mb\":1e-99999}", "{\"memory_mb\":0e99999}"}) {
    same(body);
  }
}

// A request is the job's hard limit: 0 (a TTL no job survives) and absurd ones are refused by
// both paths alike, naming the field; the longest accepted is kMaxRequestedTtlS.
TEST(JobReader, RequestedTtlIsAPositiveBoundedNumberOfSeconds) {
  for (const char* body : {"{\"requested_ttl_s\":0}", "{\"requested_ttl_s\":-0}", "{\"requested_ttl_s\":0.0}",
                           "{\"requested_ttl_s\":1e300}", "{\"requested_ttl_s\":10000001}",
                           "[{\"requested_ttl_s\":72000},{\"requested_ttl_s\":0}]"})
    same(body);
  EXPECT_TRUE(same("[{\"requested_ttl_s\":72000},{\"requested_ttl_s\":10000000},{\"requested_ttl_s\":null},{}]"));
  for (const char* body : {"{\"requested_ttl_s\":0}", "{\"requested_ttl_s\":1e300}"}) {
    const Outcome o = reference(body, JobUse::Predict, 64);
    EXPECT_FALSE(o.ok) << body;
    EXPECT_EQ(o.status, 400) << body;
    EXPECT_EQ(o.field, "requested_ttl_s") << body;
    EXPECT_EQ(o.message,
              "field 'requested_ttl_s' must be a number of seconds in (0, 10000000]; leave it out (or null) for a job "
              "without a request")
        << body;
  }
  // Outcomes follow the same rule (their request bounds the kill margin's check).
  same("{\"wall_s\":5,\"requested_ttl_s\":0}", JobUse::Outcome);
}

// Syntax errors are told in the service's words with the byte where the parse stopped; the
// JSON library's own message (its exception ids and internals) never reaches a client.
TEST(JobReader, MalformedJsonIsToldInTheServicesOwnWords) {
  const struct {
    const char* body;
    const char* says;
  } cases[] = {{"{\"user\": ", "malformed JSON at byte 10"},
               {"{\"user\":\"a\",}", "malformed JSON at byte 13"},
               {"{\"memory_mb\":1e999}", "malformed JSON: a number beyond the range of a double"}};
  for (const auto& c : cases) {
    const Outcome o = reference(c.body, JobUse::Predict, 64);
    EXPECT_EQ(o.message, c.says) << c.body;
    EXPECT_EQ(o.message.find("json.exception"), std::string::npos) << c.body;
  }
}

TEST(JobReader, WrongTypesUnknownKeysAndPhases) {
  for (const char* body :
       {"7", "\"x\"", "null", "true", "[7]", "[{},[]]", "[{},null]", "{\"cpu_cores\":\"four\"}", "{\"user\":7}",
        "{\"user\":true}", "{\"user\":false}", "{\"cpu_cores\":true}", "{\"cpu_cores\":[1]}", "{\"cpu_cores\":{}}",
        "{\"user\":{\"name\":\"a\"}}", "[{\"user\":\"a\"},{\"reqested_ttl_s\":5}]", "{\"\":1}", "{\"User\":\"a\"}",
        "{\"user \":\"a\"}", "{\"wall_s\":5}", "{\"status\":\"DONE\"}",
        // Two problems in one job: nlohmann's objects iterate in key order, so "aaa" is named.
        "{\"zzz\":1,\"aaa\":2}", "{\"user\":1,\"cpu_cores\":\"x\"}",
        // A problem in a later job and one in an earlier job.
        "[{\"user\":\"a\"},{\"user\":\"b\"},{\"user\":3},{\"user\":4}]"}) {
    same(body);
  }
  // Per use: outcomes need wall_s; candidates take no match fields; slots only match fields.
  same("{\"user\":\"a\",\"wall_s\":5,\"status\":\"DONE\",\"cpu_time_s\":4.5}", JobUse::Outcome);
  same("[{\"wall_s\":5},{\"user\":\"a\"}]", JobUse::Outcome);
  same("[{\"wall_s\":5},{\"wall_s\":null}]", JobUse::Outcome);
  same("[{\"wall_s\":5},{\"wall_s\":5,\"wall_s\":null}]", JobUse::Outcome);
  same("[{\"wall_s\":-5}]", JobUse::Outcome);
  same("[1]", JobUse::Outcome);
  same("7", JobUse::Outcome);
  same("[{\"user\":\"a\"},{\"site\":\"CERN\"}]", JobUse::Candidate);
  same("[{\"user\":\"a\"},{\"wall_s\":5}]", JobUse::Candidate);
  same("{\"slot_time_left_s\":5,\"site\":\"CERN\"}", JobUse::Slot);
  same("{\"slot_time_left_s\":5,\"user\":\"x\"}", JobUse::Slot);
}

TEST(JobReader, BatchLimit) {
  EXPECT_TRUE(same(array_of(4), JobUse::Predict, 4));
  same(array_of(5), JobUse::Predict, 4);   // 413
  same(array_of(5), JobUse::Outcome, 4);   // 413, worded for outcomes
  same(array_of(5) + "x", JobUse::Predict, 4);  // malformed wins over too many
  same("[{\"user\":1}," + array_of(5).substr(1), JobUse::Predict, 4);  // too many wins over a bad job
  EXPECT_TRUE(same(array_of(1000), JobUse::Predict, 1000));
}

TEST(JobReader, DeepNesting) {
  // Deeper than kMaxJsonDepth (64) and than simdjson's 1024 levels: the answer is the
  // fallback's error, the same on both paths.
  for (int depth : {100, 1023, 1024, 1025, 5000}) {
    same(std::string(static_cast<std::size_t>(depth), '[') + std::string(static_cast<std::size_t>(depth), ']'));
    same("{\"user\":" + std::string(static_cast<std::size_t>(depth), '[') +
         std::string(static_cast<std::size_t>(depth), ']') + "}");
    same("[{\"user\":\"a\"},{\"site\":" + std::string(static_cast<std::size_t>(depth), '{') + "}]");  // unclosed
  }
  same(std::string(100000, '['));
  same(std::string(64, '[') + std::string(64, ']'));
  same(std::string(65, '[') + std::string(65, ']'));
}

// /v1/match bodies: the reader against read_match_nlohmann, which is the service's match
// parsing before simdjson moved from service.cpp into job_json.cpp unchanged.
struct MatchOutcome {
  Outcome jobs;
  std::vector<std::uint64_t> slot_num;
  std::vector<std::string> slot_cat;
  std::string order;
  std::size_t limit = 0;
};

template <class F>
MatchOutcome match_with(F&& read) {
  MatchOutcome o;
  std::vector<JobRecord> records(1);
  try {
    const JobReader::Match m = read(records);
    o.jobs.take(records, m.count);
    o.jobs.ok = true;
    for (std::size_t f = 0; f < kNumFields; ++f) {
      o.slot_num.push_back(std::bit_cast<std::uint64_t>(m.slot.num[f]));
      o.slot_cat.emplace_back(m.slot.cat[f]);
    }
    o.order = m.order;
    o.limit = m.limit;
    o.jobs.single = m.fast;
  } catch (const RequestError& e) {
    o.jobs.take(e);
  }
  return o;
}

bool same_match(const std::string& body, std::size_t max_batch = 8) {
  static JobReader reader;
  nlohmann::json doc;
  const MatchOutcome want = match_with([&](auto& r) { return serve::read_match_nlohmann(body, max_batch, r, doc); });
  const MatchOutcome got = match_with([&](auto& r) { return reader.read_match(body, max_batch, r); });
  EXPECT_EQ(got.jobs.ok, want.jobs.ok) << body << "\n  reference: " << want.jobs.message << "\n  reader: " << got.jobs.message;
  EXPECT_EQ(got.jobs.status, want.jobs.status) << body;
  EXPECT_EQ(got.jobs.message, want.jobs.message) << body;
  EXPECT_EQ(got.jobs.field, want.jobs.field) << body;
  EXPECT_EQ(got.jobs.index, want.jobs.index) << body;
  EXPECT_EQ(got.jobs.num, want.jobs.num) << body;
  EXPECT_EQ(got.jobs.cat, want.jobs.cat) << body;
  EXPECT_EQ(got.slot_num, want.slot_num) << body;
  EXPECT_EQ(got.slot_cat, want.slot_cat) << body;
  EXPECT_EQ(got.order, want.order) << body;
  EXPECT_EQ(got.limit, want.limit) << body;
  return got.jobs.single;  // fast
}

TEST(JobReader, MatchBodies) {
  const std::string slot = R"("slot":{"slot_time_left_s":36000,"slot_cores":8,"site":"CERN","host_speed":1.1})";
  const std::string jobs = R"("jobs":[{"job_id":17,"user":"alice","job_type":"MC","cpu_cores":8,"price":1},)"
                           R"({"job_id":18,"user":"bob","requested_ttl_s":80000,"cpu_cores":16}])";
  EXPECT_TRUE(same_match("{" + slot + "," + jobs + "}"));
  EXPECT_TRUE(same_match("{" + jobs + "," + slot + R"(,"order":"price","limit":1})"));
  EXPECT_TRUE(same_match("{" + slot + "," + jobs + R"(,"order":"age","limit":100})"));
  EXPECT_TRUE(same_match("{" + slot + "," + jobs + R"(,"order":"input","limit":18446744073709551615})"));
  EXPECT_TRUE(same_match("{" + slot + R"(,"jobs":[]})"));
  EXPECT_TRUE(same_match(R"({"slot":{"slot_time_left_s":1},"slot":{"slot_time_left_s":2},"jobs":[],"jobs":[{}]})"));
  for (const std::string& body : std::vector<std::string>{
           "{" + slot + "," + jobs + R"(,"limit":0})", "{" + slot + "," + jobs + R"(,"limit":-0})",
        "{" + slot + "," + jobs + R"(,"limit":-1})", "{" + slot + "," + jobs + R"(,"limit":1.0})",
        "{" + slot + "," + jobs + R"(,"limit":1e2})", "{" + slot + "," + jobs + R"(,"limit":"1"})",
        "{" + slot + "," + jobs + R"(,"limit":null})", "{" + slot + "," + jobs + R"(,"limit":18446744073709551616})",
        "{" + slot + "," + jobs + R"(,"order":"oldest"})", "{" + slot + "," + jobs + R"(,"order":null})",
        "{" + slot + "," + jobs + R"(,"order":1})", "{" + slot + "," + jobs + R"(,"zorder":1,"aaa":2})",
        "{" + slot + "," + jobs + "", "[" + slot + "]", "7", std::string("{") + jobs + "}",
        R"({"slot":{},"jobs":[]})", R"({"slot":{"slot_time_left_s":5,"user":"x"},"jobs":[]})",
        R"({"slot":{"slot_time_left_s":-5},"jobs":[]})", R"({"slot":7,"jobs":[]})", R"({"slot":null,"jobs":[]})",
        R"({"slot":{"slot_time_left_s":null},"jobs":[]})", "{" + slot + "}", "{" + slot + R"(,"jobs":{}})",
        "{" + slot + R"(,"jobs":null})", "{" + slot + R"(,"jobs":[{},{"site":"CERN"}]})",
        "{" + slot + R"(,"jobs":[{},{"wall_s":1}]})", "{" + slot + R"(,"jobs":[{},7]})",
        "{" + slot + R"(,"jobs":[{},{},{},{},{},{},{},{},{"user":1}]})",  // 413 before the bad job
        "{" + slot + R"(,"jobs":[{"cpu_cores":1e999}]})", "{" + slot + R"(,"jobs":[{"job_id":18446744073709551616}]})",
        "{" + slot + R"(,"jobs":[)" + std::string(2000, '[') + std::string(2000, ']') + "]}"}) {
    same_match(body);
  }
}

TEST(JobReader, ViewsStayValidUntilTheNextRead) {
  JobReader reader;
  std::vector<JobRecord> records;
  std::string body = R"([{"user":"alice","site":"CERN"},{"user":"bob"}])";
  const auto jobs = reader.read(body, JobUse::Predict, 10, records);
  body.assign(body.size(), ' ');  // the reader keeps its own copy
  ASSERT_EQ(jobs.count, 2u);
  EXPECT_TRUE(jobs.fast);
  EXPECT_EQ(records[0].text(Field::User), "alice");
  EXPECT_EQ(records[0].text(Field::Site), "CERN");
  EXPECT_EQ(records[1].text(Field::User), "bob");
  EXPECT_FALSE(records[1].known(Field::Site));
}

}  // namespace
}  // namespace ttlpred
