// `lathe measure`: runs a capture's graph (or a plan's step) node by node through libtorch on the CPU
// or a GPU, checks a plan's gradients against the unplanned joint graph's, and sets the measured
// times and memory beside the planner's estimate; or, with `--trace`, reads a torch.profiler trace of
// the compiled step and puts its kernels' time on the graph's nodes. `-o` writes either as
// lathe.profile/1 for `--profile`.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "ir/op_info.h"
#include "output.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "hw/hw_profile.h"
#include "passes/calibration.h"
#include "passes/plan_target.h"
#include "passes/trace_profile.h"
#include "io/trace/chrome_trace.h"
#include "plan/plan_bind.h"
#include "plan/plan_bundle.h"
#include "plan/profile.h"
#include "util/diagnostics.h"
#include "util/format.h"
#ifdef LATHE_HAS_RUNTIME
#include "runtime/executor/graph_executor.h"
#endif

namespace lathe::cli {
namespace {

struct MeasureOptions {
  std::string path, graphId, device = "cpu", hw{passes::kDefaultHardware}, output, capture, trace;
  int repeats = 3, warmup = 1;
  uint64_t seed = 0;
  bool json = false;
};

MeasureOptions& measureOptions() {
  static MeasureOptions o;
  return o;
}


// What is measured: the graph with a plan (a bundle's, or the default pipeline's on a capture).
struct Subject {
  std::optional<io::Artifact> artifact;
  std::optional<passes::PlanTarget> target;
  plan::PlanBundle bundle;
  std::string planPath;  // empty: planned here with the default pipeline
};

Subject subjectOf(const MeasureOptions& o, const GlobalOptions& global) {
  Subject s;
  if (isPlanPath(o.path)) {
    s.bundle = plan::readPlan(o.path);
    s.planPath = o.path;
    s.artifact.emplace(load(o.capture.empty() ? plan::captureOf(s.bundle, o.path) : o.capture, global));
    (void)plan::bind(s.bundle, *s.artifact, o.path);  // refuses a plan of another graph
    s.target.emplace(*s.artifact, s.bundle.graphId, s.bundle.hardware);
    return s;
  }
  s.artifact.emplace(load(o.path, global));
  const std::string id = o.graphId.empty() ? "" : selectGraph(s.artifact->graphs(), o.graphId).id;
  s.target.emplace(*s.artifact, id, hw::resolveHwProfile(o.hw));
  const passes::PassContext context = s.target->context(progressFor(global));
  const passes::PipelineRun run = passes::runPipeline(context, passes::parsePipeline(s.target->defaultPipeline()));
  s.bundle = passes::buildPlanBundle(context, run, o.path, s.target->graphId());
  return s;
}

// The most the plan's timeline holds beyond its weights and inputs: what the executor's live count
// and the allocator's peak above "before" measure.
uint64_t stepOwnPeak(const plan::PlanTimeline& timeline) {
  uint64_t peak = 0;
  for (size_t i = 0; i < timeline.node.size(); ++i) {
    uint64_t own = 0;
    for (size_t c = 0; c < plan::kTimelineCategories; ++c) {
      const std::string_view name = plan::kTimelineCategoryNames[c];
      if (name != "weights" && name != "inputs") own += timeline.bytes[c][i];
    }
    peak = std::max(peak, own);
  }
  return peak;
}

std::string ratio(double measured, double estimated) {
  return estimated > 0 ? fmt::format("{:.2f}", measured / estimated) : "-";
}

std::optional<double> estimateOf(const plan::PlanBundle& bundle, std::string_view name) {
  for (const auto& [key, value] : bundle.estimates) {
    if (key == name) return value;
  }
  return std::nullopt;
}

// `--trace`: a torch.profiler trace of the compiled step, its kernels put on the capture's nodes.
int runTraceMeasure(const MeasureOptions& o, const GlobalOptions& global) {
  Subject subject = subjectOf(o, global);
  const passes::PlanTarget& target = *subject.target;
  if (!subject.artifact->trace) throw Error(ErrorCode::Usage, "--trace needs the TORCH_TRACE capture of the same run");
  const io::ChromeTrace trace = io::readChromeTrace(o.trace);
  const passes::TraceProfile mapped = passes::profileFromTrace(target, *subject.artifact->trace, trace);

  plan::MeasuredProfile profile;
  profile.device = trace.deviceName;
  profile.deviceMemoryBytes = trace.deviceMemoryBytes;
  plan::ProfiledGraph entry;
  entry.graphId = target.graphId();
  entry.fingerprint = subject.bundle.fingerprint;
  entry.predictedPeakBytes = subject.bundle.timeline.peakBytes;
  entry.predictedStepSeconds = estimateOf(subject.bundle, "step_seconds").value_or(0);
  entry.measured = mapped.measured;
  profile.graphs.push_back(std::move(entry));
  if (!o.output.empty()) plan::writeProfile(o.output, profile);
  // The model's error per op category, as `--profile` reports it.
  const std::vector<passes::CategoryTimes> byCategory = passes::calibrate(target, profile, o.trace).byCategory;

  if (o.json) {
    nlohmann::json categories = nlohmann::json::object();
    for (const passes::CategoryTimes& row : byCategory) {
      categories[std::string(ir::categoryName(row.category))] = {{"measured_seconds", row.measured},
                                                                 {"estimated_seconds", row.estimated}};
    }
    nlohmann::json estimates = nlohmann::json::object();
    for (const auto& [key, value] : subject.bundle.estimates) estimates[key] = value;
    std::cout << nlohmann::json{{"graph", target.graphId()},
                                {"device", mapped.device},
                                {"source", mapped.measured.source},
                                {"steps", mapped.steps},
                                {"codes", mapped.codes},
                                {"calls", mapped.calls},
                                {"other_calls", mapped.otherCalls},
                                {"launches", mapped.launches},
                                {"launches_timed", mapped.launchesTimed},
                                {"nodes_timed", mapped.nodesTimed},
                                {"graph_seconds", mapped.graphSeconds},
                                {"unattributed_seconds", mapped.unattributedSeconds},
                                {"other_seconds", mapped.otherSeconds},
                                {"plan_estimates", estimates},
                                {"categories", categories},
                                {"notes", mapped.notes}}
                     .dump(2)
              << '\n';
    return 0;
  }

  std::cout << fmt::format("{}: {} step{} of graph {} on {} ({} calls of its {} compiled codes; {} calls of other graphs)\n",
                           o.trace, mapped.steps, mapped.steps == 1 ? "" : "s", target.graphId(),
                           mapped.device.empty() ? "an unnamed device" : mapped.device, mapped.calls, mapped.codes,
                           mapped.otherCalls);
  std::cout << fmt::format("  {} of {} kernel launches timed; {} of the graph's nodes given time\n", mapped.launchesTimed,
                           mapped.launches, mapped.nodesTimed);
  std::cout << fmt::format("  device time per step: {} in the graph's kernels ({} of it on no node), {} outside them\n",
                           formatSeconds(mapped.graphSeconds), formatSeconds(mapped.unattributedSeconds),
                           formatSeconds(mapped.otherSeconds));
  for (const std::string& note : mapped.notes) std::cout << "  note: " << note << '\n';
  std::cout << fmt::format("\ndevice time per op category, measured beside estimated on {}\n", target.hardware().name);
  Table table({"category", "measured", "estimated", "measured/estimated"});
  for (const passes::CategoryTimes& row : byCategory) {
    table.add({std::string(ir::categoryName(row.category)), formatSeconds(row.measured), formatSeconds(row.estimated),
               ratio(row.measured, row.estimated)});
  }
  table.print(std::cout, "  ");
  const auto seconds = [&](std::string_view name) {
    const std::optional<double> value = estimateOf(subject.bundle, name);
    return value ? formatSeconds(*value) : std::string("-");
  };
  std::cout << fmt::format("\nthe plan estimates {} of GPU time and a step of {} ({:.0f} kernel launches)\n",
                           seconds("compute_seconds"), seconds("step_seconds"),
                           estimateOf(subject.bundle, "kernel_launches").value_or(0));
  if (!o.output.empty()) std::cout << "profile written to " << o.output << " (use it with --profile)\n";
  return 0;
}

#ifdef LATHE_HAS_RUNTIME

int runExecutorMeasure(const GlobalOptions& global) {
  const MeasureOptions& o = measureOptions();
  Subject subject = subjectOf(o, global);
  const passes::PlanTarget& target = *subject.target;
  const ir::Graph& graph = target.graph();
  const plan::BoundPlan bound = plan::bind(subject.bundle, graph, subject.planPath.empty() ? o.path : subject.planPath);

  runtime::ExecuteOptions options;
  options.device = o.device;
  options.repeats = o.repeats;
  options.warmup = o.warmup;
  options.seed = o.seed;
  options.progress = progressFor(global);

  const analysis::JointInfo& joint = target.joint();
  std::optional<runtime::PlanCheck> check;
  runtime::GraphRun run;
  if (joint.joint && bound.state.recompute) {
    const analysis::StepPartition partition = analysis::partitionJoint(graph, joint, bound.state.recompute->saved);
    check = runtime::checkPlan(graph, joint, partition, options);
    run = check->planned;
  } else {
    run = runtime::measureGraph(graph, options);
  }

  // Per op category: measured beside the planner's estimate on the plan's hardware.
  const std::vector<double>& estimated = target.nodeSeconds();
  struct Row {
    size_t nodes = 0;
    double measured = 0, estimated = 0;
  };
  std::map<std::string, Row> byCategory;
  double estimatedTotal = 0;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (!graph.node(id).isCall()) continue;
    Row& row = byCategory[std::string(ir::categoryName(target.ops().lookup(graph.target(id)).category))];
    ++row.nodes;
    row.measured += run.nodeSeconds[id];
    row.estimated += estimated[id];
    estimatedTotal += estimated[id];
  }
  const uint64_t plannedPeak = subject.bundle.timeline.peakBytes;
  const uint64_t plannedOwnPeak = stepOwnPeak(subject.bundle.timeline);
  const double plannedStep = subject.bundle.estimates.empty() ? estimatedTotal : subject.bundle.estimates[0].second;
  const std::string source = "lathe_runtime " + std::string(o.device.starts_with("cuda") ? "cuda" : "cpu");

  if (!o.output.empty()) {
    plan::MeasuredProfile profile;
    profile.device = run.deviceName;
    profile.deviceMemoryBytes = run.deviceMemoryBytes;
    profile.torchVersion = run.torchVersion;
    plan::ProfiledGraph entry;
    entry.graphId = target.graphId();
    entry.fingerprint = subject.bundle.fingerprint;
    if (!subject.planPath.empty()) {
      entry.plan = std::filesystem::absolute(subject.planPath)
                       .lexically_relative(std::filesystem::absolute(o.output).parent_path())
                       .string();
    }
    entry.predictedPeakBytes = plannedPeak;
    entry.predictedStepSeconds = plannedStep;
    plan::MeasuredNodes nodes{source, run.livePeakBytes, {}};
    for (ir::NodeId id = 0; id < graph.size(); ++id) {
      if (graph.node(id).isCall()) nodes.nodes.push_back({std::string(graph.name(id)), run.nodeSeconds[id], run.nodeOutputBytes[id]});
    }
    entry.measured = std::move(nodes);
    profile.graphs.push_back(std::move(entry));
    profile.steps.push_back({run.stepSeconds, run.allocatorPeakBytes, run.allocatorBeforeBytes, {}});
    plan::writeProfile(o.output, profile);
  }

  if (o.json) {
    nlohmann::json categories = nlohmann::json::object();
    for (const auto& [name, row] : byCategory) {
      categories[name] = {{"nodes", row.nodes}, {"measured_seconds", row.measured}, {"estimated_seconds", row.estimated}};
    }
    nlohmann::json substitutions = nlohmann::json::array();
    for (const runtime::Substitution& s : run.substitutions) {
      substitutions.push_back({{"op", s.op}, {"ran_as", s.ranAs}, {"nodes", s.nodes}});
    }
    nlohmann::json out = {{"graph", target.graphId()},
                          {"device", run.deviceName},
                          {"torch", run.torchVersion},
                          {"runs", run.runs},
                          {"step_seconds", run.stepSeconds},
                          {"estimated_step_seconds", plannedStep},
                          {"live_peak_bytes", run.livePeakBytes},
                          {"allocator_peak_bytes", run.allocatorPeakBytes ? nlohmann::json(*run.allocatorPeakBytes) : nlohmann::json()},
                          {"planned_peak_bytes", plannedPeak},
                          {"planned_step_own_peak_bytes", plannedOwnPeak},
                          {"categories", categories},
                          {"substitutions", substitutions}};
    if (check) {
      nlohmann::json differences = nlohmann::json::array();
      for (const runtime::GradientDifference& d : check->differences) {
        differences.push_back({{"gradient", d.gradient},
                               {"max_abs_error", d.maxAbsError},
                               {"run_to_run_error", d.runToRunError},
                               {"reference_finite", d.referenceFinite}});
      }
      out["gradients"] = {{"compared", check->gradientsCompared},
                          {"not_finite_in_reference", check->nonFiniteReferences},
                          {"differences", differences},
                          {"bitwise_equal", check->gradientsCompared - check->differences.size()},
                          {"all_close", check->allClose},
                          {"max_abs_error", check->maxAbsError}};
    }
    std::cout << out.dump(2) << '\n';
    return check && !check->allClose ? static_cast<int>(ErrorCode::BadInput) : 0;
  }

  std::cout << fmt::format("{}  graph {} ({} nodes)  on {}  torch {}  ({} runs after {} warm-up)\n",
                           subject.planPath.empty() ? o.path : subject.planPath, target.graphId(), graph.size(),
                           run.deviceName, run.torchVersion, run.runs, o.warmup);
  for (const runtime::Substitution& s : run.substitutions) {
    std::cout << fmt::format("  ran {} as {} ({} nodes)\n", s.op, s.ranAs, s.nodes);
  }
  if (check) {
    const size_t equal = check->gradientsCompared - check->differences.size();
    std::cout << fmt::format("\nplan {}: {} of {} gradients bitwise equal to the unplanned joint graph's", subject.bundle.pipeline,
                             equal, check->gradientsCompared);
    if (!check->differences.empty()) {
      std::cout << (check->allClose
                        ? fmt::format(", the others equal up to rounding in their dtype or within the unplanned graph's own run-to-run spread "
                                      "(max |difference| {:.3g})",
                                      check->maxAbsError)
                        : fmt::format(": the plan CHANGES gradients (max |difference| {:.3g})", check->maxAbsError));
    }
    std::cout << '\n';
    if (check->nonFiniteReferences > 0) {
      std::cout << fmt::format("  {} of the unplanned gradients hold NaN or inf (the drawn inputs overflow them)\n",
                               check->nonFiniteReferences);
    }
    for (size_t i = 0; i < check->differences.size() && i < 5; ++i) {
      const runtime::GradientDifference& d = check->differences[i];
      std::cout << fmt::format("  {}: max |difference| {:.3g} (the unplanned graph's own runs: {:.3g})\n", d.gradient,
                               d.maxAbsError, d.runToRunError);
    }
  }
  const bool gpu = o.device.starts_with("cuda");
  std::cout << fmt::format("\n{} per op category, measured{}\n", gpu ? "time" : "CPU time",
                           gpu ? " beside estimated on " + target.hardware().name : "");
  Table table(gpu ? std::vector<std::string>{"category", "nodes", "measured", "estimated", "measured/estimated"}
                  : std::vector<std::string>{"category", "nodes", "measured"});
  for (const auto& [name, row] : byCategory) {
    if (gpu) {
      table.add({name, std::to_string(row.nodes), formatSeconds(row.measured), formatSeconds(row.estimated),
                 ratio(row.measured, row.estimated)});
    } else {
      table.add({name, std::to_string(row.nodes), formatSeconds(row.measured)});
    }
  }
  table.print(std::cout, "  ");
  std::cout << fmt::format("\nstep {} node by node (eager: no fusion){}\n", formatSeconds(run.stepSeconds),
                           gpu ? fmt::format("; the plan estimates {} compiled on {}", formatSeconds(plannedStep), target.hardware().name)
                               : "");
  std::cout << fmt::format("memory: the step's values held at most {} at once", formatBytes(run.livePeakBytes));
  if (run.allocatorPeakBytes) {
    std::cout << fmt::format("; the allocator's peak {} above the {} before it", formatBytes(*run.allocatorPeakBytes),
                             formatBytes(run.allocatorBeforeBytes.value_or(0)));
  }
  std::cout << fmt::format("; the plan's {} beyond weights and inputs ({} in all; compiled, fused values are never allocated)\n",
                           formatBytes(plannedOwnPeak), formatBytes(plannedPeak));
  if (!o.output.empty()) std::cout << "profile written to " << o.output << " (use it with --profile)\n";
  return check && !check->allClose ? static_cast<int>(ErrorCode::BadInput) : 0;
}

#endif

int runMeasure(const GlobalOptions& global) {
  const MeasureOptions& o = measureOptions();
  if (!o.trace.empty()) return runTraceMeasure(o, global);
#ifdef LATHE_HAS_RUNTIME
  return runExecutorMeasure(global);
#else
  throw Error(ErrorCode::Usage,
              "this lathe was built without lathe_runtime (libtorch): build it where the Python interpreter has torch "
              "(`make` does) to run graphs, or give --trace with a torch.profiler trace of the compiled step");
#endif
}

}  // namespace

void registerMeasureCommand(CLI::App& app) {
  MeasureOptions& o = measureOptions();
  auto* cmd = app.add_subcommand("measure",
                                 "Run a capture's graph or a plan's step node by node through libtorch (measured time and "
                                 "memory beside the estimate, gradients checked), or put a torch.profiler trace of the "
                                 "compiled step on the graph's nodes (--trace)");
  cmd->add_option("path", o.path, "TORCH_TRACE log, .pt2, or a plan bundle (.json) written by `lathe plan -o`")->required();
  cmd->add_option("--graph", o.graphId, "Graph id as listed by `lathe graphs`, or its index (captures)");
  cmd->add_option("--device", o.device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--hw", o.hw, "Hardware profile the estimate is made for (captures)")->capture_default_str();
  cmd->add_option("--repeats", o.repeats, "Timed runs (medians)")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--warmup", o.warmup, "Runs before timing")->check(CLI::Range(0, 1000))->capture_default_str();
  cmd->add_option("--seed", o.seed, "Seed of the inputs and random ops")->capture_default_str();
  cmd->add_option("--trace", o.trace,
                  "A torch.profiler trace (export_chrome_trace, .json or .json.gz) of the compiled step, recorded in "
                  "the run that wrote the capture: its kernels' device time on the graph's nodes, nothing executed")
      ->check(CLI::ExistingFile);
  cmd->add_option("--capture", o.capture, "The capture a plan was made from, where it has moved since");
  addOutputOption(cmd, o.output, "Write the measurements as lathe.profile/1 (for --profile)");
  cmd->add_flag("--json", o.json, "Print JSON");
}

std::optional<int> runMeasureCommand(CLI::App& app, const GlobalOptions& global) {
  if (app.got_subcommand("measure")) return runMeasure(global);
  return std::nullopt;
}

}  // namespace lathe::cli
