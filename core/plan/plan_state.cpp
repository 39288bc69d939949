#include "plan/plan_state.h"

namespace lathe::plan {

PlanState PlanState::empty(size_t nodeCount) {
  PlanState state;
  state.piece.assign(nodeCount, kNone);
  state.boundary.assign(nodeCount, false);
  state.unit.assign(nodeCount, kNone);
  state.group.assign(nodeCount, kNone);
  return state;
}

}  // namespace lathe::plan
