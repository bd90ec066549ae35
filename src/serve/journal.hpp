#pragma once
// Durable outcomes. Every acknowledged outcome is in an append-only journal, flushed to disk
// (fdatasync) before the service answers 200, so a crash or kill -9 loses nothing that was
// acknowledged. Snapshots bound the replay time: the history state is written atomically as
// snapshot-<g+1>.hist, then appends move to journal-<g+1>.jsonl and the older files are
// removed. At start the newest snapshot is loaded and journals from its generation on are
// replayed, so a crash at any step of a snapshot leaves a consistent pair of files.
//
// Journal format: one JSON object per line: an outcome (the fields of /v1/outcomes), or, for
// a model made for match time, a job's start (serve/running_jobs.hpp: it has "event"). A last
// line without its newline is a write torn by a crash; it was never acknowledged, so it is
// dropped (and cut off the file) at open.
//
// One owner: the folder itself is locked (flock on its own descriptor, and on DIR/lock for
// older versions) for the journal's lifetime; a second server on the same folder is refused
// at start, whatever was removed inside it. Appends and snapshots are refused (Error, so
// nothing is acknowledged) once the folder at DIR is no longer the one locked (moved,
// removed, replaced) or the journal file was removed. Generations are read from the folder's
// listing; a file named like a journal or snapshot that breaks the naming rule
// (journal-0057.jsonl) refuses the start, naming it, rather than being skipped.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ttlpred::serve {

class OutcomeJournal {
 public:
  // Opens or creates the folder, locks it, trims a torn last line. Throws Error on I/O
  // failure, when another journal holds the folder, or for a misnamed journal or snapshot.
  explicit OutcomeJournal(std::string dir);
  ~OutcomeJournal();
  OutcomeJournal(const OutcomeJournal&) = delete;
  OutcomeJournal& operator=(const OutcomeJournal&) = delete;

  // The newest snapshot, if any: load it before replay().
  std::optional<std::string> snapshot_path() const;
  // Calls `line(text, file, line_number)` for every journaled outcome since that snapshot,
  // in order. Returns how many lines there were.
  std::uint64_t replay(const std::function<void(std::string_view, const std::string&, std::size_t)>& line);

  // Appends `lines` (whole lines, each ending in '\n') and flushes them to disk. On failure
  // the file is cut back to where it was and Error is thrown: nothing half-written stays.
  // `flush` false: written to the file (so they survive the process: a crash, kill -9) but
  // left for the next flushing append to put on disk (a power loss may take them): for
  // records whose loss costs little and whose fdatasync would cost the caller milliseconds.
  void append(std::string_view lines, std::uint64_t count, bool flush = true);
  // Outcomes appended since the last snapshot (replayed ones included).
  std::uint64_t since_snapshot() const { return since_snapshot_; }

  // `save(path)` must write the state atomically to `path`; then the journal rotates.
  // The caller holds whatever lock keeps the state and the journal in step.
  void snapshot(const std::function<void(const std::string&)>& save);

  // The file beside snapshot `snapshot_path` (snapshot-<g>.hist) that holds what the service
  // learned besides the history: snapshot-<g>.learn. Written before the history, removed with it.
  static std::string learned_path(const std::string& snapshot_path);

  const std::string& dir() const { return dir_; }
  std::uint64_t generation() const { return gen_; }

 private:
  std::string journal_path(std::uint64_t gen) const;
  std::string snapshot_file(std::uint64_t gen) const;
  void open_current();
  void lock_folder();
  void check_still_ours() const;
  void remove_older_than(std::uint64_t gen);

  std::string dir_;
  std::uint64_t gen_ = 0;            // generation of the journal being appended to
  std::uint64_t snapshot_gen_ = 0;   // 0: no snapshot
  std::uint64_t since_snapshot_ = 0;
  int fd_ = -1;
  int lock_fd_ = -1;
  int dir_fd_ = -1;       // the folder, flock'ed
  std::uint64_t dir_dev_ = 0, dir_ino_ = 0;  // its identity, to notice a folder put in its place
  std::vector<std::uint64_t> journal_gens_;  // journals found at open, ascending
};

}  // namespace ttlpred::serve
