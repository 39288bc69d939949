// The time of each node of a graph as the plan on show prices it, for the node table and the
// inspector: the model's own estimate and, with a profile applied (PlanSession::loadProfile), what
// the profile measured; with the plan's FLOPs, fusion groups and recompute decisions per node.
#pragma once

#include <QString>
#include <memory>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace lathe::views {

struct NodeTimes {
  std::shared_ptr<const ir::Graph> graph;  // whose nodes these are
  std::vector<double> estimated;           // by NodeId: passes::PlanTarget::estimatedNodeSeconds
  // By NodeId, nullopt where the run timed nothing; empty without a profile.
  std::vector<std::optional<double>> measured;
  QString source;  // the measurement ("lathe_runtime cpu on cpu"), "" without a profile
  // What the plan on show says of each node, by NodeId: FLOPs on the target (analysis::nodeCost),
  // the fusion group it joins (-1: none), and the recompute decision (empty without one).
  std::vector<double> flops;
  std::vector<int32_t> fusionGroup;
  enum class Decision : uint8_t { None, Saved, Recomputed };
  std::vector<Decision> decision;
};

}  // namespace lathe::views
