#pragma once
// The time a model file says it was made (TrainingMetadata::created_utc): now, in UTC, ISO
// 8601 to the second, or the time SOURCE_DATE_EPOCH names when it is set and not empty
// (seconds since 1970, the reproducible-builds convention). The stamp is part of the file's bytes, so
// without it two trainings of the same data, options and seed differ when a second boundary
// falls between them; with it they are the same file.
#include <string>

namespace ttlpred {

// Throws Error when SOURCE_DATE_EPOCH is set but is not a whole number of seconds >= 0.
std::string model_creation_time_utc();

}  // namespace ttlpred
