#include "util/atomic_write.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <system_error>
#include <utility>

#include "util/diagnostics.h"

namespace lathe {

namespace fs = std::filesystem;

namespace {

// --- The registry of what a signal must clean up -------------------------------------------------
//
// Fixed slots, so that the handler reads them with nothing but atomic loads: a slot is claimed
// (kFree -> kClaimed), filled, then armed; the handler takes every armed slot (kArmed ->
// kCleaning) before touching it, so that a thread releasing the slot meanwhile cannot reuse it.

constexpr size_t kCleanupSlots = 64;
constexpr size_t kMaxCleanupPath = 4096;
constexpr int kMaxRemoveDepth = 16;  // an export bundle is three folders deep
constexpr int kMaxRemovePasses = 8;  // re-reads of a folder whose entries are being removed
constexpr int kGroupExitPolls = 200;
constexpr long kGroupExitPollNanos = 10'000'000;  // 200 x 10 ms: two seconds for killed compilers to go
constexpr std::array kCleanupSignals{SIGTERM, SIGINT, SIGHUP};

enum SlotState : int { kFree, kClaimed, kArmed, kCleaning };

struct CleanupSlot {
  std::atomic<int> state{kFree};
  pid_t group = 0;  // > 0: a process group to kill; otherwise `path` is removed
  char path[kMaxCleanupPath] = {};
};

std::array<CleanupSlot, kCleanupSlots> cleanupSlots;
std::atomic<bool> cleaningUp{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free);

// Removes `name` (relative to the folder `parent`) and everything under it, with async-signal-safe
// calls only.
void removeTree(int parent, const char* name, int depth) {
  if (unlinkat(parent, name, 0) == 0 || errno == ENOENT) return;
  if (errno != EISDIR || depth >= kMaxRemoveDepth) return;
  const int folder = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (folder < 0) return;
  alignas(dirent64) char buffer[2048];
  for (int pass = 0; pass < kMaxRemovePasses; ++pass) {
    bool removedAny = false;
    lseek(folder, 0, SEEK_SET);
    for (ssize_t got; (got = getdents64(folder, buffer, sizeof buffer)) > 0;) {
      for (ssize_t at = 0; at < got;) {
        const auto* entry = reinterpret_cast<const dirent64*>(buffer + at);
        at += entry->d_reclen;
        if (std::strcmp(entry->d_name, ".") == 0 || std::strcmp(entry->d_name, "..") == 0) continue;
        removeTree(folder, entry->d_name, depth + 1);
        removedAny = true;
      }
    }
    if (!removedAny) break;
  }
  close(folder);
  unlinkat(parent, name, AT_REMOVEDIR);
}

void waitForGroupToExit(pid_t group) {
  while (waitpid(group, nullptr, 0) < 0 && errno == EINTR) {
  }
  const timespec pause{0, kGroupExitPollNanos};
  for (int poll = 0; poll < kGroupExitPolls && kill(-group, 0) == 0; ++poll) nanosleep(&pause, nullptr);
}

extern "C" void cleanUpAndReraise(int signal) {
  const int savedErrno = errno;
  // A second signal, in another thread, waits for the first cleanup, which ends the process.
  if (cleaningUp.exchange(true)) {
    for (;;) pause();
  }
  std::array<bool, kCleanupSlots> taken{};
  for (size_t i = 0; i < kCleanupSlots; ++i) {
    int armed = kArmed;
    taken[i] = cleanupSlots[i].state.compare_exchange_strong(armed, kCleaning);
  }
  // Compilers first, so that nothing writes into a folder while it is removed.
  for (size_t i = 0; i < kCleanupSlots; ++i)
    if (taken[i] && cleanupSlots[i].group > 0) kill(-cleanupSlots[i].group, SIGKILL);
  for (size_t i = 0; i < kCleanupSlots; ++i)
    if (taken[i] && cleanupSlots[i].group > 0) waitForGroupToExit(cleanupSlots[i].group);
  for (size_t i = 0; i < kCleanupSlots; ++i)
    if (taken[i] && cleanupSlots[i].group == 0) removeTree(AT_FDCWD, cleanupSlots[i].path, 0);
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  sigemptyset(&defaults.sa_mask);
  sigaction(signal, &defaults, nullptr);
  raise(signal);  // blocked in the handler: delivered, with its default action, when it returns
  errno = savedErrno;
}

void installHandlers() {
  static std::once_flag installed;
  std::call_once(installed, [] {
    struct sigaction action {};
    action.sa_handler = cleanUpAndReraise;
    sigemptyset(&action.sa_mask);
    for (int signal : kCleanupSignals) sigaddset(&action.sa_mask, signal);
    for (int signal : kCleanupSignals) {
      struct sigaction current {};
      if (sigaction(signal, nullptr, &current) != 0) continue;
      if ((current.sa_flags & SA_SIGINFO) == 0 && current.sa_handler == SIG_DFL) sigaction(signal, &action, nullptr);
    }
  });
}

int claimSlot(pid_t group, const fs::path& path) {
  installHandlers();
  const std::string text = path.string();
  if (text.size() >= kMaxCleanupPath) throw Error(ErrorCode::BadInput, "path too long", {text});
  for (size_t i = 0; i < kCleanupSlots; ++i) {
    int expected = kFree;
    if (!cleanupSlots[i].state.compare_exchange_strong(expected, kClaimed)) continue;
    cleanupSlots[i].group = group;
    std::memcpy(cleanupSlots[i].path, text.c_str(), text.size() + 1);
    cleanupSlots[i].state.store(kArmed);
    return static_cast<int>(i);
  }
  throw Error(ErrorCode::Internal, "more than " + std::to_string(kCleanupSlots) + " temporary paths at once");
}

// --- Temporary names -----------------------------------------------------------------------------

constexpr std::string_view kNameAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
constexpr size_t kRandomChars = 6;
constexpr int kNameAttempts = 100;
constexpr int kMaxSymlinkHops = 40;          // as the kernel's own limit (ELOOP)
constexpr size_t kMaxSweptEntries = 100000;  // entries of the target's folder a sweep looks at

std::string errnoText(int error) {
  return std::error_code(error, std::generic_category()).message();
}

[[noreturn]] void fail(const std::string& what, int error, const fs::path& path) {
  throw Error(ErrorCode::BadInput, what + ": " + errnoText(error), {path.string()});
}

std::string tempPrefix(const fs::path& target, std::string_view tag) {
  return "." + target.filename().string() + "." + std::string(tag);
}

// `.NAME.<tag><pid>-XXXXXX` beside the target, XXXXXX random.
fs::path tempName(const fs::path& target, std::string_view tag) {
  thread_local std::mt19937_64 random{std::random_device{}() ^ static_cast<uint64_t>(getpid())};
  std::string name = tempPrefix(target, tag) + std::to_string(getpid()) + "-";
  for (size_t i = 0; i < kRandomChars; ++i) name += kNameAlphabet[random() % kNameAlphabet.size()];
  return target.parent_path() / name;
}

// The pid in a name of the pattern `<prefix><pid>-XXXXXX`, or 0 when the name is not one.
pid_t tempOwner(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return 0;
  name.remove_prefix(prefix.size());
  const size_t dash = name.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash > 9 || name.size() != dash + 1 + kRandomChars) return 0;
  pid_t pid = 0;
  for (size_t i = 0; i < dash; ++i) {
    if (name[i] < '0' || name[i] > '9') return 0;
    pid = pid * 10 + (name[i] - '0');
  }
  for (char c : name.substr(dash + 1))
    if (kNameAlphabet.find(c) == std::string_view::npos) return 0;
  return pid;
}

void writeAll(int fd, std::string_view content, const fs::path& target) {
  while (!content.empty()) {
    const ssize_t wrote = ::write(fd, content.data(), content.size());
    if (wrote < 0) {
      if (errno == EINTR) continue;
      fail("cannot write", errno, target);
    }
    content.remove_prefix(static_cast<size_t>(wrote));
  }
}

void syncFolder(const fs::path& folder) {
  const int fd = open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);  // durability of the rename only: the content is already on disk
  close(fd);
}

}  // namespace

// --- CleanupOnSignal / DeferSignals --------------------------------------------------------------

CleanupOnSignal CleanupOnSignal::removing(const fs::path& path) {
  std::error_code ec;  // absolute, so that the handler removes it wherever the process then is
  const fs::path absolute = fs::absolute(path, ec);
  return CleanupOnSignal(claimSlot(0, ec ? path : absolute));
}

CleanupOnSignal CleanupOnSignal::killingGroup(pid_t group) {
  return CleanupOnSignal(claimSlot(group, {}));
}

CleanupOnSignal::~CleanupOnSignal() {
  if (slot_ < 0) return;
  int armed = kArmed;  // left as it is when the handler has taken it: the process is ending
  cleanupSlots[static_cast<size_t>(slot_)].state.compare_exchange_strong(armed, kFree);
}

CleanupOnSignal::CleanupOnSignal(CleanupOnSignal&& other) noexcept : slot_(other.slot_) {
  other.slot_ = -1;
}

CleanupOnSignal& CleanupOnSignal::operator=(CleanupOnSignal&& other) noexcept {
  if (this != &other) {
    CleanupOnSignal released(std::move(*this));
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

DeferSignals::DeferSignals() {
  sigset_t held;
  sigemptyset(&held);
  for (int signal : kCleanupSignals) sigaddset(&held, signal);
  pthread_sigmask(SIG_BLOCK, &held, &previous_);
}

DeferSignals::~DeferSignals() {
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

// --- Targets and temporaries ---------------------------------------------------------------------

const char* fileTypeName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symlink";
  return "an unknown kind of file";
}

fs::path followSymlinks(const fs::path& path) {
  fs::path current = path;
  for (int hop = 0; hop <= kMaxSymlinkHops; ++hop) {
    struct stat info {};
    if (lstat(current.c_str(), &info) != 0) {
      if (errno == ENOENT) return current;  // a new file; a missing folder fails when the file is made
      fail("cannot write", errno, path);
    }
    if (!S_ISLNK(info.st_mode)) return current;
    std::error_code ec;
    const fs::path link = fs::read_symlink(current, ec);
    if (ec) fail("cannot write", ec.value(), path);
    current = link.is_absolute() ? link : current.parent_path() / link;
  }
  fail("cannot write", ELOOP, path);
}

fs::path resolveWriteTarget(const fs::path& path) {
  const fs::path target = followSymlinks(path);
  struct stat info {};
  if (lstat(target.c_str(), &info) == 0 && !S_ISREG(info.st_mode))
    throw Error(ErrorCode::BadInput,
                std::string("cannot write: it is ") + fileTypeName(info.st_mode) + ", not a regular file",
                {path.string()});
  return target;
}

void sweepStaleTemps(const fs::path& target, std::string_view tag, bool ownerHoldsLock) {
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  const std::string prefix = tempPrefix(target, tag);
  const time_t staleBefore = time(nullptr) - std::chrono::seconds(kStaleTempAge).count();
  std::error_code ec;
  size_t seen = 0;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end && seen < kMaxSweptEntries;
       it.increment(ec), ++seen) {
    const pid_t owner = tempOwner(it->path().filename().string(), prefix);
    if (owner == 0) continue;
    struct stat entry {};
    if (lstat(it->path().c_str(), &entry) != 0) continue;
    const bool ownerGone = kill(owner, 0) != 0 && errno == ESRCH;
    if (ownerHoldsLock || ownerGone || entry.st_mtime < staleBefore) {
      std::error_code ignored;  // best effort: another run may be sweeping it too
      fs::remove_all(it->path(), ignored);
    }
  }
}

TempFolder makeTempFolderBeside(const fs::path& target, std::string_view tag) {
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    const fs::path path = tempName(target, tag);
    const DeferSignals deferred;  // made and registered together
    if (mkdir(path.c_str(), 0777) == 0) return {path, CleanupOnSignal::removing(path)};
    if (errno != EEXIST) fail("cannot create a folder beside it", errno, target);
  }
  fail("cannot create a folder beside it", EEXIST, target);
}

fs::path moveAside(const fs::path& path, std::string_view tag) {
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    const fs::path aside = tempName(path, tag);
    if (renameat2(AT_FDCWD, path.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE) == 0) return aside;
    if (errno != EEXIST) fail("cannot move it aside", errno, path);
  }
  fail("cannot move it aside", EEXIST, path);
}

// --- StagedFile ----------------------------------------------------------------------------------

StagedFile::StagedFile(const fs::path& path, std::string_view content) : target_(resolveWriteTarget(path)) {
  sweepStaleTemps(target_, "tmp");
  struct stat existing {};
  const bool replacing = stat(target_.c_str(), &existing) == 0;
  int fd = -1;
  for (int attempt = 0; attempt < kNameAttempts && fd < 0; ++attempt) {
    temp_ = tempName(target_, "tmp");
    const DeferSignals deferred;  // made and registered together
    fd = open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);  // less the umask
    if (fd >= 0) {
      cleanup_ = CleanupOnSignal::removing(temp_);
    } else if (errno != EEXIST) {
      fail("cannot write", errno, path);
    }
  }
  if (fd < 0) fail("cannot write", EEXIST, path);
  try {
    if (replacing && fchmod(fd, existing.st_mode & 07777) != 0) fail("cannot write", errno, path);
    writeAll(fd, content, path);
    if (fsync(fd) != 0) fail("cannot write", errno, path);  // on disk before the rename makes it the target
    if (close(std::exchange(fd, -1)) != 0) fail("cannot write", errno, path);
  } catch (...) {
    if (fd >= 0) close(fd);
    unlink(temp_.c_str());
    throw;
  }
}

StagedFile::~StagedFile() {
  if (!temp_.empty()) unlink(temp_.c_str());
}

void StagedFile::commit() {
  if (rename(temp_.c_str(), target_.c_str()) != 0) {
    const int error = errno;
    unlink(temp_.c_str());
    temp_.clear();
    fail("cannot write", error, target_);
  }
  temp_.clear();
  cleanup_ = CleanupOnSignal();
  syncFolder(target_.parent_path());
}

void writeFileAtomic(const fs::path& path, std::string_view content) {
  StagedFile(path, content).commit();
}

void writeNewFile(const fs::path& path, std::string_view content) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) fail("cannot write", errno, path);
  try {
    writeAll(fd, content, path);
  } catch (...) {
    close(fd);
    throw;
  }
  if (close(fd) != 0) fail("cannot write", errno, path);
}

void makeFolder(const fs::path& path) {
  if (mkdir(path.c_str(), 0777) != 0) fail("cannot create the folder", errno, path);
}

// --- PathLock ------------------------------------------------------------------------------------

PathLock::PathLock(const fs::path& target) {
  // Where a symlink leads: every path to one target takes the same lock.
  const fs::path resolved = followSymlinks(target.has_filename() ? target : target.parent_path());
  file_ = resolved.parent_path() / ("." + resolved.filename().string() + ".lock");
  for (;;) {
    const int fd = open(file_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) fail("cannot lock", errno, resolved);
    int locked;
    while ((locked = flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (locked != 0) {
      const int error = errno;
      close(fd);
      fail("cannot lock", error, resolved);
    }
    // The holder before us removes the file as it lets go: ours must still be the one named.
    struct stat held {};
    struct stat named {};
    const DeferSignals deferred;  // checked and registered together
    if (fstat(fd, &held) == 0 && stat(file_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev) {
      fd_ = fd;
      cleanup_ = CleanupOnSignal::removing(file_);
      return;
    }
    close(fd);
  }
}

PathLock::~PathLock() {
  // Forgotten by the handler first: once unlinked, the name may be a waiter's new lock file.
  const DeferSignals deferred;
  cleanup_ = CleanupOnSignal();
  unlink(file_.c_str());  // while holding it, so that a waiter sees its file gone and retries
  close(fd_);
}

}  // namespace lathe
