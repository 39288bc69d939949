// `lathe report PATH|PLAN -o report.html`: passes::htmlReport of a capture (its default graph, or
// --graph, planned on --hw with --pipeline) or of a saved plan bundle, written atomically.
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "output.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "passes/plan_report.h"
#include "passes/plan_target.h"
#include "plan/plan_bind.h"
#include "plan/plan_bundle.h"
#include "util/atomic_write.h"

namespace lathe::cli {

namespace {

struct ReportOptions {
  std::string path, graphId, hw{passes::kDefaultHardware}, pipeline, output;
};

ReportOptions& reportOptions() {
  static ReportOptions o;
  return o;
}

int runReport(const GlobalOptions& global) {
  const ReportOptions& o = reportOptions();
  const bool planInput = isPlanPath(o.path);
  std::optional<plan::PlanBundle> bundle;
  std::string capture = o.path;
  if (planInput) {
    bundle = plan::readPlan(o.path);
    capture = plan::captureOf(*bundle, o.path);
  }
  const io::Artifact artifact = load(capture, global);
  const passes::ReportHeading heading{std::filesystem::path(o.path).filename().string(),
                                      planInput ? "plan bundle of " + capture : capture};
  const std::vector<io::GraphListing> graphs = artifact.graphs();
  std::string html;
  if (graphs.empty()) {
    html = passes::htmlReport(artifact, heading, nullptr, nullptr);
  } else {
    const hw::HwProfile hardware = bundle ? bundle->hardware : hw::resolveHwProfile(o.hw);
    const std::string graphId = bundle ? bundle->graphId : (o.graphId.empty() ? "" : selectGraph(graphs, o.graphId).id);
    const passes::PlanTarget target(artifact, graphId, hardware);
    const Progress progress = progressFor(global);
    if (!bundle) {
      const passes::PassContext context = target.context(progress);
      const std::string pipeline = o.pipeline.empty() ? std::string(target.defaultPipeline()) : o.pipeline;
      bundle = passes::buildPlanBundle(context, passes::runPipeline(context, passes::parsePipeline(pipeline)), o.path, target.graphId());
    }
    html = passes::htmlReport(artifact, heading, &target, &*bundle, progress);
  }
  writeFileAtomic(o.output, html);
  std::cout << fmt::format("report written to {} ({})\n", o.output, formatBytes(html.size()));
  return 0;
}

}  // namespace

void registerReportCommand(CLI::App& app) {
  ReportOptions& o = reportOptions();
  auto* cmd = app.add_subcommand("report", "One self-contained HTML file: the plan with its pictures, compiles, diagnostics");
  cmd->add_option("path", o.path, "TORCH_TRACE log (file, .gz or directory of ranks), .pt2, or a plan bundle")->required();
  addOutputOption(cmd, o.output, "The HTML file to write")->required();
  cmd->add_option("--graph", o.graphId, "Graph to plan (default: the first joint graph, else the first inference graph)");
  cmd->add_option("--hw", o.hw, "Target hardware (a capture; a plan bundle has its own)")->capture_default_str();
  cmd->add_option("--pipeline", o.pipeline, "Pipeline to plan with (a capture; default: the graph's default pipeline)");
}

std::optional<int> runReportCommand(CLI::App& app, const GlobalOptions& global) {
  if (app.got_subcommand("report")) return runReport(global);
  return std::nullopt;
}

}  // namespace lathe::cli
