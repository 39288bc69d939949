// The CUDA toolchain driver: finds nvcc, compiles generated kernels into a fatbin and a shared
// library for the requested GPU architectures, and reads a fatbin's entries (which architectures
// it holds machine code or PTX for) without the CUDA tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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

}  // namespace lathe::kernels
