#include "passes/plan_target.h"

#include <mutex>

#include "analysis/cost_model.h"
#include "util/diagnostics.h"

namespace lathe::passes {

struct PlanTarget::Shared {
  std::shared_ptr<const ir::Graph> graph;
  std::string graphId;
  analysis::GraphInputs inputs;
  bool inductor = true;
  std::once_flag jointOnce;
  analysis::JointInfo joint;
};

struct PlanTarget::Costs {
  std::once_flag once;
  std::vector<double> nodeSeconds;
};

const io::GraphListing* defaultPlanGraph(const std::vector<io::GraphListing>& graphs) {
  for (const char* kind : {"lathe_joint_graph", "aot_joint_graph", "aot_inference_graph", "exported_program"}) {
    for (const io::GraphListing& g : graphs) {
      if (g.kind == kind && g.parent.empty()) return &g;
    }
  }
  return graphs.empty() ? nullptr : &graphs.front();
}

PlanTarget::PlanTarget(std::shared_ptr<Shared> shared, hw::HwProfile hardware)
    : shared_(std::move(shared)), hardware_(std::move(hardware)), costs_(std::make_shared<Costs>()) {}

PlanTarget::PlanTarget(const io::Artifact& artifact, std::string_view graphId, hw::HwProfile hardware)
    : PlanTarget(std::make_shared<Shared>(), std::move(hardware)) {
  const std::vector<io::GraphListing> graphs = artifact.graphs();
  const io::GraphListing* listing = graphId.empty() ? defaultPlanGraph(graphs) : io::findGraph(graphs, graphId);
  if (!listing || !listing->graph) {
    throw Error(ErrorCode::BadInput, graphId.empty() ? artifact.path.string() + " holds no graph"
                                                     : artifact.path.string() + " holds no graph " + std::string(graphId) +
                                                           " (`lathe graphs` lists them)");
  }
  shared_->graph = listing->graph;
  shared_->graphId = listing->id;
  shared_->inputs = analysis::inferGraphInputs(*listing->graph, io::dynamoGraphOf(graphs, *listing));
  shared_->inductor = io::compiledByInductor(graphs, *listing);
}

PlanTarget::PlanTarget(std::shared_ptr<const ir::Graph> graph, std::string graphId, hw::HwProfile hardware,
                       bool inductorJointPasses)
    : PlanTarget(std::make_shared<Shared>(), std::move(hardware)) {
  shared_->inputs = analysis::inferGraphInputs(*graph, nullptr);
  shared_->graph = std::move(graph);
  shared_->graphId = std::move(graphId);
  shared_->inductor = inductorJointPasses;
}

const ir::Graph& PlanTarget::graph() const { return *shared_->graph; }
const std::shared_ptr<const ir::Graph>& PlanTarget::sharedGraph() const { return shared_->graph; }
const std::string& PlanTarget::graphId() const { return shared_->graphId; }
const analysis::GraphInputs& PlanTarget::inputs() const { return shared_->inputs; }
bool PlanTarget::inductorJointPasses() const { return shared_->inductor; }

bool PlanTarget::capturedOnCpu() const {
  const ir::Graph& g = graph();
  bool any = false;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::TensorMeta& meta = g.node(id).meta;
    if (!meta.isTensor() || meta.device == 0) continue;
    if (g.str(meta.device) != "cpu") return false;
    any = true;
  }
  return any;
}

const analysis::JointInfo& PlanTarget::joint() const {
  std::call_once(shared_->jointOnce, [&] { shared_->joint = analysis::analyzeJoint(*shared_->graph); });
  return shared_->joint;
}

const std::vector<double>& PlanTarget::nodeSeconds() const {
  std::call_once(costs_->once, [&] { costs_->nodeSeconds = analysis::nodeSeconds(graph(), hardware_); });
  return costs_->nodeSeconds;
}

PassContext PlanTarget::context(const Progress& progress) const {
  return PassContext{graph(), inputs(), hardware_, ir::OpRegistry::global(), progress, shared_->inductor};
}

PlanTarget PlanTarget::onHardware(hw::HwProfile hardware) const { return PlanTarget(shared_, std::move(hardware)); }

}  // namespace lathe::passes
