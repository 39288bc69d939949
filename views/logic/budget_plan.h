// The budget panel's plan: split,fusion,recompute(policy=budget,memory=B[,offload=true]) and, when the
// user streams weights, offload(policy=heuristic,resident=R) on one graph, with the recompute frontier computed once per graph and target, so that
// moving the budget only picks a frontier point (the budget policy's own choice: the least
// recompute time among the points whose peak fits, else the smallest peak) instead of solving the
// frontier again (passes::BudgetFrontier). No Qt: it runs on the plan session's worker threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "passes/pipeline.h"
#include "passes/plan_target.h"
#include "passes/recompute.h"

namespace lathe::views {

struct BudgetRequest {
  uint64_t budgetBytes = 0;
  // Weights streamed: offload's resident=, 0..1. Unset: no weight offload (it enters a plan only when
  // asked for: streaming costs step time whether or not the peak needs it).
  std::optional<double> residentRatio;
  bool activationOffload = false;  // recompute(..., offload=true): saved values wait in host memory
};

// The pipeline text the budget panel runs: recompute for a joint graph, offload only when weights are
// streamed and the split found layer units.
[[nodiscard]] std::string budgetPipeline(const BudgetRequest& request, bool withRecompute, bool withOffload);
// The pipeline's offload step for a request: offload(policy=heuristic,resident=R).
[[nodiscard]] passes::PipelineStep offloadStep(const BudgetRequest& request);

// Runs the budget pipeline: every pass as the pipeline runs it, except that the recompute step
// picks from `frontier` (passes::budgetRecompute, the same result as recompute(policy=budget)). A
// null frontier (a graph that is not joint) leaves recompute out.
[[nodiscard]] passes::PipelineRun runBudgetPipeline(const passes::PlanTarget& target,
                                                    const passes::BudgetFrontier* frontier, const BudgetRequest& request,
                                                    const Progress& progress);

}  // namespace lathe::views
