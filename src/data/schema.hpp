#pragma once
// The typed schema of a job record: which fields exist, their type, and when they become
// known (submission, match time, outcome). A model may only read fields known at the time
// it predicts; the phase makes that checkable. The CSV header names are the `name`s here
// (docs/data-format.md).
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ttlpred {

enum class FieldKind : std::uint8_t { Number, Category };
enum class Phase : std::uint8_t { Submit, Match, Outcome };

// X(enum name, CSV name, kind, phase, unit, description)
#define TTLPRED_FIELDS(X)                                                                                  \
  X(JobId, "job_id", Number, Submit, "", "job identifier")                                                 \
  X(MasterJobId, "master_job_id", Number, Submit, "", "master job this sub-job was split from")           \
  X(SubmitTime, "submit_time", Number, Submit, "s", "submission time (Unix seconds)")                      \
  X(User, "user", Category, Submit, "", "submitting user or production account")                           \
  X(Group, "group", Category, Submit, "", "user group (SWF/GWF)")                                          \
  X(JobType, "job_type", Category, Submit, "", "MC, RAW_RECO, HYPERLOOP, HL_MERGE, USER, MERGE")           \
  X(ProductionTag, "production_tag", Category, Submit, "", "LPMProductionTag")                             \
  X(PassName, "pass_name", Category, Submit, "", "LPMAnchorPassName / reconstruction pass")                \
  X(AnchorRun, "anchor_run", Number, Submit, "", "LPMAnchorRun")                                           \
  X(InteractionType, "interaction_type", Category, Submit, "", "LPMInteractionType: pp, PbPb, pPb, OO")   \
  X(Package, "package", Category, Submit, "", "software package tag (Packages)")                           \
  X(Queue, "queue", Category, Submit, "", "queue name (SWF field 15 or Alea field 20)")                    \
  X(Partition, "partition", Category, Submit, "", "partition (SWF field 16)")                              \
  X(Executable, "executable", Category, Submit, "", "application or executable (SWF field 14)")            \
  X(CpuCores, "cpu_cores", Number, Submit, "cores", "requested CPU cores (CPUCores)")                      \
  X(MemoryMb, "memory_mb", Number, Submit, "MB", "requested memory (MemorySize)")                          \
  X(WorkdirMb, "workdir_mb", Number, Submit, "MB", "requested work-directory size")                        \
  X(Price, "price", Number, Submit, "", "JDL Price")                                                       \
  X(InputFiles, "input_files", Number, Submit, "files", "number of input files")                           \
  X(InputBytes, "input_bytes", Number, Submit, "bytes", "total input size")                                \
  X(Events, "events", Number, Submit, "events", "events or time frames per job")                           \
  X(RequestedTtl, "requested_ttl_s", Number, Submit, "s", "requested TTL / wall-time limit")               \
  X(WaitTime, "wait_s", Number, Match, "s", "time from submission to start")                               \
  X(Site, "site", Category, Match, "", "grid site that ran the job")                                        \
  X(Ce, "ce", Category, Match, "", "computing element")                                                    \
  X(CpuModel, "cpu_model", Category, Match, "", "host CPU model")                                          \
  X(CpuMhz, "cpu_mhz", Number, Match, "MHz", "host CPU clock")                                             \
  X(HostSpeed, "host_speed", Number, Match, "", "host speed factor (1 = reference host)")                  \
  X(SlotCores, "slot_cores", Number, Match, "cores", "cores of the slot / allocated processors")           \
  X(SlotTimeLeft, "slot_time_left_s", Number, Match, "s", "slot's remaining lifetime at match time")       \
  X(WallTime, "wall_s", Number, Outcome, "s", "wall-clock run time: the prediction target")                \
  X(CpuTime, "cpu_time_s", Number, Outcome, "s", "CPU time used")                                          \
  X(MaxRss, "max_rss_mb", Number, Outcome, "MB", "peak resident memory")                                   \
  X(Status, "status", Category, Outcome, "", "final status: DONE, ERROR_E, FAILED, CANCELLED ...")        \
  X(ExpectedWall, "expected_wall_s", Number, Outcome, "s", "noise-free expected wall time (synthetic only)")

enum class Field : std::uint8_t {
#define TTLPRED_X(id, name, kind, phase, unit, doc) id,
  TTLPRED_FIELDS(TTLPRED_X)
#undef TTLPRED_X
};

inline constexpr std::size_t kNumFields = 0
#define TTLPRED_X(id, name, kind, phase, unit, doc) +1
    TTLPRED_FIELDS(TTLPRED_X)
#undef TTLPRED_X
    ;

struct FieldInfo {
  Field field;
  std::string_view name;
  FieldKind kind;
  Phase phase;
  std::string_view unit;
  std::string_view doc;
};

inline constexpr std::array<FieldInfo, kNumFields> kFields = {{
#define TTLPRED_X(id, name, kind, phase, unit, doc) \
  {Field::id, name, FieldKind::kind, Phase::phase, unit, doc},
    TTLPRED_FIELDS(TTLPRED_X)
#undef TTLPRED_X
}};

constexpr const FieldInfo& info(Field f) { return kFields[static_cast<std::size_t>(f)]; }
constexpr std::size_t index_of(Field f) { return static_cast<std::size_t>(f); }
constexpr bool is_category(Field f) { return info(f).kind == FieldKind::Category; }
std::optional<Field> field_by_name(std::string_view name);
// The schema field a mistyped column name most likely meant ("wall_sec", "Submit_Time",
// "user_name" -> wall_s, submit_time, user): the field whose name is nearest in edit
// distance, case ignored, when that distance is at most 2 or one name starts with the other
// (4 characters at least); nullopt otherwise. For the reader's "did you mean" hints.
std::optional<Field> nearest_field(std::string_view name);
std::string_view phase_name(Phase p);

}  // namespace ttlpred
