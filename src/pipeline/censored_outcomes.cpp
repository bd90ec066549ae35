#include "pipeline/censored_outcomes.hpp"

#include <cmath>

namespace ttlpred {

bool is_censored_outcome(std::string_view status, double wall_s, double requested_ttl_s) {
  if (status == "ERROR_E" || status == "TIMEOUT") return true;
  return requested_ttl_s > 0 && std::isfinite(requested_ttl_s) && wall_s >= kReachedRequestShare * requested_ttl_s;
}

std::vector<std::uint8_t> censored_outcomes(const JobTable& t, std::size_t begin, std::size_t end) {
  const auto wall = t.num(Field::WallTime), requested = t.num(Field::RequestedTtl);
  const auto status = t.codes(Field::Status);
  const auto& names = t.dict(Field::Status);
  std::vector<std::uint8_t> out(end - begin);
  for (std::size_t i = begin; i < end; ++i) {
    const std::string_view s = status[i] == kMissingCode ? std::string_view{} : std::string_view(names.value(status[i]));
    out[i - begin] = is_censored_outcome(s, wall[i], requested[i]) ? 1 : 0;
  }
  return out;
}

}  // namespace ttlpred
