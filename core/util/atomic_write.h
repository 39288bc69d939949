// Writes that never leave a half-written file or debris behind. Content goes to a temporary file
// beside the target (created O_EXCL, named `.NAME.tmp<pid>-XXXXXX`, fsynced) that is renamed over
// it. Temporaries are removed when lathe is stopped by SIGTERM, SIGINT or SIGHUP (a registry of
// live temporary paths, cleaned by a signal handler that then re-raises the signal), and those a
// killed run left (SIGKILL, a crash) are swept by the next write to the same target. New files and
// folders follow the umask; a replaced file keeps its permissions.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string_view>

namespace lathe {

// What a path that is not a regular file is, for messages: "a directory", "a FIFO (named pipe)",
// "a socket", "a character device", "a block device".
[[nodiscard]] const char* fileTypeName(mode_t mode);

// Where `path` leads through its symlinks (itself when it is none; the path may not exist): what a
// write replaces, so that a symlink is written through, never replaced. Error(BadInput) naming the
// path and the reason (errno text) when the symlinks loop or cannot be read.
[[nodiscard]] std::filesystem::path followSymlinks(const std::filesystem::path& path);

// The file a write to `path` lands in: followSymlinks(path), which must be a regular file or not
// exist. Error(BadInput) naming the path and why when it is a directory, FIFO, socket or device.
[[nodiscard]] std::filesystem::path resolveWriteTarget(const std::filesystem::path& path);

// While it lives, lathe stopped by SIGTERM, SIGINT or SIGHUP first kills a process group (SIGKILL,
// waiting for it to go) or removes a path (a file, or a folder with everything in it), then dies of
// the signal. The handler is installed for each of these signals whose disposition is the default
// (an ignored signal stays ignored). Destroying the guard only forgets the path or group.
class CleanupOnSignal {
 public:
  CleanupOnSignal() = default;
  [[nodiscard]] static CleanupOnSignal removing(const std::filesystem::path& path);
  [[nodiscard]] static CleanupOnSignal killingGroup(pid_t group);
  ~CleanupOnSignal();
  CleanupOnSignal(CleanupOnSignal&& other) noexcept;
  CleanupOnSignal& operator=(CleanupOnSignal&& other) noexcept;
  CleanupOnSignal(const CleanupOnSignal&) = delete;
  CleanupOnSignal& operator=(const CleanupOnSignal&) = delete;

 private:
  explicit CleanupOnSignal(int slot) : slot_(slot) {}
  int slot_ = -1;
};

// A whole-file write staged in a temporary file beside the target, written in full and fsynced;
// commit() renames it over the target. Destroyed uncommitted, it removes the temporary file. Lets a
// caller prepare everything that can fail (a full disk) before changing anything.
class StagedFile {
 public:
  // Error(BadInput) with the cause (errno text) when the target is not a regular file or its
  // folder is not writable, or when the disk is full; nothing is left behind then.
  StagedFile(const std::filesystem::path& path, std::string_view content);
  ~StagedFile();
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;

  // Renames the temporary file over the target; Error(BadInput) with the cause when that fails.
  void commit();
  [[nodiscard]] const std::filesystem::path& target() const { return target_; }

 private:
  std::filesystem::path target_, temp_;
  CleanupOnSignal cleanup_;
};

// StagedFile(path, content).commit(): the target is either the old file or the whole new one.
void writeFileAtomic(const std::filesystem::path& path, std::string_view content);

// Creates `path`, which must not exist, with `content`: for files nobody sees before they are
// complete (inside a temporary folder). Error(BadInput) with the cause.
void writeNewFile(const std::filesystem::path& path, std::string_view content);
// Creates the folder `path` (mode 0777 less the umask); Error(BadInput) with the cause.
void makeFolder(const std::filesystem::path& path);

// Holds SIGTERM, SIGINT and SIGHUP back in the calling thread while it lives (they are delivered
// when it ends): for steps that must not be cut between two renames.
class DeferSignals {
 public:
  DeferSignals();
  ~DeferSignals();
  DeferSignals(const DeferSignals&) = delete;
  DeferSignals& operator=(const DeferSignals&) = delete;
  // The signal mask in force before, for a child process to start with.
  [[nodiscard]] const sigset_t& previousMask() const { return previous_; }

 private:
  sigset_t previous_;
};

// A temporary folder beside `target`, `.NAME.<tag><pid>-XXXXXX`, made with mode 0777 less the
// umask and removed on a signal while `cleanup` lives. Error(BadInput) with the cause.
struct TempFolder {
  std::filesystem::path path;
  CleanupOnSignal cleanup;
};
[[nodiscard]] TempFolder makeTempFolderBeside(const std::filesystem::path& target, std::string_view tag);

// Renames `path` to a fresh `.NAME.<tag><pid>-XXXXXX` beside it (never over an existing entry) and
// returns the new path; Error(BadInput) with the cause.
[[nodiscard]] std::filesystem::path moveAside(const std::filesystem::path& path, std::string_view tag);

// A temporary `.NAME.<tag><pid>-XXXXXX` left beside a target is stale once its pid is gone, or
// once it is this old (the pid may have been reused); a live write touches its file far more often.
inline constexpr std::chrono::minutes kStaleTempAge{10};
// Removes the stale `.NAME.<tag><pid>-XXXXXX` entries beside `target` (files, or folders with
// everything in them); with `ownerHoldsLock` every such entry, the caller holding the target's
// PathLock, so that no other run is using one. Only names of that exact pattern are touched.
void sweepStaleTemps(const std::filesystem::path& target, std::string_view tag, bool ownerHoldsLock = false);

// An exclusive advisory lock (flock) for `target` (where its symlinks lead), on `.NAME.lock` beside
// it: read-modify-write sequences on one target from several lathe processes take turns. Waits for
// the holder. The lock file is removed on release (and on a signal), and a waiter that finds its
// file removed retries on the new one. Error(BadInput) with the cause when the lock file cannot be
// made.
class PathLock {
 public:
  explicit PathLock(const std::filesystem::path& target);
  ~PathLock();
  PathLock(const PathLock&) = delete;
  PathLock& operator=(const PathLock&) = delete;

 private:
  std::filesystem::path file_;
  int fd_ = -1;
  CleanupOnSignal cleanup_;
};

}  // namespace lathe
