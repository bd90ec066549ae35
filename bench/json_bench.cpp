// Job JSON parsing for `ttlpred serve`, measured to choose its parser (simdjson or
// nlohmann-json). The service's real /v1/predict bodies (the jobs bench/load/serve_load.cpp
// sends: one job, and a 256-job batch; plus a 256-job batch of fuller ALICE jobs) parsed into
// JobRecords with the service's strict validation, three ways:
//   Nlohmann          nlohmann::json::parse + serve::job_from_json per job (the service before)
//   SimdjsonDom       simdjson DOM parse + the same checks on the DOM (what JobReader does)
//   SimdjsonOndemand  simdjson On-Demand, validating while it walks the document. Its code is
//                     inlined from the header for the ISA the compiler targets: without
//                     -mavx2 (our portable build) that is simdjson's scalar "fallback" kernel,
//                     while DOM dispatches to the AVX2 kernel in libsimdjson at run time.
// Each iteration parses the whole body from a std::string_view (what the HTTP layer hands the
// handler), so the simdjson paths include copying the body into their padded buffer.
// items_per_second is jobs per second; ns per job = 1e9 / items_per_second.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "load/load_job.hpp"
#include "serve/job_json.hpp"

namespace ttlpred {
namespace {

using serve::JobUse;

using load::load_job;

// A fuller ALICE job as a broker would send it: 14 submit-phase fields, fractional numbers.
std::string alice_job(int i) {
  const std::string n = std::to_string(i);
  return "{\"job_id\":" + std::to_string(3100000000 + i) + ",\"master_job_id\":" + std::to_string(3099990000 + i / 50) +
         ",\"submit_time\":" + std::to_string(1800000000 + i) + ".25,\"user\":\"aliprod" + std::to_string(i % 7) +
         "\",\"job_type\":\"MC\",\"production_tag\":\"LHC24f" + std::to_string(i % 3) +
         "\",\"pass_name\":\"apass4\",\"anchor_run\":" + std::to_string(544000 + i % 11) +
         ",\"interaction_type\":\"PbPb\",\"package\":\"VO_ALICE@O2PDPSuite::MC-prod-2024-v" + std::to_string(i % 4) +
         "-1\",\"cpu_cores\":8,\"memory_mb\":16000,\"input_bytes\":" + std::to_string(1.5e9 + 1e6 * i) +
         ",\"requested_ttl_s\":72000}";
}

std::string body_of(std::string (*job)(int), int n) {
  if (n == 1) return job(0);
  std::string b = "[";
  for (int i = 0; i < n; ++i) {
    if (i) b += ",";
    b += job(i);
  }
  return b + "]";
}

const std::string& body(int kind) {
  static const std::string bodies[] = {body_of(load_job, 1), body_of(load_job, 256), body_of(alice_job, 256)};
  return bodies[kind];
}
int jobs_in(int kind) { return kind == 0 ? 1 : 256; }
const char* label(int kind) { return kind == 0 ? "single" : kind == 1 ? "batch256" : "batch256_alice"; }


// On-Demand: validates while walking; false on any problem (the service would then parse the
// body again with nlohmann for the canonical error, as JobReader does for the DOM path).
bool ondemand_job(simdjson::ondemand::value v, JobUse use, JobRecord& r) {
  r.clear();
  simdjson::ondemand::object obj;
  if (v.get_object().get(obj)) return false;
  for (auto member : obj) {
    std::string_view key;
    if (member.unescaped_key().get(key)) return false;
    const auto field = field_by_name(key);
    if (!field || !field_allowed(info(*field).phase, use)) return false;
    simdjson::ondemand::value value;
    if (member.value().get(value)) return false;
    simdjson::ondemand::json_type type;
    if (value.type().get(type)) return false;
    const bool category = info(*field).kind == FieldKind::Category;
    if (type == simdjson::ondemand::json_type::null) {
      if (!value.is_null()) return false;
      if (category) r.text(*field) = {}; else r[*field] = std::nan("");
    } else if (type == simdjson::ondemand::json_type::string && category) {
      if (value.get_string().get(r.text(*field))) return false;
    } else if (type == simdjson::ondemand::json_type::number && !category) {
      double d;
      if (value.get_double().get(d) || !std::isfinite(d) || d < 0) return false;
      r[*field] = d;
    } else {
      return false;
    }
  }
  return true;
}

// The frame of every parser's benchmark: the body named by state.range(0) parsed once per
// iteration by `parse(text, jobs, records)` (false: it did not read the `jobs` jobs as the
// service would, reported as `failure`), the records kept observable so that the parse is
// not optimized away; jobs per second and the body's name reported. `records` starts with
// one slot per job when `sized`, else empty (the parser sizes it).
template <class Parse>
void bench_parser(benchmark::State& state, bool sized, const char* failure, Parse parse) {
  const int kind = static_cast<int>(state.range(0));
  const std::string_view text = body(kind);
  const auto jobs = static_cast<std::size_t>(jobs_in(kind));
  std::vector<JobRecord> records(sized ? jobs : 0);
  for (auto _ : state) {
    if (!parse(text, jobs, records)) state.SkipWithError(failure);
    benchmark::DoNotOptimize(records.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * jobs_in(kind));
  state.SetLabel(label(kind));
}

void BM_JobJson_Nlohmann(benchmark::State& state) {
  bench_parser(state, true, "", [](std::string_view text, std::size_t, std::vector<JobRecord>& records) {
    const nlohmann::json j = nlohmann::json::parse(text);
    const bool single = j.is_object();
    const std::size_t n = single ? 1 : j.size();
    for (std::size_t i = 0; i < n; ++i)
      serve::job_from_json(single ? j : j[i], JobUse::Predict, single ? -1 : static_cast<long>(i), records[i]);
    return true;
  });
}
BENCHMARK(BM_JobJson_Nlohmann)->Arg(0)->Arg(1)->Arg(2);

void BM_JobJson_SimdjsonDom(benchmark::State& state) {
  serve::JobReader reader;
  bench_parser(state, false, "fell back", [&](std::string_view text, std::size_t jobs, std::vector<JobRecord>& records) {
    const auto read = reader.read(text, JobUse::Predict, 4096, records);
    return read.count == jobs && read.fast;
  });
}
BENCHMARK(BM_JobJson_SimdjsonDom)->Arg(0)->Arg(1)->Arg(2);

void BM_JobJson_SimdjsonOndemand(benchmark::State& state) {
  simdjson::ondemand::parser parser;
  std::string buffer;
  bench_parser(state, true, "rejected", [&](std::string_view text, std::size_t jobs, std::vector<JobRecord>& records) {
    buffer.assign(text);
    buffer.resize(text.size() + simdjson::SIMDJSON_PADDING, ' ');
    simdjson::ondemand::document doc;
    bool ok = !parser.iterate(simdjson::padded_string_view(buffer.data(), text.size(), buffer.size())).get(doc);
    std::size_t n = 0;
    if (ok) {
      simdjson::ondemand::json_type type;
      ok = !doc.type().get(type);
      if (ok && type == simdjson::ondemand::json_type::object) {
        simdjson::ondemand::value v;
        ok = !doc.get_value().get(v) && ondemand_job(v, JobUse::Predict, records[0]);
        n = 1;
      } else if (ok && type == simdjson::ondemand::json_type::array) {
        simdjson::ondemand::array a;
        ok = !doc.get_array().get(a);
        for (auto element : a) {
          simdjson::ondemand::value v;
          if (!ok || element.get(v) || n >= records.size() || !ondemand_job(v, JobUse::Predict, records[n])) {
            ok = false;
            break;
          }
          ++n;
        }
      }
      ok = ok && doc.current_location().error() == simdjson::OUT_OF_BOUNDS;  // nothing after the value
    }
    return ok && n == jobs;
  });
}
BENCHMARK(BM_JobJson_SimdjsonOndemand)->Arg(0)->Arg(1)->Arg(2);

}  // namespace
}  // namespace ttlpred
