// `lathe plan`, `lathe timeline`, `lathe pareto`, `lathe profile`, `lathe passes`: run a pass
// pipeline on one graph, print or write the plan bundle, read a plan's memory timeline back, sweep
// the recompute frontier, set a run's measured profile beside what its plans predicted, list the
// passes from their declarations.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <iostream>
#include <unordered_map>
#include <nlohmann/json.hpp>

#include "analysis/cost_model.h"
#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "commands.h"
#include "hw/hw_profile.h"
#include "output.h"
#include "passes/calibration.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "passes/plan_target.h"
#include "passes/recompute.h"
#include "plan/plan_bundle.h"
#include "plan/profile.h"
#include "util/diagnostics.h"

namespace lathe::cli {

namespace {

using nlohmann::json;

struct PlanOptions {
  std::string path, graphId, hw{passes::kDefaultHardware}, pipeline, output, opsFile, profile;
  std::vector<std::string> opFlags;
  bool json = false;
  bool strict = false;  // plan: a peak over the target's memory fails (exit 4)
};
struct TimelineOptions {
  std::string path, profile;
  bool csv = false, json = false;
  size_t points = 24;
};

PlanOptions& planOptions() {
  static PlanOptions o;
  return o;
}
PlanOptions& paretoOptions() {
  static PlanOptions o;
  return o;
}
struct ProfileOptions {
  std::string path;
  bool json = false;
};
ProfileOptions& profileOptions() {
  static ProfileOptions o;
  return o;
}
bool& passesJson() {
  static bool json = false;
  return json;
}

TimelineOptions& timelineOptions() {
  static TimelineOptions o;
  return o;
}

// --op-flag athena.flash_attn=compute_sensitive,subgraph_boundary
void applyOpFlags(const PlanOptions& o) {
  ir::OpRegistry& registry = ir::OpRegistry::global();
  if (!o.opsFile.empty()) {
    Diagnostics diagnostics;
    registry.loadFlagsFile(o.opsFile, diagnostics);
    for (const auto& d : diagnostics.items()) std::cerr << fmt::format("lathe: {}: {}\n", d.where.str(), d.message);
  }
  for (const std::string& spec : o.opFlags) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) throw Error(ErrorCode::Usage, "--op-flag wants TARGET=FLAG[,FLAG], got '" + spec + "'");
    ir::OpFlags flags;
    std::string_view rest(spec);
    rest.remove_prefix(eq + 1);
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view flag = rest.substr(0, comma);
      if (flag == "compute_sensitive") {
        flags.computeSensitive = true;
      } else if (flag == "subgraph_boundary") {
        flags.subgraphBoundary = true;
      } else if (flag == "fusible") {
        flags.fusible = true;
      } else {
        throw Error(ErrorCode::Usage, "--op-flag: unknown flag '" + std::string(flag) +
                                          "' (compute_sensitive, subgraph_boundary, fusible)");
      }
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    registry.setFlags(spec.substr(0, eq), flags);
  }
}

// The graph to plan (the one named, else passes::defaultPlanGraph) on the target named; priced with
// the profile's measured node times when --profile names one (its report in `calibration`).
passes::PlanTarget prepare(const PlanOptions& o, const GlobalOptions& global,
                           std::optional<passes::Calibration>* calibration = nullptr) {
  applyOpFlags(o);
  const io::Artifact artifact = load(o.path, global);
  hw::HwProfile hardware = hw::resolveHwProfile(o.hw);
  passes::PlanTarget target = o.graphId.empty()
                                  ? passes::PlanTarget(artifact, "", std::move(hardware))
                                  : passes::PlanTarget(artifact, selectGraph(artifact.graphs(), o.graphId).id, std::move(hardware));
  if (o.profile.empty()) return target;
  passes::Calibration calibrated = passes::calibrate(target, plan::readProfile(o.profile), o.profile);
  target = calibrated.target;
  if (calibration) *calibration = std::move(calibrated);
  return target;
}

// How far the model was from the measurement, per op category, and what the plan now uses.
void printCalibration(const passes::Calibration& c) {
  std::cout << fmt::format("calibrated: {} nodes priced as {} measured them\n", c.measuredNodes, c.source);
  if (c.device != c.target.hardware().name) {
    std::cout << fmt::format("note: measured on {}, planned for {}: the plan's times are the measured device's\n", c.device,
                             c.target.hardware().name);
  }
  Table table({"op category", "nodes", "estimated", "measured", "error"});
  double estimated = 0, measured = 0;
  for (const passes::CategoryTimes& t : c.byCategory) {
    table.add({std::string(ir::categoryName(t.category)), std::to_string(t.nodes), formatSeconds(t.estimated),
               formatSeconds(t.measured),
               t.measured > 0 ? fmt::format("{:+.0f}%", 100 * (t.estimated - t.measured) / t.measured) : "-"});
    estimated += t.estimated;
    measured += t.measured;
  }
  table.add({"all", std::to_string(c.measuredNodes), formatSeconds(estimated), formatSeconds(measured),
             measured > 0 ? fmt::format("{:+.0f}%", 100 * (estimated - measured) / measured) : "-"});
  table.print(std::cout, "  ");
}

// A CPU capture is priced on a GPU profile: the figures are what it would cost there.
void printCpuCaptureNote(const passes::PlanTarget& target) {
  if (target.capturedOnCpu())
    std::cout << fmt::format("note: captured on the CPU; times and memory are estimated as if it ran on {}\n",
                             target.hardware().name);
}

// A pass asked for a memory budget that no plan it found fits (its budget_met statistic is 0).
bool budgetMissed(const passes::PipelineRun& run) {
  return std::any_of(run.history.begin(), run.history.end(), [](const passes::PipelineRecord& record) {
    return record.result.stat(passes::RecomputePass::kBudgetMet).value_or(1) == 0;
  });
}

int runPlan(const GlobalOptions& global) {
  const PlanOptions& o = planOptions();
  std::optional<passes::Calibration> calibration;
  const passes::PlanTarget target = prepare(o, global, &calibration);
  const ir::Graph& graph = target.graph();
  const std::string pipelineText = o.pipeline.empty() ? std::string(target.defaultPipeline()) : o.pipeline;
  const std::vector<passes::PipelineStep> steps = passes::parsePipeline(pipelineText);
  const passes::PassContext context = target.context(progressFor(global));
  const passes::PipelineRun run = passes::runPipeline(context, steps);
  const plan::PlanBundle bundle = passes::buildPlanBundle(context, run, o.path, target.graphId());
  if (!o.output.empty()) plan::writePlan(o.output, bundle);
  // A plan whose step does not fit the card is written all the same (it says how far off it is), and
  // said to be so; --strict makes that a failure for scripts and CI.
  const uint64_t capacity = target.hardware().hbmCapacity;
  const bool overCapacity = capacity > 0 && bundle.timeline.peakBytes > capacity;
  if (overCapacity) {
    std::cerr << fmt::format("lathe: warning: the planned peak {} exceeds the {} of {}: the step does not fit\n",
                             formatBytes(bundle.timeline.peakBytes), formatBytes(capacity), target.hardware().name);
  }
  const int status = budgetMissed(run) || (o.strict && overCapacity) ? kExitBudgetMissed : 0;
  if (o.json) {
    std::cout << plan::planToJson(bundle);
    return status;
  }
  std::cout << fmt::format("{}  graph {} ({} nodes)  on {}\n", o.path, target.graphId(), graph.size(), target.hardware().name);
  printCpuCaptureNote(target);
  if (calibration) printCalibration(*calibration);
  for (const passes::PipelineRecord& record : run.history) {
    std::cout << fmt::format("\n{}  ({})\n", passes::formatStep(record.step), formatSeconds(record.seconds));
    Table table({"statistic", "value"});
    for (const passes::PassStat& stat : record.result.stats) table.add({std::string(stat.key.name), passes::formatStat(stat)});
    table.print(std::cout, "  ");
    constexpr size_t kShown = 6;
    for (size_t i = 0; i < record.result.diff.size() && i < kShown; ++i) std::cout << "  " << toEnglish(record.result.diff[i]) << '\n';
    if (record.result.diff.size() > kShown) {
      std::cout << fmt::format("  ... {} more lines (the plan file has all)\n", record.result.diff.size() - kShown);
    }
  }
  std::cout << fmt::format("\nestimated step {}, peak memory {} at {} ({})\n", formatSeconds(bundle.estimates[0].second),
                           formatBytes(bundle.timeline.peakBytes),
                           bundle.timeline.node.empty() ? "-" : bundle.timeline.node[bundle.timeline.peakStep],
                           bundle.timeline.phase.empty() ? "-" : (bundle.timeline.phase[bundle.timeline.peakStep] == 'f' ? "forward" : "backward"));
  if (!o.output.empty()) std::cout << "plan written to " << o.output << '\n';
  if (budgetMissed(run)) {
    std::cerr << "lathe: the plan does not meet the memory budget it was asked for (its smallest peak is kept)\n";
  }
  return status;
}

int runTimeline(const GlobalOptions& /*global*/) {
  const TimelineOptions& o = timelineOptions();
  plan::PlanBundle bundle;
  try {
    bundle = plan::readPlan(o.path);
  } catch (const Error& e) {
    // A capture given where a plan belongs: say what to run first, not only that it is not JSON.
    const std::string path = o.path;
    std::error_code ec;  // a symlink loop is the reader's error to report, not a throw here
    const bool capture = std::filesystem::is_directory(path, ec) || path.ends_with(".log") || path.ends_with(".log.gz") ||
                         path.ends_with(".pt2") || path.ends_with(".gz");
    if (e.code() != ErrorCode::BadInput || !capture) throw;
    throw Error(ErrorCode::BadInput, path + ": a capture, not a plan bundle: `lathe timeline` reads the plan that `lathe plan " +
                                         path + " -o plan.json` writes");
  }
  const plan::PlanTimeline& t = bundle.timeline;
  const size_t steps = t.node.size();
  // With a profile of the plan's graph: when each step starts as measured, beside the estimate.
  std::vector<double> measuredStart;
  if (!o.profile.empty()) {
    const plan::MeasuredProfile profile = plan::readProfile(o.profile);
    const plan::ProfiledGraph* entry = profile.measuredGraph(bundle.fingerprint);
    if (entry == nullptr) {
      throw Error(ErrorCode::BadInput, o.profile + ": no measured nodes of the plan's graph " + bundle.graphId);
    }
    std::unordered_map<std::string_view, double> seconds;
    for (const plan::MeasuredNode& n : entry->measured->nodes) seconds[n.node] += n.seconds;
    double clock = 0;
    for (size_t i = 0; i < steps; ++i) {
      measuredStart.push_back(clock);
      if (const auto it = seconds.find(t.node[i]); it != seconds.end()) clock += it->second;
    }
  }
  auto measuredAt = [&](size_t i) { return measuredStart.empty() ? std::string("-") : formatSeconds(measuredStart[i]); };
  auto total = [&](size_t i) {
    uint64_t sum = 0;
    for (size_t c = 0; c < plan::kTimelineCategories; ++c) sum += t.bytes[c][i];
    return sum;
  };
  if (o.csv) {
    std::cout << (measuredStart.empty() ? "step,node,phase,seconds" : "step,node,phase,seconds,measured_seconds");
    for (std::string_view name : plan::kTimelineCategoryNames) std::cout << ',' << name;
    std::cout << ",total\n";
    for (size_t i = 0; i < steps; ++i) {
      std::cout << fmt::format("{},{},{},{:.9g}", i, t.node[i], t.phase[i] == 'f' ? "forward" : "backward", t.seconds[i]);
      if (!measuredStart.empty()) std::cout << fmt::format(",{:.9g}", measuredStart[i]);
      for (size_t c = 0; c < plan::kTimelineCategories; ++c) std::cout << ',' << t.bytes[c][i];
      std::cout << ',' << total(i) << '\n';
    }
    return 0;
  }
  if (o.json) {
    std::cout << plan::timelineSummaryJson(bundle) << '\n';
    return 0;
  }
  std::cout << fmt::format("{}  graph {}  pipeline {}\n", o.path, bundle.graphId, bundle.pipeline);
  std::cout << fmt::format("peak {} at step {} of {} ({})\n", formatBytes(t.peakBytes), t.peakStep, steps,
                           steps == 0 ? "-" : t.node[t.peakStep]);
  Table peak({"category", "at peak"});
  for (size_t c = 0; c < plan::kTimelineCategories; ++c) {
    if (t.atPeak[c] != 0) peak.add({std::string(plan::kTimelineCategoryNames[c]), formatBytes(t.atPeak[c])});
  }
  peak.print(std::cout, "  ");
  if (!t.atPeakValues.empty()) {
    // The values that make the peak, largest first; a dead buffer Inductor keeps for a later
    // allocation of its size says which.
    constexpr size_t kShown = 12;
    std::cout << fmt::format("\nlargest values at the peak ({} of {}, weights left out)\n",
                             std::min(kShown, t.atPeakValues.size()), t.atPeakValues.size());
    Table values({"value", "category", "bytes", "note"});
    for (size_t i = 0; i < t.atPeakValues.size() && i < kShown; ++i) {
      const plan::PeakValue& v = t.atPeakValues[i];
      values.add({v.node, v.category, formatBytes(v.bytes),
                  v.heldFor.empty() ? std::string() : "dead: kept for " + v.heldFor + " by buffer reuse"});
    }
    values.print(std::cout, "  ");
  }
  // Inductor's buffer reuse, as the planner models its check: the closest calls among the buffers
  // of 1% of the peak or more it was asked to hold dead, a hold decided by a few MiB moving the
  // peak by a whole buffer.
  std::vector<const plan::ReuseHold*> large;
  for (const plan::ReuseHold& h : t.reuseHolds) {
    if (h.bytes * 100 >= t.peakBytes) large.push_back(&h);
  }
  constexpr size_t kReuseShown = 12;
  const size_t asked = large.size();
  if (large.size() > kReuseShown) {
    std::stable_sort(large.begin(), large.end(), [&](const plan::ReuseHold* a, const plan::ReuseHold* b) {
      return std::abs(a->margin()) < std::abs(b->margin());
    });
    large.resize(kReuseShown);
    std::sort(large.begin(), large.end(), [](const plan::ReuseHold* a, const plan::ReuseHold* b) { return a->step < b->step; });
  }
  if (!large.empty()) {
    std::cout << fmt::format("\nbuffer reuse, the closest calls ({} of the {} dead buffers of 1% of the peak or more a later "
                             "allocation asked for): held where bytes + the estimate over the span fit under the program's "
                             "estimated peak\n",
                             large.size(), asked);
    Table holds({"step", "dead buffer", "for", "bytes", "over span", "program peak", "margin", "held"});
    for (const plan::ReuseHold* h : large) {
      const int64_t margin = h->margin();
      holds.add({std::to_string(h->step), h->buffer, h->forNode, formatBytes(h->bytes),
                 formatBytes(static_cast<uint64_t>(std::max<int64_t>(h->heldOverSpan, 0))),
                 formatBytes(static_cast<uint64_t>(std::max<int64_t>(h->programPeak, 0))),
                 (margin < 0 ? "-" : "") + formatBytes(static_cast<uint64_t>(margin < 0 ? -margin : margin)),
                 h->held ? "yes" : "no"});
    }
    holds.print(std::cout, "  ");
  }
  std::cout << '\n';
  std::vector<std::string> header{"step", "phase", "time", "node"};
  if (!measuredStart.empty()) header.insert(header.begin() + 3, "measured");
  for (std::string_view name : plan::kTimelineCategoryNames) header.emplace_back(name);
  header.emplace_back("total");
  Table series(header);
  const size_t points = std::min(o.points, steps);
  for (size_t k = 0; k < points; ++k) {
    const size_t i = points == 1 ? t.peakStep : k * (steps - 1) / (points - 1);
    std::vector<std::string> row{std::to_string(i), t.phase[i] == 'f' ? "fwd" : "bwd", formatSeconds(t.seconds[i]), t.node[i]};
    if (!measuredStart.empty()) row.insert(row.begin() + 3, measuredAt(i));
    for (size_t c = 0; c < plan::kTimelineCategories; ++c) row.push_back(formatBytes(t.bytes[c][i]));
    row.push_back(formatBytes(total(i)));
    series.add(std::move(row));
  }
  series.print(std::cout);
  return 0;
}

// A run folder's profile, or a profile file.
int runProfile(const GlobalOptions& /*global*/) {
  const ProfileOptions& o = profileOptions();
  std::filesystem::path path = o.path;
  std::error_code ec;  // a symlink loop is the reader's error to report, not a throw here
  if (std::filesystem::is_directory(path, ec)) path /= "lathe.profile.json";
  const plan::MeasuredProfile profile = plan::readProfile(path);
  const std::optional<uint64_t> peak = profile.maxPeakBytes();
  const uint64_t before = profile.maxBeforeBytes();
  double predictedStep = 0;
  for (const plan::ProfiledGraph& g : profile.graphs) predictedStep += g.predictedStepSeconds;
  if (o.json) {
    json out = {{"profile", path.string()},
                {"device", profile.device},
                {"steps", profile.steps.size()},
                {"median_step_seconds", profile.medianStepSeconds()},
                {"peak_bytes", peak ? json(*peak) : json(nullptr)},
                {"predicted_step_seconds", predictedStep}};
    if (const plan::ProfiledStep* step = profile.kernelStep()) {
      json kernels = json::array();
      for (const plan::KernelTime& k : step->kernels) {
        kernels.push_back({{"name", k.name}, {"calls", k.calls}, {"seconds", k.seconds}});
      }
      out["kernels"] = std::move(kernels);
    }
    if (const auto& run = profile.weightOffload) {
      out["weight_offload"] = {{"kind", run->kind},
                               {"policy", run->policy},
                               {"units", run->units.size()},
                               {"resident", run->resident.size()},
                               {"h2d_bandwidth", run->h2dBandwidth},
                               {"simulated_step_seconds", run->simulated.stepSeconds},
                               {"measured_step_seconds", run->measured.stepSeconds},
                               {"simulated_idle_seconds", run->simulated.idleSeconds()},
                               {"measured_idle_seconds", run->measured.idleSeconds()}};
    }
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  std::cout << fmt::format("{}  on {}{}  torch {}\n", path.string(), profile.device,
                           profile.deviceMemoryBytes ? " (" + formatBytes(profile.deviceMemoryBytes) + ")" : "",
                           profile.torchVersion);
  Table graphs({"graph", "predicted peak", "predicted step", "plan"});
  for (const plan::ProfiledGraph& g : profile.graphs) {
    graphs.add({g.graphId, formatBytes(g.predictedPeakBytes), formatSeconds(g.predictedStepSeconds), g.plan.empty() ? "-" : g.plan});
  }
  graphs.print(std::cout, "  ");
  for (const plan::ProfiledGraph& g : profile.graphs) {
    if (!g.measured) continue;
    double total = 0;
    for (const plan::MeasuredNode& n : g.measured->nodes) total += n.seconds;
    std::cout << fmt::format("  {}: {} nodes measured by {} ({} in them), its values held at most {} at once "
                             "(`lathe plan --profile` prices them)\n",
                             g.graphId, g.measured->nodes.size(), g.measured->source, formatSeconds(total),
                             formatBytes(g.measured->livePeakBytes));
  }
  if (profile.steps.empty()) {
    std::cout << "\nno steps measured (time steps with `with lathe.step(model):`)\n";
  } else {
    std::cout << fmt::format("\nmeasured over {} step{}: median step {}", profile.steps.size(), profile.steps.size() == 1 ? "" : "s",
                             formatSeconds(profile.medianStepSeconds()));
    if (predictedStep > 0) {
      std::cout << fmt::format(" (predicted {}, measured/predicted {:.2f})", formatSeconds(predictedStep),
                               profile.medianStepSeconds() / predictedStep);
    }
    std::cout << '\n';
    if (peak) {
      std::cout << fmt::format("peak {} above the {} held before the step", formatBytes(*peak), formatBytes(before));
      // One graph's plan predicts the whole step's peak (what it holds before included).
      if (profile.graphs.size() == 1 && profile.graphs[0].predictedPeakBytes > 0) {
        const uint64_t measured = *peak + before;
        std::cout << fmt::format("; {} in all, predicted {} (measured/predicted {:.2f})", formatBytes(measured),
                                 formatBytes(profile.graphs[0].predictedPeakBytes),
                                 static_cast<double>(measured) / static_cast<double>(profile.graphs[0].predictedPeakBytes));
      }
      std::cout << '\n';
    } else {
      std::cout << "peak: not measured (no allocator statistics on " << profile.device << ")\n";
    }
  }
  if (const plan::ProfiledStep* step = profile.kernelStep()) {
    constexpr size_t kShown = 15;
    double total = 0;
    for (const plan::KernelTime& k : step->kernels) total += k.seconds;
    std::cout << fmt::format("\nkernels of the last profiled step: {} names, {} in them ({} step)\n",
                             step->kernels.size(), formatSeconds(total), formatSeconds(step->seconds));
    Table kernels({"kernel", "calls", "time", "share"});
    for (size_t i = 0; i < std::min(kShown, step->kernels.size()); ++i) {
      const plan::KernelTime& k = step->kernels[i];
      kernels.add({k.name, std::to_string(k.calls), formatSeconds(k.seconds),
                   fmt::format("{:.1f}%", total > 0 ? 100 * k.seconds / total : 0.0)});
    }
    kernels.print(std::cout, "  ");
    if (step->kernels.size() > kShown) std::cout << fmt::format("  ... {} more (--json lists all)\n", step->kernels.size() - kShown);
  }
  if (const auto& run = profile.weightOffload) {
    uint64_t streamed = 0;
    for (size_t i = 0; i < run->units.size(); ++i) {
      if (std::find(run->resident.begin(), run->resident.end(), run->units[i]) == run->resident.end()) streamed += run->unitBytes[i];
    }
    std::cout << fmt::format("\nweight offload, one {} step under {}: {} units ({} streamed, {} resident), H2D {}/s measured\n",
                             run->kind, run->policy, run->units.size(), formatBytes(streamed), run->resident.size(),
                             formatBytes(static_cast<uint64_t>(run->h2dBandwidth)));
    Table timelines({"", "step", "compute idle", "weight copies", "gradient copies"});
    for (const auto& [name, timeline] : {std::pair{"simulated", &run->simulated}, std::pair{"measured", &run->measured}}) {
      timelines.add({name, formatSeconds(timeline->stepSeconds), formatSeconds(timeline->idleSeconds()),
                     std::to_string(timeline->h2d.size()), std::to_string(timeline->d2h.size())});
    }
    timelines.print(std::cout, "  ");
    if (run->simulated.stepSeconds > 0) {
      std::cout << fmt::format("  measured/simulated {:.3f} (the studio's Gantt shows both)\n",
                               run->measured.stepSeconds / run->simulated.stepSeconds);
    }
  }
  return 0;
}

int runPareto(const GlobalOptions& global) {
  const PlanOptions& o = paretoOptions();
  std::optional<passes::Calibration> calibration;
  const passes::PlanTarget target = prepare(o, global, &calibration);
  const ir::Graph& graph = target.graph();
  const analysis::JointInfo& joint = target.joint();
  const passes::PassContext context = target.context(progressFor(global));
  const std::vector<passes::FrontierPoint> frontier = passes::budgetFrontier(context);
  // Every point also with activation offload (recompute(..., offload=true)): what the link can carry
  // off the GPU at no step time.
  const passes::ActivationOffloadOptions offload;
  auto offloaded = [&](const std::vector<ir::NodeId>& saved) { return passes::evaluateSavedSet(context, saved, &offload); };
  struct Row {
    std::string name;  // "budget", "torch", "heuristic"
    passes::RecomputeEvaluation eval;
    passes::RecomputeEvaluation withOffload;
  };
  std::vector<Row> rows;
  for (const passes::FrontierPoint& f : frontier) {
    rows.push_back({"budget", passes::evaluateSavedSet(context, f.saved), offloaded(f.saved)});
  }
  for (const auto& [name, saved] :
       {std::pair{"torch", passes::torchPolicy(graph, joint, target.inputs(), target.inductorJointPasses()).saved},
        std::pair{"heuristic", passes::heuristicPolicy(graph, joint, target.ops()).saved}}) {
    rows.push_back({name, passes::evaluateSavedSet(context, saved), offloaded(saved)});
  }
  if (o.json) {
    json points = json::array();
    json refs = json::object();
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      json point = {{"peak_bytes", r.eval.timeline.peakBytes},
                    {"saved_bytes", r.eval.savedBytes},
                    {"recompute_seconds", r.eval.recomputeSeconds},
                    {"step_seconds", r.eval.stepSeconds},
                    {"offload_peak_bytes", r.withOffload.timeline.peakBytes},
                    {"offloaded_bytes", r.withOffload.activationOffload->bytes}};
      if (i < frontier.size()) {
        point["saved_values"] = frontier[i].saved.size();
        point["lambda_ps_per_byte"] = frontier[i].lambda;
        points.push_back(point);
      } else {
        refs[r.name] = point;
      }
    }
    std::cout << json{{"graph", target.graphId()}, {"hardware", target.hardware().id}, {"frontier", points}, {"policies", refs}}.dump(2) << '\n';
    return 0;
  }
  std::cout << fmt::format("{}  graph {}  on {}: recompute frontier (budget policy), by step peak\n", o.path,
                           target.graphId(), target.hardware().name);
  printCpuCaptureNote(target);
  if (calibration) printCalibration(*calibration);
  // Four digits for the peak: neighbouring points are often a fraction of a percent apart.
  Table table({"peak", "with offload", "saved for backward", "offloaded", "recompute", "step", "saved values", "point"});
  for (const Row& r : rows) {
    table.add({formatBytes(r.eval.timeline.peakBytes, 4), formatBytes(r.withOffload.timeline.peakBytes, 4),
               formatBytes(r.eval.savedBytes, 4), formatBytes(r.withOffload.activationOffload->bytes, 4),
               formatSeconds(r.eval.recomputeSeconds), formatSeconds(r.eval.stepSeconds),
               std::to_string(r.eval.partition.saved.size()), r.name});
  }
  table.print(std::cout);
  std::cout << "with offload: the peak when saved values whose copies hide behind compute wait in host memory\n"
               "  (recompute(..., offload=true); lathe.compile(activation_offload=True))\n";
  return 0;
}

// Every pass from its declaration: what it does, its options, its statistics, what it needs.
int runPasses() {
  const std::vector<const passes::Pass*> all = passes::registeredPasses();
  if (passesJson()) {
    json out = json::array();
    for (const passes::Pass* pass : all) {
      const passes::PassInfo& info = pass->info();
      json options = json::array(), statistics = json::array();
      for (const passes::OptionSpec& option : info.options) {
        json item = {{"name", option.name}, {"type", passes::optionTypeName(option.type)},
                     {"default", option.fallback.empty() ? json(nullptr) : json(option.fallback)}, {"help", option.help}};
        if (!option.choices.empty()) item["choices"] = std::vector<std::string>(option.choices.begin(), option.choices.end());
        options.push_back(std::move(item));
      }
      for (const passes::StatKey& stat : info.statistics) {
        statistics.push_back({{"name", stat.name}, {"unit", passes::statUnitName(stat.unit)}, {"help", stat.help}});
      }
      out.push_back({{"name", info.name},
                     {"summary", info.summary},
                     {"options", options},
                     {"statistics", statistics},
                     {"requires", std::vector<std::string>(info.runsAfter.begin(), info.runsAfter.end())},
                     {"needs_joint_graph", info.needsJointGraph}});
    }
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  for (const passes::Pass* pass : all) {
    const passes::PassInfo& info = pass->info();
    std::cout << fmt::format("{}: {}\n", info.name, info.summary);
    if (!info.runsAfter.empty()) {
      std::string names;
      for (std::string_view name : info.runsAfter) names += (names.empty() ? "" : ", ") + std::string(name);
      std::cout << "  runs after: " << names << '\n';
    }
    if (info.needsJointGraph) std::cout << "  plans a training step's joint forward/backward graph\n";
    Table options({"option", "type", "default", "meaning"});
    for (const passes::OptionSpec& option : info.options) {
      std::string type(passes::optionTypeName(option.type));
      if (!option.choices.empty()) {
        type.clear();
        for (std::string_view choice : option.choices) type += (type.empty() ? "" : "|") + std::string(choice);
      }
      options.add({std::string(option.name), type, option.fallback.empty() ? "-" : std::string(option.fallback),
                   std::string(option.help)});
    }
    if (!options.empty()) options.print(std::cout, "  ");
    Table statistics({"statistic", "unit", "meaning"});
    for (const passes::StatKey& stat : info.statistics) {
      const std::string_view unit = passes::statUnitName(stat.unit);
      statistics.add({std::string(stat.name), unit.empty() ? "count" : std::string(unit), std::string(stat.help)});
    }
    statistics.print(std::cout, "  ");
    std::cout << '\n';
  }
  std::cout << "A pipeline names passes in order with their options, e.g. " << passes::kDefaultTrainingPipeline << '\n';
  return 0;
}

void addPlanInputs(CLI::App* cmd, PlanOptions& o) {
  cmd->add_option("path", o.path, "TORCH_TRACE log (file, .gz or directory of ranks) or .pt2")->required();
  cmd->add_option("--graph", o.graphId, "Graph id or index (default: the first joint graph, else the first inference graph)");
  cmd->add_option("--hw", o.hw, "Target: " + [] {
    std::string ids;
    for (const std::string& id : hw::builtInHwIds()) ids += (ids.empty() ? "" : ", ") + id;
    return ids;
  }() + ", or a lathe.hw/1 JSON file")->capture_default_str();
  cmd->add_option("--ops", o.opsFile, "JSON file of custom-op flags (compute_sensitive, subgraph_boundary, ...)");
  cmd->add_option("--op-flag", o.opFlags, "TARGET=FLAG[,FLAG]: set compute_sensitive / subgraph_boundary / fusible");
  cmd->add_option("--profile", o.profile,
                  "A lathe.profile/1 with measured nodes of this graph (`lathe measure -o`): price nodes as measured")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--json", o.json, "Print JSON");
}

}  // namespace

void registerPlanCommands(CLI::App& app) {
  auto* plan = app.add_subcommand("plan", "Run a pass pipeline on one graph and write the plan bundle");
  addPlanInputs(plan, planOptions());
  plan->add_option("--pipeline", planOptions().pipeline,
                   "Passes and options, e.g. \"split,fusion,recompute(policy=budget,memory=40GiB),offload(policy=heuristic,"
                   "resident=0.3)\" (default: split,fusion and, for a joint graph, recompute(policy=torch))")
      ->check([](const std::string& value) -> std::string {
        return value.find_first_not_of(" \t") == std::string::npos ? "an empty pipeline plans nothing; leave --pipeline out for the default"
                                                                    : "";
      });
  addOutputOption(plan, planOptions().output, "Write the plan bundle (lathe.plan/1 JSON) here");
  plan->add_flag("--strict", planOptions().strict,
                 "Exit 4 when the planned peak exceeds the target's memory (the plan is written all the same)");
  auto* timeline = app.add_subcommand("timeline", "Memory over the planned step, by category, from a plan bundle");
  timeline->add_option("plan", timelineOptions().path, "Plan bundle written by `lathe plan -o`")->required();
  timeline->add_flag("--csv", timelineOptions().csv, "Every step as CSV");
  timeline->add_flag("--json", timelineOptions().json, "Peak and its breakdown as JSON");
  timeline->add_option("--points", timelineOptions().points, "Rows of the text table")->check(CLI::Range(1, 1000000));
  timeline->add_option("--profile", timelineOptions().profile,
                       "A lathe.profile/1 with measured nodes of the plan's graph: when each step starts as measured")
      ->check(CLI::ExistingFile);
  auto* pareto = app.add_subcommand("pareto", "Peak memory against recompute time: the budget policy's frontier and torch's point");
  addPlanInputs(pareto, paretoOptions());
  auto* profile = app.add_subcommand("profile", "A run's measured steps (lathe.profile/1) beside what its plans predicted");
  profile->add_option("profile", profileOptions().path, "A run folder (trace_dir of lathe.compile) or its lathe.profile.json")
      ->required();
  profile->add_flag("--json", profileOptions().json, "Print JSON");
  auto* passList = app.add_subcommand("passes", "The passes a pipeline can name: options, statistics, what each needs");
  passList->add_flag("--json", passesJson(), "Print JSON");
}

std::optional<int> runPlanCommand(CLI::App& app, const GlobalOptions& global) {
  if (app.got_subcommand("plan")) return runPlan(global);
  if (app.got_subcommand("timeline")) return runTimeline(global);
  if (app.got_subcommand("pareto")) return runPareto(global);
  if (app.got_subcommand("profile")) return runProfile(global);
  if (app.got_subcommand("passes")) return runPasses();
  return std::nullopt;
}

}  // namespace lathe::cli
