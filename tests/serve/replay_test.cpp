// One answer for one job, whoever asks: `eval --per-job`, `predict` and the service fed the
// trace in time order (/v1/predict at each job's submit time, /v1/outcomes at its finish,
// in one interleaved sequence) print the same expected wall time, safe TTL and cap flag for
// every job, to the printed decimal (docs/features.md, "One rule for every caller"). With an
// online calibration, `eval --calibration aci` and the service (`--calibration aci`, asked
// only for the jobs eval scores) agree until the first kill: eval learns a killed job's
// outcome when its TTL runs out, the service when the outcome is posted.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/read_report.hpp"
#include "data/trace_readers.hpp"
#include "model/model_file.hpp"
#include "serve/job_json.hpp"
#include "serve/service.hpp"
#include "test_support.hpp"

namespace ttlpred {
namespace {

using nlohmann::json;

// A trace row as the service receives it: every known field `use` allows.
json job_json(const JobTable& t, std::size_t row, serve::JobUse use) {
  json j = json::object();
  for (const FieldInfo& f : kFields) {
    if (!serve::field_allowed(f.phase, use)) continue;
    if (is_category(f.field)) {
      const auto code = t.codes(f.field)[row];
      if (code != kMissingCode) j[std::string(f.name)] = std::string(t.dict(f.field).value(code));
    } else {
      const double v = t.num(f.field)[row];
      if (std::isnan(v)) continue;
      // job_id is an integer or a string on the wire, never a float.
      if (f.field == Field::JobId) j[std::string(f.name)] = static_cast<std::uint64_t>(v);
      else j[std::string(f.name)] = v;
    }
  }
  return j;
}

// "expected,safe,capped" as the prediction files print them.
std::string printed(double expected, double safe, bool capped) {
  char b[96];
  std::snprintf(b, sizeof b, "%.1f,%.1f,%d", expected, safe, capped ? 1 : 0);
  return b;
}

// job_id -> "expected,safe,capped" from a CSV prediction file (job_id first).
std::map<std::string, std::string> read_prediction_file(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // header
  std::map<std::string, std::string> out;
  while (std::getline(in, line)) {
    std::stringstream s(line);
    std::string id, e, sf, c;
    std::getline(s, id, ',');
    std::getline(s, e, ',');
    std::getline(s, sf, ',');
    std::getline(s, c, ',');
    out[id] = e + "," + sf + "," + c;
  }
  return out;
}

std::string job_id_text(double id) {
  char b[32];
  std::snprintf(b, sizeof b, "%.0f", id);
  return b;
}

// Trains a small model on `trace` through the CLI, then checks the three answers job by job
// (with `calibration` other than static: eval's and the service's, up to the first kill, which
// `require_kill` asks to come; `batch_guard` on both sides). `train_flags` go to `train`.
void expect_one_answer(const std::string& trace, const std::string& calibration = "static", bool batch_guard = false,
                       bool require_kill = true, const std::string& train_flags = "") {
  const bool online = calibration != "static";
  const std::string dir = test::temp_dir();
  const std::string model = dir + "/m.ttlp", per_job = dir + "/eval.csv", predicted = dir + "/predict.csv";
  std::string out;
  int rc = test::run_cli("train --data '" + trace + "' --split 0.8 --out '" + model +
                             "' --hidden 24,24 --epochs 3 --quiet " + train_flags,
                         &out);
  if (rc == 127) GTEST_SKIP() << "build the ttlpred target to run this test";
  ASSERT_EQ(rc, 0) << out;
  ASSERT_EQ(test::run_cli("eval --model '" + model + "' --data '" + trace + "' --split 0.8 --per-job '" + per_job +
                              "' --calibration " + calibration + " --batch-guard " + (batch_guard ? "on" : "off"),
                          &out),
            0)
      << out;
  ASSERT_EQ(test::run_cli("predict --model '" + model + "' --data '" + trace + "' --out '" + predicted + "'", &out), 0)
      << out;
  const auto scored = read_prediction_file(per_job);
  const auto all = read_prediction_file(predicted);
  ASSERT_GT(scored.size(), 100u);

  // eval's scored jobs, as predict answers them.
  std::size_t eval_differ = 0;
  for (const auto& [id, answer] : scored) {
    if (online) break;  // predict answers with the model's own calibration
    const auto it = all.find(id);
    ASSERT_NE(it, all.end()) << "job " << id << " scored by eval, absent from predict";
    if (answer != it->second && ++eval_differ <= 5)
      ADD_FAILURE() << "job " << id << ": eval " << answer << ", predict " << it->second;
  }
  EXPECT_EQ(eval_differ, 0u) << "of " << scored.size() << " scored jobs";

  // The service, from the empty history a walk of the whole trace starts from, fed the trace
  // in time order. At one instant: outcomes of jobs submitted earlier, then the predictions
  // of the jobs submitted then (which do not see each other), then the outcomes of jobs
  // submitted and finished at that same instant; outcomes in (finish, submit, row) order.
  ModelFile m = load_model_file(model);
  m.history.clear();
  const std::string cold = dir + "/cold.ttlp";
  save_model_file(cold, m);
  serve::ServiceOptions so;
  so.model_path = cold;
  so.calibration.method = online_method_from_name(calibration);
  so.calibration.batch_guard = batch_guard;
  serve::Service service(so);

  ReadReport report;
  const JobTable t = read_trace(trace, report);
  const auto submit = t.num(Field::SubmitTime), wait = t.num(Field::WaitTime), wall = t.num(Field::WallTime);
  using Event = std::tuple<double, int, double, std::size_t>;  // time, phase, submit, row
  std::vector<Event> events;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    if (std::isnan(submit[r])) continue;
    events.emplace_back(submit[r], 1, submit[r], r);
    if (wall[r] >= 0 && std::isfinite(wall[r])) {
      const double finish = submit[r] + (std::isnan(wait[r]) || wait[r] < 0 ? 0.0 : wait[r]) + wall[r];
      events.emplace_back(finish, finish > submit[r] ? 0 : 2, submit[r], r);
    }
  }
  std::sort(events.begin(), events.end());
  const auto ids = t.num(Field::JobId);
  // Online: the first time eval learns of a kill (a scored job that ran past its safe TTL
  // and not past its request, known when that TTL ran out).
  double first_kill = INFINITY;
  const auto req = t.num(Field::RequestedTtl);
  for (std::size_t r = 0; online && r < t.rows(); ++r) {
    const auto it = scored.find(job_id_text(ids[r]));
    if (it == scored.end()) continue;
    const double safe = std::stod(it->second.substr(it->second.find(',') + 1)) - 0.1;  // printed to 0.1
    if (wall[r] > safe && (!(req[r] > 0) || wall[r] <= req[r]))
      first_kill = std::min(first_kill, submit[r] + (std::isnan(wait[r]) || wait[r] < 0 ? 0.0 : wait[r]) + safe);
  }
  std::size_t compared = 0, differ = 0, asked = 0;
  for (const auto& [time, phase, s, r] : events) {
    // Online, the service answers only the jobs eval scores: the calibrator learns from
    // the outcomes of jobs it answered, as eval's learns from the scored jobs'.
    if (phase == 1 && online && !scored.contains(job_id_text(ids[r]))) continue;
    if (phase == 1) {
      const serve::Reply reply = service.predict(job_json(t, r, serve::JobUse::Predict).dump());
      ASSERT_EQ(reply.status, 200) << reply.body;
      const json body = json::parse(reply.body);
      const json& p = body.contains("predictions") ? body["predictions"][0] : body;
      const std::string got = printed(p["expected_wall_s"].get<double>(), p["safe_ttl_s"].get<double>(),
                                      p.value("capped", false));
      ++asked;
      const auto it = online ? scored.find(job_id_text(ids[r])) : all.find(job_id_text(ids[r]));
      ASSERT_NE(it, all.end()) << "job " << ids[r];
      if (online && !(s < first_kill)) continue;
      ++compared;
      if (got != it->second && ++differ <= 5) ADD_FAILURE() << "job " << ids[r] << ": service " << got << ", predict " << it->second;
    } else {
      const serve::Reply reply = service.outcomes(job_json(t, r, serve::JobUse::Outcome).dump());
      ASSERT_EQ(reply.status, 200) << reply.body;
    }
  }
  EXPECT_EQ(differ, 0u) << "of " << compared;
  if (!online) {
    EXPECT_EQ(compared, t.rows());
    return;
  }
  EXPECT_EQ(asked, scored.size());
  EXPECT_GT(compared, 20u) << "jobs before the first kill";
  if (require_kill) {
    EXPECT_LT(compared, asked) << "no job was killed: the calibrator was never moved by a kill";
  }
}

// A 3 000-job synthetic trace written by `ttlpred generate`, or "" when the program is not built.
std::string generated_trace() {
  const std::string trace = test::temp_dir() + "/synth.csv";
  std::string out;
  const int rc = test::run_cli("generate --jobs 3000 --seed 5 --out '" + trace + "'", &out);
  if (rc == 127) return "";
  EXPECT_EQ(rc, 0) << out;
  return trace;
}

TEST(OneAnswer, EvalPredictAndTheServiceAgreeOnASyntheticTrace) {
  const std::string trace = generated_trace();
  if (trace.empty()) GTEST_SKIP() << "build the ttlpred target to run this test";
  expect_one_answer(trace);
}

TEST(OneAnswer, EvalAndTheServiceAgreeUnderTheAciCalibrationUntilTheFirstKill) {
  const std::string trace = generated_trace();
  if (trace.empty()) GTEST_SKIP() << "build the ttlpred target to run this test";
  // A mean-only model without the batch guard, so that this trace has a kill that moves the
  // level (the default heads and guard kill none of its 600 scored jobs).
  expect_one_answer(trace, "aci", false, true, "--quantiles off");
}

// With it (the default), the service counts a user's unresolved jobs as eval's scoring does.
TEST(OneAnswer, EvalAndTheServiceAgreeUnderTheAciCalibrationWithTheBatchGuard) {
  const std::string trace = generated_trace();
  if (trace.empty()) GTEST_SKIP() << "build the ttlpred target to run this test";
  expect_one_answer(trace, "aci", true, false);
}

TEST(OneAnswer, EvalPredictAndTheServiceAgreeOnTheFirstJobsOfKthSp2) {
  const std::string kth = test::shared_trace("KTH-SP2__log.swf");
  if (kth.empty()) GTEST_SKIP() << "../shared is absent";
  // The header and the first 3 000 jobs.
  const std::string dir = test::temp_dir();
  const std::string trace = dir + "/kth-3000.swf";
  std::ifstream in(kth);
  std::ofstream cut(trace);
  std::string line;
  std::size_t jobs = 0;
  while (jobs < 3000 && std::getline(in, line)) {
    cut << line << '\n';
    jobs += !line.empty() && line[0] != ';';
  }
  cut.close();
  expect_one_answer(trace);
}

}  // namespace
}  // namespace ttlpred
