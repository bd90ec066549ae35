#pragma once
// The program's version, stored in model files and reported by the service and by
// `ttlpred --version`. The one source is CMake's project(VERSION); the build writes it, and
// the git commit the sources were built from, into a generated header (version_info.cmake)
// read only by version.cpp, so a new commit recompiles one file.
namespace ttlpred {
extern const char* const kVersion;    // "0.1.0"
extern const char* const kGitCommit;  // "0123456789ab", "+dirty" appended for uncommitted changes; "" outside git
}
