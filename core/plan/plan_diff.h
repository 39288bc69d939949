// Two plan bundles side by side: of one graph under two pipelines, budgets or GPUs, or of two graphs
// (then decisions are compared by node name). What `lathe diff A.plan.json B.plan.json` prints and
// the studio can show: the estimates, the memory at the peak by category, the saved set (values
// saved only by one plan, with that plan's reason), recomputation, fusion and weight offload.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan_bundle.h"

namespace lathe::plan {

struct PlanDiff {
  bool sameGraph = false;  // equal fingerprints: node names mean the same nodes
  std::string graphA, graphB, fingerprintA, fingerprintB;
  std::string pipelineA, pipelineB;
  std::string hardwareA, hardwareB;
  // Estimates both bundles carry, by name ("step_seconds", "peak_bytes", ...), in A's order.
  struct Estimate {
    std::string name;
    std::optional<double> a, b;
  };
  std::vector<Estimate> estimates;
  std::array<uint64_t, kTimelineCategories> atPeakA{}, atPeakB{};
  uint64_t peakA = 0, peakB = 0;
  // Saved values (by name) one plan keeps and the other does not, with the keeping plan's reason.
  struct Saved {
    std::string name;
    Message reason;
  };
  std::vector<Saved> savedOnlyA, savedOnlyB;
  size_t savedA = 0, savedB = 0, recomputedA = 0, recomputedB = 0;
  std::string recomputePolicyA, recomputePolicyB;  // "" without a recompute decision
  size_t groupsA = 0, groupsB = 0, unitsA = 0, unitsB = 0;
  // Layer units kept resident by one plan's weight offload and not the other's, by unit name.
  std::vector<std::string> residentOnlyA, residentOnlyB;
};

[[nodiscard]] PlanDiff diffPlans(const PlanBundle& a, const PlanBundle& b);

}  // namespace lathe::plan
