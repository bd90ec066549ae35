#include "interop/base64.hpp"

namespace ttlpred::interop {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

std::string base64_encode(const std::vector<std::uint8_t>& b) {
  std::string out;
  out.reserve((b.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= b.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{b[i]} << 16) | (std::uint32_t{b[i + 1]} << 8) | b[i + 2];
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (const std::size_t rest = b.size() - i; rest) {
    const std::uint32_t v = (std::uint32_t{b[i]} << 16) | (rest == 2 ? std::uint32_t{b[i + 1]} << 8 : 0u);
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view t) {
  if (t.size() % 4) return std::nullopt;
  std::vector<std::uint8_t> out;
  out.reserve(t.size() / 4 * 3);
  for (std::size_t i = 0; i < t.size(); i += 4) {
    const bool last = i + 4 == t.size();
    const int pad = last ? (t[i + 3] == '=') + (t[i + 2] == '=') : 0;
    if (pad == 1 && t[i + 2] == '=') return std::nullopt;
    int v[4];
    for (int k = 0; k < 4 - pad; ++k)
      if ((v[k] = value_of(t[i + static_cast<std::size_t>(k)])) < 0) return std::nullopt;
    for (int k = 4 - pad; k < 4; ++k) v[k] = 0;
    const std::uint32_t x = (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
                            (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
    out.push_back(static_cast<std::uint8_t>(x >> 16));
    if (pad < 2) out.push_back(static_cast<std::uint8_t>((x >> 8) & 255));
    if (pad < 1) out.push_back(static_cast<std::uint8_t>(x & 255));
  }
  return out;
}

}  // namespace ttlpred::interop
