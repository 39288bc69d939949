// A plan bundle applied to the graph it was made for. Bundles name nodes, units and groups by
// name (plan_bundle.h); everything that acts on a plan — kernel export, `recompute(policy=file)`,
// the studio, the runtime — needs the decisions over a loaded graph's node ids, and must refuse a
// plan made for another graph rather than apply part of it. This is the one place that does both.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "io/artifact.h"
#include "ir/graph.h"
#include "plan/plan_bundle.h"
#include "plan/plan_state.h"

namespace lathe::plan {

struct BoundPlan {
  const ir::Graph* graph = nullptr;  // owned by the artifact (or the caller) it was bound to
  std::vector<ir::NodeId> nodeIds;   // the bundle's node i is graph node nodeIds[i]
  PlanState state;                   // the bundle's decisions over the graph's node ids
};

// Binds the bundle to `graph`: the fingerprint must match and every name the bundle uses must be a
// node of the graph. Throws Error(BadInput) "<planName>: ..." naming both fingerprints, or listing
// the mismatched names (the first few, and how many in all).
[[nodiscard]] BoundPlan bind(const PlanBundle& bundle, const ir::Graph& graph, std::string_view planName);
// Finds the bundle's graph in the artifact by id first ("<artifact> holds no graph ID" otherwise).
[[nodiscard]] BoundPlan bind(const PlanBundle& bundle, const io::Artifact& artifact, std::string_view planName);

// The capture a bundle names (`artifact`), as `lathe plan` was given it: relative to where that ran,
// which may also be where the plan is. The path as given when it is absolute or exists, else the
// same relative path beside the plan; Error(BadInput) "<planPath>: the plan's capture ... is not
// here nor beside the plan" when neither exists (or the plan names none).
[[nodiscard]] std::string captureOf(const PlanBundle& bundle, const std::filesystem::path& planPath);

}  // namespace lathe::plan
