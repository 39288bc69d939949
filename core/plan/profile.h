// lathe.profile/1: what a run measured, beside what its plans predicted. Written by the Python
// runtime (lathe.step, into a run folder's lathe.profile.json), read by the CLI (`lathe profile`)
// and, as they grow, the planner (calibrated costs) and the studio.
//
//   {"format": "lathe.profile/1",
//    "device": {"name": "NVIDIA H200", "memory_bytes": N},      (name "cpu" and 0 without a GPU)
//    "torch": "2.11.0+cu130",
//    "graphs": [{"graph": ID, "fingerprint": HEX, "plan": PATH relative to the profile, or "",
//                "predicted_peak_bytes": N, "predicted_step_seconds": s,
//                "measured": {"source": S, "live_peak_bytes": N,                     (optional)
//                             "nodes": [{"node": NAME, "seconds": s, "bytes": N}]}}],
//    "steps": [{"seconds": s, "peak_bytes": N or null, "before_bytes": N or null,
//               "kernels": [{"name": S, "calls": N, "seconds": s}]}],    ("kernels" optional)
//    "weight_offload": {"kind": "inference" | "training", "policy": S,    (optional)
//                       "units": [S], "unit_bytes": [N], "resident": [S], "h2d_bandwidth": bytes/s,
//                       "simulated": TIMELINE, "measured": TIMELINE}}
//   TIMELINE = {"step_seconds": s, "segments": [SPAN], "h2d": [SPAN], "d2h": [SPAN]}
//   SPAN = {"unit": index into units, "start": s, "end": s}      (seconds from the step's start)
//
// peak_bytes is max_memory_allocated over the step minus memory_allocated before it (the anchors'
// measure); null where the device keeps no allocator statistics (the CPU). A step with "kernels"
// ran under torch.profiler (lathe.step(model, kernels=True)): per kernel name its launches and
// device time in the step, longest first (on the CPU: the operators' own CPU time). The profiler
// slows such a step, so the median step time leaves profiled steps out while others exist.
//
// measured: the graph's nodes as something ran them one by one — `lathe measure` (source
// "lathe_runtime cpu" / "lathe_runtime cuda": each node a dispatcher call, in eager) or a profiler
// trace mapped to nodes through Inductor's kernels (source "torch.profiler": a fused kernel's time
// shared among the nodes it computes). seconds per node (nodes not listed ran nothing), bytes of new
// storage each node's outputs hold; live_peak_bytes the most the step's own values held at once
// (inputs not counted). The planner's `--profile` prices nodes with these seconds.
//
// weight_offload: a run whose layer units' weights were streamed (the runtime's lathe._weights): one
// step under the plan in use, as the offload planner simulated it and as the GPU ran it. Segments
// are the units' computes in step order (training: the forwards, then the backwards in reverse),
// h2d the weight copies, d2h the gradients copied out (measured only: the planner does not model
// them). A copy that starts in the previous step has a negative start.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace lathe::plan {

inline constexpr std::string_view kProfileFormat = "lathe.profile/1";
inline constexpr uint64_t kMaxProfileBytes = uint64_t{64} << 20;

struct MeasuredNode {
  std::string node;
  double seconds = 0;
  uint64_t bytes = 0;
  friend bool operator==(const MeasuredNode&, const MeasuredNode&) = default;
};

struct MeasuredNodes {
  std::string source;  // "lathe_runtime cpu", "lathe_runtime cuda", "torch.profiler"
  uint64_t livePeakBytes = 0;
  std::vector<MeasuredNode> nodes;
  friend bool operator==(const MeasuredNodes&, const MeasuredNodes&) = default;
};

struct ProfiledGraph {
  std::string graphId;
  std::string fingerprint;
  std::string plan;  // the graph's plan bundle, relative to the profile's folder; empty: none written
  uint64_t predictedPeakBytes = 0;
  double predictedStepSeconds = 0;
  std::optional<MeasuredNodes> measured;
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

struct TimedSpan {
  int32_t unit = 0;  // index into WeightOffloadRun::units
  double start = 0;  // seconds from the step's start
  double end = 0;
  friend bool operator==(const TimedSpan&, const TimedSpan&) = default;
};

struct StepTimeline {
  double stepSeconds = 0;
  std::vector<TimedSpan> segments;
  std::vector<TimedSpan> h2d;
  std::vector<TimedSpan> d2h;
  friend bool operator==(const StepTimeline&, const StepTimeline&) = default;

  // The compute stream idle within the step: before the first segment, between segments and after
  // the last (a wait for weights, or code outside the units), seconds.
  [[nodiscard]] double idleSeconds() const;
};

struct WeightOffloadRun {
  std::string kind;  // "inference" or "training"
  std::string policy;
  std::vector<std::string> units;
  std::vector<uint64_t> unitBytes;  // parallel to units
  std::vector<std::string> resident;
  double h2dBandwidth = 0;  // bytes/s, measured by the profiled step
  StepTimeline simulated;
  StepTimeline measured;
  friend bool operator==(const WeightOffloadRun&, const WeightOffloadRun&) = default;
};

struct MeasuredProfile {
  std::string device;
  uint64_t deviceMemoryBytes = 0;
  std::string torchVersion;
  std::vector<ProfiledGraph> graphs;
  std::vector<ProfiledStep> steps;
  std::optional<WeightOffloadRun> weightOffload;
  friend bool operator==(const MeasuredProfile&, const MeasuredProfile&) = default;

  // Median step time of the steps not profiled (of every step when all were); 0 without steps.
  [[nodiscard]] double medianStepSeconds() const;
  // The last profiled step; null when no step was.
  [[nodiscard]] const ProfiledStep* kernelStep() const;
  // The largest peak of the steps that have one.
  [[nodiscard]] std::optional<uint64_t> maxPeakBytes() const;
  // The most any step held before it began (0 when none says).
  [[nodiscard]] uint64_t maxBeforeBytes() const;
  // The entry of the graph with this fingerprint that has measured nodes; null when none has.
  [[nodiscard]] const ProfiledGraph* measuredGraph(std::string_view fingerprint) const;
};

// The measured seconds over the graph's node ids (nullopt where nothing was measured). Throws
// Error(BadInput) naming the nodes the graph lacks (a profile of another graph).
[[nodiscard]] std::vector<std::optional<double>> measuredSecondsByNode(const MeasuredNodes& measured,
                                                                      const ir::Graph& graph);

[[nodiscard]] std::string profileToJson(const MeasuredProfile& profile);
// Throws Error(BadInput) "<source>: <JSON path>: <what>" for the first bad value (as plan bundles).
[[nodiscard]] MeasuredProfile profileFromJson(std::string_view json, const std::string& sourceName);
void writeProfile(const std::filesystem::path& path, const MeasuredProfile& profile);  // atomic
[[nodiscard]] MeasuredProfile readProfile(const std::filesystem::path& path);

}  // namespace lathe::plan
