// Activation recompute: split a joint graph into forward and backward by choosing the values the
// forward saves; the backward recomputes whatever else it needs. Every policy decides from the
// joint graph alone.
//   torch      torch's default min-cut partitioner (min_cut_rematerialization_partition with
//              activation_memory_budget = 1), reproduced rule for rule.
//   heuristic  MagiCompiler's rule: keep compute-sensitive outputs (pushed down through a single
//              view or narrowing cast), keep primals the backward reads, recompute the rest. Unlike
//              MagiCompiler a value whose only user is an output is kept, and every matmul
//              (grouped MoE GEMMs too), attention and convolution counts as compute sensitive.
//   budget     least estimated recompute time such that the estimated peak of the whole step is
//              within a byte budget. Each candidate is an exact minimum cut of the Lagrangian
//              recompute seconds + lambda x saved bytes; lambda sweeps the frontier's convex hull
//              and the step's peak is checked on the memory timeline; torch's and the heuristic's
//              choices are candidates too (see docs/planning.md).
//   file       the saved set listed in a JSON file (names), to evaluate someone else's choice.
// offload=true adds activation offload (activation_offload.h): the saved values whose copies to
// host memory and back hide behind compute leave the GPU between their forward and backward reads;
// the budget policy then takes the point of least recompute whose peak with offload fits.
// offload_min=BYTES: the smallest value worth offloading (default 1 MiB); offload_link=SHARE: the
// share of the links' bandwidth copies are planned at (default 0.6, ActivationOffloadOptions).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/joint.h"
#include "analysis/memory_timeline.h"
#include "passes/activation_offload.h"
#include "passes/pass.h"

namespace lathe::passes {

// What a saved set costs: the step it makes, its memory and its recomputation.
struct RecomputeEvaluation {
  analysis::StepPartition partition;
  analysis::MemoryTimeline timeline;
  double recomputeSeconds = 0;  // estimated time of the backward's recomputation
  double stepSeconds = 0;       // estimated forward + backward time (node roofline sum)
  uint64_t savedBytes = 0;      // storage of saved values that are not weights
  // Asked for: the saved values held in host memory between their forward and backward reads (the
  // timeline has them away from the GPU there).
  std::optional<plan::ActivationOffloadDecision> activationOffload;
};

// Estimated seconds to recompute each node: roofline time, without the launch for ops a generated
// kernel can fuse into its backward consumer. PlanTarget::recomputeCost keeps it per target, capped
// at the node's own time there (its share of its fused kernel).
[[nodiscard]] std::vector<double> recomputeSeconds(const PassContext& context);

// The step a saved set makes, priced with the target's node times and recompute costs.
[[nodiscard]] RecomputeEvaluation evaluateSavedSet(const PassContext& context, std::span<const ir::NodeId> saved,
                                                   const ActivationOffloadOptions* activationOffload = nullptr);

// `inductorJointPasses`: see PassContext.
[[nodiscard]] plan::RecomputeDecision torchPolicy(const ir::Graph& graph, const analysis::JointInfo& joint,
                                                  const analysis::GraphInputs& inputs, bool inductorJointPasses = true);
[[nodiscard]] plan::RecomputeDecision heuristicPolicy(const ir::Graph& graph, const analysis::JointInfo& joint,
                                                      const ir::OpRegistry& ops);

struct FrontierPoint {
  std::vector<ir::NodeId> saved;
  uint64_t savedBytes = 0;  // storage of saved values that are not weights, as RecomputeEvaluation's
  uint64_t peakBytes = 0;
  double recomputeSeconds = 0;
  double stepSeconds = 0;
  double lambda = 0;  // picoseconds per byte of the cut that produced it; -1: torch's or the heuristic's set
};
// Non-dominated (peak, recompute time) points of the Lagrangian cuts, by increasing peak.
[[nodiscard]] std::vector<FrontierPoint> budgetFrontier(const PassContext& context);

// The budget policy's frontier of one joint graph on one target: solved once, it answers any budget
// (the studio's budget slider picks points from it).
struct BudgetFrontier {
  std::vector<FrontierPoint> points;  // by increasing peak, never empty

  // The least peak any saved set reaches, and the peak when everything the backward reads is saved.
  [[nodiscard]] uint64_t minimumPeak() const { return points.front().peakBytes; }
  [[nodiscard]] uint64_t noRecomputePeak() const { return points.back().peakBytes; }
  // The budget policy's choice: the least recompute time among the points whose peak fits, else the
  // smallest peak.
  [[nodiscard]] const FrontierPoint& pick(uint64_t budgetBytes) const;
  // The least peak among the points whose step takes no longer than `stepSeconds`; null if none.
  [[nodiscard]] const FrontierPoint* pickNoSlowerThan(double stepSeconds) const;
};
[[nodiscard]] BudgetFrontier solveBudgetFrontier(const PassContext& context);

// recompute(policy=budget, memory=budgetBytes) on a frontier solved before on the context's target:
// the pass's own result.
[[nodiscard]] PassResult budgetRecompute(const PassContext& context, const BudgetFrontier& frontier,
                                         uint64_t budgetBytes, const plan::PlanState& before,
                                         const ActivationOffloadOptions* activationOffload = nullptr);

// recompute(policy=budget) without memory: the frontier's least peak at no more step time than
// torch's saved set, so the plan is no slower than torch's in the planner's model and no larger.
[[nodiscard]] PassResult noSlowerRecompute(const PassContext& context, const BudgetFrontier& frontier,
                                           const plan::PlanState& before,
                                           const ActivationOffloadOptions* activationOffload = nullptr);

inline constexpr std::string_view kRecomputePolicies[] = {"torch", "heuristic", "budget", "file"};

class RecomputePass : public Pass {
 public:
  static constexpr OptionSpec kPolicy{"policy", OptionType::Choice, "torch", "how the saved set is chosen",
                                      kRecomputePolicies};
  static constexpr OptionSpec kMemory{"memory", OptionType::Bytes, "", "the step's peak budget (policy=budget; without it, the least peak no slower than torch's saved set)"};
  static constexpr OptionSpec kPath{"path", OptionType::Path, "",
                                    "a plan bundle or a JSON list of saved node names (policy=file)"};
  static constexpr OptionSpec kOffload{"offload", OptionType::Flag, "false",
                                       "saved values whose copies hide behind compute wait in host memory"};
  static constexpr OptionSpec kOffloadMin{"offload_min", OptionType::Bytes, "1MiB",
                                          "the smallest saved value worth offloading"};
  static constexpr OptionSpec kOffloadLink{"offload_link", OptionType::Number, "0.6",
                                           "the share of the host link's bandwidth copies are planned at",
                                           {}, 0, 1, true};

  static constexpr StatKey kSavedValues{"saved_values", StatUnit::Count, "tensors the forward saves"};
  static constexpr StatKey kSavedBytes{"saved_bytes", StatUnit::Bytes, "saved for the backward, weights left out"};
  static constexpr StatKey kRecomputedNodes{"recomputed_nodes", StatUnit::Count, "forward nodes the backward runs again"};
  static constexpr StatKey kRecomputeSeconds{"recompute_seconds", StatUnit::Seconds, "the backward's recomputation"};
  static constexpr StatKey kStepSeconds{"step_seconds", StatUnit::Seconds, "forward and backward, estimated"};
  static constexpr StatKey kPeakBytes{"peak_bytes", StatUnit::Bytes, "the step's estimated peak memory"};
  static constexpr StatKey kBudgetBytes{"budget_bytes", StatUnit::Bytes, "the peak budget asked for (policy=budget)"};
  static constexpr StatKey kBudgetMet{"budget_met", StatUnit::Flag, "whether a plan within the budget was found"};
  static constexpr StatKey kOffloadedValues{"offloaded_values", StatUnit::Count, "saved values held in host memory"};
  static constexpr StatKey kOffloadedBytes{"offloaded_bytes", StatUnit::Bytes, "bytes of the saved values held in host memory"};

  [[nodiscard]] const PassInfo& info() const override;
  void checkOptions(const PassOptions& options) const override;
  [[nodiscard]] PassResult run(const PassContext& context, const plan::PlanState& before,
                               const PassOptions& options) const override;
};

}  // namespace lathe::passes
