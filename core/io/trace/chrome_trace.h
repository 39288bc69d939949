// torch.profiler Chrome traces (`prof.export_chrome_trace(path)`, `.json` or `.json.gz`): the
// device activity (GPU kernels, memcpys, memsets) in device time order, and the host operators
// (`cpu_op`) with their self time, so that a GPU profile and a CPU-only profile are both usable.
//
// The file is Kineto's object form: {"deviceProperties": [...], "distributedInfo": {...},
// "traceEvents": [...], ...}; timestamps ("ts") and durations ("dur") are microseconds. Complete
// ("X") events of the categories kernel, gpu_memcpy, gpu_memset, cpu_op, and (for self times only)
// user_annotation, cuda_runtime, cuda_driver and python_function are read; the others (ac2g flows,
// "M" metadata, cuda_profiler_range, ...) are not inspected. A container that is not a Chrome
// trace, or an event read here with a missing or ill-typed field, throws Error(BadInput)
// "<source>: <what>": Kineto writes every field of these events, so a gap means a damaged file, and
// dropping the event would silently change the totals.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::io {

// Decompressed size refused by readChromeTrace: a long multi-step GPU trace is a few hundred MB.
inline constexpr uint64_t kMaxChromeTraceBytes = uint64_t{1} << 30;

enum class DeviceActivity : uint8_t { Kernel, Memcpy, Memset };  // cat "kernel", "gpu_memcpy", "gpu_memset"
[[nodiscard]] std::string_view deviceActivityName(DeviceActivity kind);  // "kernel", "memcpy", "memset"

// One piece of device activity: a kernel launch, a copy or a fill.
struct ChromeKernelEvent {
  std::string name;  // "triton_poi_fused_add_cos_sin_0", "ampere_sgemm_32x32_sliced1x4_tn", "Memcpy HtoD (...)"
  DeviceActivity kind = DeviceActivity::Kernel;
  double start = 0;    // seconds from ChromeTrace::originMicros
  double seconds = 0;  // duration
  int32_t device = -1;       // args.device; -1 when not logged
  int64_t stream = -1;       // args.stream; -1 when not logged
  int64_t correlation = -1;  // args.correlation: the id of the cuda_runtime launch that queued it
  // The host call of that correlation (cuda_runtime or cuda_driver): its start in seconds from
  // ChromeTrace::originMicros and its thread (tid), so that device work can be put under the host
  // operator that launched it. nullopt / -1 when the trace has no such call.
  std::optional<double> launchStart;
  int64_t launchThread = -1;
};

struct ChromeKernelTotal {
  std::string name;
  uint64_t calls = 0;
  double seconds = 0;
};

// One host operator (cat "cpu_op": "aten::mm", "aten::add_", ...).
struct ChromeCpuOp {
  std::string name;
  double start = 0;  // seconds from ChromeTrace::originMicros
  double seconds = 0;
  // Duration less that of the events directly nested in it on its thread (operators, user
  // annotations, CUDA runtime and driver calls), as torch's key_averages counts self CPU time.
  double selfSeconds = 0;
  int64_t thread = -1;  // tid; -1 when it is not a number
};

struct ChromeCpuOpTotal {
  std::string name;
  uint64_t calls = 0;
  double seconds = 0;
  double selfSeconds = 0;
};

struct ChromeTrace {
  std::string deviceName;          // deviceProperties of the device of the first device event (else the first listed); "" when none
  uint64_t deviceMemoryBytes = 0;  // its totalGlobalMem
  int32_t rank = -1;               // distributedInfo.rank; -1 when not logged
  double originMicros = 0;         // the earliest "ts" of the events kept, as written in the file
  std::vector<ChromeKernelEvent> kernels;  // device activity by start time (then stream, then file order)
  std::vector<ChromeCpuOp> cpuOps;         // host operators by start time
  double spanSeconds = 0;                  // first device event's start to the last one's end; 0 without any

  // Per kernel (or copy) name: launches and device time, longest first (then by name).
  [[nodiscard]] std::vector<ChromeKernelTotal> totals() const;
  // Per operator name: calls, time and self time, longest self time first (then by name).
  [[nodiscard]] std::vector<ChromeCpuOpTotal> cpuTotals() const;
};

// `sourceName` names the input in errors. Throws Error(BadInput) as described above.
[[nodiscard]] ChromeTrace parseChromeTrace(std::string_view json, const std::string& sourceName);
// A `.json` or gzip `.json.gz` file (detected by content), at most kMaxChromeTraceBytes decompressed.
[[nodiscard]] ChromeTrace readChromeTrace(const std::filesystem::path& path);

}  // namespace lathe::io
