#pragma once
// Structured log lines for what the service does on its own or on an operator's request
// (reloads, drift alarms, failed snapshots): one JSON object per line on stderr,
//   {"ts":"2026-12-01T21:04:05.123Z","level":"warn","event":"drift_alarm", ...fields}
// written with one write() so that lines from several threads never interleave.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ttlpred::serve {

// The line for an event at `unix_s` (no trailing newline). `fields` is an object (or null).
std::string event_line(double unix_s, std::string_view level, std::string_view event, const nlohmann::json& fields);
// Writes event_line(now, ...) and a newline to stderr.
void log_event(std::string_view level, std::string_view event, const nlohmann::json& fields = nullptr);

// The wall clock, unix seconds.
double unix_now();

}  // namespace ttlpred::serve
