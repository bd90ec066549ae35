#pragma once
// Time texts of job logs that are not plain numbers: ISO-8601 date-times (database exports,
// Slurm's Submit/Start/End) and Slurm's duration grammar (Elapsed, Timelimit, TotalCPU).
// Both return false on anything they do not fully understand, so a reader can skip the row
// with the field named instead of guessing.
#include <string_view>

namespace ttlpred::parse {

// ISO-8601 / RFC-3339 date-time into Unix seconds (UTC):
//   YYYY-MM-DD                       midnight UTC
//   YYYY-MM-DDThh:mm[:ss[.fff]]      'T' or one space between date and time
//   ... followed by Z, +hh:mm, +hhmm, +hh or -... (the offset is subtracted)
// A time without offset is taken as UTC: job logs rarely say their zone, and UTC is the one
// that needs no daylight-saving guesses (docs/data-format.md says to export in UTC).
// Years 1970-9999; fields must be in range (month 1-12, day within the month, hour 0-23,
// minute 0-59, second 0-60).
bool iso8601_seconds(std::string_view text, double& unix_seconds);

// Slurm's time grammar into seconds (the one sbatch --time accepts and sacct prints):
//   M, M:S, H:M:S, D-H, D-H:M, D-H:M:S; seconds may have a fraction (TotalCPU's MM:SS.mmm).
// A bare number is minutes, as Slurm reads it.
bool slurm_duration_seconds(std::string_view text, double& seconds);

}  // namespace ttlpred::parse
