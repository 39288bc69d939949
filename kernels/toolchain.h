// The CUDA toolchain driver: compiles generated kernels into a fatbin and a shared library for the
// requested GPU architectures, with nvcc or with NVRTC and a host C++ compiler (no CUDA toolkit),
// and reads and writes fatbin containers without the CUDA tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lathe::kernels {

// nvcc on PATH, else $CUDA_HOME/bin/nvcc (or $CUDA_PATH), else /usr/local/cuda/bin/nvcc.
[[nodiscard]] std::optional<std::filesystem::path> findNvcc();
// findNvcc() or Error(BadInput) naming every place it looked.
[[nodiscard]] std::filesystem::path requireNvcc();

// "sm_90a,sm_120" -> {"sm_90a", "sm_120"}: each sm_<digits> with an optional a / f suffix, no
// duplicates; Error(Usage) otherwise.
[[nodiscard]] std::vector<std::string> parseTargets(std::string_view list);
inline constexpr std::string_view kDefaultTargets = "sm_90a,sm_120";

// Compiles `unit` (a .cu that includes every kernel) with one nvcc run into a shared library with a
// C ABI and the fatbin nvcc embeds in it, machine code (SASS) for every target. `work` holds
// nvcc's intermediate files and log. Error(BadInput) with nvcc's messages when it fails.
void compileKernels(const std::filesystem::path& nvcc, const std::filesystem::path& unit,
                    const std::vector<std::string>& includeDirs, const std::vector<std::string>& targets,
                    const std::filesystem::path& library, const std::filesystem::path& fatbin,
                    const std::filesystem::path& work);

// One entry of a fatbin container (header magic 0xBA55ED50).
struct FatbinEntry {
  enum class Kind : uint8_t { Ptx, Elf, Other };
  Kind kind = Kind::Other;
  std::string arch;  // "sm_90a", "sm_120", "sm_100f" (ELF) or "compute_90" (PTX)
  uint64_t bytes = 0;
  bool compressed = false;
};

// Every entry of every fatbin container in the bytes, in order; Error(BadInput) when the data is
// not a fatbin or is cut short.
[[nodiscard]] std::vector<FatbinEntry> readFatbin(std::span<const std::byte> data, const std::string& sourceName);
[[nodiscard]] std::vector<FatbinEntry> readFatbinFile(const std::filesystem::path& path);

// The machine code of one target, as NVRTC makes it.
struct Cubin {
  std::string arch;  // "sm_90a"
  std::vector<std::byte> elf;
};

// One fatbin container holding every cubin as an ELF entry, laid out as CUDA 13's `fatbinary
// --create` lays it out (for sm_100 and later the entry header carries the cubin's .nv.compat
// attributes), so that cuModuleLoadData picks the entry of the device.
[[nodiscard]] std::vector<std::byte> writeFatbin(const std::vector<Cubin>& cubins);

// libnvrtc, loaded at run time (lathe does not link it) so that an export needs no CUDA toolkit,
// only the library a CUDA build of PyTorch installs (the nvidia-cuda-nvrtc wheel).
class Nvrtc {
 public:
  // The first libnvrtc of: $LATHE_NVRTC (the library or its folder; when set, the only place
  // looked), $CUDA_HOME/lib64, $CUDA_PATH/lib64, /usr/local/cuda/lib64, the nvidia/*/lib folders
  // of the Python environments on PATH ($VIRTUAL_ENV first), ~/.local and /usr/local, then the
  // loader's path. Error(BadInput) naming every place looked when none loads.
  // The library stays loaded for the life of the process: it keeps allocations in its globals
  // that unloading would strand, and loading it again finds the same library.
  [[nodiscard]] static Nvrtc load();

  [[nodiscard]] const std::string& location() const { return location_; }  // the library loaded
  [[nodiscard]] std::string version() const;                               // "13.0"

  // Compiles `unit` (named `unitName` in messages) for `target` ("sm_90a") into a cubin; the
  // files it includes are the in-memory `headers` (name, text). Error(BadInput) with NVRTC's log
  // when it fails. Safe to call from several threads at once.
  [[nodiscard]] Cubin compile(const std::string& unitName, const std::string& unit,
                              const std::vector<std::pair<std::string, std::string>>& headers,
                              const std::string& target) const;

 private:
  struct Api;
  Nvrtc(void* handle, std::string location);
  void* handle_ = nullptr;
  std::string location_;
};

// The host C++ compiler the NVRTC path builds the launch functions with: $CXX, else c++, g++ or
// clang++ on PATH; Error(BadInput) when there is none.
[[nodiscard]] std::filesystem::path requireHostCompiler();

// The NVRTC path of an export: `unit` (a .cu that includes every kernel of `sourceDir`, the files
// of which NVRTC gets as in-memory headers) compiled by NVRTC for each target, one thread a target,
// into `fatbin`; and `library` built from the same unit by the host compiler: the launch functions
// and the fatbin embedded, loaded once per CUDA context through the driver API (libcuda.so.1,
// opened at the first launch; no CUDA runtime, no CUDA headers). `work` holds the host build and
// its log. Error(BadInput) with the compiler's messages when either fails.
void compileKernelsWithNvrtc(const Nvrtc& nvrtc, const std::filesystem::path& hostCompiler,
                             const std::filesystem::path& unit, const std::filesystem::path& sourceDir,
                             const std::vector<std::string>& targets, const std::filesystem::path& library,
                             const std::filesystem::path& fatbin, const std::filesystem::path& work);

}  // namespace lathe::kernels
