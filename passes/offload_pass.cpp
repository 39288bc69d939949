#include "passes/offload_pass.h"

#include <algorithm>

#include "analysis/cost_model.h"
#include "analysis/joint.h"
#include "analysis/memory_timeline.h"
#include "passes/recompute.h"
#include "util/diagnostics.h"
#include "util/format.h"

namespace lathe::passes {


analysis::StepSchedule stepSchedule(const PassContext& context, const plan::PlanState& state) {
  const analysis::JointInfo& joint = context.joint();
  if (!joint.joint) return analysis::programSchedule(context.graph);
  const plan::RecomputeDecision decision =
      state.recompute ? *state.recompute
                      : torchPolicy(context.graph, joint, context.inputs, context.inductorJointPasses);
  return analysis::trainingSchedule(context.graph, analysis::partitionJoint(context.graph, joint, decision.saved));
}

std::vector<int32_t> segmentOfSteps(const analysis::StepSchedule& schedule, const plan::PlanState& state) {
  std::vector<int32_t> segment(schedule.nodes.size(), 0);
  int32_t current = -1, currentUnit = plan::kNone;
  analysis::Phase currentPhase = analysis::Phase::Forward;
  for (size_t i = 0; i < schedule.nodes.size(); ++i) {
    const int32_t unit = state.unit[schedule.nodes[i]] == plan::kNone ? currentUnit : state.unit[schedule.nodes[i]];
    if (current < 0 || unit != currentUnit || schedule.phase[i] != currentPhase) {
      ++current;
      currentUnit = unit;
      currentPhase = schedule.phase[i];
    }
    segment[i] = current;
  }
  return segment;
}

OffloadProblem offloadProblem(const PassContext& context, const plan::PlanState& state) {
  if (state.units.empty()) {
    throw Error(ErrorCode::Usage, "offload needs layer units: put split before offload in the pipeline");
  }
  const ir::Graph& graph = context.graph;
  std::vector<int32_t> unitOfWeight(graph.size(), plan::kNone);
  OffloadProblem problem;
  for (const plan::LayerUnit& unit : state.units) {
    for (ir::NodeId w : unit.weights) unitOfWeight[w] = unit.id;
    problem.unitBytes.push_back(unit.weightBytes);
    problem.unitNames.push_back(unit.name);
  }
  const analysis::StepSchedule schedule = stepSchedule(context, state);
  const std::vector<double>& seconds = context.nodeSeconds();
  const std::vector<int32_t> segmentOf = segmentOfSteps(schedule, state);
  int32_t unit = plan::kNone;  // a node with no unit belongs to the one before it
  for (size_t i = 0; i < schedule.nodes.size(); ++i) {
    const ir::NodeId id = schedule.nodes[i];
    if (state.unit[id] != plan::kNone) unit = state.unit[id];
    if (static_cast<size_t>(segmentOf[i]) == problem.segments.size()) {
      OffloadSegment segment;
      const std::string unitName = unit == plan::kNone ? std::string("(no unit)") : state.units[unit].name;
      segment.name = unitName + (schedule.phase[i] == analysis::Phase::Forward ? " fwd" : " bwd");
      problem.segments.push_back(std::move(segment));
    }
    OffloadSegment& segment = problem.segments.back();
    segment.computeSeconds += seconds[id];
    for (ir::NodeId in : graph.inputs(id)) {
      const int32_t owner = unitOfWeight[in];
      if (owner != plan::kNone && std::find(segment.units.begin(), segment.units.end(), owner) == segment.units.end()) {
        segment.units.push_back(owner);
      }
    }
  }
  problem.h2dBandwidth = context.hw.h2dBandwidth;
  problem.launchLatency = context.hw.launchOverhead;
  return problem;
}

plan::OffloadDecision planOffloadWith(const OffloadProblem& problem, const PassOptions& options) {
  using P = OffloadPass;
  OffloadProblem planned = problem;
  uint64_t totalBytes = 0;
  for (uint64_t bytes : planned.unitBytes) totalBytes += bytes;
  planned.budgetBytes = options.has(P::kMemory) ? options.bytes(P::kMemory) : totalBytes;
  planned.repeated = options.flag(P::kRepeated);
  OffloadOptions offloadOptions;
  if (options.has(P::kResident)) {
    offloadOptions.residentFraction = options.number(P::kResident);
  } else if (!options.has(P::kMemory)) {
    offloadOptions.residentFraction = kDefaultResidentFraction;
  }
  return planOffload(planned, options.text(P::kPolicy), offloadOptions);
}

const PassInfo& OffloadPass::info() const {
  static constexpr OptionSpec kOptions[] = {kPolicy, kMemory, kResident, kRepeated};
  static constexpr StatKey kStats[] = {kStepSeconds,     kComputeSeconds, kBubbleSeconds,  kFloorSeconds,
                                       kPeakWeightBytes, kBudgetBytes,    kStreamedBytes, kResidentUnits};
  static constexpr std::string_view kRunsAfter[] = {"split"};
  static const PassInfo info{"offload", "weights resident or prefetched just in time on a copy stream, per layer unit",
                             kOptions, kStats, kRunsAfter};
  return info;
}

PassResult OffloadPass::run(const PassContext& context, const plan::PlanState& before, const PassOptions& options) const {
  requireSupportedGraph(context.graph);
  OffloadProblem problem = offloadProblem(context, before);
  const std::string policy = options.text(kPolicy);
  plan::OffloadDecision decision = planOffloadWith(problem, options);

  PassResult result;
  result.state = before;
  size_t residentUnits = 0;
  for (bool r : decision.resident) residentUnits += r ? 1 : 0;
  result.set(kStepSeconds, decision.stepSeconds);
  result.set(kComputeSeconds, decision.computeSeconds);
  result.set(kBubbleSeconds, decision.bubbleSeconds);
  result.set(kFloorSeconds, decision.floorSeconds);
  result.set(kPeakWeightBytes, static_cast<double>(decision.peakWeightBytes));
  result.set(kBudgetBytes, static_cast<double>(decision.budgetBytes));
  result.set(kStreamedBytes, static_cast<double>(decision.streamedBytes));
  result.set(kResidentUnits, static_cast<double>(residentUnits));
  result.diff.push_back({LATHE_TEXT("lathe::passes",
                                      "offload(%1): %2 of %3 units resident, step %4 (floor %5, bubbles %6), peak weights %7 of %8"),
                         {policy, std::to_string(residentUnits), std::to_string(decision.resident.size()),
                          formatMilliseconds(decision.stepSeconds), formatMilliseconds(decision.floorSeconds),
                          formatMilliseconds(decision.bubbleSeconds), formatBytes(decision.peakWeightBytes),
                          formatBytes(decision.budgetBytes)}});
  for (size_t u = 0; u < decision.resident.size(); ++u) {
    if (decision.resident[u]) {
      result.diff.push_back({LATHE_TEXT("lathe::passes", "= resident %1 (%2)"), {problem.unitNames[u], formatBytes(problem.unitBytes[u])}});
    }
  }
  for (const plan::Prefetch& p : decision.prefetches) {
    const auto segmentName = [&](int32_t s) {
      return s >= 0 && static_cast<size_t>(s) < problem.segments.size() ? problem.segments[s].name : std::string("?");
    };
    // A negative start is in the previous step's tail (steps repeat).
    const MessagePattern pattern =
        p.start < 0 ? LATHE_TEXT("lathe::passes", "+ stream %1: copy %2 .. %3 in the previous step's tail, when %4 is reached, for %5")
                    : LATHE_TEXT("lathe::passes", "+ stream %1: copy %2 .. %3, when %4 is reached, for %5");
    result.diff.push_back({pattern,
                           {problem.unitNames[p.unit], formatMilliseconds(p.start), formatMilliseconds(p.end),
                            segmentName(p.trigger), segmentName(p.deadline)}});
  }
  result.state.offload = std::move(decision);
  return result;
}

}  // namespace lathe::passes
