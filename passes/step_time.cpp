#include "passes/step_time.h"

#include <algorithm>

#include "passes/plan_target.h"

namespace lathe::passes {

StepTime stepTime(const PassContext& context, const analysis::StepSchedule& schedule,
                  const analysis::StepPartition* partition) {
  const std::vector<double>& nodeSeconds = context.nodeSeconds();
  const std::vector<double>& recomputeCost = context.recomputeCost();
  const std::vector<uint32_t>& kernelOf = context.target.fusedKernel();
  const std::vector<uint8_t>& launchesAlone = context.target.launchesAlone();
  const double hostPerKernel = context.hw.hostSecondsPerKernel;
  StepTime time;
  const size_t n = schedule.nodes.size();
  time.startSeconds.resize(n);
  time.executionSeconds.resize(n);
  std::vector<uint8_t> groupPhase;  // per fusion group: the phase (1 forward, 2 backward) it last launched in
  double host = 0, gpu = 0;
  for (size_t i = 0; i < n; ++i) {
    const ir::NodeId id = schedule.nodes[i];
    const bool backward = i >= schedule.backwardStart;
    const bool recomputation = partition != nullptr && backward && partition->inForward[id];
    bool launches = launchesAlone[id] != 0;
    if (kernelOf[id] != PlanTarget::kNotFused) {
      const uint8_t phase = backward ? 2 : 1;
      if (groupPhase.size() <= kernelOf[id]) groupPhase.resize(kernelOf[id] + 1, 0);
      launches = groupPhase[kernelOf[id]] != phase;
      groupPhase[kernelOf[id]] = phase;
    }
    if (launches) {
      ++time.kernelLaunches;
      host += hostPerKernel;
      gpu = std::max(gpu, host);
    }
    const double seconds = recomputation ? recomputeCost[id] : nodeSeconds[id];
    time.startSeconds[i] = gpu;
    time.executionSeconds[i] = seconds;
    gpu += seconds;
    time.computeSeconds += seconds;
    if (recomputation) time.recomputeSeconds += seconds;
  }
  time.stepSeconds = gpu;
  return time;
}

}  // namespace lathe::passes
