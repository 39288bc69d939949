// The kernel export bundle `lathe export` writes (docs/kernels.md):
//   DIR/src/*.cu, lathe_kernels.cuh, lathe_symbols.h   generated sources, one file per kernel
//   DIR/kernels.fatbin                                 SASS for every target
//   DIR/liblathe_kernels.so                            one extern "C" launch function per kernel
//                                                      (nvcc: CUDA runtime; NVRTC: driver API)
//   DIR/manifest.json                                  "format": "lathe.kernels/1": kernel <-> group
//                                                      <-> FX nodes <-> shapes / dtypes
//   DIR/README.md                                      how to load and call it
// Written to a temporary folder beside DIR (`.DIR.tmp<pid>-XXXXXX`, mode 0777 less the umask) and
// renamed into place, so DIR is either the old bundle or the whole new one. Exports into one DIR
// take turns (a PathLock on DIR); lathe stopped by SIGTERM / SIGINT / SIGHUP kills the compilers
// and removes the temporary folder, and what a killed export left is swept by the next one. A
// symlink DIR is written through: the folder it leads to is replaced, the symlink kept.
#pragma once

#include <filesystem>
#include <functional>
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

// What must change together with the bundle (the plan that records it), under the bundle's lock.
// `prepare` runs once the new bundle is complete, before anything is replaced, and does everything
// that can fail (writes the new plan to its temporary file); `commit` runs right after the bundle
// is in place and only renames. When prepare throws nothing has changed; when commit throws the
// old bundle is put back (signals are held back over the renames, so none stops lathe between).
struct BundleCompanion {
  std::function<void()> prepare, commit;
};

// Writes the bundle with `nvcc`. Error(Usage) when DIR exists and is neither empty nor an export
// bundle (or is a regular file); Error(BadInput) when it is a FIFO, socket or device, when nvcc
// fails, or when a write fails (with the cause). Nothing is left behind on failure.
ExportResult writeExport(const KernelSet& set, const ExportRequest& request, const std::filesystem::path& nvcc,
                         const BundleCompanion& companion = {});

// The NVRTC path (`lathe export --compiler nvrtc`): no CUDA toolkit, only libnvrtc and a host C++
// compiler. The same bundle, its library launching through the CUDA driver API.
struct NvrtcToolchain {
  const Nvrtc& nvrtc;
  std::filesystem::path hostCompiler;
};
// As above, compiled with NVRTC and the host compiler; Error(BadInput) when either fails.
ExportResult writeExport(const KernelSet& set, const ExportRequest& request, const NvrtcToolchain& toolchain,
                         const BundleCompanion& companion = {});

}  // namespace lathe::kernels
