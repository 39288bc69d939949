#include "kernels/toolchain.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <set>
#include <variant>

#include "util/atomic_write.h"
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

// Runs argv[0] (in `cwd` unless empty) with its output and errors into `log`; returns the exit
// status (-1: did not start). The compiler runs in a process group of its own, killed with
// everything it started when lathe is stopped by SIGTERM, SIGINT or SIGHUP (util/atomic_write.h);
// a terminal's Ctrl-C reaches lathe, which does that, rather than the compilers directly.
int run(const std::vector<std::string>& argv, const fs::path& log, const fs::path& cwd = {}) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);  // never the terminal's
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());  // after opening `log`
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int started = 0;
  CleanupOnSignal killOnSignal;
  {
    const DeferSignals deferred;  // started and registered together; the child starts with the mask before
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setsigmask(&attributes, &deferred.previousMask());
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    started = posix_spawn(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environ);
    posix_spawnattr_destroy(&attributes);
    if (started == 0) killOnSignal = CleanupOnSignal::killingGroup(pid);
  }
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
// Flags every entry `fatbinary` writes for a 64-bit Linux ELF carries, and the one that says the
// entry header holds the cubin's compatibility attributes (sm_100 and later).
constexpr uint64_t kFlagsElf64Linux = 0x11, kFlagCompatAttributes = 0x1000000;
constexpr uint32_t kEntryHeaderSize = 64, kCompatTag = 0x48;
constexpr uint16_t kEntryVersion = 0x0101;
constexpr uint32_t kEntryUnknownConstant = 0x10008;  // at +24 in every entry fatbinary writes

template <typename T>
void putLe(std::vector<std::byte>& out, T value) {
  for (size_t k = 0; k < sizeof(T); ++k)
    out.push_back(static_cast<std::byte>((static_cast<uint64_t>(value) >> (8 * k)) & 0xff));
}

// The bytes of an ELF64 section, empty when the ELF has none of that name.
std::span<const std::byte> elfSection(std::span<const std::byte> elf, std::string_view name, const std::string& what) {
  auto fail = [&] { throw Error(ErrorCode::Internal, what + " is not a 64-bit little-endian ELF file"); };
  if (elf.size() < 64 || std::to_integer<uint8_t>(elf[0]) != 0x7f || std::to_integer<uint8_t>(elf[4]) != 2 ||
      std::to_integer<uint8_t>(elf[5]) != 1)
    fail();
  const uint64_t sectionsAt = readLe<uint64_t>(elf, 0x28);
  const uint16_t entrySize = readLe<uint16_t>(elf, 0x3a), count = readLe<uint16_t>(elf, 0x3c),
                 namesIndex = readLe<uint16_t>(elf, 0x3e);
  if (entrySize < 64 || namesIndex >= count || sectionsAt > elf.size() ||
      uint64_t{entrySize} * count > elf.size() - sectionsAt)
    fail();
  auto section = [&](size_t index) {
    const size_t at = sectionsAt + index * entrySize;
    const uint64_t offset = readLe<uint64_t>(elf, at + 24), size = readLe<uint64_t>(elf, at + 32);
    if (offset > elf.size() || size > elf.size() - offset) fail();
    return std::pair{readLe<uint32_t>(elf, at), elf.subspan(offset, size)};
  };
  const std::span<const std::byte> names = section(namesIndex).second;
  for (size_t k = 0; k < count; ++k) {
    const auto [nameAt, bytes] = section(k);
    if (nameAt + name.size() < names.size() && std::memcmp(names.data() + nameAt, name.data(), name.size()) == 0 &&
        std::to_integer<char>(names[nameAt + name.size()]) == '\0')
      return bytes;
  }
  return {};
}

// "sm_120a" -> 120.
uint32_t archNumber(const std::string& arch) {
  return static_cast<uint32_t>(std::stoul(arch.substr(3)));
}

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
  makeFolder(work);
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

std::vector<std::byte> writeFatbin(const std::vector<Cubin>& cubins) {
  std::vector<std::byte> entries;
  for (const Cubin& cubin : cubins) {
    const uint32_t arch = archNumber(cubin.arch);
    uint64_t flags = kFlagsElf64Linux | (cubin.arch.ends_with('a')   ? kFlagArchSpecific
                                         : cubin.arch.ends_with('f') ? kFlagFamily
                                                                     : 0);
    // fatbinary copies the cubin's .nv.compat section into the entry header from sm_100 on.
    std::vector<std::byte> compat;
    const std::span<const std::byte> attributes = elfSection(cubin.elf, ".nv.compat", "the " + cubin.arch + " cubin");
    if (arch >= 100 && !attributes.empty()) {
      flags |= kFlagCompatAttributes;
      putLe<uint32_t>(compat, kCompatTag);
      putLe<uint32_t>(compat, static_cast<uint32_t>(attributes.size()));
      compat.push_back(std::byte{0});
      compat.insert(compat.end(), attributes.begin(), attributes.end());
      compat.resize((compat.size() + 7) / 8 * 8);
    }
    const uint64_t payload = (cubin.elf.size() + 7) / 8 * 8;
    putLe<uint16_t>(entries, kEntryElf);
    putLe<uint16_t>(entries, kEntryVersion);
    putLe<uint32_t>(entries, static_cast<uint32_t>(kEntryHeaderSize + compat.size()));
    putLe<uint64_t>(entries, payload);
    putLe<uint32_t>(entries, 0);
    putLe<uint32_t>(entries, compat.empty() ? 0 : kEntryHeaderSize);  // where the attributes start
    putLe<uint32_t>(entries, kEntryUnknownConstant);
    putLe<uint32_t>(entries, arch);
    putLe<uint64_t>(entries, 0);
    putLe<uint64_t>(entries, flags);
    putLe<uint64_t>(entries, 0);
    putLe<uint64_t>(entries, 0);  // uncompressed size: entries are not compressed
    entries.insert(entries.end(), compat.begin(), compat.end());
    entries.insert(entries.end(), cubin.elf.begin(), cubin.elf.end());
    entries.resize(entries.size() + (payload - cubin.elf.size()));
  }
  std::vector<std::byte> out;
  putLe<uint32_t>(out, kFatbinMagic);
  putLe<uint16_t>(out, 1);   // container version
  putLe<uint16_t>(out, 16);  // container header size
  putLe<uint64_t>(out, entries.size());
  out.insert(out.end(), entries.begin(), entries.end());
  return out;
}

namespace {

// nvrtc.h, the part an export uses (the ABI has been stable since CUDA 11.1, which added cubins).
using NvrtcProgram = struct NvrtcProgramState*;
constexpr int kNvrtcSuccess = 0;

std::vector<std::string> pathDirectories() {
  std::vector<std::string> out;
  const char* path = std::getenv("PATH");
  std::string_view rest = path == nullptr ? std::string_view() : std::string_view(path);
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    if (colon != 0) out.emplace_back(rest.substr(0, colon));
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return out;
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

std::vector<fs::path> sortedEntries(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

// The folders pip installs NVIDIA's libraries into (site-packages/nvidia/<package>/lib) in the
// Python environments of $VIRTUAL_ENV, of the pythons on PATH, and the user's and system's.
std::vector<fs::path> pythonNvidiaDirs() {
  std::vector<fs::path> prefixes;
  if (const std::string venv = environment("VIRTUAL_ENV"); !venv.empty()) prefixes.emplace_back(venv);
  std::error_code ec;
  for (const std::string& dir : pathDirectories()) {
    if (fs::exists(fs::path(dir) / "python3", ec) || fs::exists(fs::path(dir) / "python", ec))
      prefixes.push_back(fs::path(dir).parent_path());
  }
  if (const std::string home = environment("HOME"); !home.empty()) prefixes.push_back(fs::path(home) / ".local");
  prefixes.emplace_back("/usr/local");
  std::vector<fs::path> out;
  for (const fs::path& prefix : prefixes) {
    for (const fs::path& python : sortedEntries(prefix / "lib")) {
      if (!python.filename().string().starts_with("python3")) continue;
      for (const char* packages : {"site-packages", "dist-packages"}) {
        for (const fs::path& package : sortedEntries(python / packages / "nvidia")) {
          if (fs::is_directory(package / "lib", ec) && std::find(out.begin(), out.end(), package / "lib") == out.end())
            out.push_back(package / "lib");
        }
      }
    }
  }
  return out;
}

// libnvrtc.so.<major> (the newest first), else libnvrtc.so, in `dir`.
std::optional<fs::path> nvrtcIn(const fs::path& dir) {
  std::optional<fs::path> best;
  int bestMajor = -1;
  for (const fs::path& file : sortedEntries(dir)) {
    const std::string name = file.filename().string();
    if (name == "libnvrtc.so" && bestMajor < 0) {
      best = file;
      bestMajor = 0;
    } else if (name.starts_with("libnvrtc.so.") && name.find('.', 12) == std::string::npos &&
               name.find_first_not_of("0123456789", 12) == std::string::npos && name.size() > 12) {
      const int major = std::stoi(name.substr(12));
      if (major > bestMajor) {
        best = file;
        bestMajor = major;
      }
    }
  }
  return best;
}

// libnvrtc-builtins of the same release, beside the library; libnvrtc opens it by name.
void* loadBuiltinsBeside(const fs::path& library) {
  for (const fs::path& file : sortedEntries(library.parent_path())) {
    const std::string name = file.filename().string();
    if (name.starts_with("libnvrtc-builtins.so.")) return dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
  }
  return nullptr;
}

}  // namespace

struct Nvrtc::Api {
  const char* (*errorString)(int) = nullptr;
  int (*version)(int*, int*) = nullptr;
  int (*create)(NvrtcProgram*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(NvrtcProgram, int, const char* const*) = nullptr;
  int (*logSize)(NvrtcProgram, size_t*) = nullptr;
  int (*log)(NvrtcProgram, char*) = nullptr;
  int (*cubinSize)(NvrtcProgram, size_t*) = nullptr;
  int (*cubin)(NvrtcProgram, char*) = nullptr;
  int (*destroy)(NvrtcProgram*) = nullptr;

  // Every entry point of `handle`, or the name of one it lacks.
  static std::variant<Api, std::string> bind(void* handle) {
    Api api;
    std::string missing;
    auto entry = [&](const char* name, auto& function) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
      if (function == nullptr && missing.empty()) missing = name;
    };
    entry("nvrtcGetErrorString", api.errorString);
    entry("nvrtcVersion", api.version);
    entry("nvrtcCreateProgram", api.create);
    entry("nvrtcCompileProgram", api.compile);
    entry("nvrtcGetProgramLogSize", api.logSize);
    entry("nvrtcGetProgramLog", api.log);
    entry("nvrtcGetCUBINSize", api.cubinSize);
    entry("nvrtcGetCUBIN", api.cubin);
    entry("nvrtcDestroyProgram", api.destroy);
    if (!missing.empty()) return missing;
    return api;
  }
};

Nvrtc::Nvrtc(void* handle, std::string location) : handle_(handle), location_(std::move(location)) {}

Nvrtc Nvrtc::load() {
  std::vector<std::string> looked;
  // A library (a path, or a name the loader resolves) that loads and has every entry point.
  auto tryLoad = [&](const std::string& library, bool byPath) -> std::optional<Nvrtc> {
    void* builtins = byPath ? loadBuiltinsBeside(library) : nullptr;
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string why;
    if (handle == nullptr) {
      const char* error = dlerror();
      why = error == nullptr ? "does not load" : error;
    } else if (auto api = Api::bind(handle); std::holds_alternative<std::string>(api)) {
      why = library + " has no " + std::get<std::string>(api) + " (NVRTC 11.1 or later is needed)";
    } else {
      return Nvrtc(handle, library);
    }
    if (handle != nullptr) dlclose(handle);
    if (builtins != nullptr) dlclose(builtins);
    looked.push_back(why);
    return std::nullopt;
  };
  auto tryDir = [&](const fs::path& dir, const std::string& label) -> std::optional<Nvrtc> {
    if (const std::optional<fs::path> library = nvrtcIn(dir)) return tryLoad(library->string(), true);
    looked.push_back((label.empty() ? "" : label + ": ") + "no libnvrtc.so in " + dir.string());
    return std::nullopt;
  };

  if (const std::string chosen = environment("LATHE_NVRTC"); !chosen.empty()) {
    std::error_code ec;
    std::optional<Nvrtc> found = fs::is_directory(chosen, ec) ? tryDir(chosen, "")
                                 : fs::exists(chosen, ec)     ? tryLoad(chosen, true)
                                                              : std::nullopt;
    if (found) return std::move(*found);
    throw Error(ErrorCode::BadInput, "no NVRTC: $LATHE_NVRTC is " + chosen + ": " +
                                         (looked.empty() ? std::string("no such file or folder") : looked.back()) +
                                         " (unset LATHE_NVRTC to search the usual places)");
  }
  for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const std::string home = environment(variable); !home.empty()) {
      if (auto found = tryDir(fs::path(home) / "lib64", std::string("$") + variable + "/lib64"))
        return std::move(*found);
    }
  }
  if (auto found = tryDir("/usr/local/cuda/lib64", "the CUDA toolkit")) return std::move(*found);
  const std::vector<fs::path> pythonDirs = pythonNvidiaDirs();
  for (const fs::path& dir : pythonDirs) {
    if (const std::optional<fs::path> library = nvrtcIn(dir)) {
      if (auto found = tryLoad(library->string(), true)) return std::move(*found);
    }
  }
  looked.push_back(pythonDirs.empty()
                       ? "no Python environment on PATH has NVIDIA libraries (site-packages/nvidia/*/lib)"
                       : "none in the " + std::to_string(pythonDirs.size()) +
                             " site-packages/nvidia/*/lib folders of the Python environments on PATH");
  for (const char* name : {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"}) {
    if (auto found = tryLoad(name, false)) return std::move(*found);
  }
  std::string where;
  for (const std::string& place : looked) where += "\n  " + place;
  throw Error(ErrorCode::BadInput,
              "no NVRTC (libnvrtc) found; looked at:" + where +
                  "\n(pip install nvidia-cuda-nvrtc, as CUDA builds of PyTorch do, or set LATHE_NVRTC to the library)");
}

std::string Nvrtc::version() const {
  const auto api = std::get<Api>(Api::bind(handle_));
  int major = 0, minor = 0;
  api.version(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

Cubin Nvrtc::compile(const std::string& unitName, const std::string& unit,
                     const std::vector<std::pair<std::string, std::string>>& headers, const std::string& target) const {
  const auto api = std::get<Api>(Api::bind(handle_));
  std::vector<const char*> names, texts;
  for (const auto& [name, text] : headers) {
    names.push_back(name.c_str());
    texts.push_back(text.c_str());
  }
  auto check = [&](int result, const char* what) {
    if (result != kNvrtcSuccess)
      throw Error(ErrorCode::BadInput, std::string("NVRTC ") + what + " failed: " + api.errorString(result));
  };
  NvrtcProgram program = nullptr;
  check(api.create(&program, unit.c_str(), unitName.c_str(), static_cast<int>(headers.size()), texts.data(),
                   names.data()),
        "nvrtcCreateProgram");
  struct Release {
    const Api& api;
    NvrtcProgram& program;
    ~Release() { api.destroy(&program); }
  } release{api, program};
  const std::string arch = "--gpu-architecture=" + target;
  const std::vector<const char*> options{arch.c_str(), "-std=c++17"};
  const int compiled = api.compile(program, static_cast<int>(options.size()), options.data());
  if (compiled != kNvrtcSuccess) {
    size_t size = 0;
    std::string log;
    if (api.logSize(program, &size) == kNvrtcSuccess && size > 1) {
      log.resize(size);
      api.log(program, log.data());
      log.resize(size - 1);
    }
    throw Error(ErrorCode::BadInput, "NVRTC failed to compile " + unitName + " for " + target + " (" +
                                         api.errorString(compiled) + ")" +
                                         (log.empty() ? "" : ":\n" + lastLines(log, 30)));
  }
  size_t size = 0;
  check(api.cubinSize(program, &size), "nvrtcGetCUBINSize");
  Cubin cubin{target, std::vector<std::byte>(size)};
  check(api.cubin(program, reinterpret_cast<char*>(cubin.elf.data())), "nvrtcGetCUBIN");
  return cubin;
}

fs::path requireHostCompiler() {
  std::vector<fs::path> candidates;
  if (const std::string cxx = environment("CXX"); !cxx.empty()) {
    if (cxx.find('/') != std::string::npos) candidates.emplace_back(cxx);
    for (const std::string& dir : pathDirectories()) candidates.push_back(fs::path(dir) / cxx);
  }
  for (const char* name : {"c++", "g++", "clang++"}) {
    for (const std::string& dir : pathDirectories()) candidates.push_back(fs::path(dir) / name);
  }
  for (const fs::path& candidate : candidates) {
    if (executable(candidate)) return candidate;
  }
  throw Error(ErrorCode::BadInput,
              "no host C++ compiler: $CXX is not set to one and none of c++, g++, clang++ is on PATH (the NVRTC path "
              "builds the launch functions with it)");
}

namespace {

// The launch side of the NVRTC path's library, compiled with the kernels' unit. The fatbin is
// embedded with .incbin (the host build runs in the folder that holds it).
constexpr std::string_view kDriverRuntime =
    R"(// liblathe_kernels.so of the NVRTC path (lathe export --compiler nvrtc): the bundle's fatbin,
// embedded below, is loaded into each CUDA context at the first launch there, through the driver
// API (libcuda.so.1, opened at run time: no CUDA runtime, no CUDA headers).
#include <dlfcn.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "lathe_kernels.cuh"

asm(".section .rodata\n"
    ".balign 64\n"
    ".globl lathe_fatbin\n"
    ".hidden lathe_fatbin\n"
    "lathe_fatbin:\n"
    ".incbin \"kernels.fatbin\"\n"
    ".previous\n");
extern "C" __attribute__((visibility("hidden"))) const unsigned char lathe_fatbin[];

namespace {

using CUresult = int;
constexpr CUresult kNoDriver = 100;        // CUDA_ERROR_NO_DEVICE: libcuda.so.1 did not load
constexpr CUresult kNoContext = 201;       // CUDA_ERROR_INVALID_CONTEXT: no current context

struct Driver {
  CUresult (*init)(unsigned) = nullptr;
  CUresult (*currentContext)(void**) = nullptr;
  CUresult (*loadModule)(void**, const void*) = nullptr;
  CUresult (*function)(void**, void*, const char*) = nullptr;
  CUresult (*launch)(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void*, void**,
                     void**) = nullptr;
  CUresult status = kNoDriver;
};

template <typename F>
bool bind(void* library, const char* name, F& function) {
  function = reinterpret_cast<F>(dlsym(library, name));
  return function != nullptr;
}

Driver openDriver() {
  Driver driver;
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr || !bind(library, "cuInit", driver.init) ||
      !bind(library, "cuCtxGetCurrent", driver.currentContext) ||
      !bind(library, "cuModuleLoadData", driver.loadModule) ||
      !bind(library, "cuModuleGetFunction", driver.function) || !bind(library, "cuLaunchKernel", driver.launch))
    return driver;
  driver.status = driver.init(0);
  return driver;
}

std::mutex cacheMutex;
std::map<void*, void*> modules;                            // context -> the fatbin loaded there
std::map<std::pair<void*, std::string>, void*> functions;  // (context, kernel) -> function

}  // namespace

int lathe::driver_launch(const char* kernel, unsigned grid, unsigned block, Stream stream, void** args) {
  static const Driver driver = openDriver();
  if (driver.status != 0) return driver.status;
  void* context = nullptr;
  if (const CUresult status = driver.currentContext(&context); status != 0) return status;
  if (context == nullptr) return kNoContext;
  void* function = nullptr;
  {
    const std::lock_guard<std::mutex> lock(cacheMutex);
    auto found = functions.find({context, kernel});
    if (found == functions.end()) {
      auto module = modules.find(context);
      if (module == modules.end()) {
        void* loaded = nullptr;
        if (const CUresult status = driver.loadModule(&loaded, lathe_fatbin); status != 0) return status;
        module = modules.emplace(context, loaded).first;
      }
      if (const CUresult status = driver.function(&function, module->second, kernel); status != 0) return status;
      found = functions.emplace(std::make_pair(context, std::string(kernel)), function).first;
    }
    function = found->second;
  }
  return driver.launch(function, grid, 1, 1, block, 1, 1, 0, stream, args, nullptr);
}
)";

}  // namespace

void compileKernelsWithNvrtc(const Nvrtc& nvrtc, const fs::path& hostCompiler, const fs::path& unit,
                             const fs::path& sourceDir, const std::vector<std::string>& targets,
                             const fs::path& library, const fs::path& fatbin, const fs::path& work) {
  makeFolder(work);
  std::vector<std::pair<std::string, std::string>> headers;
  for (const fs::path& file : sortedEntries(sourceDir)) headers.emplace_back(file.filename().string(), readFile(file));
  const std::string unitText = readFile(unit);
  std::vector<std::future<Cubin>> compiling;
  for (const std::string& target : targets) {
    compiling.push_back(std::async(std::launch::async, [&, target] {
      return nvrtc.compile(unit.filename().string(), unitText, headers, target);
    }));
  }
  std::vector<Cubin> cubins;
  for (std::future<Cubin>& cubin : compiling) cubins.push_back(cubin.get());  // the first failure, in target order
  const std::vector<std::byte> bytes = writeFatbin(cubins);
  const std::string_view fatbinBytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  for (const fs::path& path : {fatbin, work / "kernels.fatbin"}) writeNewFile(path, fatbinBytes);
  writeNewFile(work / "lathe_driver.cpp", kDriverRuntime);
  // Only the launch functions are exported: a second bundle in the process keeps its own runtime.
  writeNewFile(work / "exports.map", "{\n  global: lathe_launch_*;\n  local: *;\n};\n");
  // It runs in `work` (for .incbin): every path absolute.
  const std::vector<std::string> argv{hostCompiler.string(),
                                      "-shared",
                                      "-fPIC",
                                      "-O2",
                                      "-std=c++17",
                                      "-I" + fs::absolute(sourceDir).string(),
                                      "-Wl,--version-script=" + fs::absolute(work / "exports.map").string(),
                                      "-x",
                                      "c++",
                                      fs::absolute(unit).string(),
                                      fs::absolute(work / "lathe_driver.cpp").string(),
                                      "-o",
                                      fs::absolute(library).string()};
  const fs::path log = work / "host.log";
  const int status = run(argv, log, work);
  if (status != 0) {
    std::string messages;
    std::error_code ec;
    if (fs::exists(log, ec)) messages = readFile(log);
    throw Error(ErrorCode::BadInput,
                (status < 0 ? "could not run " + hostCompiler.string()
                            : hostCompiler.string() + " failed (exit " + std::to_string(status) + ")") +
                    (messages.empty() ? "" : ":\n" + lastLines(messages, 30)));
  }
}

}  // namespace lathe::kernels
