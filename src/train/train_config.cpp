#include "train/train_config.hpp"

#include <nlohmann/json.hpp>

namespace ttlpred {

std::string train_config_json(const TrainConfig& c) {
  // One line per concern: the network, regularization, the optimizer and its schedule, the
  // epochs and early stopping, the target, the run. The dump sorts the keys.
  nlohmann::json j = {
      {"hidden", c.hidden}, {"activation", c.activation == Activation::LeakyRelu ? "leaky_relu" : "relu"},
      {"embedding_dim", c.embedding_dim}, {"max_embedding_dim", c.max_embedding_dim},
      {"dropout", c.dropout}, {"weight_decay", c.weight_decay},
      {"learning_rate", c.learning_rate}, {"min_lr_fraction", c.min_lr_fraction}, {"warmup_epochs", c.warmup_epochs},
      {"schedule", c.schedule == LrSchedule::Constant ? "constant" : "warmup_cosine"},
      {"adam", {c.adam_beta1, c.adam_beta2, c.adam_eps}}, {"clip_norm", c.clip_norm},
      {"batch_size", c.batch_size}, {"shards", c.shards}, {"max_epochs", c.max_epochs}, {"patience", c.patience},
      {"validation_fraction", c.validation_fraction},
      {"target", target_kind_name(c.target)}, {"power_lambda", c.power_lambda}, {"smearing_points", c.smearing_points},
      {"quantile_levels", c.quantile_levels}, {"quantile_weight", c.quantile_weight},
      {"seed", c.seed}, {"threads", c.threads}};
  return j.dump();
}

}  // namespace ttlpred
