// Execution order of a step and the memory it keeps live, by category. A step is a list of node
// executions; for a training step made from a joint graph it is the forward, then the backward
// with its recomputation (joint.h). Each execution allocates its output when it starts and every
// storage is freed after its last read, so the bytes live at a step include the node's inputs and
// its output.
//
// Storages are counted as the compiled program (Inductor) holds them, not as the graph writes them:
// - views allocate nothing: they keep their base's storage alive;
// - a functional update of a tensor nothing else reads (index_put into fresh zeros, the embedding
//   gradient) is written into that tensor, as Inductor's reinplacing does;
// - a pointwise value whose readers all fuse with it in the same phase lives only inside their
//   kernels (Inductor inlines it): it allocates nothing, and what it reads stays live until its
//   last reader runs. Reductions, values a non-fusible op reads (matmuls, attention, collectives),
//   values the backward reads from the forward, and the step's outputs are written out.
// - an op that takes memory for itself while it runs (cuDNN's attention backward) holds it, as a
//   temporary, for its execution only; the parts of a tuple an op returns are allocated when it runs;
// - a buffer the program frees is held until a later allocation of its dtype and size takes it, as
//   Inductor's buffer reuse does, where that does not raise the program's own peak.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "ir/graph.h"

namespace lathe::analysis {

enum class MemoryCategory : uint8_t {
  Weights,      // parameters and buffers, live for the whole step
  Inputs,       // user inputs and tangents
  Saved,        // forward values the backward reads
  Recomputed,   // forward values the backward computes again
  Temporaries,  // everything else
  Gradients,    // gradient outputs, live from their computation to the end of the step
  Outputs,      // forward outputs (loss, logits), live to the end of the step
  Prefetched,   // streamed weights while on the GPU (offload plans)
};
inline constexpr size_t kMemoryCategoryCount = 8;
// The one table of category names, in enum order: plan bundles, the CLI and the studio's
// translations are written against it.
inline constexpr std::array<std::string_view, kMemoryCategoryCount> kMemoryCategoryNames = {
    "weights", "inputs", "saved", "recomputed", "temporaries", "gradients", "outputs", "prefetched"};
static_assert(static_cast<size_t>(MemoryCategory::Prefetched) + 1 == kMemoryCategoryCount);
[[nodiscard]] constexpr std::string_view memoryCategoryName(MemoryCategory category) {
  return kMemoryCategoryNames[static_cast<size_t>(category)];
}

enum class Phase : uint8_t { Forward, Backward };

struct StepSchedule {
  std::vector<ir::NodeId> nodes;  // executions in order (a recomputed node appears twice)
  std::vector<Phase> phase;       // parallel to nodes
  size_t backwardStart = 0;       // index of the first backward execution (= size for inference)
  // The backward's kernels as Inductor fuses them (trainingSchedule): the steps of each kernel's
  // outputs, ascending; kernels in order of their first step.
  std::vector<std::vector<uint32_t>> backwardKernels;
};

// Program order of a graph run on its own (inference, or a forward or backward graph).
[[nodiscard]] StepSchedule programSchedule(const ir::Graph& graph);

// One allocated storage: the value of an execution that is written out, with every alias of it.
struct StorageLife {
  ir::NodeId node = ir::kNoNode;  // the execution that allocated it (a placeholder for inputs)
  Phase phase = Phase::Forward;
  MemoryCategory category = MemoryCategory::Temporaries;
  uint64_t bytes = 0;
  uint32_t first = 0;  // step index of the allocation
  uint32_t last = 0;   // step index of the last read (inclusive), or of the step before heldFor's
  // The execution whose allocation takes this buffer from Inductor's reuse pool: the buffer is held,
  // dead, until then. kNoNode: freed after its last read, or handed to the kernel that read it last.
  ir::NodeId heldFor = ir::kNoNode;
  uint32_t heldFrom = 0;  // the first step it is held dead for heldFor (0: taken as it is freed, or never)

  // Whether at `step` it is no longer read and kept only for heldFor's allocation.
  [[nodiscard]] bool heldDeadAt(uint32_t step) const {
    return heldFor != ir::kNoNode && heldFrom != 0 && heldFrom <= step;
  }
};

// Steps [first, last] during which a storage is away from the GPU (activation offload).
struct StorageAway {
  uint32_t storage = 0;  // index into MemoryTimeline::storages
  uint32_t first = 0;
  uint32_t last = 0;
};

// One check of Inductor's buffer reuse that asked to hold a dead buffer: an allocation of its size
// found it in the pool after it died, and Inductor's wrapper takes it only where its size plus
// Inductor's estimate over the steps it would be held stays within its estimate of the program's
// peak (the planner's model of that estimate; see holdForReuse in memory_timeline.cpp).
struct ReuseCheck {
  uint32_t dead = 0;              // index into MemoryTimeline::storages
  ir::NodeId forNode = ir::kNoNode;  // the allocation that asked for it
  uint32_t step = 0;              // the allocation's step; the buffer would be held from its last read
  uint64_t bytes = 0;
  int64_t heldOverSpan = 0;       // the estimate's largest bytes over the steps it would be held
  int64_t programPeak = 0;        // the estimate's peak of the program (forward or backward)
  bool held = false;              // bytes + heldOverSpan <= programPeak
};

struct MemoryTimeline {
  // Per step: live bytes per category (index = MemoryCategory).
  std::vector<std::array<uint64_t, kMemoryCategoryCount>> live;
  std::vector<uint64_t> total;  // per step (both empty when built with perStep = false)
  uint64_t peakBytes = 0;
  uint32_t peakStep = 0;
  std::array<uint64_t, kMemoryCategoryCount> atPeak{};
  std::vector<StorageLife> storages;
  std::vector<StorageAway> away;
  std::vector<ReuseCheck> reuseChecks;  // in the order Inductor's wrapper meets them (step order)

  // Whether storages[storage] holds GPU memory at `step`.
  [[nodiscard]] bool countedAt(size_t storage, uint32_t step) const;
  // The storages that hold GPU memory at `step`, weights and empty ones left out, in storage order:
  // the values a user asks about at a peak.
  [[nodiscard]] std::vector<size_t> valuesAt(uint32_t step) const;
};

// What a timeline needs of each node, whatever the schedule. It takes a registry lookup per node:
// a caller that builds many timelines of one graph computes it once.
struct StorageFacts {
  // The input whose storage it shares: a view, a getitem indexing a tensor, or an update written
  // in place (updatesInPlace); kNoNode otherwise.
  std::vector<ir::NodeId> aliasOf;
  std::vector<uint64_t> bytes;
  std::vector<uint8_t> updatesInPlace;  // 1: aliasOf is the tensor it writes into
  std::vector<uint8_t> fusible;         // 1: its op joins a generated kernel with what it reads
  std::vector<uint8_t> inlinable;       // 1: its value can live inside its readers' kernels
  std::vector<uint8_t> movesElements;   // 1: its output reads its inputs at other indices (slice, cat, scatter)
  std::vector<uint64_t> workspace;      // bytes its op takes for itself while it runs (0: none known)
  // The op whose tuple result it indexes (a getitem of a value that is not a tensor): that op
  // allocates it, while it runs. kNoNode otherwise.
  std::vector<ir::NodeId> partOfTuple;
};
[[nodiscard]] StorageFacts storageFacts(const ir::Graph& graph);

// The forward then the backward of a partitioned joint graph; the backward in the order Inductor
// runs it (the outputs of one fused kernel together, where its last op stands). `facts`:
// storageFacts(graph), computed here when null.
[[nodiscard]] StepSchedule trainingSchedule(const ir::Graph& graph, const StepPartition& partition,
                                            const StorageFacts* facts = nullptr);

// Steps [offStep, onStep) during which the storage `node` allocated is held in host memory
// (activation offload): its bytes do not count on the GPU there.
struct OffGpuInterval {
  ir::NodeId node = ir::kNoNode;
  uint32_t offStep = 0;
  uint32_t onStep = 0;
};

struct TimelineOptions {
  const StorageFacts* facts = nullptr;  // storageFacts(graph); computed here when null
  bool perStep = true;                  // false: `live` and `total` stay empty (a search only needs the peak)
  std::span<const OffGpuInterval> offGpu;  // storages away from the GPU for a while
};

// `partition` is null for a graph that is not a partitioned joint graph.
[[nodiscard]] MemoryTimeline memoryTimeline(const ir::Graph& graph, const GraphInputs& inputs,
                                            const StepSchedule& schedule, const JointInfo* joint,
                                            const StepPartition* partition, const TimelineOptions& options = {});

}  // namespace lathe::analysis
