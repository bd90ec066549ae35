// The service's running set (docs/service.md, "Running jobs"): a model made for match time
// answers /v1/match with the history as of the match, running jobs included, exactly as the
// table walk of `ttlpred predict --at match` does; the set survives restarts (journal replay
// alone, and snapshot + journal); it is bounded; and bad starts are refused naming the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/trace_readers.hpp"
#include "serve/service.hpp"
#include "serve_test_util.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;

// A small trace with whole seconds: jobs of five users overlap, so many find jobs of their
// user running when they start.
JobTable overlapping_trace(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> wait(0, 1800), wall(60, 9000), gap(0, 240);
  const std::vector<std::string> types = {"MC", "USER", "MERGE"}, systems = {"pp", "PbPb"};
  JobTable t;
  JobRecord r;
  double submit = 1.8e9;
  for (std::size_t i = 0; i < n; ++i) {
    r.clear();
    submit += gap(rng);
    r[Field::JobId] = static_cast<double>(i);
    r[Field::SubmitTime] = submit;
    r.text(Field::User) = test::test_users()[(i * 7) % test::test_users().size()];
    r.text(Field::JobType) = types[i % types.size()];
    r.text(Field::InteractionType) = systems[(i / 3) % systems.size()];
    r[Field::CpuCores] = static_cast<double>(1u << (i % 4));
    r[Field::RequestedTtl] = 80000 + 100.0 * static_cast<double>(i % 50);
    r[Field::WaitTime] = wait(rng);
    r[Field::WallTime] = wall(rng);
    r[Field::Events] = std::floor(r[Field::WallTime] / static_cast<double>(8 + i % 5));  // 8-12 s an event
    t.append(r);
  }
  return t;
}

// The censored-rates model also reads the (job type, collision system) key, so that its
// journal lines and snapshots must carry interaction_type too.
std::string match_model(const std::string& dir, bool censored_rates = false) {
  const std::string path = dir + "/match.ttlp";
  const std::vector<HistoryKey> keys = censored_rates
                                           ? std::vector<HistoryKey>{HistoryKey::All, HistoryKey::User, HistoryKey::JobTypeSystem}
                                           : std::vector<HistoryKey>{HistoryKey::All, HistoryKey::User};
  test::write_test_model(path, 5, keys, PredictionTime::Match, censored_rates);
  // Answers of about an hour, below the requests: the comparisons see the network's numbers,
  // not the bounds (as write_hour_scale_test_model). The random network's output swings
  // wider with the work columns of the censored model, hence its narrower scale.
  ModelFile m = load_model_file(path);
  m.target.stddev = censored_rates ? 0.01 : 0.1;
  save_model_file(path, m);
  return path;
}

// The submit-phase fields of row i as a JSON object (what a broker sends for a waiting job).
json job_json(const JobTable& t, std::size_t i) {
  JobRecord r;
  t.record(i, r);
  return json{{"job_id", static_cast<std::uint64_t>(r[Field::JobId])},
              {"submit_time", r[Field::SubmitTime]},
              {"user", std::string(r.text(Field::User))},
              {"job_type", std::string(r.text(Field::JobType))},
              {"interaction_type", std::string(r.text(Field::InteractionType))},
              {"cpu_cores", r[Field::CpuCores]},
              {"requested_ttl_s", r[Field::RequestedTtl]},
              {"events", r[Field::Events]}};
}

// The trace's events in the order the table walk applies them: at each start, first every
// outcome finished by then (by finish, then start, then row), then the jobs starting then.
struct Event {
  double time;
  bool outcome;
  double start;
  std::size_t row;
};
std::vector<Event> events_of(const JobTable& t) {
  std::vector<Event> ev;
  const auto submit = t.num(Field::SubmitTime), wait = t.num(Field::WaitTime), wall = t.num(Field::WallTime);
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const double start = submit[i] + wait[i];
    ev.push_back({start, false, start, i});
    ev.push_back({start + wall[i], true, start, i});
  }
  std::sort(ev.begin(), ev.end(), [](const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    if (a.outcome != b.outcome) return a.outcome;  // finished by the start: seen by it
    if (a.start != b.start) return a.start < b.start;
    return a.row < b.row;
  });
  return ev;
}

// What `ttlpred predict --at match` answers for every row: the table walk's features.
std::vector<Prediction> batch_answers(const Predictor& p, const JobTable& t, HistoryMatrix* hm_out = nullptr) {
  HistoryState walk = p.initial_history();
  const HistoryMatrix hm = compute_history(t, walk, PredictionTime::Match);
  std::vector<std::size_t> rows(t.rows());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  if (hm_out) *hm_out = hm;
  return p.predict_rows(t, rows, hm);
}

std::uint64_t metric(const serve::Service& s, const std::string& name) {
  const std::string text = s.metrics_text().body;
  const auto at = text.find("\n" + name + " ");
  if (at == std::string::npos) return ~std::uint64_t{0};
  return std::stoull(text.substr(at + name.size() + 2));
}

// Options for a service of a fresh match-time model in a temp folder, on the clock `now`.
serve::ServiceOptions match_options(const double& now) {
  serve::ServiceOptions so = test::options_for(match_model(test::temp_dir()));
  so.clock = [&now] { return now; };
  return so;
}

// Drives a service through the trace's events with the clock at each event's time; `restart`
// is called before event k and may replace the service.
struct Driver {
  const JobTable& t;
  double clock = 0;
  bool via_started = false;  // starts by /v1/started and answers by /v1/predict, not /v1/match

  serve::ServiceOptions options(const std::string& model, const std::string& journal) {
    serve::ServiceOptions so = test::options_for(model);
    so.journal_dir = journal;
    so.snapshot_every = 0;
    so.clock = [this] { return clock; };
    return so;
  }

  // Returns the service's answer for the event's job when the event is a start.
  std::optional<Prediction> step(serve::Service& s, const Event& e) {
    clock = e.time;
    json job = job_json(t, e.row);
    if (e.outcome) {
      job["wall_s"] = t.num(Field::WallTime)[e.row];
      const serve::Reply r = s.outcomes(job.dump());
      EXPECT_EQ(r.status, 200) << r.body;
      return std::nullopt;
    }
    json answer;
    if (via_started) {
      json started = job;
      started["start_time"] = e.start;
      const serve::Reply st = s.started(started.dump());
      EXPECT_EQ(st.status, 200) << st.body;
      // A broker that matched elsewhere asks /v1/predict with the job's wait: its prediction
      // time is submit + wait, the start.
      job["wait_s"] = t.num(Field::WaitTime)[e.row];
      const serve::Reply r = s.predict(job.dump());
      EXPECT_EQ(r.status, 200) << r.body;
      answer = json::parse(r.body);
    } else {
      const json body = {{"slot", {{"slot_time_left_s", 1e9}}}, {"jobs", json::array({job})}};
      const serve::Reply r = s.match(body.dump());
      EXPECT_EQ(r.status, 200) << r.body;
      const json m = json::parse(r.body);
      EXPECT_EQ(m["matches"].size(), 1u) << r.body;
      if (m["matches"].empty()) return Prediction{};
      answer = m["matches"][0];
    }
    Prediction p;
    p.expected_wall_s = answer["expected_wall_s"].get<double>();
    p.safe_ttl_s = answer["safe_ttl_s"].get<double>();
    return p;
  }
};

void expect_answers_equal_the_walk(bool via_started, bool censored_rates = false) {
  const std::string dir = test::temp_dir();
  const std::string model = match_model(dir, censored_rates);
  const JobTable t = overlapping_trace(120, 3);
  const Predictor p = Predictor::load(model, {});
  HistoryMatrix hm;
  const std::vector<Prediction> want = batch_answers(p, t, &hm);

  // The running statistics are in play: many jobs start while jobs of their user run.
  const std::size_t user_running = p.encoder().history_config().stats_per_key() + p.encoder().history_config().running_offset();
  std::size_t with_running = 0;
  for (std::size_t i = 0; i < t.rows(); ++i) with_running += hm.row(i)[user_running] > 0 ? 1 : 0;
  EXPECT_GT(with_running, t.rows() / 3);
  // ... and they move the answers: with every running statistic as for "none running", most
  // answers differ.
  HistoryMatrix none = hm;
  const HistoryConfig& cfg = p.encoder().history_config();
  for (std::size_t i = 0; i < t.rows(); ++i)
    for (std::size_t k = 0; k < cfg.keys.size(); ++k) {
      float* run = none.values.data() + i * none.width + k * cfg.stats_per_key() + cfg.running_offset();
      run[0] = 0.0f;
      run[1] = run[2] = std::nanf("");
    }
  std::vector<std::size_t> rows(t.rows());
  std::iota(rows.begin(), rows.end(), std::size_t{0});
  const std::vector<Prediction> without = p.predict_rows(t, rows, none);
  std::size_t differ = 0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    differ += without[i].expected_wall_s != want[i].expected_wall_s ? 1 : 0;
    EXPECT_LT(want[i].safe_ttl_s, t.num(Field::RequestedTtl)[i]) << "row " << i << ": bounded by its request";
  }
  EXPECT_GT(differ, t.rows() / 3);

  Driver d{t};
  d.via_started = via_started;
  const std::vector<Event> ev = events_of(t);
  const std::size_t replay_alone = ev.size() / 3, snapshot_at = ev.size() / 2, with_snapshot = 2 * ev.size() / 3;
  auto service = std::make_unique<serve::Service>(d.options(model, dir + "/journal"));
  std::size_t answered = 0;
  for (std::size_t k = 0; k < ev.size(); ++k) {
    if (k == replay_alone || k == with_snapshot) {
      // A restart: the journal replay alone, then from the snapshot and the journal after it.
      const std::uint64_t running = metric(*service, "ttlpred_running_jobs");
      service.reset();
      service = std::make_unique<serve::Service>(d.options(model, dir + "/journal"));
      EXPECT_EQ(metric(*service, "ttlpred_running_jobs"), running) << "restart before event " << k;
      EXPECT_GT(running, 0u);
    }
    if (k == snapshot_at) service->snapshot_now();
    const auto got = d.step(*service, ev[k]);
    if (!got) continue;
    ++answered;
    EXPECT_EQ(got->expected_wall_s, want[ev[k].row].expected_wall_s) << "job " << ev[k].row << " at event " << k;
    EXPECT_EQ(got->safe_ttl_s, want[ev[k].row].safe_ttl_s) << "job " << ev[k].row << " at event " << k;
  }
  EXPECT_EQ(answered, t.rows());
  // Every start was closed by its outcome.
  EXPECT_EQ(metric(*service, "ttlpred_running_jobs"), 0u);
}

TEST(ServeRunning, MatchAnswersEqualTheTableWalkAtMatchTimeAcrossRestarts) { expect_answers_equal_the_walk(false); }

TEST(ServeRunning, StartedEventsAndPredictEqualTheTableWalkAcrossRestarts) { expect_answers_equal_the_walk(true); }

// With censored work rates the running jobs' work travels with their starts (journal lines,
// snapshots) and moves the rate estimates; so do their (job type, collision system) keys.
TEST(ServeRunning, CensoredRatesAnswerAsTheTableWalkAcrossRestarts) {
  expect_answers_equal_the_walk(false, true);
  const std::string dir = test::temp_dir();
  const Predictor p = Predictor::load(match_model(dir, true), {});
  const JobTable t = overlapping_trace(120, 3);
  HistoryMatrix with;
  batch_answers(p, t, &with);
  HistoryConfig plain = p.encoder().history_config();
  ASSERT_TRUE(plain.censored_rates);
  plain.censored_rates = false;
  const HistoryMatrix without = compute_history(t, plain);
  std::size_t moved = 0;
  for (std::size_t i = 0; i < with.values.size(); ++i) moved += with.values[i] != without.values[i] ? 1 : 0;
  EXPECT_GT(moved, t.rows() / 4);
}

// Without the running set the answers differ: what the equality above rests on.
TEST(ServeRunning, RunningJobsChangeTheAnswer) {
  double clock = 1.8e9;
  serve::Service s(match_options(clock));
  // No job_id: the probe's matches record no start.
  const std::string ask = R"({"slot":{"slot_time_left_s":1e9},"jobs":[{"user":"alice","submit_time":1.8e9}]})";
  clock += 600;
  const std::string before = s.match(ask).body;
  json starts = json::array();
  for (int i = 0; i < 5; ++i) starts.push_back({{"job_id", i}, {"user", "alice"}, {"start_time", 1.8e9 + 100 * i}});
  const serve::Reply r = s.started(starts.dump());
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["running"], 5);
  EXPECT_EQ(json::parse(r.body)["recorded"], true);
  const std::string after = s.match(ask).body;
  EXPECT_NE(before, after);
  EXPECT_EQ(metric(s, "ttlpred_running_jobs"), 5u);
  EXPECT_EQ(metric(s, "ttlpred_running_started_total"), 5u);
  // A match records its first match only, and a job matched again runs from the new match.
  const std::string two = R"({"slot":{"slot_time_left_s":1e9},"jobs":[{"job_id":"a","user":"bob"},{"job_id":"b","user":"bob"}]})";
  ASSERT_EQ(s.match(two).status, 200);
  ASSERT_EQ(s.match(two).status, 200);
  EXPECT_EQ(metric(s, "ttlpred_running_jobs"), 6u);
  // Outcomes close their jobs; one of a job never started closes nothing and is accepted.
  ASSERT_EQ(s.outcomes(R"([{"job_id":"a","user":"bob","wall_s":60},{"job_id":999,"user":"bob","wall_s":60}])").status, 200);
  EXPECT_EQ(metric(s, "ttlpred_running_jobs"), 5u);
  EXPECT_EQ(metric(s, "ttlpred_running_closed_total"), 1u);
}

TEST(ServeRunning, BadStartsAreRefusedNamingTheField) {
  const double now = 1.8e9;
  serve::ServiceOptions so = match_options(now);
  so.max_batch = 3;
  so.running_max_age_s = 86400;
  serve::Service s(so);
  auto expect = [&](const std::string& body, int status, const std::string& field, long index = -1) {
    const serve::Reply r = s.started(body);
    EXPECT_EQ(r.status, status) << body << " -> " << r.body;
    const json j = json::parse(r.body);
    EXPECT_EQ(j.value("field", ""), field) << body << " -> " << r.body;
    if (index >= 0) {
      EXPECT_EQ(j.value("index", -1L), index) << r.body;
    }
  };
  expect(R"({"user":"alice"})", 400, "job_id");
  expect(R"({"job_id":1.5})", 400, "job_id");
  expect(R"({"job_id":1,"start_time":"soon"})", 400, "start_time");
  expect(R"({"job_id":1,"start_time":-5})", 400, "start_time");
  expect(R"({"job_id":1,"start_time":1e300})", 400, "start_time");                 // far in the future
  expect(R"({"job_id":1,"start_time":1})", 400, "start_time");                     // older than the age limit
  expect(R"({"job_id":1,"submit_time":1800000000,"start_time":1799999000})", 400, "start_time");  // before its submission
  expect(R"({"job_id":1,"wall_s":5})", 400, "wall_s");                             // an outcome field
  expect(R"({"job_id":1,"colour":"red"})", 400, "colour");
  expect(R"([{"job_id":1},{"job_id":2},{"job_id":1}])", 409, "job_id", 2);
  expect(R"([{"job_id":1},{"job_id":2},{"job_id":3},{"job_id":4}])", 413, "");
  expect(R"("started")", 400, "");
  expect(R"({"job_id":1)", 400, "");
  EXPECT_EQ(metric(s, "ttlpred_running_jobs"), 0u);  // nothing refused was kept
  ASSERT_EQ(s.started(R"([{"job_id":1},{"job_id":"x"}])").status, 200);
  expect(R"([{"job_id":7},{"job_id":"x"}])", 409, "job_id", 1);  // running already
  EXPECT_EQ(metric(s, "ttlpred_running_jobs"), 2u);               // and the batch is all or nothing
  // Absurd outcomes of a running job are refused as before, and do not close it.
  EXPECT_EQ(s.outcomes(R"({"job_id":1,"wall_s":1e30})").status, 400);
  EXPECT_EQ(metric(s, "ttlpred_running_jobs"), 2u);
}

TEST(ServeRunning, TheSetIsBoundedByCapacityAndAge) {
  double now = 1.8e9;
  serve::ServiceOptions so = match_options(now);
  so.running_capacity = 4;
  so.running_max_age_s = 1000;
  serve::Service s(so);
  json starts = json::array();
  for (int i = 0; i < 6; ++i) starts.push_back({{"job_id", i}, {"user", "alice"}, {"start_time", now - 10 * (6 - i)}});
  starts[5]["start_time"] = now - 500;  // the earliest start: evicted first
  ASSERT_EQ(s.started(starts.dump()).status, 200);
  EXPECT_EQ(metric(s, "ttlpred_running_jobs"), 4u);
  EXPECT_EQ(metric(s, "ttlpred_running_evicted_total"), 2u);
  EXPECT_EQ(metric(s, "ttlpred_running_capacity"), 4u);
  // The evicted ones are the earliest starts (5, then 0): an outcome of 5 closes nothing.
  ASSERT_EQ(s.outcomes(R"([{"job_id":5,"wall_s":60},{"job_id":1,"wall_s":60}])").status, 200);
  EXPECT_EQ(metric(s, "ttlpred_running_closed_total"), 1u);
  // 995 s later the starts older than 1000 s are forgotten at the next start.
  now += 995;
  ASSERT_EQ(s.started(R"({"job_id":"late","user":"bob"})").status, 200);
  EXPECT_EQ(metric(s, "ttlpred_running_jobs"), 1u);
  EXPECT_EQ(metric(s, "ttlpred_running_expired_total"), 3u);
  EXPECT_EQ(metric(s, "ttlpred_running_max_age_seconds"), 1000u);

  so.running_max_age_s = 2e7;  // past the history's clip: refused at start
  EXPECT_THROW({ serve::Service bad(so); }, Error);
}

// The limits under the service's set (HistoryState): forgetting the starts too old to count
// changes no answer at that time or later, and the cap forgets the earliest start.
TEST(ServeRunning, PruningChangesNoLaterFeatureAndTheCapDropsTheEarliestStart) {
  HistoryConfig cfg;
  cfg.keys = {HistoryKey::All, HistoryKey::User};
  cfg.at = PredictionTime::Match;
  HistoryState state(cfg);
  state.set_running_limits(0, 1000);
  JobRecord r;
  r.text(Field::User) = "alice";
  const JobKeys keys = job_keys(r);
  for (std::uint64_t j = 0; j < 10; ++j) ASSERT_TRUE(state.start_running(j, keys, 100.0 * static_cast<double>(j)));
  std::vector<float> before(state.width()), after(state.width());
  // Starts 0, 100, ..., 900 s with an age limit of 1000 s: at t those at or before t - 1000 go.
  for (const auto& [t, forgotten] : {std::pair{1000.0, 1u}, std::pair{1350.0, 4u}, std::pair{1900.0, 10u}}) {
    HistoryState pruned = state;
    EXPECT_EQ(pruned.prune_running(t), forgotten) << t;
    for (const double later : {t, t + 50, t + 400}) {
      state.features(keys, JobAmounts{}, before.data(), later);
      pruned.features(keys, JobAmounts{}, after.data(), later);
      for (std::size_t k = 0; k < before.size(); ++k)
        EXPECT_TRUE(before[k] == after[k] || (std::isnan(before[k]) && std::isnan(after[k]))) << t << " " << later << " " << k;
    }
  }
  // The cap: starts 0..900, one more at 50 goes past 10 and the earliest (0) is forgotten.
  state.set_running_limits(10, 1000);
  EXPECT_EQ(state.running(), 10u);
  ASSERT_TRUE(state.start_running(99, keys, 50));
  EXPECT_EQ(state.running(), 10u);
  EXPECT_FALSE(state.is_running(0));
  EXPECT_TRUE(state.is_running(99));
  EXPECT_EQ(state.running_evicted(), 1u);
  EXPECT_THROW(state.set_running_limits(0, 0), Error);
  EXPECT_THROW(state.set_running_limits(0, 2e7), Error);
}

// A model made for submit time reads no running jobs: /v1/match records nothing and
// /v1/started is checked but not kept, and the metrics show no running set.
TEST(ServeRunning, ASubmitTimeModelKeepsNoRunningSet) {
  serve::ServiceOptions so = test::options_for(test::shared_test_model());
  serve::Service s(so);
  const serve::Reply r = s.started(R"({"job_id":1,"user":"alice"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["recorded"], false);
  EXPECT_EQ(s.started(R"({"user":"alice"})").status, 400);
  ASSERT_EQ(s.match(R"({"slot":{"slot_time_left_s":1e9},"jobs":[{"job_id":2,"user":"bob"}]})").status, 200);
  EXPECT_EQ(s.metrics_text().body.find("ttlpred_running_jobs"), std::string::npos);
}

// The real program: the starts /v1/match and /v1/started acknowledged are in the journal
// after a kill -9 (a match's start is written before its answer, if not yet flushed).
TEST(ServeRunning, KillNineKeepsEveryAcknowledgedStart) {
  if (!std::filesystem::exists(test::cli_binary())) GTEST_SKIP() << "build the ttlpred target first";
  const std::string dir = test::temp_dir();
  const std::string model = match_model(dir);
  auto running = [](httplib::Client& c) {
    auto m = c.Get("/metrics");
    if (!m) return ~std::uint64_t{0};
    const auto at = m->body.find("\nttlpred_running_jobs ");
    return at == std::string::npos ? ~std::uint64_t{0} : std::uint64_t{std::stoull(m->body.substr(at + 22))};
  };
  {
    test::ServeChild c(model, dir + "/journal");
    ASSERT_GT(c.port, 0);
    auto http = c.client();
    for (int i = 0; i < 20; ++i) {
      const json body = {{"slot", {{"slot_time_left_s", 1e9}}}, {"jobs", {{{"job_id", i}, {"user", "alice"}}}}};
      auto r = http.Post("/v1/match", body.dump(), "application/json");
      ASSERT_TRUE(r);
      ASSERT_EQ(r->status, 200) << r->body;
    }
    auto r = http.Post("/v1/started", R"([{"job_id":"x","user":"bob"},{"job_id":"y"}])", "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    r = http.Post("/v1/outcomes", R"({"job_id":3,"user":"alice","wall_s":100})", "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    for (int i = 20; i < 25; ++i) {  // after the last flush: written, not yet on disk
      const json body = {{"slot", {{"slot_time_left_s", 1e9}}}, {"jobs", {{{"job_id", i}, {"user", "alice"}}}}};
      ASSERT_EQ(http.Post("/v1/match", body.dump(), "application/json")->status, 200);
    }
    EXPECT_EQ(running(http), 26u);
    EXPECT_TRUE(WIFSIGNALED(c.signal_and_wait(SIGKILL)));
  }
  test::ServeChild again(model, dir + "/journal");
  ASSERT_GT(again.port, 0);
  auto http = again.client();
  EXPECT_EQ(running(http), 26u);
  // Read as a trace (what retrain reads), the journal holds the one outcome: starts are no jobs.
  JobTable jobs;
  ReadReport report;
  read_journal_folder(dir + "/journal", jobs, report);
  EXPECT_EQ(jobs.rows(), 1u);
  EXPECT_EQ(report.comment_lines, 27u);
}

// A journaled start the service cannot read stops the start naming the file and line.
TEST(ServeRunning, AMalformedStartLineInTheJournalNamesItsLine) {
  const std::string dir = test::temp_dir();
  const std::string model = match_model(dir);
  serve::ServiceOptions so = test::options_for(model);
  so.journal_dir = dir + "/j";
  { serve::Service s(so); }
  std::string journal;
  for (const auto& f : std::filesystem::directory_iterator(so.journal_dir))
    if (f.path().filename().string().rfind("journal-", 0) == 0) journal = f.path().string();
  ASSERT_FALSE(journal.empty());
  std::ofstream(journal, std::ios::app)
      << R"({"event":"started","start_time":"x","received_at":1,"job":{"job_id":1}})" << "\n";
  try {
    serve::Service s(so);
    FAIL() << "a malformed start line was replayed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("start_time"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(":1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ttlpred
