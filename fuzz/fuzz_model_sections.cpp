// Fuzz target: the readers of a model file's sections (and of the online calibrator's saved
// state) on arbitrary payloads. The model file keeps the encoder, the history state and the
// int8 calibration as opaque bytes behind its checksum, so fuzz_model_file never reaches their
// readers; here the payload is sealed into a valid container with a correct checksum where the
// section is one, so each reader's own guards answer. Input layout:
//   byte 0   the reader: 0 feature encoder, 1 history state, 2 int8 calibration table,
//            3 safe-TTL calibration, 4 per-job safe TTL, 5 online calibrator state, 6 network
//   byte 1   the container's format version (encoder, history state), the model's number of
//            quantile heads (per-job safe TTL), the calibrator's method (online state)
//   the rest the payload
// The only acceptable outcomes are a section or an Error naming the input. What is accepted
// must be usable as served: an encoder encodes a job, a history state gives a job's features,
// a calibration answers a safe TTL, a network runs; and it must write and read back to the
// same bytes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "../tests/model/calibration_fixtures.hpp"  // the calibration an online calibrator starts from
#include "features/encoder.hpp"
#include "features/history.hpp"
#include "model/mlp_io.hpp"
#include "model/online_calibration.hpp"
#include "model/quantile_heads.hpp"
#include "model/quantile_ttl.hpp"
#include "model/reference_forward.hpp"
#include "model/safe_ttl.hpp"
#include "quant/activation_ranges_io.hpp"
#include "util/binary_io.hpp"
#include "util/error.hpp"

using namespace ttlpred;

namespace {

constexpr char kWhat[] = "fuzz section";

[[noreturn]] void broken(const char* why) {
  std::fprintf(stderr, "%s\n", why);
  std::abort();
}

// Runs `read`; an Error must name the input. True when the section was accepted.
template <class F>
bool reads(F&& read) {
  try {
    read();
    return true;
  } catch (const Error& e) {
    if (std::string_view(e.what()).find(kWhat) == std::string_view::npos) {
      std::fprintf(stderr, "refusal does not name the input: %s\n", e.what());
      std::abort();
    }
    return false;
  }
}

// Errors of using what was accepted are allowed (an empty calibration answers nothing); a
// crash or a sanitizer report is not.
template <class F>
void use(F&& f) {
  try {
    f();
  } catch (const Error&) {
  }
}

// A job with a value in most fields, so that an accepted encoder or state reads them.
JobRecord probe_job() {
  JobRecord r;
  for (std::size_t i = 0; i < kNumFields; ++i) {
    const Field f = static_cast<Field>(i);
    if (info(f).kind == FieldKind::Category)
      r.text(f) = "x";
    else
      r[f] = 1.7e9 + static_cast<double>(i);
  }
  return r;
}

template <class T>
std::vector<std::uint8_t> bytes_of(const T& section) {
  BinaryWriter w;
  section.write(w);
  return w.take();
}

void encoder(std::uint32_t version, const std::vector<std::uint8_t>& payload) {
  FeatureEncoder e;
  if (!reads([&] { e = FeatureEncoder::from_bytes(seal_container("TTLENC", version, payload), kWhat); })) return;
  const JobRecord job = probe_job();
  std::vector<float> history(e.history_width(), 0.5f), dense(e.dense_width());
  std::vector<std::uint32_t> cats(e.cat_width());
  e.encode_one(job, history.data(), dense.data(), cats.data());
  const auto cards = e.cat_cardinality();
  for (std::size_t j = 0; j < cats.size(); ++j)
    if (cats[j] >= cards[j]) broken("an accepted encoder gives a category index past its vocabulary");
  const auto saved = e.to_bytes();
  if (FeatureEncoder::from_bytes(saved, "saved").to_bytes() != saved) broken("an accepted encoder does not round-trip");
}

void history_state(std::uint32_t version, const std::vector<std::uint8_t>& payload) {
  std::vector<std::uint8_t> saved;
  if (!reads([&] { saved = HistoryState::from_bytes(seal_container("TTLHIST", version, payload), kWhat).to_bytes(); }))
    return;
  HistoryState s = HistoryState::from_bytes(saved, "saved");
  if (s.to_bytes() != saved) broken("an accepted history state does not round-trip");
  JobRecord job = probe_job();
  std::vector<float> out(s.width());
  s.features(job, out.data());
  s.features(job, 1.8e9, out.data());
  s.observe(job);
  s.features(job, out.data());
}

void int8_calibration(const std::vector<std::uint8_t>& payload) {
  quant::ActivationRanges t;
  if (!reads([&] { t = quant::parse_activation_ranges(payload, kWhat); })) return;
  const auto saved = quant::activation_ranges_bytes(t);
  if (quant::activation_ranges_bytes(quant::parse_activation_ranges(saved, "saved")) != saved)
    broken("an accepted calibration table does not round-trip");
}

void safe_ttl(const std::vector<std::uint8_t>& payload) {
  SafeTtlCalibration c;
  if (!reads([&] {
        BinaryReader r(payload, kWhat);
        c = SafeTtlCalibration::read(r);
        if (!r.at_end()) r.fail("unexpected trailing bytes");  // as the model file reads it
      }))
    return;
  const auto saved = bytes_of(c);
  BinaryReader again(saved, "saved");
  if (bytes_of(SafeTtlCalibration::read(again)) != saved) broken("an accepted safe-TTL calibration does not round-trip");
  for (std::uint32_t group : {kNoGroup, 0u, c.group_ids.empty() ? 1u : c.group_ids.back()})
    for (double requested : {0.0, 3600.0}) use([&] { c.safe_ttl(600, group, 0.05, requested); });
}

void per_job_safe_ttl(std::size_t heads, const std::vector<std::uint8_t>& payload) {
  QuantileTtlCalibration c;
  if (!reads([&] {
        BinaryReader r(payload, kWhat);
        c = QuantileTtlCalibration::read(r, heads);
      }))
    return;
  for (std::uint32_t group : {kNoGroup, c.group_ids.empty() ? 1u : c.group_ids.front()})
    for (bool cold : {false, true}) use([&] { c.safe_ttl(600, 900, group, 0.05, cold); });
}

void online_state(std::uint8_t method, const std::vector<std::uint8_t>& payload) {
  static const SafeTtlCalibration start = test::hundred_residuals();  // residuals 0.00 .. 0.99
  const auto& methods = all_online_methods();
  OnlineCalibrationOptions o;
  o.method = methods[method % methods.size()];
  o.log_level = method >= 128 && (o.method == OnlineMethod::Aci || o.method == OnlineMethod::Mondrian);
  OnlineCalibrator c(start, 0.05, o);
  if (!reads([&] {
        BinaryReader r(payload, kWhat);
        c.read_state(r);
      }))
    return;
  OnlineJob job;
  job.pred_s = 600;
  job.requested_s = 3600;
  use([&] {
    const OnlineDecision d = c.decide(job);
    c.observe(d, 900);
    c.decide(job);
  });
}

void network(const std::vector<std::uint8_t>& payload) {
  MlpModel m;
  if (!reads([&] {
        BinaryReader r(payload, kWhat);
        m = read_mlp(r);
      }))
    return;
  // Within the reader's bounds a network may still be large: run it only when it is small.
  if (mlp_parameter_count(m) > (1u << 20)) return;
  std::vector<float> dense(m.dense_inputs, 0.5f);
  std::vector<std::uint32_t> cats(m.embeddings.size(), 0);
  std::vector<double> out(m.layers.back().out);
  reference_forward(m, dense.data(), cats.data(), 1, out.data());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::uint8_t kind = data[0], arg = data[1];
  const std::vector<std::uint8_t> payload(data + 2, data + size);
  switch (kind % 7) {
    case 0: encoder(arg % 6, payload); break;  // versions 0 and 5 are refused by the container
    case 1: history_state(arg % 7, payload); break;
    case 2: int8_calibration(payload); break;
    case 3: safe_ttl(payload); break;
    case 4: per_job_safe_ttl(arg % (kMaxQuantileHeads + 1), payload); break;
    case 5: online_state(arg, payload); break;
    case 6: network(payload); break;
  }
  return 0;
}
