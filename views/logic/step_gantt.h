// What the Gantt view draws for one plan step: the step's compute, host-to-device and
// device-to-host streams as the discrete-event simulator (analysis/stream_sim.h) runs them.
// Offload plans: the offload pass's simulation (offload.h) of the step's segments and weight copies,
// the last simulated step of a warmed-up run, copies that start in the previous step's tail at
// negative times. Other plans: one compute bar per execution where the step's time model
// (passes/step_time.h) starts it: back to back where the GPU is the bound, apart where it waits for
// the host to launch the next kernel. No Qt.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/stream_sim.h"
#include "passes/plan_builder.h"
#include "plan/profile.h"

namespace lathe::views {

struct GanttBar {
  analysis::Stream stream = analysis::Stream::Compute;
  double start = 0;  // seconds from the step's start
  double end = 0;
  std::string label;          // segment, kernel or copy name
  int32_t shade = 0;          // alternates between neighbouring bars of one row, for telling them apart
  uint64_t bytes = 0;         // copied bytes (copies)
  size_t firstExecution = 0;  // compute bars: executions [first, last] of the step schedule
  size_t lastExecution = 0;
};

// The compute stream idle, waiting for a copy.
struct GanttStall {
  double start = 0;
  double end = 0;
  std::string before;  // the compute bar it delays
};

struct StepGantt {
  std::vector<GanttBar> bars;  // per stream in time order
  std::vector<GanttStall> stalls;
  std::vector<double> executionStart;  // per execution of the step schedule, seconds from the step's start
  std::vector<double> executionEnd;
  double begin = 0;  // earliest bar start (negative when copies start in the previous step)
  double stepSeconds = 0;
  bool segments = false;  // compute bars are segments (offload plans), else kernels

  [[nodiscard]] bool uses(analysis::Stream stream) const;
  [[nodiscard]] size_t barCount(analysis::Stream stream) const;
  // The execution running at `seconds`, or the nearest one; SIZE_MAX when the step is empty.
  [[nodiscard]] size_t executionAt(double seconds) const;
};

[[nodiscard]] StepGantt buildStepGantt(const passes::PassContext& context, const plan::PlanState& state,
                                       const passes::PlannedStep& planned);

// One step of a run whose weights were streamed (a run folder's lathe.profile/1 weight_offload), as
// simulated or as measured: the units' segments on the compute row (a unit's second segment of a
// training step is its backward, named with `backwardSuffix`, which the view translates), weight
// copies on the host-to-device row, gradients on the device-to-host row, the compute stream's idle
// time between segments as stalls. No executions: a run's segments map to no graph nodes.
[[nodiscard]] StepGantt offloadRunGantt(const plan::WeightOffloadRun& run, const plan::StepTimeline& timeline,
                                        std::string_view backwardSuffix);

}  // namespace lathe::views
