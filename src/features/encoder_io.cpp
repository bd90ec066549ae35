// The fitted encoder as bytes (a section of the model file) and back, with every field
// validated: a damaged or hand-edited encoder must not smuggle in an outcome field or index
// past its arrays.
#include <cmath>

#include "features/encoder.hpp"

namespace ttlpred {
namespace {

constexpr std::string_view kMagic = "TTLENC";
// Version 2: the history configuration carries work fields (features/history.hpp); version 1
// encoders still load, with none.
constexpr std::uint32_t kVersion = 2;
// Version 3 (written only when the history configuration is made for match time, so that
// encoders for submit time keep version 2's bytes and older binaries still read them) adds
// the configuration's prediction time.
constexpr std::uint32_t kMatchTimeVersion = 3;
// Version 4 (written only when the configuration has censored work rates) adds their flag.
constexpr std::uint32_t kCensoredVersion = 4;
// Version 5 (written only when the encoder has piecewise bins) says which of the history
// configuration's optional bytes follow in a flags byte (bit 0: prediction time, bit 1:
// censored rates) instead of by its version, and ends with the piecewise columns: the bins
// per column it was fitted with, then per column its dense column and its edges.
constexpr std::uint32_t kPiecewiseVersion = 5;

Field read_field(BinaryReader& r) {
  const auto f = r.get<std::uint8_t>();
  if (f >= kNumFields) r.fail("encoder: unknown field number " + std::to_string(f));
  return static_cast<Field>(f);
}

}  // namespace

std::vector<std::uint8_t> FeatureEncoder::to_bytes() const {
  BinaryWriter w;
  w.put<std::uint64_t>(dense_.size());
  for (const auto& c : dense_) {
    w.put<std::uint8_t>(static_cast<std::uint8_t>(c.source));
    w.put<std::uint8_t>(static_cast<std::uint8_t>(c.field));
    w.put<std::uint8_t>(static_cast<std::uint8_t>(c.transform));
    w.put<std::uint32_t>(c.index);
    w.put<double>(c.mean);
    w.put<double>(c.inv_std);
  }
  w.put<std::uint64_t>(cats_.size());
  for (const auto& c : cats_) {
    w.put<std::uint8_t>(static_cast<std::uint8_t>(c.field));
    w.put<std::uint64_t>(c.vocabulary.size());
    for (const auto& v : c.vocabulary) w.put_string(v);
  }
  w.put<std::uint64_t>(history_width_);
  if (!piecewise_.empty())
    w.put<std::uint8_t>(static_cast<std::uint8_t>((history_config_.running_stats() ? 1 : 0) | (history_config_.censored_rates ? 2 : 0)));
  history_config_.write(w);
  if (!piecewise_.empty()) {
    w.put<std::uint32_t>(piecewise_bins_);
    w.put<std::uint64_t>(piecewise_.size());
    for (const PiecewiseColumn& pc : piecewise_) {
      w.put<std::uint32_t>(pc.column);
      w.put<std::uint32_t>(static_cast<std::uint32_t>(pc.edges.size()));
      for (const float x : pc.edges) w.put<float>(x);
    }
  }
  const std::uint32_t version = !piecewise_.empty()                ? kPiecewiseVersion
                                 : history_config_.censored_rates    ? kCensoredVersion
                                 : history_config_.running_stats()   ? kMatchTimeVersion
                                                                     : kVersion;
  return seal_container(kMagic, version, w.bytes());
}

FeatureEncoder FeatureEncoder::from_bytes(const std::vector<std::uint8_t>& bytes, const std::string& what) {
  const auto opened = open_container(bytes, kMagic, kPiecewiseVersion, what);
  BinaryReader r(opened.payload, what);
  FeatureEncoder e;
  auto checked_field = [&](Field f) {
    try {
      check_feature_field(f, Phase::Match);
    } catch (const Error& err) {
      r.fail(std::string("encoder: ") + err.what());
    }
    return f;
  };

  const auto nd = r.get<std::uint64_t>();
  if (nd > opened.payload.size()) r.fail("encoder: " + std::to_string(nd) + " dense columns do not fit");
  e.dense_.resize(nd);
  for (auto& c : e.dense_) {
    const auto src = r.get<std::uint8_t>();
    if (src > static_cast<std::uint8_t>(DenseSource::History)) r.fail("encoder: unknown dense column source " + std::to_string(src));
    c.source = static_cast<DenseSource>(src);
    c.field = checked_field(read_field(r));
    const auto tr = r.get<std::uint8_t>();
    if (tr > static_cast<std::uint8_t>(NumericTransform::Log1p)) r.fail("encoder: unknown transform " + std::to_string(tr));
    c.transform = static_cast<NumericTransform>(tr);
    c.index = r.get<std::uint32_t>();
    c.mean = r.get<double>();
    c.inv_std = r.get<double>();
    if (c.source == DenseSource::Field && is_category(c.field))
      r.fail("encoder: numeric column reads category field '" + std::string(info(c.field).name) + "'");
    if (!std::isfinite(c.mean) || !std::isfinite(c.inv_std) || c.inv_std <= 0.0) r.fail("encoder: bad column statistics");
  }

  const auto nc = r.get<std::uint64_t>();
  if (nc > kNumFields) r.fail("encoder: " + std::to_string(nc) + " category columns is more than there are fields");
  e.cats_.resize(nc);
  for (auto& c : e.cats_) {
    c.field = checked_field(read_field(r));
    if (!is_category(c.field)) r.fail("encoder: category column reads numeric field '" + std::string(info(c.field).name) + "'");
    const auto nv = r.get<std::uint64_t>();
    if (nv >= 0xFFFFFFFFu || nv > opened.payload.size()) r.fail("encoder: vocabulary of " + std::to_string(nv) + " values does not fit");
    c.vocabulary.reserve(nv);
    for (std::uint64_t i = 0; i < nv; ++i) {
      c.vocabulary.push_back(r.get_string());
      if (!c.index.emplace(c.vocabulary.back(), static_cast<std::uint32_t>(i + 1)).second)
        r.fail("encoder: value '" + c.vocabulary.back() + "' appears twice in the vocabulary of " + std::string(info(c.field).name));
    }
  }

  const auto hw = r.get<std::uint64_t>();
  const bool piecewise = opened.version >= kPiecewiseVersion;
  const auto history_flags = piecewise ? r.get<std::uint8_t>() : std::uint8_t{0};
  if (history_flags > 3) r.fail("encoder: unknown history flags " + std::to_string(history_flags));
  e.history_config_ = piecewise ? HistoryConfig::read(r, opened.version, (history_flags & 1) != 0, (history_flags & 2) != 0)
                                : HistoryConfig::read(r, opened.version, opened.version >= kMatchTimeVersion,
                                                      opened.version >= kCensoredVersion);
  if (hw != e.history_config_.width() && !(hw == 0 && e.history_config_.keys.empty()))
    r.fail("encoder: " + std::to_string(hw) + " history features do not match the history configuration");
  e.history_width_ = hw;
  for (const auto& c : e.dense_)
    if (c.source == DenseSource::History && c.index >= hw) r.fail("encoder: history column " + std::to_string(c.index) + " is out of range");
  if (piecewise) {
    e.piecewise_bins_ = r.get<std::uint32_t>();
    if (e.piecewise_bins_ < 2 || e.piecewise_bins_ > kMaxPiecewiseBins)
      r.fail("encoder: " + std::to_string(e.piecewise_bins_) + " piecewise bins");
    const auto np = r.get<std::uint64_t>();
    if (np == 0 || np > e.dense_.size()) r.fail("encoder: " + std::to_string(np) + " piecewise columns for " + std::to_string(e.dense_.size()) + " dense columns");
    e.piecewise_.resize(np);
    for (PiecewiseColumn& pc : e.piecewise_) {
      pc.column = r.get<std::uint32_t>();
      const auto ne = r.get<std::uint32_t>();
      if (ne < 3 || ne > e.piecewise_bins_ + 1) r.fail("encoder: " + std::to_string(ne) + " piecewise edges");
      pc.edges.resize(ne);
      for (float& x : pc.edges) x = r.get<float>();
    }
    try {
      check_piecewise(e.piecewise_, e.dense_.size(), "encoder");
    } catch (const Error& err) {
      r.fail(err.what());
    }
    e.piecewise_width_ = piecewise_width(e.piecewise_);
  }
  if (!r.at_end()) r.fail("encoder: trailing bytes");
  e.prepare_serving();
  return e;
}

}  // namespace ttlpred
