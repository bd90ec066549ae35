#include "model/model_file.hpp"

#include <string_view>

#include "model/mlp_io.hpp"
#include "util/file_io.hpp"

namespace ttlpred {

namespace {

enum class Section : std::uint32_t {
  Mlp = 1,
  Target = 2,
  SafeTtl = 3,
  Encoder = 4,
  History = 5,
  Int8Calibration = 6,
  Metadata = 7,
  Provenance = 8,
  ServingVariant = 9,
  ResidualBase = 10,  // only in format version 2 files
  QuantileHeads = 11,
  QuantileTtl = 12,
};
constexpr std::uint32_t kLastKnownSection = 12;

const char* section_name(std::uint32_t tag) {
  switch (static_cast<Section>(tag)) {
    case Section::Mlp: return "architecture and weights";
    case Section::Target: return "target transform";
    case Section::SafeTtl: return "safe-TTL calibration";
    case Section::Encoder: return "feature encoder";
    case Section::History: return "history configuration";
    case Section::Int8Calibration: return "int8 calibration";
    case Section::Metadata: return "training metadata";
    case Section::Provenance: return "training provenance";
    case Section::ServingVariant: return "serving variant";
    case Section::ResidualBase: return "residual base";
    case Section::QuantileHeads: return "quantile heads";
    case Section::QuantileTtl: return "per-job safe TTL";
  }
  return "unknown";
}

void put_section(BinaryWriter& w, Section tag, const std::vector<std::uint8_t>& bytes) {
  w.put<std::uint32_t>(static_cast<std::uint32_t>(tag));
  w.put_bytes(bytes);
}

constexpr std::size_t kMaxMetadataString = 64u << 20;

// The string sections are written out of line: inlined into model_file_bytes, g++ 12 -O3
// (x86-64-v4) reports a false -Wrestrict in BinaryWriter's memcpy there.
[[gnu::noinline]] std::vector<std::uint8_t> metadata_bytes(const TrainingMetadata& meta) {
  BinaryWriter s;
  s.put_string(meta.data_hash);
  s.put_string(meta.created_utc);
  s.put_string(meta.metrics_json);
  s.put_string(meta.config_json);
  s.put_string(meta.ttlpred_version);
  return s.bytes();
}

[[gnu::noinline]] std::vector<std::uint8_t> string_bytes(std::string_view text) {
  BinaryWriter s;
  s.put_string(text);
  return s.bytes();
}

[[gnu::noinline]] std::vector<std::uint8_t> provenance_bytes(const TrainingProvenance& p) {
  BinaryWriter s;
  s.put_string(p.trace_format);
  s.put_string(p.trace_name);
  s.put<double>(p.split);
  s.put<std::uint64_t>(p.eligible_rows);
  s.put<std::uint64_t>(p.train_rows);
  s.put_string(p.data_hash_all);
  s.put<double>(p.last_train_submit);
  s.put<std::uint64_t>(p.fields.size());
  for (const auto& f : p.fields) {
    s.put_string(f.name);
    s.put<float>(f.known_share);
  }
  return s.bytes();
}

}  // namespace

std::vector<std::uint8_t> model_file_bytes(const ModelFile& m) {
  validate_mlp(m.mlp, "model to save");
  if (m.mlp.layers.back().out != m.target.outputs())
    throw Error("model to save: the network has " + std::to_string(m.mlp.layers.back().out) + " outputs, its target " +
                std::to_string(m.target.outputs()));
  BinaryWriter payload;
  {
    BinaryWriter s;
    write_mlp(s, m.mlp);
    put_section(payload, Section::Mlp, s.bytes());
  }
  {
    BinaryWriter s;
    m.target.write(s);
    put_section(payload, Section::Target, s.bytes());
  }
  if (!m.safe_ttl.empty()) {
    BinaryWriter s;
    m.safe_ttl.write(s);
    put_section(payload, Section::SafeTtl, s.bytes());
  }
  if (!m.encoder.empty()) put_section(payload, Section::Encoder, m.encoder);
  if (!m.history.empty()) put_section(payload, Section::History, m.history);
  if (!m.int8_calibration.empty()) put_section(payload, Section::Int8Calibration, m.int8_calibration);
  put_section(payload, Section::Metadata, metadata_bytes(m.meta));
  if (!m.provenance.empty()) put_section(payload, Section::Provenance, provenance_bytes(m.provenance));
  if (!m.serving_variant.empty()) put_section(payload, Section::ServingVariant, string_bytes(m.serving_variant));
  // A model with quantile heads has a wider last layer, which builds without them refuse as
  // an invalid network (model/mlp_io.cpp), so the section needs no new format version.
  if (!m.target.quantiles.empty()) {
    BinaryWriter s;
    m.target.quantiles.write(s);
    put_section(payload, Section::QuantileHeads, s.bytes());
  }
  if (!m.safe_ttl.quantile.empty()) {
    BinaryWriter s;
    m.safe_ttl.quantile.write(s);
    put_section(payload, Section::QuantileTtl, s.bytes());
  }
  // A residual model decodes wrong without its base, so it is a format version 2 file, which
  // builds that do not know the section refuse; every other model stays version 1.
  std::uint32_t version = 1;
  if (!m.target.residual.empty()) {
    BinaryWriter s;
    m.target.residual.write(s);
    put_section(payload, Section::ResidualBase, s.bytes());
    version = 2;
  }
  return seal_container(std::string_view(kModelFileMagic, 8), version, payload.bytes());
}

ModelFile parse_model_file(const std::vector<std::uint8_t>& bytes, const std::string& what) {
  const auto opened = open_container(bytes, std::string_view(kModelFileMagic, 8), kModelFileVersion, what);
  BinaryReader r(opened.payload, what);
  ModelFile m;
  ResidualBase residual;
  QuantileHeads quantiles;
  std::vector<std::uint8_t> quantile_ttl;  // read once the heads are known
  bool have_mlp = false, have_target = false;
  std::uint32_t seen = 0;  // bit per known section, to refuse duplicates
  while (!r.at_end()) {
    const auto tag = r.get<std::uint32_t>();
    const auto body = r.get_bytes();
    if (tag >= 1 && tag <= kLastKnownSection) {
      if (seen & (1u << tag)) r.fail(std::string("duplicate ") + section_name(tag) + " section");
      seen |= 1u << tag;
    }
    const std::string where = what + " (" + section_name(tag) + " section)";
    BinaryReader s(body, where);
    switch (static_cast<Section>(tag)) {
      case Section::Mlp:
        m.mlp = read_mlp(s);
        have_mlp = true;
        break;
      case Section::Target:
        m.target = TargetTransform::read(s);
        have_target = true;
        break;
      case Section::SafeTtl: m.safe_ttl = SafeTtlCalibration::read(s); break;
      case Section::Encoder: m.encoder = body; continue;
      case Section::History: m.history = body; continue;
      case Section::Int8Calibration: m.int8_calibration = body; continue;
      case Section::Metadata:
        m.meta.data_hash = s.get_string(kMaxMetadataString);
        m.meta.created_utc = s.get_string(kMaxMetadataString);
        m.meta.metrics_json = s.get_string(kMaxMetadataString);
        m.meta.config_json = s.get_string(kMaxMetadataString);
        m.meta.ttlpred_version = s.get_string(kMaxMetadataString);
        break;
      case Section::Provenance: {
        TrainingProvenance& p = m.provenance;
        p.trace_format = s.get_string(64);
        p.trace_name = s.get_string(4096);
        p.split = s.get<double>();
        p.eligible_rows = s.get<std::uint64_t>();
        p.train_rows = s.get<std::uint64_t>();
        p.data_hash_all = s.get_string(64);
        p.last_train_submit = s.get<double>();
        const auto n = s.get<std::uint64_t>();
        if (n > 4096) s.fail("claims " + std::to_string(n) + " feature fields");
        for (std::uint64_t i = 0; i < n; ++i) {
          TrainingProvenance::FieldCoverage f;
          f.name = s.get_string(256);
          f.known_share = s.get<float>();
          if (!(f.known_share >= 0 && f.known_share <= 1)) s.fail("field '" + f.name + "': known share outside [0, 1]");
          p.fields.push_back(std::move(f));
        }
        if (!(p.split > 0 && p.split <= 1) || p.train_rows == 0 || p.train_rows > p.eligible_rows)
          s.fail("split " + std::to_string(p.split) + ", " + std::to_string(p.train_rows) + " of " +
                 std::to_string(p.eligible_rows) + " rows trained on: not a training split");
        break;
      }
      case Section::ServingVariant:
        m.serving_variant = s.get_string(64);
        if (m.serving_variant.empty()) s.fail("empty variant name");
        break;
      case Section::ResidualBase:
        residual = ResidualBase::read(s);
        if (residual.empty()) s.fail("empty residual base");
        break;
      case Section::QuantileHeads:
        quantiles = QuantileHeads::read(s);
        if (quantiles.empty()) s.fail("no quantile levels");
        break;
      case Section::QuantileTtl: quantile_ttl = body; continue;
      default: continue;  // a section added by a later build of the same format version
    }
    if (!s.at_end()) s.fail("unexpected trailing bytes");
  }
  if (!have_mlp) throw Error(what + ": model file has no architecture/weights section");
  if (!have_target) throw Error(what + ": model file has no target transform section");
  if (opened.version >= 2 && residual.empty()) throw Error(what + ": format version 2 model file has no residual base");
  m.target.residual = std::move(residual);
  m.target.quantiles = std::move(quantiles);
  if (!quantile_ttl.empty()) {
    if (m.target.quantiles.empty()) throw Error(what + ": a per-job safe TTL without quantile heads");
    BinaryReader s(quantile_ttl, what + " (per-job safe TTL section)");
    m.safe_ttl.quantile = QuantileTtlCalibration::read(s, m.target.quantiles.size());
    if (!s.at_end()) s.fail("unexpected trailing bytes");
  }
  if (m.mlp.layers.back().out != m.target.outputs())
    throw Error(what + ": the network has " + std::to_string(m.mlp.layers.back().out) + " outputs, its target " +
                std::to_string(m.target.outputs()) + " (the mean and " + std::to_string(m.target.quantiles.size()) +
                " quantile heads)");
  if (!m.target.residual.empty()) {
    std::vector<std::uint32_t> card;
    for (const auto& e : m.mlp.embeddings) card.push_back(e.cardinality);
    m.target.residual.check_fits(m.mlp.dense_inputs, card, what);
  }
  return m;
}

void save_model_file(const std::string& path, const ModelFile& m) {
  const auto bytes = model_file_bytes(m);
  write_file_atomic(path, bytes);
}

ModelFile load_model_file(const std::string& path) { return parse_model_file(read_file_bytes(path), path); }

}  // namespace ttlpred
