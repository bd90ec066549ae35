#pragma once
// A journaled outcome that can be learned from: the outcome object as the client sent it,
// plus three keys the service adds (docs/service.md, "Journal records"):
//   "received_at":   unix seconds when the service received it;
//   "model_version": the model serving when it was applied;
//   "served":        the prediction served for the job (matched by job_id), or null:
//     {"model_version","predicted_at","calibration","expected_wall_s","safe_ttl_s",
//      "requested_ttl_s" (null: none),"level","group" (null: ungrouped),"key",
//      "expert_ttl_s" (multi-aci only)}
// The added keys are no job fields, so a client cannot send them (an unknown key is a 400),
// and a journal written before they existed (outcome objects alone) reads as outcomes with
// nothing served. Numbers are written shortest-round-trip: read back, they are the same
// doubles, which is what lets a replay rebuild the calibrator bit for bit.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "serve/recent_predictions.hpp"

namespace ttlpred::serve {

// Appends the journal line (with its '\n') for outcome object `outcome`.
void append_outcome_line(std::string& out, const nlohmann::json& outcome, double received_at,
                         const std::string& model_version, const std::optional<ServedPrediction>& served);

struct OutcomeRecord {
  nlohmann::json outcome;  // the job fields only
  std::optional<double> received_at;
  std::string model_version;
  std::optional<ServedPrediction> served;
};
// Splits a journal line's object into the outcome and what the service added. Throws
// RequestError (400, naming the field) for a malformed added key.
OutcomeRecord read_outcome_record(nlohmann::json line);

}  // namespace ttlpred::serve
