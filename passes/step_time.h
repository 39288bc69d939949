// The time of a step as a GPU runs Inductor's program: the executions in schedule order, each node at
// its price (a recomputation at its recompute cost), and the host launching kernels one after another
// at the hardware profile's host time per kernel. A kernel starts once the previous one has ended and
// the host has issued it, so a step of many small kernels takes the host's time, not the GPU's.
// The plan bundle's step and the recompute pass's evaluations both come from here.
#pragma once

#include <vector>

#include "analysis/joint.h"
#include "analysis/memory_timeline.h"
#include "passes/pass.h"

namespace lathe::passes {

struct StepTime {
  std::vector<double> startSeconds;      // per execution: when the GPU starts it
  std::vector<double> executionSeconds;  // per execution: its GPU time
  double stepSeconds = 0;                // the end of the last execution
  double computeSeconds = 0;             // the GPU busy: the executions' sum
  double recomputeSeconds = 0;           // of which recomputations
  // One per fusion group each time the step enters it (a recomputation in the backward launches its
  // group again), one per other call that computes something (views and getitems launch nothing).
  size_t kernelLaunches = 0;
};

// `partition` null: a graph in program order (no recomputation).
[[nodiscard]] StepTime stepTime(const PassContext& context, const analysis::StepSchedule& schedule,
                                const analysis::StepPartition* partition);

}  // namespace lathe::passes
