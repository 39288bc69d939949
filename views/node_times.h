// The time of each node of a graph as the plan on show prices it, for the node table and the
// inspector: the model's own estimate and, with a profile applied (PlanSession::loadProfile), what
// the profile measured.
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
};

}  // namespace lathe::views
