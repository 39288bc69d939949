// Writes that never leave a half-written file or debris (util/atomic_write.h): what -o refuses,
// symlinks written through, permissions, error causes, the sweep of killed runs' temporaries, the
// cleanup on SIGTERM / SIGINT, and the advisory lock.
#include "util/atomic_write.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "temp_dir.h"
#include "util/diagnostics.h"
#include "util/input.h"

namespace {

namespace fs = std::filesystem;
using lathe::Error;
using lathe::ErrorCode;
using lathe::testing::TempDir;

// Names in the folder, sorted.
std::vector<std::string> namesIn(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The message of the Error(BadInput) that writing to `path` throws (a test failure when none is).
std::string badInputWriting(const fs::path& path) {
  try {
    lathe::writeFileAtomic(path, "new");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "wrote " << path;
  return {};
}

mode_t modeOf(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(lstat(path.c_str(), &info), 0) << path;
  return info.st_mode;
}

// A pid no process has: a child that has exited and been reaped.
pid_t deadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

void makeOld(const fs::path& path) {
  fs::last_write_time(path, fs::file_time_type::clock::now() - std::chrono::hours(2));
}

class Umask {
 public:
  explicit Umask(mode_t mask) : previous_(umask(mask)) {}
  ~Umask() { umask(previous_); }
  Umask(const Umask&) = delete;
  Umask& operator=(const Umask&) = delete;

 private:
  mode_t previous_;
};

TEST(AtomicWrite, WritesAndReplacesLeavingNoTemporary) {
  const TempDir dir;
  const fs::path out = dir.path() / "plan.json";
  lathe::writeFileAtomic(out, "one");
  lathe::writeFileAtomic(out, "two, longer");
  EXPECT_EQ(lathe::readFile(out), "two, longer");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"plan.json"});
}

TEST(AtomicWrite, NewFilesFollowTheUmaskReplacedOnesKeepTheirMode) {
  const TempDir dir;
  const fs::path out = dir.path() / "plan.json";
  {
    const Umask mask(027);
    lathe::writeFileAtomic(out, "one");
  }
  EXPECT_EQ(modeOf(out) & 0777, 0640u);
  fs::permissions(out, fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_read);
  lathe::writeFileAtomic(out, "two");
  EXPECT_EQ(modeOf(out) & 0777, 0604u);
}

TEST(AtomicWrite, RefusesWhatIsNotARegularFileAndLeavesItAlone) {
  const TempDir dir;
  const fs::path fifo = dir.path() / "fifo", folder = dir.path() / "folder", socketPath = dir.path() / "socket";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  fs::create_directory(folder);
  const int listening = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, socketPath.c_str(), sizeof address.sun_path - 1);
  ASSERT_EQ(bind(listening, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0) << std::strerror(errno);

  EXPECT_NE(badInputWriting(fifo).find("it is a FIFO (named pipe), not a regular file"), std::string::npos);
  EXPECT_TRUE(S_ISFIFO(modeOf(fifo)));
  EXPECT_NE(badInputWriting(folder).find("it is a directory"), std::string::npos);
  EXPECT_TRUE(fs::is_directory(folder) && fs::is_empty(folder));
  EXPECT_NE(badInputWriting(socketPath).find("it is a socket"), std::string::npos);
  EXPECT_TRUE(S_ISSOCK(modeOf(socketPath)));
  close(listening);
  // Through a symlink too: the FIFO it leads to stays, and so does the symlink.
  fs::create_symlink("fifo", dir.path() / "to-fifo");
  EXPECT_NE(badInputWriting(dir.path() / "to-fifo").find("FIFO"), std::string::npos);
  EXPECT_TRUE(fs::is_symlink(dir.path() / "to-fifo"));
  EXPECT_EQ(namesIn(dir.path()), (std::vector<std::string>{"fifo", "folder", "socket", "to-fifo"}));
}

TEST(AtomicWrite, RefusesACharacterDevice) {
  const TempDir dir;
  const fs::path device = dir.path() / "null";
  if (mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0)
    GTEST_SKIP() << "mknod needs root (CI runs as root): " << std::strerror(errno);
  EXPECT_NE(badInputWriting(device).find("it is a character device"), std::string::npos);
  EXPECT_TRUE(S_ISCHR(modeOf(device)));
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"null"});
}

TEST(AtomicWrite, WritesThroughSymlinksAndKeepsThem) {
  const TempDir dir;
  fs::create_directory(dir.path() / "real");
  const fs::path real = dir.write("real/plan.json", "old");
  fs::create_symlink("real/plan.json", dir.path() / "link");
  fs::create_symlink(dir.path() / "link", dir.path() / "link-to-link");
  lathe::writeFileAtomic(dir.path() / "link-to-link", "new");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link") && fs::is_symlink(dir.path() / "link-to-link"));
  EXPECT_EQ(lathe::readFile(real), "new");
  EXPECT_EQ(namesIn(dir.path() / "real"), std::vector<std::string>{"plan.json"});
  // A dangling symlink: the file it names is made.
  fs::create_symlink("real/made.json", dir.path() / "dangling");
  lathe::writeFileAtomic(dir.path() / "dangling", "made");
  EXPECT_TRUE(fs::is_symlink(dir.path() / "dangling"));
  EXPECT_EQ(lathe::readFile(dir.path() / "real" / "made.json"), "made");
}

TEST(AtomicWrite, ErrorsNameTheirCause) {
  const TempDir dir;
  fs::create_symlink("loop-b", dir.path() / "loop-a");
  fs::create_symlink("loop-a", dir.path() / "loop-b");
  EXPECT_NE(badInputWriting(dir.path() / "loop-a").find("Too many levels of symbolic links"), std::string::npos);
  EXPECT_NE(badInputWriting(dir.path() / "missing" / "plan.json").find("No such file or directory"), std::string::npos);
  const fs::path file = dir.write("file", "");
  EXPECT_NE(badInputWriting(file / "plan.json").find("Not a directory"), std::string::npos);
  const std::string message = badInputWriting(dir.path() / "missing" / "plan.json");
  EXPECT_NE(message.find((dir.path() / "missing" / "plan.json").string()), std::string::npos) << message;
}

TEST(AtomicWrite, StagedFileChangesNothingUntilCommitted) {
  const TempDir dir;
  const fs::path out = dir.write("plan.json", "old");
  {
    const lathe::StagedFile staged(out, "new");
    EXPECT_EQ(lathe::readFile(out), "old");
    const std::vector<std::string> names = namesIn(dir.path());
    ASSERT_EQ(names.size(), 2u);
    EXPECT_TRUE(names[0].starts_with(".plan.json.tmp" + std::to_string(getpid()) + "-")) << names[0];
  }
  EXPECT_EQ(lathe::readFile(out), "old");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"plan.json"});
  lathe::StagedFile staged(out, "new");
  staged.commit();
  EXPECT_EQ(lathe::readFile(out), "new");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"plan.json"});
}

TEST(AtomicWrite, SweepsWhatKilledRunsLeftAndNothingElse) {
  const TempDir dir;
  const std::string dead = std::to_string(deadPid());
  const std::string live = std::to_string(getpid());
  const std::vector<std::string> stale{".plan.json.tmp" + dead + "-abc123",   // its run is gone
                                       ".plan.json.tmp" + live + "-Old999"};  // old: the pid was reused
  const std::vector<std::string> kept{
      ".plan.json.tmp" + live + "-fresh1",   // a live run's, being written
      ".plan.json.tmp" + dead + "-abc1234",  // not the pattern: seven random characters
      ".plan.json.tmp" + dead + "-abc12",    // five
      ".plan.json.tmp" + dead + "_abc123",   // no dash
      ".plan.json.tmpx" + dead + "-abc123",  // not a pid
      "plan.json.tmp" + dead + "-abc123",    // no leading dot
      ".other.json.tmp" + dead + "-abc123",  // another target's
      ".plan.json.old" + dead + "-abc123",   // another tag
  };
  for (const std::string& name : stale) (void)dir.write(name, "debris");
  makeOld(dir.path() / stale[1]);
  for (const std::string& name : kept) (void)dir.write(name, "not ours to remove");
  // A stale temporary folder (an export's) goes with everything in it.
  const fs::path folder = dir.path() / (".plan.json.tmp" + dead + "-folder");
  fs::create_directories(folder / "src");
  (void)dir.write(".plan.json.tmp" + dead + "-folder/src/k.cu", "");

  lathe::writeFileAtomic(dir.path() / "plan.json", "new");
  std::vector<std::string> expected = kept;
  expected.push_back("plan.json");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(namesIn(dir.path()), expected);
}

TEST(AtomicWrite, SweepUnderTheLockTakesEveryTemporaryOfTheTag) {
  const TempDir dir;
  const std::string live = std::to_string(getpid());
  fs::create_directories(dir.path() / (".bundle.tmp" + live + "-abcdef") / "src");
  (void)dir.write(".bundle.old" + live + "-abcdef", "");
  lathe::sweepStaleTemps(dir.path() / "bundle", "tmp", true);
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{".bundle.old" + live + "-abcdef"});
}

TEST(AtomicWrite, MoveAsideNeverReplaces) {
  const TempDir dir;
  fs::create_directories(dir.path() / "bundle" / "src");
  const fs::path aside = lathe::moveAside(dir.path() / "bundle", "old");
  EXPECT_TRUE(aside.filename().string().starts_with(".bundle.old" + std::to_string(getpid()) + "-")) << aside;
  EXPECT_TRUE(fs::is_directory(aside / "src"));
  EXPECT_FALSE(fs::exists(dir.path() / "bundle"));
  EXPECT_THROW((void)lathe::moveAside(dir.path() / "bundle", "old"), Error);
}

TEST(AtomicWrite, TempFolderFollowsTheUmask) {
  const TempDir dir;
  for (const auto& [mask, mode] : {std::pair<mode_t, mode_t>{022, 0755}, {077, 0700}}) {
    const Umask scoped(mask);
    const lathe::TempFolder folder = lathe::makeTempFolderBeside(dir.path() / "bundle", "tmp");
    EXPECT_EQ(modeOf(folder.path) & 0777, mode) << std::oct << mask;
    fs::remove(folder.path);
  }
}

// --- Signals: each case runs in a forked child that dies of the signal ---------------------------

class SignalCleanup : public ::testing::TestWithParam<int> {};

TEST_P(SignalCleanup, TemporariesAreRemovedAndTheSignalKillsLathe) {
  const int signal = GetParam();
  const TempDir dir;
  (void)dir.write("plan.json", "old");
  EXPECT_EXIT(
      {
        const lathe::StagedFile staged(dir.path() / "plan.json", "new");
        const lathe::TempFolder folder = lathe::makeTempFolderBeside(dir.path() / "bundle", "tmp");
        lathe::makeFolder(folder.path / "src");
        lathe::writeNewFile(folder.path / "src" / "kernel.cu", "// a kernel");
        const lathe::PathLock lock(dir.path() / "bundle");
        std::raise(signal);
        std::_Exit(0);  // not reached: the handler re-raises with the default action
      },
      ::testing::KilledBySignal(signal), "");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"plan.json"});
  EXPECT_EQ(lathe::readFile(dir.path() / "plan.json"), "old");
}

TEST_P(SignalCleanup, ProcessGroupsAreKilledBeforeLatheDies) {
  const int signal = GetParam();
  const TempDir dir;
  const fs::path pidFile = dir.path() / "sleeper.pid";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EXIT(
      {
        const pid_t sleeper = fork();
        if (sleeper == 0) {
          setpgid(0, 0);
          execlp("sleep", "sleep", "60", static_cast<char*>(nullptr));
          std::_Exit(127);
        }
        setpgid(sleeper, sleeper);
        const lathe::CleanupOnSignal kill = lathe::CleanupOnSignal::killingGroup(sleeper);
        std::ofstream(pidFile) << sleeper;
        std::raise(signal);
        std::_Exit(0);
      },
      ::testing::KilledBySignal(signal), "");
  // Killed, not waited for: the handler waits for the group only once it has killed it.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  pid_t sleeper = 0;
  std::ifstream(pidFile) >> sleeper;
  ASSERT_GT(sleeper, 0);
  EXPECT_NE(kill(sleeper, 0), 0) << "the sleeper " << sleeper << " outlived the signal";
  EXPECT_EQ(errno, ESRCH);
}

TEST_P(SignalCleanup, DeferredSignalsWaitForTheRenames) {
  const int signal = GetParam();
  const TempDir dir;
  (void)dir.write("plan.json", "old");
  EXPECT_EXIT(
      {
        lathe::StagedFile staged(dir.path() / "plan.json", "new");
        {
          const lathe::DeferSignals deferred;
          std::raise(signal);
          staged.commit();
        }
        std::_Exit(0);
      },
      ::testing::KilledBySignal(signal), "");
  EXPECT_EQ(lathe::readFile(dir.path() / "plan.json"), "new");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"plan.json"});
}

INSTANTIATE_TEST_SUITE_P(Signals, SignalCleanup, ::testing::Values(SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& signal) {
                           return std::string(signal.param == SIGTERM ? "Sigterm" : "Sigint");
                         });

// --- PathLock ------------------------------------------------------------------------------------

TEST(PathLock, OneHolderAtATimeAndNoLockFileLeft) {
  const TempDir dir;
  const fs::path target = dir.path() / "bundle";
  std::atomic<bool> secondHolds{false};
  std::thread second;
  {
    const lathe::PathLock first(target);
    EXPECT_TRUE(fs::exists(dir.path() / ".bundle.lock"));
    second = std::thread([&] {
      const lathe::PathLock lock(target);
      secondHolds = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(secondHolds) << "two holders at once";
  }
  second.join();
  EXPECT_TRUE(secondHolds);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

TEST(PathLock, ManyContendersNeverOverlap) {
  const TempDir dir;
  const fs::path target = dir.path() / "plan.json";
  std::atomic<int> holders{0};
  std::atomic<bool> overlapped{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int round = 0; round < 20; ++round) {
        const lathe::PathLock lock(target);
        if (++holders > 1) overlapped = true;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --holders;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(overlapped) << "two holders at once";
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
