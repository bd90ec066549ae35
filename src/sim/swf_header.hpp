#pragma once
// The machine size an SWF trace declares in its header (`; MaxProcs: N`, else
// `; MaxNodes: N`), which the batch schedulers need and the job table does not carry.
#include <optional>
#include <string>

namespace ttlpred::sim {

// Reads header comment lines of `path` (plain or gzip) until the first job line. Nothing
// when the header has neither field; throws InputError naming file:line for a malformed value.
std::optional<int> swf_max_procs(const std::string& path);

}  // namespace ttlpred::sim
