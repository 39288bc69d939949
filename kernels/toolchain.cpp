#include "kernels/toolchain.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>

#include "util/diagnostics.h"
#include "util/input.h"

extern char** environ;

namespace lathe::kernels {

namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) &&
         (fs::status(path, ec).permissions() & fs::perms::owner_exec) != fs::perms::none;
}

std::vector<fs::path> nvccCandidates() {
  std::vector<fs::path> out;
  if (const char* path = std::getenv("PATH")) {
    std::string_view rest(path);
    while (!rest.empty()) {
      const size_t colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) out.push_back(fs::path(dir) / "nvcc");
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const char* home = std::getenv(variable); home != nullptr && *home != '\0')
      out.push_back(fs::path(home) / "bin" / "nvcc");
  }
  out.emplace_back("/usr/local/cuda/bin/nvcc");
  return out;
}

// Runs argv[0] with its output and errors into `log`; returns the exit status (-1: did not start).
int run(const std::vector<std::string>& argv, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int started = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string lastLines(const std::string& text, size_t lines) {
  size_t at = text.size();
  while (lines-- > 0 && at > 0) {
    const size_t newline = text.rfind('\n', at - 1);
    if (newline == std::string::npos) return text;
    at = newline;
  }
  return text.substr(at < text.size() ? at + 1 : at);
}

template <typename T>
T readLe(std::span<const std::byte> data, size_t at) {
  T value = 0;
  for (size_t k = 0; k < sizeof(T); ++k) value |= static_cast<T>(std::to_integer<uint8_t>(data[at + k])) << (8 * k);
  return value;
}

constexpr uint32_t kFatbinMagic = 0xBA55ED50;
constexpr uint16_t kEntryPtx = 1, kEntryElf = 2;
// Entry flags (as nvcc 12/13 write them): the architecture-specific "a" and family "f" variants.
constexpr uint64_t kFlagArchSpecific = 0x100000, kFlagFamily = 0x200000, kFlagCompressed = 0x2000;

}  // namespace

std::optional<fs::path> findNvcc() {
  for (const fs::path& candidate : nvccCandidates()) {
    if (executable(candidate)) return candidate;
  }
  return std::nullopt;
}

fs::path requireNvcc() {
  if (auto nvcc = findNvcc()) return *nvcc;
  throw Error(ErrorCode::BadInput,
              "no CUDA toolkit: nvcc is not on PATH, in $CUDA_HOME/bin or $CUDA_PATH/bin, nor in /usr/local/cuda/bin "
              "(install the CUDA toolkit, 12.8 or later for sm_120, or set CUDA_HOME)");
}

std::vector<std::string> parseTargets(std::string_view list) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::string_view rest = list;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string target(rest.substr(0, comma));
    bool valid = target.size() > 3 && target.starts_with("sm_");
    size_t digits = 3;
    while (valid && digits < target.size() && target[digits] >= '0' && target[digits] <= '9') ++digits;
    valid =
        valid && digits > 3 &&
        (digits == target.size() || (digits + 1 == target.size() && (target.back() == 'a' || target.back() == 'f')));
    if (!valid)
      throw Error(ErrorCode::Usage, "--targets: '" + target + "' is not an architecture like sm_90a or sm_120");
    if (!seen.insert(target).second) throw Error(ErrorCode::Usage, "--targets: " + target + " given twice");
    out.push_back(target);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return out;
}

void compileKernels(const fs::path& nvcc, const fs::path& unit, const std::vector<std::string>& includeDirs,
                    const std::vector<std::string>& targets, const fs::path& library, const fs::path& fatbin,
                    const fs::path& work) {
  fs::create_directories(work);
  std::vector<std::string> argv{nvcc.string(), "-shared", "-Xcompiler", "-fPIC", "-O3", "-std=c++17", "--threads", "0"};
  for (const std::string& dir : includeDirs) argv.push_back("-I" + dir);
  for (const std::string& target : targets) {
    argv.push_back("-gencode");
    argv.push_back("arch=compute_" + target.substr(3) + ",code=" + target);
  }
  argv.insert(argv.end(), {"--keep", "--keep-dir", work.string(), unit.string(), "-o", library.string()});
  const fs::path log = work / "nvcc.log";
  const int status = run(argv, log);
  if (status != 0) {
    std::string messages;
    std::error_code ec;
    if (fs::exists(log, ec)) messages = readFile(log);
    throw Error(ErrorCode::BadInput,
                (status < 0 ? "could not run " + nvcc.string() : "nvcc failed (exit " + std::to_string(status) + ")") +
                    (messages.empty() ? "" : ":\n" + lastLines(messages, 30)));
  }
  const fs::path kept = work / (unit.stem().string() + ".fatbin");
  std::error_code ec;
  fs::copy_file(kept, fatbin, fs::copy_options::overwrite_existing, ec);
  if (ec) throw Error(ErrorCode::Internal, "nvcc kept no fatbin at " + kept.string() + ": " + ec.message());
}

std::vector<FatbinEntry> readFatbin(std::span<const std::byte> data, const std::string& sourceName) {
  std::vector<FatbinEntry> entries;
  size_t at = 0;
  auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::BadInput, sourceName + ": " + what + " at byte " + std::to_string(at));
  };
  if (data.size() < 16) fail("not a fatbin (too short)");
  while (at + 16 <= data.size()) {
    if (readLe<uint32_t>(data, at) != kFatbinMagic) {
      if (entries.empty()) fail("not a fatbin (no 0xBA55ED50 magic)");
      break;  // padding after the last container
    }
    const uint16_t headerSize = readLe<uint16_t>(data, at + 6);
    const uint64_t containerSize = readLe<uint64_t>(data, at + 8);
    if (headerSize < 16 || containerSize > data.size() - at - headerSize) fail("fatbin container larger than the file");
    size_t entry = at + headerSize;
    const size_t end = entry + containerSize;
    while (entry < end) {
      if (end - entry < 48) fail("fatbin entry header cut short");
      const uint16_t kind = readLe<uint16_t>(data, entry);
      const uint32_t entryHeader = readLe<uint32_t>(data, entry + 4);
      const uint64_t payload = readLe<uint64_t>(data, entry + 8);
      const uint32_t arch = readLe<uint32_t>(data, entry + 28);
      const uint64_t flags = readLe<uint64_t>(data, entry + 40);
      if (entryHeader < 48 || entryHeader > end - entry || payload > end - entry - entryHeader)
        fail("fatbin entry larger than its container");
      FatbinEntry e;
      e.kind = kind == kEntryPtx   ? FatbinEntry::Kind::Ptx
               : kind == kEntryElf ? FatbinEntry::Kind::Elf
                                   : FatbinEntry::Kind::Other;
      e.arch = (e.kind == FatbinEntry::Kind::Ptx ? "compute_" : "sm_") + std::to_string(arch) +
               ((flags & kFlagArchSpecific) != 0 ? "a"
                : (flags & kFlagFamily) != 0     ? "f"
                                                 : "");
      e.bytes = payload;
      e.compressed = (flags & kFlagCompressed) != 0;
      entries.push_back(std::move(e));
      entry += entryHeader + payload;
    }
    at = end;
    at = (at + 7) / 8 * 8;  // containers are 8-byte aligned in a section
  }
  return entries;
}

std::vector<FatbinEntry> readFatbinFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::BadInput, path.string() + ": cannot open");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return readFatbin(std::as_bytes(std::span<const char>(bytes)), path.string());
}

}  // namespace lathe::kernels
