#pragma once
// RFC 4648 base64, for the sealed ttlpred sections the JSON sidecar carries verbatim (the
// feature encoder, history configuration, target transform and safe-TTL calibration), so
// that `ttlpred import` rebuilds them bit for bit.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ttlpred::interop {

std::string base64_encode(const std::vector<std::uint8_t>& bytes);
// nullopt on any character outside the alphabet, bad padding or a length not a multiple of 4.
std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text);

}  // namespace ttlpred::interop
