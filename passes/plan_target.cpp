#include "passes/plan_target.h"

#include <algorithm>
#include <mutex>

#include "analysis/cost_model.h"
#include "passes/fusion.h"
#include "passes/recompute.h"
#include "util/diagnostics.h"

namespace lathe::passes {

struct PlanTarget::Shared {
  std::shared_ptr<const ir::Graph> graph;
  std::string graphId;
  analysis::GraphInputs inputs;
  const ir::OpRegistry* ops = &ir::OpRegistry::global();
  bool inductor = true;
  std::once_flag jointOnce, unitsOnce, deviceOnce;
  analysis::JointInfo joint;
  analysis::LayerUnits units;
  bool capturedOnCpu = false;
};

struct PlanTarget::Costs {
  std::once_flag estimateOnce, nodeOnce, recomputeOnce, launchesOnce;
  std::vector<double> estimatedSeconds, nodeSeconds, recomputeCost;
  std::vector<uint32_t> fusedKernel;
  std::vector<uint8_t> launchesAlone;
  std::vector<std::optional<double>> measuredSeconds;  // calibrated(): empty otherwise
  std::string calibration;
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

PlanTarget::PlanTarget(std::shared_ptr<const ir::Graph> graph, std::string graphId, analysis::GraphInputs inputs,
                       hw::HwProfile hardware, const ir::OpRegistry& ops, bool inductorJointPasses)
    : PlanTarget(std::make_shared<Shared>(), std::move(hardware)) {
  if (inputs.role.size() != graph->size()) {
    throw Error(ErrorCode::Internal, graphId + ": graph inputs describe " + std::to_string(inputs.role.size()) +
                                         " nodes, the graph has " + std::to_string(graph->size()));
  }
  shared_->graph = std::move(graph);
  shared_->graphId = std::move(graphId);
  shared_->inputs = std::move(inputs);
  shared_->ops = &ops;
  shared_->inductor = inductorJointPasses;
}

const ir::Graph& PlanTarget::graph() const { return *shared_->graph; }
const std::shared_ptr<const ir::Graph>& PlanTarget::sharedGraph() const { return shared_->graph; }
const std::string& PlanTarget::graphId() const { return shared_->graphId; }
const analysis::GraphInputs& PlanTarget::inputs() const { return shared_->inputs; }
bool PlanTarget::inductorJointPasses() const { return shared_->inductor; }
const ir::OpRegistry& PlanTarget::ops() const { return *shared_->ops; }

bool PlanTarget::capturedOnCpu() const {
  // Asked whenever a front end shows the graph's figures: read the devices once.
  std::call_once(shared_->deviceOnce, [&] {
    const ir::Graph& g = graph();
    bool any = false;
    for (ir::NodeId id = 0; id < g.size(); ++id) {
      const ir::TensorMeta& meta = g.node(id).meta;
      if (!meta.isTensor() || meta.device == 0) continue;
      if (g.str(meta.device) != "cpu") return;
      any = true;
    }
    shared_->capturedOnCpu = any;
  });
  return shared_->capturedOnCpu;
}

const analysis::JointInfo& PlanTarget::joint() const {
  std::call_once(shared_->jointOnce, [&] { shared_->joint = analysis::analyzeJoint(*shared_->graph); });
  return shared_->joint;
}

const analysis::LayerUnits& PlanTarget::layerUnits() const {
  std::call_once(shared_->unitsOnce, [&] { shared_->units = analysis::layerUnits(graph(), inputs(), ops()); });
  return shared_->units;
}

const std::vector<double>& PlanTarget::estimatedNodeSeconds() const {
  std::call_once(costs_->estimateOnce, [&] {
    costs_->estimatedSeconds = analysis::nodeSeconds(graph(), hardware_, ops());
    costs_->fusedKernel.assign(graph().size(), kNotFused);
    if (!inductorJointPasses() || unsupportedGraph(graph())) return;  // a graph the planner refuses is shown node by node
    // Inductor runs each fusion group as one kernel (analysis::groupCost: its external bytes, one
    // launch). Each member carries a share of it by its own estimate, so that a step running part
    // of a group (a recomputation) pays part of it. The groups are the fusion pass's with its
    // defaults: Lathe's model of what Inductor fuses, whatever pipeline a plan runs.
    const plan::PlanState grouped =
        FusionPass().run(context(), plan::PlanState::empty(graph().size()), PassOptions{}).state;
    std::vector<double>& seconds = costs_->estimatedSeconds;
    for (size_t g = 0; g < grouped.groups.size(); ++g) {
      const plan::FusionGroup& group = grouped.groups[g];
      for (ir::NodeId id : group.nodes) costs_->fusedKernel[id] = static_cast<uint32_t>(g);
      const double kernel = analysis::groupCost(graph(), group.nodes, hardware_, ops()).seconds;
      double separate = 0;
      for (ir::NodeId id : group.nodes) separate += seconds[id];
      for (ir::NodeId id : group.nodes) {
        seconds[id] = separate > 0 ? kernel * seconds[id] / separate : kernel / static_cast<double>(group.nodes.size());
      }
    }
  });
  return costs_->estimatedSeconds;
}

const std::vector<double>& PlanTarget::nodeSeconds() const {
  std::call_once(costs_->nodeOnce, [&] {
    costs_->nodeSeconds = estimatedNodeSeconds();
    const auto& measured = costs_->measuredSeconds;
    for (size_t id = 0; id < measured.size() && id < costs_->nodeSeconds.size(); ++id) {
      if (measured[id]) costs_->nodeSeconds[id] = *measured[id];
    }
  });
  return costs_->nodeSeconds;
}

const std::vector<uint32_t>& PlanTarget::fusedKernel() const {
  (void)estimatedNodeSeconds();
  return costs_->fusedKernel;
}

const std::vector<uint8_t>& PlanTarget::launchesAlone() const {
  std::call_once(costs_->launchesOnce, [&] {
    const std::vector<uint32_t>& kernel = fusedKernel();
    costs_->launchesAlone.assign(graph().size(), 0);
    for (ir::NodeId id = 0; id < graph().size(); ++id) {
      if (!graph().node(id).isCall() || kernel[id] != kNotFused) continue;
      const ir::OpCategory category = ops().lookup(graph().target(id)).category;
      costs_->launchesAlone[id] = category != ir::OpCategory::View && category != ir::OpCategory::Getitem;
    }
  });
  return costs_->launchesAlone;
}

PlanTarget PlanTarget::calibrated(std::vector<std::optional<double>> measuredSeconds, std::string source) const {
  if (measuredSeconds.size() != graph().size()) {
    throw Error(ErrorCode::Internal, graphId() + ": " + std::to_string(measuredSeconds.size()) + " measured times for " +
                                         std::to_string(graph().size()) + " nodes");
  }
  PlanTarget target(shared_, hardware_);
  target.costs_->measuredSeconds = std::move(measuredSeconds);
  target.costs_->calibration = std::move(source);
  return target;
}

const std::string& PlanTarget::calibration() const { return costs_->calibration; }

const std::vector<double>& PlanTarget::recomputeCost() const {
  std::call_once(costs_->recomputeOnce, [&] {
    // A recomputation runs inside a backward kernel: never dearer than the node in its own.
    costs_->recomputeCost = recomputeSeconds(context());
    const std::vector<double>& own = nodeSeconds();
    for (size_t id = 0; id < own.size(); ++id) costs_->recomputeCost[id] = std::min(costs_->recomputeCost[id], own[id]);
  });
  return costs_->recomputeCost;
}

PassContext PlanTarget::context(const Progress& progress) const {
  return PassContext{*this, graph(), inputs(), hardware_, ops(), progress, shared_->inductor};
}

const analysis::JointInfo& PassContext::joint() const { return target.joint(); }
const analysis::LayerUnits& PassContext::layerUnits() const { return target.layerUnits(); }
const std::vector<double>& PassContext::nodeSeconds() const { return target.nodeSeconds(); }
const std::vector<double>& PassContext::recomputeCost() const { return target.recomputeCost(); }

PlanTarget PlanTarget::onHardware(hw::HwProfile hardware) const { return PlanTarget(shared_, std::move(hardware)); }

}  // namespace lathe::passes
