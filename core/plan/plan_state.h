// The decisions a pass pipeline makes about one graph, as annotation layers over its nodes. Passes
// never change the graph: each returns a new PlanState, so a history of states can be stepped
// through and any two steps diffed. The plan bundle (plan_bundle.h) writes and reads this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/layer_units.h"
#include "ir/graph.h"
#include "util/message.h"

namespace lathe::plan {

inline constexpr int32_t kNone = -1;

// A set of nodes that becomes one generated kernel (the contract the CUDA code generator consumes).
struct FusionGroup {
  int32_t id = kNone;
  // "pointwise" (elementwise chain, broadcasts and casts), "reduction" (a reduction with its
  // pointwise prologue/epilogue), "normalization" (norm or softmax with prologue/epilogue).
  std::string kind;
  std::vector<ir::NodeId> nodes;  // in program order
  ir::NodeId anchor = ir::kNoNode;  // the reduction or normalization a group is built around, else the first node
};

// An FSDP-style compile unit: a transformer layer (from module paths) or a repeated block.
using LayerUnit = analysis::LayerUnit;
static_assert(analysis::kNoUnit == kNone, "a node outside every unit is kNone in the plan too");

// A joint graph split into forward and backward: values kept from forward to backward, and forward
// values the backward computes again. Node ids of the joint graph.
struct RecomputeDecision {
  std::string policy;  // "torch", "heuristic", "budget"
  std::vector<ir::NodeId> saved;       // program order
  std::vector<ir::NodeId> recomputed;  // program order
  // Why each saved value was kept, parallel to `saved` ("compute sensitive: aten.mm", "min cut", ...).
  // Read from a plan file, a reason is its English text.
  std::vector<Message> savedReasons;
};

// A saved activation the forward copies to pinned host memory and the backward copies back: off the
// GPU from the compute stream's wait for its copy out to the issue of its copy in. Nodes of the joint
// graph; steps index the step schedule of the plan's saved set (forward, then backward).
struct OffloadedActivation {
  ir::NodeId node = ir::kNoNode;  // the saved value
  uint64_t bytes = 0;
  ir::NodeId waitAfter = ir::kNoNode;    // forward node after which the compute stream waits for the copy out (the forward's last)
  ir::NodeId reloadAfter = ir::kNoNode;  // backward node after which the copy in is issued
  ir::NodeId firstUse = ir::kNoNode;     // first backward reader (waits for the copy in)
  uint32_t offGpuStep = 0;  // first step without the GPU storage (the one after waitAfter's)
  uint32_t onGpuStep = 0;   // step from which the GPU storage is back (the one after reloadAfter's)
  double outStart = 0, outEnd = 0;  // estimated copy out, seconds from the step's start
  double inStart = 0, inEnd = 0;    // estimated copy in
};

struct ActivationOffloadDecision {
  std::vector<OffloadedActivation> tensors;  // in order of their copy out
  uint64_t bytes = 0;         // offloaded per step, each way
  double copyOutSeconds = 0;  // device-to-host stream busy time
  double copyInSeconds = 0;   // host-to-device stream busy time
  double linkShare = 1;       // the share of each link's bandwidth the copies were planned at
};

// One weight transfer of an offload schedule.
struct Prefetch {
  int32_t unit = kNone;     // the layer unit whose weights are copied
  // The copy may begin once the compute stream reaches this segment (every earlier segment has
  // ended). trigger > deadline: a segment of the previous step (wrap-around for repeated steps).
  int32_t trigger = kNone;
  int32_t deadline = kNone;  // index of the segment that needs the weights
  double start = 0;          // simulated seconds from the step's start; negative in the previous step
  double end = 0;
};

struct OffloadDecision {
  std::string policy;  // "base", "cost-effective", "heuristic", "optimal"
  uint64_t budgetBytes = 0;          // GPU weight-memory budget
  std::vector<bool> resident;        // per layer unit: kept on the GPU for the whole run
  std::vector<Prefetch> prefetches;  // in copy-stream order
  double stepSeconds = 0;            // simulated step time
  double computeSeconds = 0;         // sum of compute
  double bubbleSeconds = 0;          // compute stream idle, waiting for weights
  double floorSeconds = 0;           // max(sum compute, streamed bytes / link bandwidth)
  uint64_t peakWeightBytes = 0;      // resident + in-flight + in-use streamed weights
  uint64_t streamedBytes = 0;        // bytes copied host to device per step
};

struct PlanState {
  // Per node (size = graph size), kNone where a layer does not apply.
  std::vector<int32_t> piece;      // piecewise split index
  std::vector<bool> boundary;      // the node is a split op (runs eagerly between pieces)
  std::vector<int32_t> unit;       // layer unit
  std::vector<int32_t> group;      // fusion group
  int32_t pieceCount = 0;
  std::vector<LayerUnit> units;
  std::vector<FusionGroup> groups;
  std::optional<RecomputeDecision> recompute;
  std::optional<OffloadDecision> offload;
  std::optional<ActivationOffloadDecision> activationOffload;  // saved values held in host memory

  // Sized for a graph with every layer empty.
  static PlanState empty(size_t nodeCount);
};

}  // namespace lathe::plan
