#pragma once
// `serve --retrain-every D`: a background thread that runs the retrain of `ttlpred retrain`
// (learn/retrain.hpp) on the service's own journal, with the model serving as the current
// one, and swaps an accepted candidate in through Service::reload_from, the reload path that
// checks the file and its history configuration, keeps the online calibrator and answers
// every request in flight with the old model. Predictions never wait on it: the journal is
// read from disk and the network trained on this thread (one training thread, so the
// request threads keep the other cores); only the swap takes the reload path's locks, for a
// pointer exchange. Each retrain is a JSON event ("retrain", then "reload" when swapped) and
// lands in /metrics (ServiceMetrics::RetrainRecord).
//
// The candidate is written to `out_path` (atomically) and reloaded from there: the operator's
// --model file is never overwritten, so SIGHUP and a restart still mean that file.
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "learn/retrain.hpp"
#include "serve/service.hpp"

namespace ttlpred::serve {

struct RetrainLoopOptions {
  double every_s = 7 * 86400.0;
  RetrainOptions retrain;  // the window, holdout and training settings
  std::string out_path;    // "": <journal>/retrained.model
  // Also retrain as soon as the drift alarm is raised (checked every second), once per alarm,
  // and, while the alarm stands after a refusal, again after as many further outcomes as the
  // alarm needed, then twice as many each time.
  bool on_drift = false;
};

class RetrainLoop {
 public:
  // Throws Error when the service has no journal (there is nothing to learn from) or the
  // period is not positive. Starts the thread; the first retrain runs `every_s` from now.
  RetrainLoop(Service& service, RetrainLoopOptions options);
  ~RetrainLoop();  // stop()
  RetrainLoop(const RetrainLoop&) = delete;
  RetrainLoop& operator=(const RetrainLoop&) = delete;

  // Runs one retrain now, on the caller's thread (the thread's own step; tests): reads the
  // journal, retrains, swaps when accepted. Returns the event it logged ("failed" with the
  // reason when it could not run). Retrains never overlap: a call waits for one in progress.
  nlohmann::json run_once();
  // Wakes the thread for a retrain now instead of at the next period.
  void trigger();
  // Stops the thread after the retrain in progress, if any.
  void stop();
  const std::string& out_path() const { return options_.out_path; }

 private:
  void loop();

  Service& service_;
  RetrainLoopOptions options_;
  std::mutex run_mutex_;  // one retrain at a time
  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stopping_ = false, triggered_ = false;  // under wake_mutex_
  std::uint64_t alarms_seen_ = 0;              // the loop's own
  std::thread thread_;
};

}  // namespace ttlpred::serve
