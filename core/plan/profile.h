// lathe.profile/1: what a run measured, beside what its plans predicted. Written by the Python
// runtime (lathe.step, into a run folder's lathe.profile.json), read by the CLI (`lathe profile`)
// and, as they grow, the planner (calibrated costs) and the studio.
//
//   {"format": "lathe.profile/1",
//    "device": {"name": "NVIDIA H200", "memory_bytes": N},      (name "cpu" and 0 without a GPU)
//    "torch": "2.11.0+cu130",
//    "graphs": [{"graph": ID, "fingerprint": HEX, "plan": PATH relative to the profile, or "",
//                "predicted_peak_bytes": N, "predicted_step_seconds": s}],
//    "steps": [{"seconds": s, "peak_bytes": N or null, "before_bytes": N or null,
//               "kernels": [{"name": S, "calls": N, "seconds": s}]}]}     ("kernels" optional)
//
// peak_bytes is max_memory_allocated over the step minus memory_allocated before it (the anchors'
// measure); null where the device keeps no allocator statistics (the CPU). A step with "kernels"
// ran under torch.profiler (lathe.step(model, kernels=True)): per kernel name its launches and
// device time in the step, longest first (on the CPU: the operators' own CPU time). The profiler
// slows such a step, so the median step time leaves profiled steps out while others exist.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lathe::plan {

inline constexpr std::string_view kProfileFormat = "lathe.profile/1";
inline constexpr uint64_t kMaxProfileBytes = uint64_t{64} << 20;

struct ProfiledGraph {
  std::string graphId;
  std::string fingerprint;
  std::string plan;  // the graph's plan bundle, relative to the profile's folder; empty: none written
  uint64_t predictedPeakBytes = 0;
  double predictedStepSeconds = 0;
  friend bool operator==(const ProfiledGraph&, const ProfiledGraph&) = default;
};

struct KernelTime {
  std::string name;
  uint64_t calls = 0;
  double seconds = 0;
  friend bool operator==(const KernelTime&, const KernelTime&) = default;
};

struct ProfiledStep {
  double seconds = 0;
  std::optional<uint64_t> peakBytes;
  std::optional<uint64_t> beforeBytes;
  std::vector<KernelTime> kernels;  // empty: not profiled
  friend bool operator==(const ProfiledStep&, const ProfiledStep&) = default;
};

struct MeasuredProfile {
  std::string device;
  uint64_t deviceMemoryBytes = 0;
  std::string torchVersion;
  std::vector<ProfiledGraph> graphs;
  std::vector<ProfiledStep> steps;
  friend bool operator==(const MeasuredProfile&, const MeasuredProfile&) = default;

  // Median step time of the steps not profiled (of every step when all were); 0 without steps.
  [[nodiscard]] double medianStepSeconds() const;
  // The last profiled step; null when no step was.
  [[nodiscard]] const ProfiledStep* kernelStep() const;
  // The largest peak of the steps that have one.
  [[nodiscard]] std::optional<uint64_t> maxPeakBytes() const;
  // The most any step held before it began (0 when none says).
  [[nodiscard]] uint64_t maxBeforeBytes() const;
};

[[nodiscard]] std::string profileToJson(const MeasuredProfile& profile);
// Throws Error(BadInput) "<source>: <JSON path>: <what>" for the first bad value (as plan bundles).
[[nodiscard]] MeasuredProfile profileFromJson(std::string_view json, const std::string& sourceName);
void writeProfile(const std::filesystem::path& path, const MeasuredProfile& profile);  // atomic
[[nodiscard]] MeasuredProfile readProfile(const std::filesystem::path& path);

}  // namespace lathe::plan
