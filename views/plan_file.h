// Plan bundles in the studio (core/plan/plan_bundle.h): which paths are plans, a plan read back with
// its decisions over the graph it was made for, its default file name, and how two plans of one
// graph differ in what they decide. No widgets: the loader's worker and the tests use it too.
#pragma once

#include <QString>
#include <QStringList>

#include "plan/plan_bundle.h"
#include "plan/plan_state.h"

namespace lathe::views {

// A bundle opened from a file and bound to its graph in the capture it names (plan::bind).
struct OpenedPlan {
  QString path;         // the bundle's file
  QString capturePath;  // the capture it names, found as plan::captureOf finds it
  plan::PlanBundle bundle;
  plan::PlanState state;  // the bundle's decisions over the loaded graph's node ids
};

// Plan bundles are JSON and captures never are: a path ending in .json (.plan.json) opens as a plan.
[[nodiscard]] bool isPlanPath(const QString& path);

// "<graph>.plan.json", the graph id made a file name: "0/0:aot_joint_graph" ->
// "0_0_aot_joint_graph.plan.json".
[[nodiscard]] QString defaultPlanFileName(const QString& graphId);

// The kinds of decision (pieces, layer units, fusion groups, recompute, offload), named for people,
// in which two plan states of one graph differ; empty when they decide the same. Estimated times
// are not decisions and are not compared.
[[nodiscard]] QStringList differingDecisions(const plan::PlanState& a, const plan::PlanState& b);

}  // namespace lathe::views
