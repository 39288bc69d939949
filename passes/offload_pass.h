// The offload pass: turns a graph, its layer units (split pass) and its step schedule (recompute
// decision, if any) into an OffloadProblem (offload.h) and plans it with the chosen policy.
// Options: policy=base|cost-effective|heuristic|optimal (default heuristic), memory=BYTES (GPU
// weight budget; default: all weights), resident=FRACTION (MagiCompiler's
// gpu_resident_weight_ratio, default 0.3 when memory is not given), repeated=true|false.
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

class OffloadPass : public Pass {
 public:
  [[nodiscard]] std::string_view name() const override { return "offload"; }
  [[nodiscard]] PassResult run(const PassContext& context, const plan::PlanState& before,
                               const PassOptions& options) const override;
};

}  // namespace lathe::passes
