// lathe._native: the planner inside the training process. The Python runtime hands it the joint
// graph AOTAutograd gives the partitioner, printed as FX readable text (the form TORCH_TRACE logs
// carry, so the graph is read by the same loader as a capture), and gets back the saved set by node
// name with the plan bundle. Planning releases the GIL.
#include <nanobind/nanobind.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/graph_inputs.h"
#include "hw/hw_profile.h"
#include "io/fx/fx_text.h"
#include "ir/op_info.h"
#include "passes/activation_offload.h"
#include "passes/offload.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"
#include "passes/recompute.h"
#include "plan/plan_bind.h"
#include "plan/plan_bundle.h"
#include "plan/profile.h"
#include "util/diagnostics.h"

namespace nb = nanobind;
using namespace lathe;

namespace {

// What one planning call returns to Python.
struct JointPlan {
  std::vector<std::string> saved;       // forward values the backward reads, program order
  std::vector<std::string> recomputed;  // forward nodes the backward computes again
  std::string policy;
  std::string fingerprint;
  std::string bundleJson;  // lathe.plan/1
  uint64_t peakBytes = 0;
  // What the plan holds before the step: weights and inputs (the tangents come with the backward).
  // peakBytes minus it is the plan's peak as the benches measure one, max allocated minus allocated before.
  uint64_t beforeBytes = 0;
  double stepSeconds = 0;
  // Saved values the runtime copies to host memory and back: (name, bytes), in order of their copy
  // out, which the compute stream waits for at the forward's end. The copies in are placed on
  // torch's backward (place_copies_in), not by name.
  std::vector<std::pair<std::string, uint64_t>> offloaded;
  // With offloaded values: each node's estimated seconds by name, for placing the copies in on the
  // backward graph torch builds (its order is not the planner's).
  std::map<std::string, double> nodeSeconds;
  double offloadLinkShare = 1;  // the share of the link's bandwidth the copies were planned at
  bool budgetMet = true;              // false: no plan found fits the memory asked for
  std::vector<std::string> warnings;  // lines the loader skipped; passes' "!" diff lines
};

using SymbolHints = std::map<std::string, int64_t, std::less<>>;

// Symbolic sizes (dynamic shapes) are planned at the values the shape environment traced with.
std::shared_ptr<ir::Graph> parseGraph(const std::string& fxText, const std::string& graphId, Diagnostics& diagnostics,
                                      const SymbolHints& symbols = {}) {
  io::FxParseOptions options;
  options.file = graphId;
  options.symbols = [&symbols](std::string_view symbol) -> std::optional<int64_t> {
    const auto it = symbols.find(symbol);
    return it == symbols.end() ? std::nullopt : std::optional<int64_t>(it->second);
  };
  std::shared_ptr<ir::Graph> graph = io::parseFxText(fxText, options, diagnostics);
  if (!graph) throw Error(ErrorCode::BadInput, graphId + ": the graph text holds no readable `def forward`");
  return graph;
}

std::vector<std::string> namesOf(const ir::Graph& graph, const std::vector<ir::NodeId>& ids) {
  std::vector<std::string> names;
  names.reserve(ids.size());
  for (ir::NodeId id : ids) names.emplace_back(graph.name(id));
  return names;
}

std::vector<std::string> warningsOf(const Diagnostics& diagnostics) {
  std::vector<std::string> lines;
  for (const Diagnostic& d : diagnostics.items()) {
    if (d.severity != Severity::Note) lines.push_back(d.where.str() + ": " + d.message);
  }
  return lines;
}

std::map<std::string, double> secondsByName(const ir::Graph& graph, const std::vector<double>& seconds) {
  std::map<std::string, double> byName;
  for (ir::NodeId id = 0; id < graph.size(); ++id) byName.emplace(graph.name(id), seconds[id]);
  return byName;
}

JointPlan fromBundle(const plan::PlanBundle& bundle, const ir::Graph& graph, const plan::PlanState& state,
                     Diagnostics& diagnostics) {
  if (!state.recompute) {
    throw Error(ErrorCode::Usage, bundle.graphId + ": the plan makes no recompute decision (pipeline '" +
                                      bundle.pipeline + "'), so it names no saved set for the backward");
  }
  JointPlan out;
  out.saved = namesOf(graph, state.recompute->saved);
  out.recomputed = namesOf(graph, state.recompute->recomputed);
  out.policy = state.recompute->policy;
  out.fingerprint = bundle.fingerprint;
  out.bundleJson = plan::planToJson(bundle);
  if (state.activationOffload) {
    out.offloadLinkShare = state.activationOffload->linkShare;
    for (const plan::OffloadedActivation& t : state.activationOffload->tensors) {
      out.offloaded.emplace_back(std::string(graph.name(t.node)), t.bytes);
    }
  }
  out.peakBytes = bundle.timeline.peakBytes;
  for (const analysis::MemoryCategory held : {analysis::MemoryCategory::Weights, analysis::MemoryCategory::Inputs}) {
    const std::vector<uint64_t>& series = bundle.timeline.bytes[static_cast<size_t>(held)];
    if (!series.empty()) out.beforeBytes += series.front();
  }
  out.stepSeconds = bundle.estimates.empty() ? 0.0 : bundle.estimates.front().second;
  out.warnings = warningsOf(diagnostics);
  return out;
}

// Plans a joint graph with a pipeline on a hardware profile.
// `weights` names the placeholders whose storage outlives the step (parameters and buffers: torch's
// static-lifetime inputs); AOT's text calls every primal a plain input.
JointPlan planJoint(const std::string& fxText, const std::string& graphId, const std::string& pipeline,
                    const std::string& hardware, bool inductorJointPasses, const SymbolHints& symbols,
                    const std::vector<std::string>& weights) {
  Diagnostics diagnostics;
  std::shared_ptr<ir::Graph> graph = parseGraph(fxText, graphId, diagnostics, symbols);
  analysis::GraphInputs inputs = analysis::inferGraphInputs(*graph, nullptr);
  for (const std::string& name : weights) {
    const ir::NodeId id = graph->find(name);
    if (id == ir::kNoNode || graph->node(id).kind != ir::NodeKind::Placeholder) {
      throw Error(ErrorCode::BadInput, graphId + ": no input named " + name + " among the graph's placeholders");
    }
    if (inputs.role[id] != ir::Role::Tangent) inputs.role[id] = ir::Role::Parameter;
  }
  const passes::PlanTarget target(graph, graphId, std::move(inputs), hw::resolveHwProfile(hardware),
                                  ir::OpRegistry::global(), inductorJointPasses);
  if (!target.joint().joint) {
    throw Error(ErrorCode::BadInput, graphId + ": not a joint forward/backward graph (no tangents)");
  }
  const passes::PassContext context = target.context();
  const passes::PipelineRun run = passes::runPipeline(context, passes::parsePipeline(pipeline));
  const plan::PlanBundle bundle = passes::buildPlanBundle(context, run, "<runtime>", graphId);
  JointPlan out = fromBundle(bundle, *graph, bundle.state, diagnostics);
  if (!out.offloaded.empty()) out.nodeSeconds = secondsByName(*graph, target.nodeSeconds());
  for (const passes::PipelineRecord& record : run.history) {
    if (const std::optional<double> met = record.result.stat(passes::RecomputePass::kBudgetMet)) out.budgetMet = *met != 0;
    for (const Message& line : record.result.diff) {
      if (std::string text = toEnglish(line); text.starts_with("!")) out.warnings.push_back(std::move(text));
    }
  }
  return out;
}

// Applies a plan bundle made for this graph: the fingerprint and every name must match.
JointPlan bindPlan(const std::string& fxText, const std::string& graphId, const std::string& planPath,
                   const SymbolHints& symbols) {
  Diagnostics diagnostics;
  std::shared_ptr<ir::Graph> graph = parseGraph(fxText, graphId, diagnostics, symbols);
  const plan::PlanBundle bundle = plan::readPlan(planPath);
  const plan::BoundPlan bound = plan::bind(bundle, *graph, planPath);
  JointPlan out = fromBundle(bundle, *graph, bound.state, diagnostics);
  if (!out.offloaded.empty()) {
    out.nodeSeconds = secondsByName(*graph, passes::PlanTarget(graph, graphId, bundle.hardware).nodeSeconds());
  }
  return out;
}

// passes::placeCopiesIn on executions of the given seconds, from the first: each copy's boundary, or
// None where it cannot end by its deadline.
std::vector<std::optional<uint32_t>> placeCopiesIn(const std::vector<double>& seconds, const std::vector<uint32_t>& deadlines,
                                                   const std::vector<uint64_t>& bytes, const std::string& hardware,
                                                   double linkShare) {
  if (deadlines.size() != bytes.size()) throw Error(ErrorCode::Usage, "place_copies_in: one size per deadline expected");
  std::vector<double> start(seconds.size() + 1, 0.0);
  for (size_t i = 0; i < seconds.size(); ++i) start[i + 1] = start[i] + seconds[i];
  std::vector<std::optional<uint32_t>> boundaries;
  for (const std::optional<passes::CopyIn>& copy :
       passes::placeCopiesIn(start, 0, deadlines, bytes, hw::resolveHwProfile(hardware).h2dBandwidth * linkShare)) {
    boundaries.push_back(copy ? std::optional<uint32_t>(copy->boundary) : std::nullopt);
  }
  return boundaries;
}

// passes::planOffload on the runtime's layer units: segments in execution order (their seconds and
// the units each reads), each unit's bytes, the link measured or from a profile. Returns the
// decision as a dict: resident per unit, prefetches in copy order, the simulated step.
nb::dict planWeightOffload(const std::vector<double>& segmentSeconds, const std::vector<std::vector<int32_t>>& segmentUnits,
                           const std::vector<uint64_t>& unitBytes, const std::vector<std::string>& unitNames,
                           double h2dBandwidth, double launchLatency, uint64_t budgetBytes, bool repeated,
                           const std::string& policy, std::optional<double> residentFraction) {
  if (segmentSeconds.size() != segmentUnits.size())
    throw Error(ErrorCode::Usage, "plan_weight_offload: one list of units per segment expected");
  passes::OffloadProblem problem;
  for (size_t i = 0; i < segmentSeconds.size(); ++i) {  // planOffload checks the units each segment reads
    const std::vector<int32_t>& units = segmentUnits[i];
    const bool named = units.size() == 1 && units[0] >= 0 && static_cast<size_t>(units[0]) < unitNames.size();
    problem.segments.push_back({named ? unitNames[units[0]] : "segment " + std::to_string(i), segmentSeconds[i], units});
  }
  problem.unitBytes = unitBytes;
  problem.unitNames = unitNames;
  problem.h2dBandwidth = h2dBandwidth;
  problem.launchLatency = launchLatency;
  problem.budgetBytes = budgetBytes;
  problem.repeated = repeated;
  passes::OffloadOptions options;
  options.residentFraction = residentFraction;
  plan::OffloadDecision decision;
  passes::OffloadTimeline timeline;
  {
    nb::gil_scoped_release release;
    decision = passes::planOffload(problem, policy, options);
    timeline = passes::simulateOffload(problem, decision);
  }
  nb::list segments;  // each segment as the reported (last) simulated step runs it
  for (const analysis::TaskIndex task : passes::lastStepComputeTasks(timeline, problem.segments.size())) {
    const analysis::TaskRecord& record = timeline.sim.tasks[static_cast<size_t>(task)];
    nb::dict span;
    span["start"] = record.start - timeline.stepStart;
    span["end"] = record.end - timeline.stepStart;
    segments.append(span);
  }
  nb::list prefetches;
  for (const plan::Prefetch& p : decision.prefetches) {
    nb::dict entry;
    entry["unit"] = p.unit;
    entry["trigger"] = p.trigger;
    entry["deadline"] = p.deadline;
    entry["start"] = p.start;
    entry["end"] = p.end;
    prefetches.append(entry);
  }
  nb::dict out;
  out["policy"] = decision.policy;
  out["resident"] = decision.resident;
  out["prefetches"] = prefetches;
  out["segments"] = segments;
  out["step_seconds"] = decision.stepSeconds;
  out["compute_seconds"] = decision.computeSeconds;
  out["bubble_seconds"] = decision.bubbleSeconds;
  out["floor_seconds"] = decision.floorSeconds;
  out["peak_weight_bytes"] = decision.peakWeightBytes;
  out["streamed_bytes"] = decision.streamedBytes;
  out["budget_bytes"] = decision.budgetBytes;
  return out;
}

void setOpFlags(const std::string& target, bool computeSensitive, bool subgraphBoundary, bool fusible) {
  ir::OpFlags flags;
  flags.computeSensitive = computeSensitive;
  flags.subgraphBoundary = subgraphBoundary;
  flags.fusible = fusible;
  ir::OpRegistry::global().setFlags(target, flags);
}

}  // namespace

NB_MODULE(_native, m) {
  m.doc() = "Lathe's planner (core + passes), in process";
  nb::exception<Error>(m, "LatheError", PyExc_ValueError);
  // Plans held by Python objects alive at interpreter exit are not leaks worth a report.
  nb::set_leak_warnings(false);

  nb::class_<JointPlan>(m, "JointPlan")
      .def_ro("saved", &JointPlan::saved)
      .def_ro("recomputed", &JointPlan::recomputed)
      .def_ro("offloaded", &JointPlan::offloaded)
      .def_ro("node_seconds", &JointPlan::nodeSeconds)
      .def_ro("offload_link_share", &JointPlan::offloadLinkShare)
      .def_ro("policy", &JointPlan::policy)
      .def_ro("fingerprint", &JointPlan::fingerprint)
      .def_ro("bundle_json", &JointPlan::bundleJson)
      .def_ro("peak_bytes", &JointPlan::peakBytes)
      .def_ro("before_bytes", &JointPlan::beforeBytes)
      .def_ro("step_seconds", &JointPlan::stepSeconds)
      .def_ro("budget_met", &JointPlan::budgetMet)
      .def_ro("warnings", &JointPlan::warnings);

  m.def("plan_joint", &planJoint, nb::arg("fx_text"), nb::arg("graph_id"), nb::arg("pipeline"), nb::arg("hardware"),
        nb::arg("inductor_joint_passes") = true, nb::arg("symbols") = SymbolHints{},
        nb::arg("weights") = std::vector<std::string>{}, nb::call_guard<nb::gil_scoped_release>(),
        "Plans a joint graph (FX readable text) with a pipeline on a hardware profile; `weights` names the "
        "placeholders that live for the whole step (parameters and buffers).");
  m.def("bind_plan", &bindPlan, nb::arg("fx_text"), nb::arg("graph_id"), nb::arg("plan_path"),
        nb::arg("symbols") = SymbolHints{},
        nb::call_guard<nb::gil_scoped_release>(),
        "Applies a plan bundle to the graph it was made for; refuses another graph's plan.");
  m.def("place_copies_in", &placeCopiesIn, nb::arg("seconds"), nb::arg("deadlines"), nb::arg("bytes"), nb::arg("hardware"),
        nb::arg("link_share"),
        "Copies in on one serial host-to-device stream, each as late as it can end by its deadline.");
  m.def("plan_weight_offload", &planWeightOffload, nb::arg("segment_seconds"), nb::arg("segment_units"),
        nb::arg("unit_bytes"), nb::arg("unit_names"), nb::arg("h2d_bandwidth"), nb::arg("launch_latency"),
        nb::arg("budget_bytes"), nb::arg("repeated"), nb::arg("policy"), nb::arg("resident_fraction") = nb::none(),
        "Weight offload (passes::planOffload): which units stay resident and when the others are copied in, "
        "with each segment's start and end in the simulated step.");
  m.def("hardware_link", [](const std::string& id) {
    const hw::HwProfile profile = hw::resolveHwProfile(id);
    return nb::make_tuple(profile.h2dBandwidth, profile.launchOverhead);
  }, nb::arg("hardware"), "(host-to-device bytes/s, launch seconds) of a hardware profile.");
  m.def("set_op_flags", &setOpFlags, nb::arg("target"), nb::arg("compute_sensitive") = false,
        nb::arg("subgraph_boundary") = false, nb::arg("fusible") = false,
        "Sets an op's planner flags, as `lathe plan --op-flag` does.");
  // The one reader of lathe.profile/1: the runtime checks what it wrote through it.
  m.def("check_profile", [](const std::string& path) {
    const plan::MeasuredProfile profile = plan::readProfile(path);
    std::optional<std::tuple<size_t, size_t>> offload;
    if (profile.weightOffload) offload = {profile.weightOffload->measured.segments.size(), profile.weightOffload->measured.h2d.size()};
    return nb::make_tuple(profile.steps.size(), profile.graphs.size(), profile.medianStepSeconds(),
                          profile.maxPeakBytes(), offload);
  }, nb::arg("path"),
        "Reads a lathe.profile/1 file: (steps, graphs, median step seconds, max peak bytes or None, (measured "
        "segments, measured weight copies) of its weight_offload run or None).");
  m.def("hardware_profiles", &hw::builtInHwIds, "Ids of the built-in hardware profiles.");
  m.def("hardware_memory", [](const std::string& id) { return hw::resolveHwProfile(id).hbmCapacity; }, nb::arg("hardware"),
        "Device memory of a hardware profile, in bytes.");
  m.attr("default_hardware") = std::string(passes::kDefaultHardware);
  std::vector<std::string> offloadPolicies(std::begin(passes::kOffloadPolicies), std::end(passes::kOffloadPolicies));
  m.attr("offload_policies") = nb::cast(offloadPolicies);
}
