// Fuzz target: the service's job reader, differentially. Every body goes through JobReader
// (simdjson, falling back to nlohmann-json) and through the nlohmann-json reader alone, for
// /v1/predict, /v1/outcomes and /v1/match. The contract (serve/job_json.hpp) is that both
// give the same answer: the same records, or a RequestError with the same status, wording,
// field and index. Any other exception, or any difference, aborts.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "serve/job_json.hpp"

using namespace ttlpred;
using namespace ttlpred::serve;

namespace {

struct Outcome {
  bool refused = false;
  int status = 0;
  std::string message, field;
  long index = 0;
};

[[noreturn]] void fail(const char* what, std::string_view body) {
  std::fprintf(stderr, "%s\nbody: %.*s\n", what, static_cast<int>(body.size()), body.data());
  std::abort();
}

bool same_number(double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0; }

void same_records(const std::vector<JobRecord>& a, const std::vector<JobRecord>& b, std::size_t n, std::string_view body) {
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t f = 0; f < kNumFields; ++f)
      if (!same_number(a[i].num[f], b[i].num[f]) || a[i].cat[f] != b[i].cat[f]) fail("records differ", body);
}

void same_refusal(const Outcome& a, const Outcome& b, std::string_view body) {
  if (a.refused != b.refused || a.status != b.status || a.message != b.message || a.field != b.field || a.index != b.index) {
    std::fprintf(stderr, "fast: %d %d '%s' '%s' %ld\nnlohmann: %d %d '%s' '%s' %ld\n", a.refused, a.status,
                 a.message.c_str(), a.field.c_str(), a.index, b.refused, b.status, b.message.c_str(), b.field.c_str(),
                 b.index);
    fail("the two readers answer differently", body);
  }
}

template <class Read>
Outcome run(Read read) {
  Outcome o;
  try {
    read();
  } catch (const RequestError& e) {
    o.refused = true;
    o.status = e.status();
    o.message = e.what();
    o.field = e.field();
    o.index = e.index();
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  constexpr std::size_t kMaxBatch = 16;
  static JobReader reader;  // one per thread, as in the service: reused across bodies
  for (JobUse use : {JobUse::Predict, JobUse::Outcome}) {
    std::vector<JobRecord> fast_records, slow_records;
    nlohmann::json doc;
    JobReader::Jobs fast{}, slow{};
    const Outcome a = run([&] { fast = reader.read(body, use, kMaxBatch, fast_records); });
    const Outcome b = run([&] { slow = read_jobs_nlohmann(body, use, kMaxBatch, slow_records, doc); });
    same_refusal(a, b, body);
    if (!a.refused) {
      if (fast.count != slow.count || fast.single != slow.single) fail("job counts differ", body);
      same_records(fast_records, slow_records, fast.count, body);
    }
  }
  std::vector<JobRecord> fast_records, slow_records;
  nlohmann::json doc;
  JobReader::Match fast, slow;
  const Outcome a = run([&] { fast = reader.read_match(body, kMaxBatch, fast_records); });
  const Outcome b = run([&] { slow = read_match_nlohmann(body, kMaxBatch, slow_records, doc); });
  same_refusal(a, b, body);
  if (!a.refused) {
    if (fast.count != slow.count || fast.order != slow.order || fast.limit != slow.limit) fail("match bodies differ", body);
    same_records(fast_records, slow_records, fast.count, body);
    std::vector<JobRecord> one_a{fast.slot}, one_b{slow.slot};
    same_records(one_a, one_b, 1, body);
  }
  reader.release_if_large(1u << 20);
  return 0;
}
