// lathe_runtime: runs aten-level Lathe graphs (joint, forward, backward, inference, post-grad, .pt2)
// node by node through the PyTorch dispatcher, on the CPU or a CUDA device, with inputs drawn from
// the captured metadata; runs a plan's forward / recompute / backward and compares its gradients with
// the unplanned joint graph's; measures per-node time and the memory the step holds.
//
// The interface is torch-free so that the CLI and the studio include it without libtorch's headers;
// only this library links libtorch (the torch wheel's), and it is optional in the build.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/joint.h"
#include "ir/graph.h"
#include "util/progress.h"

namespace lathe::runtime {

struct ExecuteOptions {
  std::string device = "cpu";  // "cpu", "cuda" or "cuda:N"
  int warmup = 1;              // runs not timed (allocator and library caches warm up)
  int repeats = 3;             // timed runs; per-node and step times are their medians
  uint64_t seed = 0;           // inputs and random ops draw from it, identically in every run
  Progress progress;           // reports runs done of warmup + repeats; cancel between nodes
};

// An op this device has no kernel for, run as an equivalent one: prims ops (registered in Python
// only) as their aten forms, cuDNN attention on the CPU as the CPU flash kernels. Named in every
// report so that a measurement says what actually ran.
struct Substitution {
  std::string op;     // "prims.convert_element_type.default"
  std::string ranAs;  // "aten._to_copy"
  uint64_t nodes = 0;
  friend bool operator==(const Substitution&, const Substitution&) = default;
};

struct GraphRun {
  std::string deviceName;         // "NVIDIA H200", "cpu"
  uint64_t deviceMemoryBytes = 0;  // 0 on the CPU
  std::string torchVersion;
  // Per node (indexed by NodeId; 0 for inputs, views that launch nothing cost what they cost): the
  // median over the timed runs. CPU: wall time of the call. CUDA: device time between the events
  // recorded after the previous node and after this one (launch gaps included, as eager runs them).
  std::vector<double> nodeSeconds;
  std::vector<uint64_t> nodeOutputBytes;  // bytes of new storage the node's outputs hold
  double stepSeconds = 0;                 // median of the runs' totals
  // Bytes of storage the step's own values held at once, as the executor frees each value after its
  // last use (inputs not counted): the eager counterpart of the memory timeline's peak.
  uint64_t livePeakBytes = 0;
  // CUDA caching allocator over one timed run: max_memory_allocated minus memory_allocated before it
  // (the anchors' measure) and the before figure; absent on the CPU.
  std::optional<uint64_t> allocatorPeakBytes;
  std::optional<uint64_t> allocatorBeforeBytes;
  std::vector<Substitution> substitutions;
  int runs = 0;  // timed runs
};

// The calls of `graph` this build cannot run on `device`, one line each ("torch.ops.higher_order.
// wrap: no kernel in the dispatcher", nodes named); empty when every call runs. Checked before any
// run: ops are named, never skipped.
[[nodiscard]] std::vector<std::string> unsupportedOps(const ir::Graph& graph, const std::string& device);

// Runs the whole graph in program order. Throws Error(BadInput) naming the first unsupported ops or
// the node whose call failed (with torch's message), Error(Cancelled) when asked to stop.
[[nodiscard]] GraphRun measureGraph(const ir::Graph& graph, const ExecuteOptions& options);

struct GradientDifference {
  std::string gradient;  // "grad of primals_3" (the output item's comment when it has one)
  double maxAbsError = 0;  // NaN at the same place in both runs counts as equal
  bool bitwiseEqual = false;
  bool referenceFinite = true;  // the unplanned run's gradient has no NaN or inf
  // How far the unplanned graph's own first and last runs differ (a GPU's atomic accumulations are
  // not deterministic); 0 with one run or where it is deterministic.
  double runToRunError = 0;
};

struct PlanCheck {
  size_t gradientsCompared = 0;
  size_t nonFiniteReferences = 0;  // unplanned gradients holding NaN or inf (the drawn inputs overflow)
  std::vector<GradientDifference> differences;  // every gradient that is not bitwise equal
  double maxAbsError = 0;
  // Every gradient equal to the reference's up to rounding in its own dtype (two units of precision
  // of each value, one of the tensor's largest; never tighter than allclose(rtol 1e-3, atol 1e-5)),
  // or no further from it than twice the unplanned graph's own first and last runs are apart.
  bool allClose = true;
  GraphRun reference;    // the joint graph in program order
  GraphRun planned;      // the plan's forward, then its backward with recomputations
};

// Runs the joint graph unplanned, then as `partition` splits it (the forward keeps only the saved
// values, the backward recomputes the rest before first use), from the same inputs and seed, and
// compares every gradient. Throws Error(BadInput) for an invalid partition or an unsupported op.
[[nodiscard]] PlanCheck checkPlan(const ir::Graph& joint, const analysis::JointInfo& info,
                                  const analysis::StepPartition& partition, const ExecuteOptions& options);

}  // namespace lathe::runtime
