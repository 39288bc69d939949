#include "views/logic/step_gantt.h"

#include <algorithm>
#include <limits>

#include "passes/offload_pass.h"

namespace lathe::views {

namespace {

using analysis::Stream;

// The executions where the step's time model puts them (passes::stepTime): gaps between bars are
// the GPU waiting for the host to launch the next kernel.
StepGantt kernelGantt(const passes::PassContext& context, const passes::PlannedStep& planned) {
  StepGantt gantt;
  gantt.stepSeconds = planned.stepSeconds;
  for (size_t i = 0; i < planned.schedule.nodes.size(); ++i) {
    const double start = planned.startSeconds[i];
    const double end = start + planned.executionSeconds[i];
    gantt.bars.push_back({Stream::Compute, start, end, std::string(context.graph.name(planned.schedule.nodes[i])),
                          static_cast<int32_t>(i % 2), 0, i, i});
    gantt.executionStart.push_back(start);
    gantt.executionEnd.push_back(end);
  }
  return gantt;
}

StepGantt offloadGantt(const passes::PassContext& context, const plan::PlanState& state,
                       const passes::PlannedStep& planned) {
  const passes::OffloadProblem problem = passes::offloadProblem(context, state);
  plan::OffloadDecision decision = *state.offload;
  const passes::OffloadTimeline timeline = passes::simulateOffload(problem, decision);
  const analysis::SimResult& sim = timeline.sim;
  const size_t segments = problem.segments.size();
  const auto lastStep = static_cast<size_t>(timeline.steps - 1);
  size_t copies = 0;
  for (const analysis::TaskRecord& record : sim.tasks) copies += record.stream == Stream::HostToDevice ? 1 : 0;
  const size_t copiesPerStep = copies / static_cast<size_t>(timeline.steps);

  const std::vector<int32_t> segmentOf = passes::segmentOfSteps(planned.schedule, state);
  std::vector<size_t> firstExecution(segments, 0), lastExecution(segments, 0);
  for (size_t i = segmentOf.size(); i-- > 0;) firstExecution[static_cast<size_t>(segmentOf[i])] = i;
  for (size_t i = 0; i < segmentOf.size(); ++i) lastExecution[static_cast<size_t>(segmentOf[i])] = i;

  StepGantt gantt;
  gantt.segments = true;
  gantt.stepSeconds = decision.stepSeconds;
  const double origin = timeline.stepStart;
  const std::vector<analysis::TaskIndex> computeTask = passes::lastStepComputeTasks(timeline, segments);
  std::vector<double> segmentStart(segments, 0);
  for (size_t segment = 0; segment < computeTask.size(); ++segment) {
    const analysis::TaskRecord& record = sim.tasks[static_cast<size_t>(computeTask[segment])];
    segmentStart[segment] = record.start - origin;
    gantt.bars.push_back({Stream::Compute, record.start - origin, record.end - origin, problem.segments[segment].name,
                          static_cast<int32_t>(segment % 2), 0, firstExecution[segment], lastExecution[segment]});
  }
  size_t copySeen = 0;  // copies too run in input order, copiesPerStep a step
  for (const analysis::TaskRecord& record : sim.tasks) {
    if (record.stream == Stream::Compute) continue;
    const size_t step = copiesPerStep == 0 ? 0 : copySeen / copiesPerStep;
    ++copySeen;
    if (step != lastStep) continue;
    gantt.bars.push_back({record.stream, record.start - origin, record.end - origin, record.name,
                          static_cast<int32_t>(copySeen % 2), record.bytes, 0, 0});
  }
  for (const analysis::Bubble& bubble : sim.bubbles) {
    const auto it = std::find(computeTask.begin(), computeTask.end(), bubble.before);
    if (it == computeTask.end() || bubble.end <= bubble.start) continue;
    gantt.stalls.push_back({bubble.start - origin, bubble.end - origin,
                            problem.segments[static_cast<size_t>(it - computeTask.begin())].name});
  }

  // Executions within a segment run back to back from the segment's start.
  const std::vector<double>& seconds = context.nodeSeconds();
  std::vector<double> cursor = segmentStart;
  for (size_t i = 0; i < planned.schedule.nodes.size(); ++i) {
    const auto segment = static_cast<size_t>(segmentOf[i]);
    gantt.executionStart.push_back(cursor[segment]);
    cursor[segment] += seconds[planned.schedule.nodes[i]];
    gantt.executionEnd.push_back(cursor[segment]);
  }
  return gantt;
}

// Idle time shorter than this is the events' own resolution, not a wait.
constexpr double kIdleResolution = 2e-6;

}  // namespace

StepGantt offloadRunGantt(const plan::WeightOffloadRun& run, const plan::StepTimeline& timeline,
                          std::string_view backwardSuffix) {
  StepGantt gantt;
  gantt.segments = true;
  gantt.stepSeconds = timeline.stepSeconds;
  auto unitName = [&](int32_t unit) { return run.units[static_cast<size_t>(unit)]; };
  std::vector<bool> seen(run.units.size(), false);
  std::vector<plan::TimedSpan> segments = timeline.segments;
  std::stable_sort(segments.begin(), segments.end(),
                   [](const plan::TimedSpan& a, const plan::TimedSpan& b) { return a.start < b.start; });
  double computeFree = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    const plan::TimedSpan& s = segments[i];
    const auto unit = static_cast<size_t>(s.unit);
    const std::string label = seen[unit] ? unitName(s.unit) + std::string(backwardSuffix) : unitName(s.unit);
    seen[unit] = true;
    if (s.start - computeFree > kIdleResolution) gantt.stalls.push_back({computeFree, s.start, label});
    computeFree = std::max(computeFree, s.end);
    gantt.bars.push_back({Stream::Compute, s.start, s.end, label, static_cast<int32_t>(i % 2), 0, 0, 0});
  }
  auto copies = [&](const std::vector<plan::TimedSpan>& spans, Stream stream, bool sized) {
    for (size_t i = 0; i < spans.size(); ++i) {
      const plan::TimedSpan& s = spans[i];
      gantt.bars.push_back({stream, s.start, s.end, unitName(s.unit), static_cast<int32_t>(i % 2),
                            sized ? run.unitBytes[static_cast<size_t>(s.unit)] : 0, 0, 0});
    }
  };
  copies(timeline.h2d, Stream::HostToDevice, true);
  copies(timeline.d2h, Stream::DeviceToHost, false);  // one copy per gradient tensor: the unit's bytes do not apply
  gantt.begin = 0;
  for (const GanttBar& bar : gantt.bars) {
    gantt.begin = std::min(gantt.begin, bar.start);
    gantt.stepSeconds = std::max(gantt.stepSeconds, bar.end);
  }
  return gantt;
}

bool StepGantt::uses(analysis::Stream stream) const {
  return barCount(stream) > 0;
}

size_t StepGantt::barCount(analysis::Stream stream) const {
  return static_cast<size_t>(
      std::count_if(bars.begin(), bars.end(), [&](const GanttBar& bar) { return bar.stream == stream; }));
}

size_t StepGantt::executionAt(double seconds) const {
  if (executionStart.empty()) return std::numeric_limits<size_t>::max();
  size_t best = 0;
  double bestDistance = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < executionStart.size(); ++i) {
    const double distance = seconds < executionStart[i] ? executionStart[i] - seconds
                            : seconds > executionEnd[i] ? seconds - executionEnd[i]
                                                        : 0.0;
    if (distance < bestDistance) {
      bestDistance = distance;
      best = i;
    }
    if (distance == 0) break;
  }
  return best;
}

StepGantt buildStepGantt(const passes::PassContext& context, const plan::PlanState& state,
                         const passes::PlannedStep& planned) {
  StepGantt gantt =
      state.offload && !state.units.empty() ? offloadGantt(context, state, planned) : kernelGantt(context, planned);
  gantt.begin = 0;
  for (const GanttBar& bar : gantt.bars) gantt.begin = std::min(gantt.begin, bar.start);
  return gantt;
}

}  // namespace lathe::views
