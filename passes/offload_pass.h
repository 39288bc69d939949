// The offload pass: turns a graph, its layer units (split pass) and its step schedule (recompute
// decision, if any) into an OffloadProblem (offload.h) and plans it with the chosen policy.
// Options and statistics: OffloadPass's declarations (`lathe passes` lists them).
#pragma once

#include <vector>

#include "analysis/memory_timeline.h"
#include "passes/offload.h"
#include "passes/pass.h"

namespace lathe::passes {

// Segments of the step (consecutive executions of one layer unit and phase) with their compute
// time and the units whose weights they read.
[[nodiscard]] OffloadProblem offloadProblem(const PassContext& context, const plan::PlanState& state);

// The executions of one step: forward then backward for a joint graph (with the plan's saved set,
// else torch's), program order otherwise.
[[nodiscard]] analysis::StepSchedule stepSchedule(const PassContext& context, const plan::PlanState& state);
// The segment of each execution of `schedule` (the indices OffloadProblem::segments and
// plan::Prefetch use).
[[nodiscard]] std::vector<int32_t> segmentOfSteps(const analysis::StepSchedule& schedule, const plan::PlanState& state);

// resident= when neither it nor memory= is given: MagiCompiler's default gpu_resident_weight_ratio.
inline constexpr double kDefaultResidentFraction = 0.3;

class OffloadPass : public Pass {
 public:
  static constexpr OptionSpec kPolicy{"policy", OptionType::Choice, "heuristic", "how resident units and prefetches are chosen",
                                      kOffloadPolicies};
  static constexpr OptionSpec kMemory{"memory", OptionType::Bytes, "",
                                      "the GPU's budget for weights (default: all of them)"};
  static constexpr OptionSpec kResident{"resident", OptionType::Number, "",
                                        "the share of weight bytes kept resident, as MagiCompiler's "
                                        "gpu_resident_weight_ratio (0.3 when memory is not given)",
                                        {}, 0, 1};
  static constexpr OptionSpec kRepeated{"repeated", OptionType::Flag, "true",
                                        "steps repeat: the next step's prefetches may overlap this step's tail"};

  static constexpr StatKey kStepSeconds{"step_seconds", StatUnit::Seconds, "the simulated step, copies included"};
  static constexpr StatKey kComputeSeconds{"compute_seconds", StatUnit::Seconds, "the step's compute alone"};
  static constexpr StatKey kBubbleSeconds{"bubble_seconds", StatUnit::Seconds, "compute stalled waiting for copies"};
  static constexpr StatKey kFloorSeconds{"floor_seconds", StatUnit::Seconds,
                                         "max(compute, streamed bytes over the host link)"};
  static constexpr StatKey kPeakWeightBytes{"peak_weight_bytes", StatUnit::Bytes, "the most weight bytes on the GPU"};
  static constexpr StatKey kBudgetBytes{"budget_bytes", StatUnit::Bytes, "the weight budget planned for"};
  static constexpr StatKey kStreamedBytes{"streamed_bytes", StatUnit::Bytes, "weight bytes copied in per step"};
  static constexpr StatKey kResidentUnits{"resident_units", StatUnit::Count, "layer units kept on the GPU"};

  [[nodiscard]] const PassInfo& info() const override;
  [[nodiscard]] PassResult run(const PassContext& context, const plan::PlanState& before,
                               const PassOptions& options) const override;
};

// What offload(...) decides on `problem` under its options: memory= (default: all the weights),
// resident= (default kDefaultResidentFraction without memory=), repeated=, policy=. The pass plans
// through it, and so does the budget panel's preview on the problem of the plan on show.
[[nodiscard]] plan::OffloadDecision planOffloadWith(const OffloadProblem& problem, const PassOptions& options);

}  // namespace lathe::passes
