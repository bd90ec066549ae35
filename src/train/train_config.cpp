#include "train/train_config.hpp"

#include <nlohmann/json.hpp>

namespace ttlpred {

std::string train_config_json(const TrainConfig& c) {
  nlohmann::json j;
  j["hidden"] = c.hidden;
  j["activation"] = c.activation == Activation::LeakyRelu ? "leaky_relu" : "relu";
  j["embedding_dim"] = c.embedding_dim;
  j["max_embedding_dim"] = c.max_embedding_dim;
  j["dropout"] = c.dropout;
  j["weight_decay"] = c.weight_decay;
  j["learning_rate"] = c.learning_rate;
  j["min_lr_fraction"] = c.min_lr_fraction;
  j["warmup_epochs"] = c.warmup_epochs;
  j["schedule"] = c.schedule == LrSchedule::Constant ? "constant" : "warmup_cosine";
  j["adam"] = {c.adam_beta1, c.adam_beta2, c.adam_eps};
  j["clip_norm"] = c.clip_norm;
  j["batch_size"] = c.batch_size;
  j["shards"] = c.shards;
  j["max_epochs"] = c.max_epochs;
  j["patience"] = c.patience;
  j["validation_fraction"] = c.validation_fraction;
  j["target"] = target_kind_name(c.target);
  j["power_lambda"] = c.power_lambda;
  j["smearing_points"] = c.smearing_points;
  j["seed"] = c.seed;
  j["threads"] = c.threads;
  return j.dump();
}

}  // namespace ttlpred
