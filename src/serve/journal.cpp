#include "serve/journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <vector>

#include "util/error.hpp"

namespace ttlpred::serve {
namespace fs = std::filesystem;
namespace {

std::string sys_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// The one naming rule, for reading and writing alike: "prefix<g>suffix" with g written as
// std::to_string writes it (decimal, no leading zeros, 1 .. 18 digits, at least 1).
enum class Name { Other, Valid, Broken };
Name parse_name(const std::string& name, std::string_view prefix, std::string_view suffix, std::uint64_t& gen) {
  if (name.size() < prefix.size() + suffix.size() || !name.starts_with(prefix) || !name.ends_with(suffix))
    return Name::Other;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos ||
      digits[0] == '0')
    return Name::Broken;
  gen = std::stoull(digits);
  return Name::Valid;
}

// Generation number of "prefix<g>suffix" under the naming rule, or nullopt for any other name.
std::optional<std::uint64_t> generation_of(const std::string& name, std::string_view prefix, std::string_view suffix) {
  std::uint64_t g = 0;
  if (parse_name(name, prefix, suffix, g) != Name::Valid) return {};
  return g;
}

void fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) throw Error(sys_error("cannot open journal folder " + dir));
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw Error(sys_error("cannot sync journal folder " + dir));
}

}  // namespace

OutcomeJournal::OutcomeJournal(std::string dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw Error("cannot create journal folder " + dir_ + ": " + ec.message());
  try {
    lock_folder();
    // The generations are those the folder lists, never a count between two numbers: a gap
    // (journal-999999999999999999.jsonl) costs nothing.
    std::vector<std::string> broken;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      std::uint64_t g = 0;
      const Name snap = parse_name(name, "snapshot-", ".hist", g);
      if (snap == Name::Valid) snapshot_gen_ = std::max(snapshot_gen_, g);
      const Name jour = parse_name(name, "journal-", ".jsonl", g);
      if (jour == Name::Valid) journal_gens_.push_back(g);
      if (snap == Name::Broken || jour == Name::Broken) broken.push_back(name);
    }
    if (!broken.empty()) {
      std::sort(broken.begin(), broken.end());
      std::string list;
      for (const auto& b : broken) list += (list.empty() ? "" : ", ") + (fs::path(dir_) / b).string();
      // Such a file may hold acknowledged outcomes that would never be replayed: say so
      // instead of skipping it.
      throw Error("journal folder " + dir_ + ": " + list +
                  " break the naming rule journal-<g>.jsonl / snapshot-<g>.hist (g a decimal number from 1, no leading "
                  "zeros, at most 18 digits); rename or move them away");
    }
    std::sort(journal_gens_.begin(), journal_gens_.end());
    gen_ = std::max({journal_gens_.empty() ? 0 : journal_gens_.back(), snapshot_gen_, std::uint64_t{1}});
    open_current();
  } catch (...) {
    // A refused start must not keep the folder locked for the rest of this process.
    if (fd_ >= 0) ::close(fd_);
    if (lock_fd_ >= 0) ::close(lock_fd_);
    if (dir_fd_ >= 0) ::close(dir_fd_);
    throw;
  }
}

void OutcomeJournal::lock_folder() {
  // Two servers appending to one folder rotate and remove each other's journals: refuse the
  // second owner. The lock is on the folder itself (flock on its own descriptor), which no
  // rm of a file inside it can take away: a lock on DIR/lock alone was gone with the file,
  // and a second server started beside the first. flock() is released by the kernel when
  // the process dies (kill -9 too). DIR/lock is still locked too, for a server of an older
  // version that only knows that one, and holds the owner's pid for the message below.
  const std::string path = (fs::path(dir_) / "lock").string();
  auto refuse = [&](int saved, const std::string& what) {
    std::string owner;
    if (const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
      char pid[32] = {};
      const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
      if (n > 0) owner.assign(pid, static_cast<std::size_t>(n));
      ::close(fd);
    }
    while (!owner.empty() && (owner.back() == '\n' || owner.back() == ' ')) owner.pop_back();
    if (saved == EWOULDBLOCK)
      throw Error("journal folder " + dir_ + " is in use by another server" + (owner.empty() ? "" : " (pid " + owner + ")") +
                  " holding " + what + ": two servers on one journal lose acknowledged outcomes; give each its own --journal");
    errno = saved;
    throw Error(sys_error("cannot lock " + what));
  };
  dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd_ < 0) throw Error(sys_error("cannot open journal folder " + dir_));
  if (::flock(dir_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int saved = errno;
    ::close(dir_fd_);
    dir_fd_ = -1;
    refuse(saved, "the folder's lock");
  }
  struct stat st{};
  if (::fstat(dir_fd_, &st) != 0) throw Error(sys_error("cannot stat journal folder " + dir_));
  dir_dev_ = st.st_dev;
  dir_ino_ = st.st_ino;
  lock_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) throw Error(sys_error("cannot open journal lock " + path));
  if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    const int saved = errno;
    ::close(lock_fd_);
    lock_fd_ = -1;
    refuse(saved, path);
  }
  const std::string me = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, me.data(), me.size(), 0) < 0) {
  }  // the pid is for the error message of a second server only; the lock is what counts
}

void OutcomeJournal::check_still_ours() const {
  // The folder lock binds the folder we opened, not its name: if DIR was moved or replaced
  // (mv DIR DIR.old; mkdir DIR), a restart (or a second server, which the new folder lets
  // start) reads another folder than the one we append to, and what we acknowledged would be
  // lost. So is an append to a journal someone removed. Refuse to acknowledge either.
  struct stat st{};
  if (::stat(dir_.c_str(), &st) != 0 || st.st_dev != dir_dev_ || st.st_ino != dir_ino_)
    throw Error("journal folder " + dir_ + " was moved, removed or replaced while this server held it: outcomes "
                "written now would not be found at a restart; restart the server on its journal");
  if (fd_ >= 0 && (::fstat(fd_, &st) != 0 || st.st_nlink == 0))
    throw Error("journal " + journal_path(gen_) + " was removed while this server wrote to it: outcomes written now "
                "would not be found at a restart; restart the server on its journal");
}

OutcomeJournal::~OutcomeJournal() {
  if (fd_ >= 0) ::close(fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
}

std::string OutcomeJournal::journal_path(std::uint64_t gen) const {
  return (fs::path(dir_) / ("journal-" + std::to_string(gen) + ".jsonl")).string();
}
std::string OutcomeJournal::snapshot_file(std::uint64_t gen) const {
  return (fs::path(dir_) / ("snapshot-" + std::to_string(gen) + ".hist")).string();
}

std::string OutcomeJournal::learned_path(const std::string& snapshot_path) {
  std::string p = snapshot_path;
  if (p.ends_with(".hist")) p.resize(p.size() - 5);
  return p + ".learn";
}

std::optional<std::string> OutcomeJournal::snapshot_path() const {
  if (snapshot_gen_ == 0) return std::nullopt;
  return snapshot_file(snapshot_gen_);
}

void OutcomeJournal::open_current() {
  const std::string path = journal_path(gen_);
  const bool existed = fs::exists(path);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(sys_error("cannot open journal " + path));
  // A crash in the middle of a write leaves a last line without its newline: cut it off,
  // or the next append would glue onto it.
  struct stat st{};
  if (::fstat(fd_, &st) != 0) throw Error(sys_error("cannot stat journal " + path));
  if (st.st_size > 0) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes(static_cast<std::size_t>(st.st_size));
    in.read(bytes.data(), st.st_size);
    std::size_t keep = bytes.size();
    while (keep > 0 && bytes[keep - 1] != '\n') --keep;
    if (keep != bytes.size()) {
      if (::ftruncate(fd_, static_cast<off_t>(keep)) != 0 || ::fdatasync(fd_) != 0)
        throw Error(sys_error("cannot trim torn journal tail of " + path));
    }
  }
  if (!existed) fsync_dir(dir_);
}

std::uint64_t OutcomeJournal::replay(
    const std::function<void(std::string_view, const std::string&, std::size_t)>& line) {
  std::uint64_t n = 0;
  for (const std::uint64_t g : journal_gens_) {
    if (g < snapshot_gen_) continue;  // in the snapshot already
    const std::string path = journal_path(g);
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    std::string text;
    std::size_t number = 0;
    while (std::getline(in, text)) {
      ++number;
      if (text.empty()) continue;
      line(text, path, number);
      ++n;
    }
  }
  since_snapshot_ = n;
  return n;
}

void OutcomeJournal::append(std::string_view lines, std::uint64_t count, bool flush) {
  check_still_ours();
  if (fd_ < 0) open_current();  // a snapshot failed to open the next journal: try again
  const off_t start = ::lseek(fd_, 0, SEEK_END);
  std::size_t done = 0;
  while (done < lines.size()) {
    const ssize_t w = ::write(fd_, lines.data() + done, lines.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const std::string msg = sys_error("cannot append to journal " + journal_path(gen_));
      if (start >= 0 && ::ftruncate(fd_, start) != 0) {}  // best effort: the error below is what matters
      throw Error(msg);
    }
    done += static_cast<std::size_t>(w);
  }
  if (flush && ::fdatasync(fd_) != 0) {
    const std::string msg = sys_error("cannot flush journal " + journal_path(gen_));
    if (start >= 0 && ::ftruncate(fd_, start) != 0) {}
    throw Error(msg);
  }
  since_snapshot_ += count;
}

void OutcomeJournal::snapshot(const std::function<void(const std::string&)>& save) {
  check_still_ours();
  const std::uint64_t next = gen_ + 1;
  save(snapshot_file(next));  // covers every journal up to gen_; if it throws, nothing changed
  // From here on the snapshot exists, and a restart replays only journals from `next` on:
  // appends must go there even if a step below fails (append() reopens when needed).
  ::close(fd_);
  fd_ = -1;
  gen_ = next;
  snapshot_gen_ = next;
  since_snapshot_ = 0;
  fsync_dir(dir_);
  open_current();
  remove_older_than(next);
}

void OutcomeJournal::remove_older_than(std::uint64_t gen) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    auto g = generation_of(name, "snapshot-", ".hist");
    if (!g) g = generation_of(name, "snapshot-", ".learn");
    if (!g) g = generation_of(name, "journal-", ".jsonl");
    if (g && *g < gen) fs::remove(entry.path(), ec);
  }
}

}  // namespace ttlpred::serve
