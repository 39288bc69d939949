// Turns a pipeline run into a plan bundle (core/plan/plan_bundle.h): the final decisions, every
// step's statistics and diff, and the memory timeline of the planned step.
#pragma once

#include <span>
#include <string>

#include "analysis/memory_timeline.h"
#include "passes/pipeline.h"
#include "plan/plan_bundle.h"

namespace lathe::passes {

// The step a plan state describes: for a joint graph the forward and backward that its saved set
// makes (torch's saved set when no recompute pass ran), else the graph in program order; streamed
// weights of an offload plan count as prefetched from their simulated copy start to their last read.
struct PlannedStep {
  analysis::StepSchedule schedule;
  analysis::MemoryTimeline timeline;
  std::vector<double> startSeconds;      // estimated start of each execution (step_time.h)
  std::vector<double> executionSeconds;  // and its GPU time (a recomputation at its recompute cost)
  double stepSeconds = 0;            // with the host's kernel launches
  double computeSeconds = 0;         // the GPU busy
  size_t kernelLaunches = 0;
};
[[nodiscard]] PlannedStep plannedStep(const PassContext& context, const plan::PlanState& state);

[[nodiscard]] plan::PlanBundle buildPlanBundle(const PassContext& context, const PipelineRun& run,
                                               const std::string& artifact, const std::string& graphId);

}  // namespace lathe::passes
