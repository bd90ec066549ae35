#pragma once
// The JSON objects of `retrain --json` and `replay --json`, which the service's retrain
// events reuse: one rendering per result, so the command, the event log and the docs agree.
#include <nlohmann/json.hpp>

#include "learn/replay.hpp"
#include "learn/retrain.hpp"

namespace ttlpred {

nlohmann::json shadow_json(const ShadowScore& s);
// {"accepted", "reason", "from", "window": {...}, "current": {...}, "candidate": {...}, "seconds"}
nlohmann::json retrain_json(const RetrainResult& r);
nlohmann::json replay_json(const ReplayResult& r);

}  // namespace ttlpred
