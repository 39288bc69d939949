// The plan bundle, `"format": "lathe.plan/1"`: everything a pipeline decided about one graph, in a
// versioned JSON file that tools and CI can diff and that the studio reads back into the same views.
// Per-node decisions are stored by node name, so anyone can check them against the capture.
//
//   {"format": "lathe.plan/1",
//    "source": {"artifact": PATH, "graph": ID, "fingerprint": HEX, "nodes": N},
//    "hardware": {lathe.hw/1 profile},
//    "pipeline": "split,fusion,recompute(policy=torch)",
//    "steps": [{"step": "recompute(policy=torch)", "seconds": s, "stats": {name: value}, "diff": [lines]}],
//    "nodes": {"names": [...], "piece": [...], "boundary": [0|1...], "unit": [...], "group": [...]},
//    "pieces": N, "units": [{"name", "weights": [names], "weight_bytes"}],
//    "groups": [{"kind", "anchor", "nodes": [names]}],
//    "recompute": {"policy", "saved": [names], "recomputed": [names], "saved_reasons": [...]},
//    "offload": {"policy", "budget_bytes", "resident": [unit names], "prefetches": [...], "step_seconds", ...},
//    "activation_offload": {"bytes", "copy_out_seconds", "copy_in_seconds", "link_share", "tensors": [{"node", "bytes",
//                           "wait_after", "reload_after" ("": the backward's start), "first_use",
//                           "off_gpu_step", "on_gpu_step", "out_start", "out_end", "in_start", "in_end"}]},
//    "timeline": {"peak_bytes", "peak_step", "at_peak": {category: bytes}, "backward_start",
//                 "at_peak_values": [...], "reuse_holds": [...], "backward_kernels": [[steps], ...],
//                 "node": [...], "phase": "ff..bb", "seconds": [...], category: [...] per category},
//    "estimates": {"step_seconds", "peak_bytes", ...},
//    "kernels": [{"manifest": PATH, "format": "lathe.kernels/1", "targets": ["sm_90a", ...],
//                 "kernels": N, "not_generated": N}]}   (exports written by `lathe export`)
#pragma once

#include <array>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "analysis/memory_timeline.h"
#include "hw/hw_profile.h"
#include "ir/graph.h"
#include "plan/plan_state.h"

namespace lathe::plan {

inline constexpr std::string_view kPlanFormat = "lathe.plan/1";
// The timeline's series, one per memory category, named as analysis::kMemoryCategoryNames.
inline constexpr size_t kTimelineCategories = analysis::kMemoryCategoryCount;
inline constexpr const auto& kTimelineCategoryNames = analysis::kMemoryCategoryNames;

// Bounds on a bundle read back: a plan of a graph with a million nodes is well inside them.
inline constexpr size_t kMaxPlanNodes = size_t{1} << 20;
inline constexpr uint64_t kMaxPlanBytes = uint64_t{256} << 20;

struct PlanStep {
  std::string step;  // canonical text: "recompute(policy=torch)"
  double seconds = 0;
  std::vector<std::pair<std::string, double>> stats;
  std::vector<std::string> diff;
};

// The memory timeline of the planned step.
// A value the step holds on the GPU at its peak (weights and streamed weights left out).
struct PeakValue {
  std::string node;      // the execution that allocated it (a placeholder for inputs)
  std::string category;  // one of kTimelineCategoryNames
  uint64_t bytes = 0;
  std::string heldFor;   // not read any more, held for this execution by Inductor's buffer reuse; empty: in use
  friend bool operator==(const PeakValue&, const PeakValue&) = default;
};

// A check of Inductor's buffer reuse that asked to hold a dead buffer until a later allocation of
// its size (analysis::ReuseCheck): held where bytes + heldOverSpan <= programPeak, all three as the
// planner models Inductor's estimate of the program (forward or backward).
struct ReuseHold {
  std::string buffer;    // the execution that allocated the dead buffer
  std::string forNode;   // the allocation that asked for it
  uint32_t step = 0;     // the allocation's step
  uint64_t bytes = 0;
  int64_t heldOverSpan = 0;
  int64_t programPeak = 0;
  bool held = false;
  // What the bytes left under the peak (negative: by how much they missed it).
  [[nodiscard]] int64_t margin() const { return programPeak - heldOverSpan - static_cast<int64_t>(bytes); }
  friend bool operator==(const ReuseHold&, const ReuseHold&) = default;
};

struct PlanTimeline {
  uint64_t peakBytes = 0;
  uint32_t peakStep = 0;
  uint32_t backwardStart = 0;
  std::array<uint64_t, kTimelineCategories> atPeak{};
  // What makes up atPeak but for the weights: every value live at the peak, largest first.
  std::vector<PeakValue> atPeakValues;
  std::vector<ReuseHold> reuseHolds;  // in step order
  // The backward's kernels as the timeline models Inductor's fusion: the steps of each kernel's
  // outputs, ascending, kernels by their first step.
  std::vector<std::vector<uint32_t>> backwardKernels;
  std::vector<std::string> node;  // executed node per step
  std::string phase;              // 'f' or 'b' per step
  std::vector<double> seconds;    // estimated start time of each step
  std::array<std::vector<uint64_t>, kTimelineCategories> bytes;  // live bytes per category per step
};

// A kernel export of the plan (`lathe export`, kernels/export_bundle.h): where its manifest is.
struct KernelsRef {
  std::string manifest;  // path of the bundle's manifest.json, as `lathe export` was given it
  std::string format;    // the manifest's format, "lathe.kernels/1"
  std::vector<std::string> targets;
  uint64_t kernels = 0;       // kernels generated
  uint64_t notGenerated = 0;  // fusion groups left without a kernel
  friend bool operator==(const KernelsRef&, const KernelsRef&) = default;
};

struct PlanBundle {
  std::string artifact;  // as given to `lathe plan`
  std::string graphId;
  std::string fingerprint;  // of the graph's FX text: a plan read back against another graph is refused
  std::vector<std::string> nodeNames;
  hw::HwProfile hardware;
  std::string pipeline;
  std::vector<PlanStep> steps;
  PlanState state;  // the final state, node ids = positions in nodeNames
  PlanTimeline timeline;
  std::vector<std::pair<std::string, double>> estimates;
  std::vector<KernelsRef> kernels;
};

// 16 hex digits of FNV-1a 64 over the graph's printed FX text without its `# File:` provenance
// (the same graph logged from a checkout elsewhere has the same fingerprint).
[[nodiscard]] std::string graphFingerprint(const ir::Graph& graph);

[[nodiscard]] std::string planToJson(const PlanBundle& plan);
// What `lathe timeline --json` prints: the graph, the peak with its breakdown, the values held there
// and the reuse holds, each value encoded as the bundle encodes it.
[[nodiscard]] std::string timelineSummaryJson(const PlanBundle& plan);
// Throws Error(BadInput) "<source>: <JSON path>: <what is wrong>" for the first bad value: not JSON,
// nested or sized beyond the bounds, another format or version, a value of the wrong type or range,
// an empty or duplicate name, a decision naming a node the plan does not list, an index beyond its
// series, series of different lengths, a peak that is not the timeline's largest total. A bundle it
// returns can be indexed as its fields say without further checks.
[[nodiscard]] PlanBundle planFromJson(std::string_view json, const std::string& sourceName);
void writePlan(const std::filesystem::path& path, const PlanBundle& plan);  // atomic
[[nodiscard]] PlanBundle readPlan(const std::filesystem::path& path);

}  // namespace lathe::plan
