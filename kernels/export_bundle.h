// The kernel export bundle `lathe export` writes (docs/kernels.md):
//   DIR/src/*.cu, lathe_kernels.cuh, lathe_symbols.h   generated sources, one file per kernel
//   DIR/kernels.fatbin                                 SASS for every target
//   DIR/liblathe_kernels.so                            one extern "C" launch function per kernel
//                                                      (nvcc: CUDA runtime; NVRTC: driver API)
//   DIR/manifest.json                                  "format": "lathe.kernels/1": kernel <-> group
//                                                      <-> FX nodes <-> shapes / dtypes
//   DIR/README.md                                      how to load and call it
// Written to a temporary directory beside DIR and renamed into place, so DIR is either the old
// bundle or the whole new one.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kernels/cuda_codegen.h"
#include "kernels/toolchain.h"

namespace lathe::kernels {

inline constexpr std::string_view kKernelsFormat = "lathe.kernels/1";
inline constexpr std::string_view kLibraryName = "liblathe_kernels.so";
inline constexpr std::string_view kFatbinName = "kernels.fatbin";
inline constexpr std::string_view kManifestName = "manifest.json";

struct ExportRequest {
  std::filesystem::path output;      // DIR
  std::vector<std::string> targets;  // "sm_90a", "sm_120"
  std::string plan;                  // the plan file's name, recorded in the manifest
  std::string graph;                 // the graph id
  size_t groups = 0;                 // fusion groups in the plan (generated + not generated)
};

struct ExportResult {
  std::filesystem::path manifest;
  std::vector<FatbinEntry> fatbin;  // entries of the written fatbin
};

[[nodiscard]] std::string manifestJson(const KernelSet& set, const ExportRequest& request);

// Writes the bundle with `nvcc`. Error(Usage) when DIR exists and is neither empty nor an export
// bundle; Error(BadInput) when nvcc fails. Nothing is left behind on failure.
ExportResult writeExport(const KernelSet& set, const ExportRequest& request, const std::filesystem::path& nvcc);

// The NVRTC path (`lathe export --compiler nvrtc`): no CUDA toolkit, only libnvrtc and a host C++
// compiler. The same bundle, its library launching through the CUDA driver API.
struct NvrtcToolchain {
  const Nvrtc& nvrtc;
  std::filesystem::path hostCompiler;
};
// As above, compiled with NVRTC and the host compiler; Error(BadInput) when either fails.
ExportResult writeExport(const KernelSet& set, const ExportRequest& request, const NvrtcToolchain& toolchain);

}  // namespace lathe::kernels
