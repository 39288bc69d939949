#include "passes/plan_builder.h"

#include <algorithm>
#include <map>

#include "analysis/cost_model.h"
#include "analysis/joint.h"
#include "passes/recompute.h"

namespace lathe::passes {

namespace {

using analysis::MemoryCategory;

// Moves streamed weights from "weights" to "prefetched", live from their copy's start to the last
// read they serve.
void applyOffload(const ir::Graph& graph, const plan::PlanState& state, const std::vector<double>& start,
                  const analysis::StepSchedule& schedule, analysis::MemoryTimeline& timeline) {
  const plan::OffloadDecision& offload = *state.offload;
  const size_t steps = schedule.nodes.size();
  std::vector<int32_t> unitOfWeight(graph.size(), plan::kNone);
  for (const plan::LayerUnit& unit : state.units) {
    for (ir::NodeId w : unit.weights) unitOfWeight[w] = unit.id;
  }
  // Runs of steps reading each streamed unit, split where the unit is not read for a whole segment.
  std::map<int32_t, std::vector<std::pair<uint32_t, uint32_t>>> reads;
  for (uint32_t step = 0; step < steps; ++step) {
    for (ir::NodeId in : graph.inputs(schedule.nodes[step])) {
      const int32_t u = unitOfWeight[in];
      if (u == plan::kNone || offload.resident[u]) continue;
      auto& runs = reads[u];
      const bool newRun = runs.empty() || state.unit[schedule.nodes[runs.back().second]] != state.unit[schedule.nodes[step]] ||
                          schedule.phase[runs.back().second] != schedule.phase[step];
      if (newRun) {
        runs.emplace_back(step, step);
      } else {
        runs.back().second = step;
      }
    }
  }
  const auto stepAt = [&](double seconds) {
    const auto it = std::upper_bound(start.begin(), start.end(), seconds);
    return static_cast<uint32_t>(it == start.begin() ? 0 : (it - start.begin()) - 1);
  };
  const size_t weightsIndex = static_cast<size_t>(MemoryCategory::Weights);
  const size_t prefetchedIndex = static_cast<size_t>(MemoryCategory::Prefetched);
  std::vector<int64_t> delta(steps + 1, 0);
  int64_t streamedBytes = 0;
  for (const auto& [unit, runs] : reads) {
    const uint64_t bytes = state.units[unit].weightBytes;
    streamedBytes += static_cast<int64_t>(bytes);
    std::vector<const plan::Prefetch*> copies;
    for (const plan::Prefetch& p : offload.prefetches) {
      if (p.unit == unit) copies.push_back(&p);
    }
    for (size_t i = 0; i < runs.size(); ++i) {
      uint32_t first = runs[i].first;
      if (i < copies.size()) first = std::min(first, stepAt(copies[i]->start));
      delta[first] += static_cast<int64_t>(bytes);
      delta[runs[i].second + 1] -= static_cast<int64_t>(bytes);
    }
  }
  int64_t live = 0;
  timeline.peakBytes = 0;
  for (size_t step = 0; step < steps; ++step) {
    live += delta[step];
    auto& row = timeline.live[step];
    row[weightsIndex] -= std::min<uint64_t>(row[weightsIndex], static_cast<uint64_t>(streamedBytes));
    row[prefetchedIndex] += static_cast<uint64_t>(live);
    uint64_t total = 0;
    for (uint64_t v : row) total += v;
    timeline.total[step] = total;
    if (total > timeline.peakBytes) {
      timeline.peakBytes = total;
      timeline.peakStep = static_cast<uint32_t>(step);
    }
  }
  if (steps > 0) timeline.atPeak = timeline.live[timeline.peakStep];
}

}  // namespace

PlannedStep plannedStep(const PassContext& context, const plan::PlanState& state) {
  PlannedStep planned;
  const analysis::JointInfo joint = analysis::analyzeJoint(context.graph);
  analysis::StepPartition partition;
  if (joint.joint) {
    const plan::RecomputeDecision decision =
        state.recompute ? *state.recompute : torchPolicy(context.graph, joint, context.inputs, context.inductorJointPasses);
    partition = analysis::partitionJoint(context.graph, joint, decision.saved);
    planned.schedule = analysis::trainingSchedule(partition);
  } else {
    planned.schedule = analysis::programSchedule(context.graph);
  }
  planned.timeline = analysis::memoryTimeline(context.graph, context.inputs, planned.schedule, joint.joint ? &joint : nullptr,
                                              joint.joint ? &partition : nullptr);
  const std::vector<double> seconds = analysis::nodeSeconds(context.graph, context.hw, context.ops);
  planned.startSeconds.reserve(planned.schedule.nodes.size());
  for (ir::NodeId id : planned.schedule.nodes) {
    planned.startSeconds.push_back(planned.stepSeconds);
    planned.stepSeconds += seconds[id];
  }
  if (state.offload && !state.units.empty()) {
    applyOffload(context.graph, state, planned.startSeconds, planned.schedule, planned.timeline);
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
    for (const PassStat& stat : record.result.stats) step.stats.emplace_back(stat.name, stat.value);
    step.diff = record.result.diff;
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
  for (size_t i = 0; i < planned.schedule.nodes.size(); ++i) {
    t.node.emplace_back(context.graph.name(planned.schedule.nodes[i]));
    t.phase.push_back(planned.schedule.phase[i] == analysis::Phase::Forward ? 'f' : 'b');
    t.seconds.push_back(planned.startSeconds[i]);
    for (size_t c = 0; c < plan::kTimelineCategories; ++c) t.bytes[c].push_back(planned.timeline.live[i][c]);
  }
  bundle.estimates = {{"step_seconds", bundle.state.offload ? bundle.state.offload->stepSeconds : planned.stepSeconds},
                      {"compute_seconds", planned.stepSeconds},
                      {"peak_bytes", static_cast<double>(planned.timeline.peakBytes)},
                      {"executions", static_cast<double>(planned.schedule.nodes.size())}};
  return bundle;
}

}  // namespace lathe::passes
