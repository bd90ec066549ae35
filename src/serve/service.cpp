#include "serve/service.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "data/trace_readers.hpp"
#include "features/key_hash.hpp"
#include "serve/event_log.hpp"
#include "serve/job_json.hpp"
#include "serve/outcome_record.hpp"
#include "serve/running_jobs.hpp"
#include "util/binary_io.hpp"
#include "util/file_io.hpp"

namespace ttlpred::serve {
namespace {

using nlohmann::json;

std::string fnv1a_hex(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (std::uint8_t b : bytes) {
    h ^= b;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

Reply error_reply(int status, std::string_view message, std::string_view field = {}, long index = -1) {
  return {status, error_body(message, field, index)};
}

json parse_body(std::string_view body) { return parse_json_body(body); }

// simdjson for valid request bodies; the nlohmann path (the reference) for the rest and for
// every error. One per server thread; its records' strings live until the thread's next read.
JobReader& reader() {
  thread_local JobReader r;
  return r;
}

// Per-thread buffers stay warm for bodies up to this size; past it they are freed after the
// request, so a few large bodies do not pin tens of MiB on every thread.
constexpr std::size_t kKeepBufferBytes = 1u << 20;
constexpr std::size_t kKeepRecords = 1024;

void release_buffers(std::size_t body_bytes);

// Buffers reused by each server thread, so that a warm request does not allocate for them.
struct Scratch {
  std::vector<JobRecord> records;
  std::vector<Prediction> predictions;
  std::vector<std::size_t> order;
  std::vector<ServedPrediction> served;
  std::vector<RecentPredictions::Entry> entries;
};
Scratch& scratch(std::size_t n) {
  thread_local Scratch s;
  if (s.records.size() < n) s.records.resize(n);
  if (s.predictions.size() < n) s.predictions.resize(n);
  if (s.served.size() < n) s.served.resize(n);
  return s;
}

// After a large body the records go too: their strings (a 4 MiB user name) would otherwise
// stay until the thread's next request.
void release_buffers(std::size_t body_bytes) {
  reader().release_if_large(kKeepBufferBytes);
  Scratch& s = scratch(0);
  if (s.records.size() > kKeepRecords || body_bytes > kKeepBufferBytes) {
    std::vector<JobRecord>().swap(s.records);
    std::vector<Prediction>().swap(s.predictions);
    std::vector<std::size_t>().swap(s.order);
    std::vector<ServedPrediction>().swap(s.served);
    std::vector<RecentPredictions::Entry>().swap(s.entries);
  }
}

// Adds job i's served prediction to `entries` when the job has a job_id.
void keep_served(Scratch& s, std::size_t i) {
  if (const auto key = job_key(s.records[i])) s.entries.push_back({*key, s.served[i]});
}

// The mondrian key of a job: the history keys' string hash of its key field's text, folded to
// 32 bits (0: unknown), so that one user is one key whatever order users are first seen in.
std::uint32_t text_key(std::string_view text) {
  if (text.empty()) return 0;
  const std::uint64_t h = keyhash::of_string(text);
  const auto folded = static_cast<std::uint32_t>(h ^ (h >> 32));
  return folded == 0 ? 1 : folded;
}

constexpr std::string_view kLearnedMagic = "TTLPLRN1";
// 1: the live windows and the drift test over all outcomes; 2 adds the per-group windows and
// drift tests (live_groups.hpp) after the alarm count; 3 the job ids whose outcome was taught
// (taught_outcomes.hpp) before the calibration. Older states still load (what they lack
// starts empty).
constexpr std::uint32_t kLearnedVersion = 3;

void append_prediction(std::string& out, const Prediction& p) {
  out += "{\"expected_wall_s\":";
  append_number(out, p.expected_wall_s);
  out += ",\"safe_ttl_s\":";
  append_number(out, p.safe_ttl_s);
  out += p.capped ? ",\"capped\":true}" : ",\"capped\":false}";
}

std::string format_number(double v) {
  std::string s;
  append_number(s, v);
  return s;
}

void append_json_string(std::string& out, const std::string& s) {
  out += json(s).dump(-1, ' ', false, json::error_handler_t::replace);
}

template <class F>
Reply guarded(F&& f) {
  try {
    return f();
  } catch (const RequestError& e) {
    return error_reply(e.status(), e.what(), e.field(), e.index());
  } catch (const Error& e) {
    return error_reply(500, e.what());
  } catch (const std::exception& e) {
    return error_reply(500, std::string("internal error: ") + e.what());
  }
}

}  // namespace

std::shared_ptr<const LoadedModel> load_model(const std::string& path, const PredictorOptions& options,
                                              std::uint64_t max_bytes) {
  // The header first: a file that is no model, or is padded past its payload, is refused
  // after one small read instead of after reading (and holding) all of it.
  const std::vector<std::uint8_t> bytes = read_regular_file(
      path, max_bytes,
      [&](const std::vector<std::uint8_t>& head, std::uint64_t size) {
        check_container_head(head, size, std::string_view(kModelFileMagic, 8), kModelFileVersion, path);
      },
      kContainerHeaderBytes);
  auto m = std::make_shared<LoadedModel>(
      LoadedModel{Predictor(parse_model_file(bytes, path), options, path), fnv1a_hex(bytes), path});
  // Warm up this thread's buffers and the plan once, so a broken plan fails here, not on
  // the first request.
  JobRecord probe;
  Prediction out;
  const HistoryState empty = m->predictor.initial_history();
  m->predictor.predict(std::span<const JobRecord>(&probe, 1), empty, std::span<Prediction>(&out, 1));
  return m;
}

Service::Service(ServiceOptions options)
    : options_(std::move(options)),
      recent_(options_.recent_predictions),
      taught_(options_.recent_predictions),
      drift_(options_.drift) {
  if (options_.max_batch == 0) throw Error("--max-batch must be at least 1");
  if (!(options_.max_outcome_wall_s > 0) || !std::isfinite(options_.max_outcome_wall_s))
    throw Error("--max-outcome-wall must be a finite number of seconds > 0");
  if (options_.history_capacity != 0 && options_.history_capacity < 100)
    throw Error("--history-capacity must be 0 (no limit) or at least 100 keys");
  if (std::isnan(options_.outcome_kill_margin_s) || !std::isfinite(options_.outcome_kill_margin_s))
    throw Error("--outcome-kill-margin must be a finite number of seconds (negative: no check against the request)");
  if (!(options_.running_max_age_s > 0) || !(options_.running_max_age_s <= kMaxHistoryWallS))
    throw Error("--running-max-age must be a number of seconds in (0, 1e7]");
  if (options_.calibration.method == OnlineMethod::Mondrian) {
    calibration_key_ = field_by_name(options_.calibration_key);
    if (!calibration_key_ || info(*calibration_key_).kind != FieldKind::Category)
      throw Error("--calibration-key '" + options_.calibration_key + "' is not a categorical job field (user, queue, job_type ...)");
  }
  auto model = load_model(options_.model_path, options_.predictor, options_.max_model_bytes);
  policy_.emplace(make_policy(*model));
  const HistoryConfig& cfg = model->predictor.encoder().history_config();
  std::string learned_version;  // the model the snapshot's learned state was learned under
  if (!options_.journal_dir.empty()) {
    journal_ = std::make_unique<OutcomeJournal>(options_.journal_dir);
    if (auto snap = journal_->snapshot_path()) {
      history_.emplace(HistoryState::load(*snap));
      if (!(history_->config() == cfg))
        throw Error(*snap + ": the history snapshot's configuration differs from the model's; use a fresh --journal folder");
      learned_version = load_learned(OutcomeJournal::learned_path(*snap), model);
    }
  }
  if (!history_) history_.emplace(model->predictor.initial_history());
  history_->set_capacity(options_.history_capacity);  // before the replay: bounded throughout
  history_->set_running_limits(options_.running_capacity, options_.running_max_age_s);
  tracks_running_ = cfg.running_stats();
  if (journal_) {
    JobRecord r;
    std::string served_version = learned_version;
    replayed_ = journal_->replay([&](std::string_view text, const std::string& file, std::size_t line) {
      if (options_.stop && options_.stop->load(std::memory_order_relaxed))
        throw Error("stopped by a signal during the journal replay (at " + file + ":" + std::to_string(line) +
                    "); the journal is unchanged");
      try {
        json line = parse_body(text);
        if (is_started_line(line)) {
          const StartedLine start = read_started_line(line, r);
          if (tracks_running_) apply_start(*job_key(r), r, start.start_s, start.received_at);
          return;
        }
        const OutcomeRecord rec = read_outcome_record(std::move(line));
        job_from_json(rec.outcome, JobUse::Outcome, -1, r);
        close_run(r);
        if (first_outcome(r)) history_->observe(r);
        if (rec.served) {
          const double wall = r[Field::WallTime];
          // Served by another model than the outcome before (or than the snapshot's): a reload
          // came between them, and restarted the drift tests as it does now.
          const std::string_view version(rec.served->model_version.data(), rec.served->model_version.size());
          if (!served_version.empty() && version != served_version) restart_drift_tests();
          served_version = version;
          learn_calibration(*rec.served, wall);
          learn_quality(*model, *rec.served, wall, rec.received_at.value_or(rec.served->predicted_at), false,
                        version == model->version);
        }
      } catch (const RequestError& e) {
        throw InputError(file, line, e.what());
      }
    });
    // The journal ends under another model than this start's (a reload or a retrain swap
    // came before the restart): its residuals are not this model's.
    if (!served_version.empty() && served_version != model->version) restart_drift_tests();
  }
  model_.store(std::move(model));
  ready_.store(true);
}

double Service::now() const { return options_.clock ? options_.clock() : unix_now(); }

TtlPolicy Service::make_policy(const LoadedModel& model) const {
  TtlPolicy policy(model.predictor, options_.calibration);
  if (options_.calibration.method != OnlineMethod::Static && !policy.calibrated())
    log_event("warn", "calibration_off",
              {{"model_version", model.version},
               {"message", model.path + " has no safe-TTL calibration: its answers are the expected wall times, "
                                        "and the " + std::string(online_method_name(options_.calibration.method)) +
                                        " calibration stays off"}});
  return policy;
}

void Service::calibrate(const LoadedModel& model, std::span<const JobRecord> jobs, std::span<Prediction> preds,
                        std::span<ServedPrediction> served) const {
  const double at = now();
  std::array<char, 16> version{};
  std::copy_n(model.version.data(), std::min(model.version.size(), version.size()), version.begin());
  const OnlineMethod method = policy_->learns() ? policy_->method() : OnlineMethod::Static;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    ServedPrediction& s = served[i];
    s.predicted_at = at;
    s.model_version = version;
    s.method = method;
    s.decision = policy_->decide(preds[i], jobs[i][Field::RequestedTtl],
                                 calibration_key_ ? text_key(jobs[i].text(*calibration_key_)) : 0);
  }
}

void Service::learn_calibration(const ServedPrediction& served, double wall_s) {
  // An answer of another method (the service was restarted with another --calibration)
  // holds no decision this policy can learn from.
  if (policy_->learns() && served.method == policy_->method()) policy_->observe(served.decision, wall_s);
}

void Service::learn_quality(const LoadedModel& model, const ServedPrediction& served, double wall_s,
                            double received_at, bool log, bool grouped) {
  const OnlineDecision& d = served.decision;
  const ScoredOutcome scored{received_at, wall_s, d.job.pred_s, d.ttl_s, d.job.requested_s};
  quality_.add(scored);
  if (!grouped) return;  // and the drift tests restart before this start's model serves
  const std::string group = live_group_name(model.predictor, d.job.group);
  if (!group.empty()) group_quality_.at(group).add(scored);
  if (!drift_.add(group, log_residual(wall_s, d.job.pred_s))) return;
  drift_raised_ = true;
  ++drift_alarms_;
  if (log) {
    const DriftTest::Alarm& a = drift_.last_alarm();
    log_event("warn", "drift_alarm",
              {{"direction", a.test.up > drift_.options().threshold ? "longer" : "shorter"},
               {"statistic", std::max(a.test.up, a.test.down)},
               {"threshold", drift_.options().threshold},
               {"scope", drift_scope_name(drift_.options().scope)},
               {"group", a.group},
               {"outcomes", a.test.count},
               {"mean_log_residual", a.test.mean},
               {"model_version", std::string(served.model_version.data(), served.model_version.size())},
               {"message", "the run times of matched outcomes drifted from the model's expectations (Page-Hinkley on "
                           "the log residuals); retrain or reload a newer model"}});
  }
}

void Service::save_snapshot(const std::string& history_path) const {
  // The learned state first: whenever a snapshot's history exists, so does its state.
  const std::string path = OutcomeJournal::learned_path(history_path);
  BinaryWriter w;
  w.put_string(model_.load()->version);
  quality_.write_state(w);
  drift_.write_all_state(w);
  w.put<std::uint8_t>(drift_raised_ ? 1 : 0);
  w.put<std::uint64_t>(drift_alarms_);
  group_quality_.write_state(w);
  drift_.write_group_state(w);
  taught_.write(w);
  w.put<std::uint8_t>(policy_->learns() ? 1 : 0);
  if (policy_->learns()) policy_->write_state(w);
  write_file_atomic(path, seal_container(kLearnedMagic, kLearnedVersion, w.bytes()));
  try {
    history_->save(history_path);
  } catch (...) {
    // A learned state without its history is never read (the history names the snapshot);
    // removed so that a failed snapshot leaves the folder as it found it.
    std::error_code ec;
    std::filesystem::remove(path, ec);
    throw;
  }
}

void Service::restart_drift_tests() {
  drift_.reset();
  drift_raised_ = false;
}

std::string Service::load_learned(const std::string& path, const std::shared_ptr<const LoadedModel>& model) {
  // A snapshot written before the service learned anything but the history has none.
  if (!std::filesystem::exists(path)) return {};
  const OpenedContainer c = open_container(read_file_bytes(path), kLearnedMagic, kLearnedVersion, path);
  BinaryReader r(c.payload, path);
  const std::string version = r.get_string(64);
  quality_.read_state(r);
  drift_.read_all_state(r);
  drift_raised_ = r.get<std::uint8_t>() != 0;
  drift_alarms_ = r.get<std::uint64_t>();
  if (c.version >= 2) {
    group_quality_.read_state(r);
    drift_.read_group_state(r);
  }
  if (c.version >= 3) taught_.read(r);
  const bool had = r.get<std::uint8_t>() != 0;
  if (!had || !policy_->learns()) return version;  // the calibration was off then, or is now: start from the model's level
  try {
    TtlPolicy restored = *policy_;
    restored.read_state(r);
    if (version != model->version) restored.rebase(model->predictor.model().safe_ttl);  // as a reload would
    policy_ = std::move(restored);
  } catch (const Error& e) {
    // Another --calibration or --alpha than the state was learned with: the learned level
    // answers another question. Start from the model's, and say so.
    log_event("warn", "calibration_not_restored", {{"path", path}, {"message", e.what()}});
  }
  return version;
}

double Service::calibration_level() const {
  std::shared_lock lock(history_mutex_);
  return policy_->level();
}

OnlineMethod Service::calibration_method() const {
  std::shared_lock lock(history_mutex_);
  return policy_->learns() ? policy_->method() : OnlineMethod::Static;
}

std::uint64_t Service::drift_alarms() const {
  std::lock_guard lock(outcomes_mutex_);
  return drift_alarms_;
}

Service::DriftStanding Service::drift_standing() const {
  std::lock_guard lock(outcomes_mutex_);
  // A state restored from a snapshot has no last alarm: the test's own minimum stands in.
  return {drift_raised_, matched_ + unmatched_no_id_ + unmatched_unknown_ + unmatched_older_,
          std::max(drift_.last_alarm().test.count, options_.drift.min_outcomes)};
}

std::uint64_t Service::history_observed() const {
  std::shared_lock lock(history_mutex_);
  return history_->observed();
}

Reply Service::predict(std::string_view body) {
  struct Release {
    std::size_t body_bytes;
    ~Release() { release_buffers(body_bytes); }
  } release{body.size()};
  return guarded([&]() -> Reply {
    const JobReader::Jobs jobs = reader().read(body, JobUse::Predict, options_.max_batch, scratch(0).records);
    const std::size_t n = jobs.count;
    const bool single = jobs.single;
    Scratch& s = scratch(n);
    std::shared_ptr<const LoadedModel> model;
    {
      std::shared_lock lock(history_mutex_);
      model = model_.load();  // under the lock: the policy answers through this model's table
      model->predictor.predict(std::span<const JobRecord>(s.records.data(), n), *history_,
                               std::span<Prediction>(s.predictions.data(), n));
      calibrate(*model, std::span<const JobRecord>(s.records.data(), n), std::span<Prediction>(s.predictions.data(), n),
                std::span<ServedPrediction>(s.served.data(), n));
    }
    // Kept before the answer goes out, so that the job's outcome, however soon, finds it.
    s.entries.clear();
    for (std::size_t i = 0; i < n; ++i) keep_served(s, i);
    recent_.record(s.entries);
    metrics_.add_predictions(n);
    std::string out;
    out.reserve(64 + n * 64);
    if (single) {
      append_prediction(out, s.predictions[0]);
      out.pop_back();
      out += ",\"model_version\":\"";
      out += model->version;
      out += "\"}";
    } else {
      out += "{\"model_version\":\"";
      out += model->version;
      out += "\",\"predictions\":[";
      for (std::size_t i = 0; i < n; ++i) {
        if (i) out += ',';
        append_prediction(out, s.predictions[i]);
      }
      out += "]}";
    }
    return {200, std::move(out)};
  });
}

Reply Service::match(std::string_view body) {
  struct Release {
    std::size_t body_bytes;
    ~Release() { release_buffers(body_bytes); }
  } release{body.size()};
  return guarded([&]() -> Reply {
    const JobReader::Match req = reader().read_match(body, options_.max_batch, scratch(0).records);
    const JobRecord& slot = req.slot;
    const std::size_t n = req.count;
    const std::string_view order = req.order;
    const std::size_t limit = req.limit;

    Scratch& s = scratch(n);
    // A model made for match time predicts each job as of this match: it has waited from its
    // submission until now, and it sees the jobs running now (docs/service.md, "Prediction time").
    const bool at_match = tracks_running_;
    const double match_time = at_match ? now() : 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      JobRecord& r = s.records[i];
      // The slot's host fields are what the job would run on: predict with them.
      for (const FieldInfo& f : kFields) {
        if (f.phase != Phase::Match || !slot.known(f.field)) continue;
        if (f.kind == FieldKind::Category) {
          r.text(f.field) = slot.text(f.field);
        } else {
          r[f.field] = slot[f.field];
        }
      }
      if (at_match && r.known(Field::SubmitTime)) r[Field::WaitTime] = std::max(0.0, match_time - r[Field::SubmitTime]);
    }
    std::shared_ptr<const LoadedModel> model;
    {
      std::shared_lock lock(history_mutex_);
      model = model_.load();
      model->predictor.predict(std::span<const JobRecord>(s.records.data(), n), *history_,
                               std::span<Prediction>(s.predictions.data(), n));
      calibrate(*model, std::span<const JobRecord>(s.records.data(), n), std::span<Prediction>(s.predictions.data(), n),
                std::span<ServedPrediction>(s.served.data(), n));
    }
    metrics_.add_predictions(n);
    s.entries.clear();

    s.order.resize(n);
    std::iota(s.order.begin(), s.order.end(), std::size_t{0});
    auto num_or = [&](std::size_t i, Field f, double fallback) {
      return s.records[i].known(f) ? s.records[i][f] : fallback;
    };
    if (order == "price")  // highest price first; unknown price last
      std::stable_sort(s.order.begin(), s.order.end(), [&](std::size_t a, std::size_t b) {
        return num_or(a, Field::Price, -1) > num_or(b, Field::Price, -1);
      });
    if (order == "age")  // oldest submission first; unknown submit time last
      std::stable_sort(s.order.begin(), s.order.end(), [&](std::size_t a, std::size_t b) {
        return num_or(a, Field::SubmitTime, 1e300) < num_or(b, Field::SubmitTime, 1e300);
      });

    const double time_left = slot[Field::SlotTimeLeft];
    const double cores = slot.known(Field::SlotCores) ? slot[Field::SlotCores] : 1e300;
    std::string out;
    out.reserve(96 + n * 96);
    out += "{\"model_version\":\"";
    out += model->version;
    out += "\",\"matches\":[";
    std::size_t matched = 0, first = n;
    for (std::size_t k = 0; k < n && matched < limit; ++k) {
      const std::size_t i = s.order[k];
      const Prediction& p = s.predictions[i];
      const double need_cores = num_or(i, Field::CpuCores, 1);
      if (!(p.safe_ttl_s <= time_left) || need_cores > cores) continue;
      keep_served(s, i);  // only a matched job was given this TTL
      if (matched == 0) first = i;
      if (matched++) out += ',';
      out += "{\"index\":";
      out += std::to_string(i);
      if (const std::string& id = reader().job_id_json(i); !id.empty()) {
        out += ",\"job_id\":";
        out += id;  // exactly as sent: a double would round 64-bit identifiers
      }
      out += ',';
      std::string pred;
      append_prediction(pred, p);
      out.append(pred, 1);  // without its opening brace: the fields join this object
    }
    out += "],\"considered\":";
    out += std::to_string(n);
    out += '}';
    recent_.record(s.entries);
    if (at_match && first < n && !reader().job_id_json(first).empty())
      record_match_start(s.records[first], reader().job_id_json(first), match_time);
    return {200, std::move(out)};
  });
}

Reply Service::outcomes(std::string_view body) {
  return guarded([&]() -> Reply {
    const json j = parse_json_batch(body, options_.max_batch, "outcomes",
                                    "the body must be an outcome object or an array of them");
    const bool single = j.is_object();
    const std::size_t n = single ? 1 : j.size();
    // Validate the whole batch first: it is applied all or nothing.
    std::vector<JobRecord> records(n);
    for (std::size_t i = 0; i < n; ++i) {
      const json& o = single ? j : j[i];
      const long index = single ? -1 : static_cast<long>(i);
      job_from_json(o, JobUse::Outcome, index, records[i]);
      check_outcome_bounds(records[i], index);
    }
    std::uint64_t observed = 0, repeated_now = 0;
    bool durable = false;
    {
      // The journal lock orders appends and applies alike, so a replay rebuilds exactly this
      // state; the history lock is only taken to apply, so predictions never wait for a disk
      // flush.
      std::lock_guard order(outcomes_mutex_);
      const double received = now();
      const auto model = model_.load();
      // Each outcome's served prediction (docs/service.md, "Served predictions"): known when
      // its job_id was answered by the model serving now and not already matched (a job id
      // twice in one batch matches once).
      std::vector<std::optional<ServedPrediction>> served(n);
      std::vector<std::uint64_t> found;
      std::unordered_set<std::uint64_t> seen;
      std::uint64_t no_id = 0, unknown = 0, older = 0, repeated = 0;
      // Whether each outcome teaches the history: the first of its job_id (taught_outcomes.hpp).
      // Remembered only once journaled, so that an outcome refused by a failing disk is new
      // when it is sent again.
      std::vector<std::uint8_t> teach(n, 1);
      std::string lines;
      for (std::size_t i = 0; i < n; ++i) {
        const auto key = job_key(records[i]);
        if (key && (taught_.contains(*key) || seen.contains(*key))) {
          teach[i] = 0;
          ++repeated;
        }
        if (!key) {
          ++no_id;
        } else if (auto hit = seen.insert(*key).second ? recent_.find(*key) : std::nullopt; !hit) {
          ++unknown;
        } else {
          found.push_back(*key);
          if (std::string_view(hit->model_version.data(), hit->model_version.size()) == model->version) {
            served[i] = *hit;
          } else {
            ++older;  // its TTL came from another model's calibration
          }
        }
        append_outcome_line(lines, single ? j : j[i], received, model->version, served[i]);
      }
      if (journal_) {
        journal_->append(lines, n);  // on disk before anything is acknowledged or applied
        durable = true;
      }
      for (const std::uint64_t key : found) recent_.erase(key);
      for (std::size_t i = 0; i < n; ++i)
        if (const auto key = job_key(records[i]); key && teach[i]) taught_.remember(*key);
      {
        std::unique_lock lock(history_mutex_);
        for (std::size_t i = 0; i < n; ++i) {
          if (close_run(records[i])) ++running_closed_;
          if (teach[i]) history_->observe(records[i]);
          if (served[i]) learn_calibration(*served[i], records[i][Field::WallTime]);
        }
        observed = history_->observed();
      }
      for (std::size_t i = 0; i < n; ++i)
        if (served[i]) learn_quality(*model, *served[i], records[i][Field::WallTime], received, true);
      matched_ += found.size() - older;
      unmatched_no_id_ += no_id;
      unmatched_unknown_ += unknown;
      unmatched_older_ += older;
      repeated_outcomes_ += repeated;
      repeated_now = repeated;
      if (journal_ && options_.snapshot_every > 0 && journal_->since_snapshot() >= options_.snapshot_every) {
        std::shared_lock lock(history_mutex_);  // predictions go on while the snapshot is written
        try {
          journal_->snapshot([&](const std::string& path) { save_snapshot(path); });
        } catch (const std::exception& e) {
          // The outcomes are journaled and applied: acknowledge them. The journal keeps
          // growing until a snapshot succeeds.
          ++snapshot_failures_;
          log_event("error", "snapshot_failed",
                    {{"message", std::string("history snapshot failed (will retry): ") + e.what()}});
        }
      }
    }
    metrics_.add_outcomes(n);
    std::string out = "{\"accepted\":" + std::to_string(n) + ",\"repeated\":" + std::to_string(repeated_now) +
                      ",\"history_observed\":" + std::to_string(observed) +
                      ",\"durable\":" + (durable ? "true" : "false") + "}";
    return {200, std::move(out), "application/json", n};
  });
}

Reply Service::started(std::string_view body) {
  return guarded([&]() -> Reply {
    const double received = now();
    const std::vector<StartedJob> jobs = read_started_body(body, options_.max_batch, received, options_.running_max_age_s);
    const std::size_t n = jobs.size();
    bool durable = false;
    std::size_t running = 0;
    if (tracks_running_) {
      // Every writer of the running set holds the journal lock: what is checked here holds
      // when it is applied.
      std::lock_guard order(outcomes_mutex_);
      std::string lines;
      {
        std::shared_lock lock(history_mutex_);
        for (std::size_t i = 0; i < n; ++i) {
          if (history_->is_running(*job_key(jobs[i].record)))
            throw RequestError(409, "field 'job_id': the job is running already (started, and no outcome yet)" +
                                        (jobs[i].index < 0 ? std::string() : " (job " + std::to_string(i) + ")"),
                               "job_id", jobs[i].index);
          append_started_line(lines, jobs[i].object.at("job_id").dump(), jobs[i].record, jobs[i].start_s, received);
        }
      }
      if (journal_) {
        journal_->append(lines, n);  // on disk before anything is acknowledged or applied
        durable = true;
      }
      std::unique_lock lock(history_mutex_);
      for (const StartedJob& j : jobs) apply_start(*job_key(j.record), j.record, j.start_s, received);
      running_started_ += n;
      running = history_->running();
    }
    std::string out = "{\"accepted\":" + std::to_string(n) + ",\"recorded\":" + (tracks_running_ ? "true" : "false") +
                      ",\"running\":" + std::to_string(running) + ",\"durable\":" + (durable ? "true" : "false") + "}";
    return {200, std::move(out), "application/json", n};
  });
}

void Service::apply_start(std::uint64_t id, const JobRecord& job, double start_s, double received_at) {
  history_->prune_running(received_at);
  history_->stop_running(id);  // a job matched again was lost by its first pilot: it runs from now
  history_->start_running(id, job_keys(job), start_s, history_->config().amounts_of(job));
}

void Service::record_match_start(const JobRecord& job, std::string_view job_id_json, double match_time) {
  std::string line;
  append_started_line(line, job_id_json, job, match_time, match_time);
  std::lock_guard order(outcomes_mutex_);
  if (journal_) journal_->append(line, 1, options_.sync_starts);  // before the answer that hands the job out
  std::unique_lock lock(history_mutex_);
  apply_start(*job_key(job), job, match_time, match_time);
  ++running_started_;
}

bool Service::first_outcome(const JobRecord& outcome) {
  const auto key = job_key(outcome);
  if (!key) return true;
  if (taught_.contains(*key)) {
    ++repeated_outcomes_;
    return false;
  }
  taught_.remember(*key);
  return true;
}

bool Service::close_run(const JobRecord& outcome) {
  if (!tracks_running_) return false;
  const auto id = job_key(outcome);
  return id && history_->stop_running(*id);
}

void Service::check_outcome_bounds(const JobRecord& r, long index) const {
  const double wall = r[Field::WallTime];
  auto refuse = [&](const std::string& why) {
    std::string msg = "field 'wall_s' " + why;
    if (index >= 0) msg += " (job " + std::to_string(index) + ")";
    throw RequestError(400, msg, "wall_s", index);
  };
  if (wall > options_.max_outcome_wall_s)
    refuse("is " + format_number(wall) + " s, above the longest run time accepted (" +
           format_number(options_.max_outcome_wall_s) + " s, --max-outcome-wall)");
  if (options_.outcome_kill_margin_s >= 0 && r.known(Field::RequestedTtl)) {
    const double limit = r[Field::RequestedTtl] + options_.outcome_kill_margin_s;
    if (wall > limit)
      refuse("is " + format_number(wall) + " s, longer than the job's requested_ttl_s plus the kill margin (" +
             format_number(limit) + " s, --outcome-kill-margin): such a job would have been killed");
  }
}

void Service::snapshot_now() {
  std::lock_guard order(outcomes_mutex_);
  std::shared_lock lock(history_mutex_);
  if (journal_)
    journal_->snapshot([&](const std::string& path) { save_snapshot(path); });
}

Reply Service::healthz() const { return {200, "{\"status\":\"ok\"}"}; }

Reply Service::readyz() const {
  if (!ready_.load()) return {503, "{\"ready\":false}"};
  return {200, "{\"ready\":true,\"model_version\":\"" + model_version() + "\"}"};
}

Reply Service::metrics_text() const {
  Metrics::Gauges g;
  g.model_version = model_version();
  {
    std::shared_lock lock(history_mutex_);
    g.history_observed = history_->observed();
    g.history_keys = history_->keys_tracked();
    g.history_capacity = history_->capacity();
    g.history_evicted = history_->evicted();
    g.running_tracked = tracks_running_;
    g.running = history_->running();
    g.running_capacity = history_->running_capacity();
    g.running_max_age_s = history_->running_max_age();
    g.running_expired = history_->running_expired();
    g.running_evicted = history_->running_evicted();
  }
  {
    std::shared_lock lock(history_mutex_);
    g.calibration_method = policy_->learns() ? policy_->name() : std::string(online_method_name(OnlineMethod::Static));
    g.calibration_level = policy_->level();
    g.calibration_outcomes = policy_->learns() ? policy_->outcomes() : 0;
  }
  g.recent_predictions = recent_.size();
  g.recent_capacity = recent_.capacity();
  g.recent_evicted = recent_.evicted();
  {
    std::lock_guard order(outcomes_mutex_);
    g.journal_since_snapshot = journal_ ? journal_->since_snapshot() : 0;
    g.snapshot_failures = snapshot_failures_;
    g.matched = matched_;
    g.unmatched_no_id = unmatched_no_id_;
    g.unmatched_unknown = unmatched_unknown_;
    g.unmatched_older = unmatched_older_;
    g.repeated_outcomes = repeated_outcomes_;
    g.running_started = running_started_;
    g.running_closed = running_closed_;
    const double t = now();
    auto windows = [&](const LiveQuality& q) {
      return std::vector<Metrics::Gauges::Window>{{"1000", q.last(kCountWindows[0])},
                                                  {"10000", q.last(kCountWindows[1])},
                                                  {"1h", q.within(t, kTimeWindowsS[0])},
                                                  {"1d", q.within(t, kTimeWindowsS[1])}};
    };
    g.live = windows(quality_);
    g.group_column = live_group_column(model()->predictor);
    for (const auto& [name, q] : group_quality_.entries()) g.live_groups.push_back({name, windows(q)});
    g.drift_alarm = drift_raised_;
    g.drift_alarms = drift_alarms_;
    g.drift_scope = drift_scope_name(drift_.options().scope);
    g.drift_up = drift_.up();
    g.drift_down = drift_.down();
    if (drift_.options().scope == DriftScope::Group)
      for (const auto& [name, test] : drift_.groups().entries())
        if (!name.empty()) g.drift_groups.push_back({name, test.up(), test.down()});  // "": an ungrouped model's one test
  }
  return {200, metrics_.render(g), "text/plain; version=0.0.4"};
}

std::string Service::reload_from(const std::string& path) {
  std::lock_guard guard(reload_mutex_);
  try {
    auto fresh = load_model(path, options_.predictor, options_.max_model_bytes);
    {
      std::shared_lock lock(history_mutex_);
      if (!(fresh->predictor.encoder().history_config() == history_->config()))
        throw Error(path + ": its history features differ from the running state's; restart with a fresh --journal");
    }
    // The jobs the broker sends are of the kind the running model was trained on; a model of
    // another trace format reads them through fields it never saw (pipeline/model_checks.hpp).
    const TrainingProvenance& now = model()->predictor.model().provenance;
    const TrainingProvenance& next = fresh->predictor.model().provenance;
    if (other_trace_formats(now.trace_format, next.trace_format))
      throw Error(path + ": trained on a " + next.trace_format + " trace, the running model on a " + now.trace_format +
                  " trace: another kind of job; restart the service to change schema");
    const std::string previous = model()->version;
    {
      // The outcomes' lock first, as outcomes() takes them: no outcome is half applied across
      // the swap.
      std::lock_guard order(outcomes_mutex_);
      std::unique_lock lock(history_mutex_);
      // The policy keeps what it learned and answers through the new model's table
      // (docs/service.md, "Online calibration": why keep, not reset); a model without a
      // table gets a policy that learns nothing, and the log says so.
      if (policy_->learns() && !fresh->predictor.model().safe_ttl.empty())
        policy_->rebase(fresh->predictor.model().safe_ttl);
      else
        policy_.emplace(make_policy(*fresh));
      // The alarm was about the model now replaced, and the tests' means were its residuals'
      // (the live windows go on; per-group ones only while the groups are of one column).
      restart_drift_tests();
      if (live_group_column(model()->predictor) != live_group_column(fresh->predictor)) group_quality_.clear();
      model_.store(fresh);
    }
    metrics_.add_reload(true);
    log_event("info", "reload", {{"path", path}, {"model_version", fresh->version}, {"previous_version", previous}});
    return {};
  } catch (const std::exception& e) {
    metrics_.add_reload(false);
    log_event("warn", "reload_refused", {{"path", path}, {"model_version", model()->version}, {"message", e.what()}});
    return e.what();
  }
}

Reply Service::reload(std::string_view body) {
  return guarded([&]() -> Reply {
    std::string path = options_.model_path;
    if (body.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      const json j = parse_body(body);
      if (!j.is_object()) throw RequestError(400, "the body must be empty or {\"path\": \"...\"}");
      for (const auto& [key, value] : j.items()) {
        if (key != "path") throw RequestError(400, "unknown field '" + shown_key(key) + "' (expected path)", shown_key(key));
        if (!value.is_string()) throw RequestError(400, "field 'path' must be a string", "path");
        path = value.get<std::string>();
        // The system call would read the path only up to the NUL: another file than named.
        if (path.find('\0') != std::string::npos) throw RequestError(400, "field 'path' holds a NUL character", "path");
      }
    }
    const std::string why = reload_from(path);
    if (!why.empty())
      return {422, "{\"reloaded\":false,\"error\":" + json(why).dump(-1, ' ', false, json::error_handler_t::replace) +
                       ",\"model_version\":\"" + model_version() + "\"}"};
    std::string out = "{\"reloaded\":true,\"model_version\":\"" + model_version() + "\",\"path\":";
    append_json_string(out, path);
    out += '}';
    return {200, std::move(out)};
  });
}

}  // namespace ttlpred::serve
