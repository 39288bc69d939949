#include "passes/plan_builder.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "analysis/cost_model.h"
#include "analysis/joint.h"
#include "passes/activation_offload.h"
#include "passes/offload_pass.h"
#include "passes/recompute.h"
#include "passes/step_time.h"

namespace lathe::passes {

namespace {

using analysis::MemoryCategory;

// Moves streamed weights from "weights" to "prefetched": each load holds its unit's bytes from the
// first execution of its trigger segment (the copy may start there) to the last read it serves; a
// wrapped load (trigger in the previous step) holds them from the trigger to the end of the step,
// for the next step, and from the start of the step to its last read.
void applyOffload(const ir::Graph& graph, const plan::PlanState& state, const analysis::StepSchedule& schedule,
                  analysis::MemoryTimeline& timeline) {
  const plan::OffloadDecision& offload = *state.offload;
  const size_t steps = schedule.nodes.size();
  if (steps == 0) return;
  const std::vector<int32_t> segmentOf = segmentOfSteps(schedule, state);
  const size_t segments = static_cast<size_t>(segmentOf.back()) + 1;
  std::vector<uint32_t> first(segments, UINT32_MAX), last(segments, 0);
  for (uint32_t step = 0; step < steps; ++step) {
    const auto s = static_cast<size_t>(segmentOf[step]);
    first[s] = std::min(first[s], step);
    last[s] = std::max(last[s], step);
  }
  std::vector<int32_t> unitOfWeight(graph.size(), plan::kNone);
  for (const plan::LayerUnit& unit : state.units) {
    for (ir::NodeId w : unit.weights) unitOfWeight[w] = unit.id;
  }
  std::vector<std::vector<uint8_t>> reads(state.units.size(), std::vector<uint8_t>(segments, 0));
  for (uint32_t step = 0; step < steps; ++step) {
    for (ir::NodeId in : graph.inputs(schedule.nodes[step])) {
      if (unitOfWeight[in] != plan::kNone) reads[unitOfWeight[in]][segmentOf[step]] = 1;
    }
  }
  std::vector<int64_t> delta(steps + 1, 0);
  uint64_t streamedBytes = 0;
  auto hold = [&](uint32_t from, uint32_t to, uint64_t bytes) {
    delta[from] += static_cast<int64_t>(bytes);
    delta[to + 1] -= static_cast<int64_t>(bytes);
  };
  for (size_t u = 0; u < state.units.size(); ++u) {
    if (u < offload.resident.size() && offload.resident[u]) continue;
    const uint64_t bytes = state.units[u].weightBytes;
    streamedBytes += bytes;
    std::vector<const plan::Prefetch*> loads;
    for (const plan::Prefetch& p : offload.prefetches) {
      if (static_cast<size_t>(p.unit) == u && p.deadline >= 0 && static_cast<size_t>(p.deadline) < segments) loads.push_back(&p);
    }
    std::sort(loads.begin(), loads.end(), [](const auto* a, const auto* b) { return a->deadline < b->deadline; });
    for (size_t i = 0; i < loads.size(); ++i) {
      const auto deadline = static_cast<size_t>(loads[i]->deadline);
      const size_t next = i + 1 < loads.size() ? static_cast<size_t>(loads[i + 1]->deadline) : segments;
      size_t end = deadline;
      for (size_t s = deadline; s < next; ++s) {
        if (reads[u][s]) end = s;
      }
      const int32_t trigger = loads[i]->trigger;
      if (trigger >= 0 && static_cast<size_t>(trigger) <= deadline) {
        hold(first[trigger], last[end], bytes);
      } else {
        if (trigger >= 0 && static_cast<size_t>(trigger) < segments) hold(first[trigger], static_cast<uint32_t>(steps - 1), bytes);
        hold(0, last[end], bytes);
      }
    }
  }
  const size_t weightsIndex = static_cast<size_t>(MemoryCategory::Weights);
  const size_t prefetchedIndex = static_cast<size_t>(MemoryCategory::Prefetched);
  int64_t live = 0;
  timeline.peakBytes = 0;
  for (size_t step = 0; step < steps; ++step) {
    live += delta[step];
    auto& row = timeline.live[step];
    row[weightsIndex] -= std::min<uint64_t>(row[weightsIndex], streamedBytes);
    row[prefetchedIndex] += static_cast<uint64_t>(live);
    uint64_t total = 0;
    for (uint64_t v : row) total += v;
    timeline.total[step] = total;
    if (total > timeline.peakBytes) {
      timeline.peakBytes = total;
      timeline.peakStep = static_cast<uint32_t>(step);
    }
  }
  timeline.atPeak = timeline.live[timeline.peakStep];
}

}  // namespace

PlannedStep plannedStep(const PassContext& context, const plan::PlanState& state) {
  PlannedStep planned;
  const analysis::JointInfo& joint = context.joint();
  const analysis::StorageFacts facts = analysis::storageFacts(context.graph);  // for the schedule and the timeline
  analysis::StepPartition partition;
  if (joint.joint) {
    const plan::RecomputeDecision decision =
        state.recompute ? *state.recompute : torchPolicy(context.graph, joint, context.inputs, context.inductorJointPasses);
    partition = analysis::partitionJoint(context.graph, joint, decision.saved);
    planned.schedule = analysis::trainingSchedule(context.graph, partition, &facts);
  } else {
    planned.schedule = analysis::programSchedule(context.graph);
  }
  // Saved values held in host memory are away from the GPU between their copies.
  std::vector<analysis::OffGpuInterval> offGpu;
  if (joint.joint && state.activationOffload) offGpu = offGpuIntervals(*state.activationOffload);
  planned.timeline = analysis::memoryTimeline(context.graph, context.inputs, planned.schedule, joint.joint ? &joint : nullptr,
                                              joint.joint ? &partition : nullptr, {.facts = &facts, .offGpu = offGpu});
  // Priced as the recompute pass prices a step (step_time.h).
  const StepTime time = stepTime(context, planned.schedule, joint.joint ? &partition : nullptr);
  planned.startSeconds = time.startSeconds;
  planned.executionSeconds = time.executionSeconds;
  planned.stepSeconds = time.stepSeconds;
  planned.computeSeconds = time.computeSeconds;
  planned.kernelLaunches = time.kernelLaunches;
  if (state.offload && !state.units.empty()) {
    applyOffload(context.graph, state, planned.schedule, planned.timeline);
  }
  return planned;
}

plan::PlanBundle buildPlanBundle(const PassContext& context, const PipelineRun& run, const std::string& artifact,
                                 const std::string& graphId) {
  plan::PlanBundle bundle;
  bundle.artifact = artifact;
  bundle.graphId = graphId;
  bundle.fingerprint = plan::graphFingerprint(context.graph);
  for (ir::NodeId id = 0; id < context.graph.size(); ++id) bundle.nodeNames.emplace_back(context.graph.name(id));
  bundle.hardware = context.hw;
  std::vector<PipelineStep> steps;
  for (const PipelineRecord& record : run.history) {
    steps.push_back(record.step);
    plan::PlanStep step;
    step.step = formatStep(record.step);
    step.seconds = record.seconds;
    for (const PassStat& stat : record.result.stats) step.stats.emplace_back(stat.key.name, stat.value);
    step.diff = toEnglish(record.result.diff);
    bundle.steps.push_back(std::move(step));
  }
  bundle.pipeline = formatPipeline(steps);
  bundle.state = run.finalState();

  const PlannedStep planned = plannedStep(context, bundle.state);
  plan::PlanTimeline& t = bundle.timeline;
  t.peakBytes = planned.timeline.peakBytes;
  t.peakStep = planned.timeline.peakStep;
  t.backwardStart = static_cast<uint32_t>(planned.schedule.backwardStart);
  t.atPeak = planned.timeline.atPeak;
  for (const size_t s : planned.timeline.valuesAt(t.peakStep)) {
    const analysis::StorageLife& life = planned.timeline.storages[s];
    t.atPeakValues.push_back({std::string(context.graph.name(life.node)),
                              std::string(analysis::memoryCategoryName(life.category)), life.bytes,
                              life.heldDeadAt(t.peakStep) ? std::string(context.graph.name(life.heldFor)) : std::string()});
  }
  std::sort(t.atPeakValues.begin(), t.atPeakValues.end(), [](const plan::PeakValue& a, const plan::PeakValue& b) {
    return std::tie(b.bytes, a.node, a.category) < std::tie(a.bytes, b.node, b.category);
  });
  for (const analysis::ReuseCheck& check : planned.timeline.reuseChecks) {
    t.reuseHolds.push_back({std::string(context.graph.name(planned.timeline.storages[check.dead].node)),
                            std::string(context.graph.name(check.forNode)), check.step, check.bytes, check.heldOverSpan,
                            check.programPeak, check.held});
  }
  t.backwardKernels = planned.schedule.backwardKernels;
  for (size_t i = 0; i < planned.schedule.nodes.size(); ++i) {
    t.node.emplace_back(context.graph.name(planned.schedule.nodes[i]));
    t.phase.push_back(planned.schedule.phase[i] == analysis::Phase::Forward ? 'f' : 'b');
    t.seconds.push_back(planned.startSeconds[i]);
    for (size_t c = 0; c < plan::kTimelineCategories; ++c) t.bytes[c].push_back(planned.timeline.live[i][c]);
  }
  bundle.estimates = {{"step_seconds", bundle.state.offload ? bundle.state.offload->stepSeconds : planned.stepSeconds},
                      {"compute_seconds", planned.computeSeconds},
                      {"peak_bytes", static_cast<double>(planned.timeline.peakBytes)},
                      {"executions", static_cast<double>(planned.schedule.nodes.size())},
                      {"kernel_launches", static_cast<double>(planned.kernelLaunches)}};
  return bundle;
}

}  // namespace lathe::passes
