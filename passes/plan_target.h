// A graph ready to plan: everything a pass pipeline over one graph needs, assembled once — the
// graph, its inputs (parameters, buffers, module paths from the Dynamo graph), the target
// hardware, whether Inductor's joint passes ran — with the analyses that planning shares (joint
// forward/backward split, layer units, estimated node and recompute times) computed on first use
// and kept. The CLI, the
// studio, the tests and the Python runtime each build one and plan from it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "analysis/layer_units.h"
#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "passes/pass.h"

namespace lathe::passes {

// The target when none is named.
inline constexpr std::string_view kDefaultHardware = "h200";
// The pipeline when none is named: training steps (joint graphs) also get torch's recompute.
inline constexpr std::string_view kDefaultTrainingPipeline = "split,fusion,recompute(policy=torch)";
inline constexpr std::string_view kDefaultInferencePipeline = "split,fusion";

// The graph planning takes when none is named: the first joint graph the Lathe runtime planned (a run
// folder's `lathe_joint_graph` artifact), else the first top-level joint graph, else the first
// inference graph, else the first exported program, else the first graph; null when there is none.
[[nodiscard]] const io::GraphListing* defaultPlanGraph(const std::vector<io::GraphListing>& graphs);

class PlanTarget {
 public:
  // Graph `graphId` of the artifact (empty: defaultPlanGraph). Throws Error(BadInput) when there is
  // no such graph.
  PlanTarget(const io::Artifact& artifact, std::string_view graphId, hw::HwProfile hardware);
  // A graph on its own (tests, the Python runtime's graphs): inputs as the graph carries them.
  PlanTarget(std::shared_ptr<const ir::Graph> graph, std::string graphId, hw::HwProfile hardware,
             bool inductorJointPasses = true);
  // A graph with inputs inferred elsewhere, priced with an op registry of its own (tests' custom ops).
  PlanTarget(std::shared_ptr<const ir::Graph> graph, std::string graphId, analysis::GraphInputs inputs,
             hw::HwProfile hardware, const ir::OpRegistry& ops = ir::OpRegistry::global(),
             bool inductorJointPasses = true);

  [[nodiscard]] const ir::Graph& graph() const;
  [[nodiscard]] const std::shared_ptr<const ir::Graph>& sharedGraph() const;
  [[nodiscard]] const std::string& graphId() const;
  [[nodiscard]] const analysis::GraphInputs& inputs() const;
  [[nodiscard]] const hw::HwProfile& hardware() const { return hardware_; }
  [[nodiscard]] bool inductorJointPasses() const;
  // True when every tensor whose device the graph names is on the CPU: its figures are then what
  // it would cost on hardware(), not what its capture ran at, and front ends say so.
  [[nodiscard]] bool capturedOnCpu() const;
  // Computed on first use, then shared by every copy (thread-safe).
  [[nodiscard]] const ir::OpRegistry& ops() const;
  [[nodiscard]] const analysis::JointInfo& joint() const;
  [[nodiscard]] const analysis::LayerUnits& layerUnits() const;  // with ops()
  // On hardware(), with ops(); under Inductor each fusion group is one kernel, its time shared among
  // its members.
  [[nodiscard]] const std::vector<double>& nodeSeconds() const;
  [[nodiscard]] const std::vector<double>& recomputeCost() const;  // passes::recomputeSeconds on hardware()
  [[nodiscard]] std::string_view defaultPipeline() const {
    return joint().joint ? kDefaultTrainingPipeline : kDefaultInferencePipeline;
  }
  // The context passes run in; it refers to this target, which must outlive it.
  [[nodiscard]] PassContext context(const Progress& progress = {}) const;
  // The same graph on another target: graph analyses stay shared, costs are computed anew.
  [[nodiscard]] PlanTarget onHardware(hw::HwProfile hardware) const;
  // The same graph priced with measured node times (a profile's, `--profile`): a node with a value
  // costs what was measured, the others keep the estimate; recomputations stay capped at the node's
  // own time. `source` names the measurement ("lathe_runtime cuda on NVIDIA H200").
  [[nodiscard]] PlanTarget calibrated(std::vector<std::optional<double>> measuredSeconds, std::string source) const;
  // What calibrated() was given; empty when the costs are the model's alone.
  [[nodiscard]] const std::string& calibration() const;
  // The model's own node times, also on a calibrated target (front ends show both).
  [[nodiscard]] const std::vector<double>& estimatedNodeSeconds() const;
  // The kernel each node runs in under Inductor: the index of its fusion group (the fusion pass's
  // with its defaults, as nodeSeconds prices them), kNotFused for a node that is its own kernel or
  // none. All kNotFused where nodeSeconds prices node by node.
  static constexpr uint32_t kNotFused = UINT32_MAX;
  [[nodiscard]] const std::vector<uint32_t>& fusedKernel() const;
  // Per node: 1 when running it launches a kernel of its own (a call that is not fused, a view or a
  // getitem).
  [[nodiscard]] const std::vector<uint8_t>& launchesAlone() const;

 private:
  struct Shared;
  struct Costs;
  PlanTarget(std::shared_ptr<Shared> shared, hw::HwProfile hardware);

  std::shared_ptr<Shared> shared_;
  hw::HwProfile hardware_;
  std::shared_ptr<Costs> costs_;
};

}  // namespace lathe::passes
