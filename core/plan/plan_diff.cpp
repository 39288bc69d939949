#include "plan/plan_diff.h"

#include <set>
#include <unordered_map>

namespace lathe::plan {

namespace {

// Saved names with their reasons, in the plan's order.
std::vector<PlanDiff::Saved> savedOf(const PlanBundle& plan) {
  std::vector<PlanDiff::Saved> saved;
  if (!plan.state.recompute) return saved;
  const RecomputeDecision& decision = *plan.state.recompute;
  for (size_t i = 0; i < decision.saved.size(); ++i) {
    saved.push_back({plan.nodeNames[decision.saved[i]], i < decision.savedReasons.size() ? decision.savedReasons[i] : Message()});
  }
  return saved;
}

std::vector<PlanDiff::Saved> onlyIn(const std::vector<PlanDiff::Saved>& mine, const std::vector<PlanDiff::Saved>& theirs) {
  std::set<std::string_view> other;
  for (const PlanDiff::Saved& s : theirs) other.insert(s.name);
  std::vector<PlanDiff::Saved> only;
  for (const PlanDiff::Saved& s : mine)
    if (!other.contains(s.name)) only.push_back(s);
  return only;
}

std::vector<std::string> residentUnits(const PlanBundle& plan) {
  std::vector<std::string> names;
  if (!plan.state.offload) return names;
  for (size_t u = 0; u < plan.state.offload->resident.size() && u < plan.state.units.size(); ++u)
    if (plan.state.offload->resident[u]) names.push_back(plan.state.units[u].name);
  return names;
}

std::vector<std::string> difference(const std::vector<std::string>& mine, const std::vector<std::string>& theirs) {
  const std::set<std::string> other(theirs.begin(), theirs.end());
  std::vector<std::string> only;
  for (const std::string& name : mine)
    if (!other.contains(name)) only.push_back(name);
  return only;
}

}  // namespace

PlanDiff diffPlans(const PlanBundle& a, const PlanBundle& b) {
  PlanDiff diff;
  diff.sameGraph = a.fingerprint == b.fingerprint;
  diff.graphA = a.graphId;
  diff.graphB = b.graphId;
  diff.fingerprintA = a.fingerprint;
  diff.fingerprintB = b.fingerprint;
  diff.pipelineA = a.pipeline;
  diff.pipelineB = b.pipeline;
  diff.hardwareA = a.hardware.id;
  diff.hardwareB = b.hardware.id;
  std::unordered_map<std::string_view, double> estimatesB(b.estimates.begin(), b.estimates.end());
  for (const auto& [name, value] : a.estimates) {
    const auto it = estimatesB.find(name);
    diff.estimates.push_back({name, value, it == estimatesB.end() ? std::nullopt : std::optional<double>(it->second)});
  }
  std::set<std::string_view> inA;
  for (const auto& [name, value] : a.estimates) inA.insert(name);
  for (const auto& [name, value] : b.estimates)
    if (!inA.contains(name)) diff.estimates.push_back({name, std::nullopt, value});
  diff.atPeakA = a.timeline.atPeak;
  diff.atPeakB = b.timeline.atPeak;
  diff.peakA = a.timeline.peakBytes;
  diff.peakB = b.timeline.peakBytes;
  const std::vector<PlanDiff::Saved> savedA = savedOf(a), savedB = savedOf(b);
  diff.savedA = savedA.size();
  diff.savedB = savedB.size();
  diff.savedOnlyA = onlyIn(savedA, savedB);
  diff.savedOnlyB = onlyIn(savedB, savedA);
  diff.recomputedA = a.state.recompute ? a.state.recompute->recomputed.size() : 0;
  diff.recomputedB = b.state.recompute ? b.state.recompute->recomputed.size() : 0;
  diff.recomputePolicyA = a.state.recompute ? a.state.recompute->policy : "";
  diff.recomputePolicyB = b.state.recompute ? b.state.recompute->policy : "";
  diff.groupsA = a.state.groups.size();
  diff.groupsB = b.state.groups.size();
  diff.unitsA = a.state.units.size();
  diff.unitsB = b.state.units.size();
  const std::vector<std::string> residentA = residentUnits(a), residentB = residentUnits(b);
  diff.residentOnlyA = difference(residentA, residentB);
  diff.residentOnlyB = difference(residentB, residentA);
  return diff;
}

}  // namespace lathe::plan
