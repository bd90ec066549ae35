#pragma once
// The program's version, stored in model files and reported by the service.
namespace ttlpred {
inline constexpr const char* kVersion = "0.1.0";
}
