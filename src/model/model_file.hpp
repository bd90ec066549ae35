#pragma once
// The model file: everything `ttlpred eval/predict/serve` needs, in one versioned,
// checksummed container (util/binary_io.hpp), written atomically. The payload is a list of
// tagged sections (u32 tag, u64 length, bytes) so that a later build can add a section
// without breaking older files; a reader skips tags it does not know and refuses a file
// whose format version is newer than it reads. The feature encoder, the history
// configuration and the int8 calibration are opaque bytes owned by their engineers' code.
#include <cstdint>
#include <string>
#include <vector>

#include "model/mlp.hpp"
#include "model/safe_ttl.hpp"
#include "model/target_transform.hpp"

namespace ttlpred {

inline constexpr char kModelFileMagic[] = "TTLPMODL";
// The newest format version this build reads. Version 2 files carry a residual base
// (model/residual_base.hpp); files without one are still written as version 1.
inline constexpr std::uint32_t kModelFileVersion = 2;

struct TrainingMetadata {
  std::string data_hash;     // of the training data (hex), so a model names what it learned from
  std::string created_utc;   // ISO 8601
  std::string metrics_json;  // validation metrics at save time
  std::string config_json;   // the training configuration
  std::string ttlpred_version;
};

// What the model was trained on, so that eval/predict/serve can tell a trace of another
// schema, and eval a split that would score training rows (pipeline/model_checks.hpp). A
// section of its own (added after format version 1 was fixed): older files lack it and
// read as `empty()`; older builds skip it.
struct TrainingProvenance {
  std::string trace_format;   // "csv", "swf", "gwf" (format_name), "" when not known
  std::string trace_name;     // the training file's name, without folders (for messages)
  double split = 0;           // fraction of eligible jobs trained on
  std::uint64_t eligible_rows = 0;  // jobs the chronological split kept
  std::uint64_t train_rows = 0;     // the first train_rows of them were learned from
  std::string data_hash_all;        // table_digest over every eligible row
  double last_train_submit = 0;     // submit time of the last job learned from (Unix s)
  // Each raw field the feature encoder reads, with the share of training rows that had it.
  struct FieldCoverage {
    std::string name;
    float known_share = 0;
  };
  std::vector<FieldCoverage> fields;

  bool empty() const { return train_rows == 0; }
};

struct ModelFile {
  MlpModel mlp;
  TargetTransform target;
  SafeTtlCalibration safe_ttl;        // empty when not calibrated
  std::vector<std::uint8_t> encoder;  // the fitted feature encoder (opaque)
  std::vector<std::uint8_t> history;  // the history-feature configuration (opaque)
  std::vector<std::uint8_t> int8_calibration;  // optional, for the engine (opaque)
  TrainingMetadata meta;
  TrainingProvenance provenance;  // empty in files written before it existed
  // The inference variant the model is served with: the one its safe TTL was calibrated on
  // (an engine variant name, engine/variant.hpp: "int8-static" for a QAT model). A section of
  // its own; "" in files written before it, which kept it as the key "safe_ttl_variant" of
  // meta.metrics_json (predict/predictor.cpp still reads that).
  std::string serving_variant;
};

// Serializes to the sealed container bytes / parses them; parse errors name `what`.
std::vector<std::uint8_t> model_file_bytes(const ModelFile& m);
ModelFile parse_model_file(const std::vector<std::uint8_t>& bytes, const std::string& what);

// Atomic write (temp file + fsync + rename) and whole-file read with full validation.
void save_model_file(const std::string& path, const ModelFile& m);
ModelFile load_model_file(const std::string& path);

}  // namespace ttlpred
