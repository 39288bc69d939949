// `lathe diff A [B]`: two plan bundles (estimates, memory at the peak by category, the saved sets,
// fusion and weight offload), or two graphs node by node (by name, then by op and source line):
// of two captures, two compiles of one capture, or one layer on two ranks of a run folder.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "analysis/graph_diff.h"
#include "commands.h"
#include "output.h"
#include "plan/plan_diff.h"

namespace lathe::cli {

namespace {

using nlohmann::json;

struct DiffOptions {
  std::string a, b, graphA, graphB;
  size_t limit = 40;
  bool json = false;
};

DiffOptions& diffOptions() {
  static DiffOptions o;
  return o;
}

// --- plans -----------------------------------------------------------------------------------------

json planDiffJson(const plan::PlanDiff& d) {
  json estimates = json::array();
  for (const auto& e : d.estimates)
    estimates.push_back({{"name", e.name}, {"a", e.a ? json(*e.a) : json(nullptr)}, {"b", e.b ? json(*e.b) : json(nullptr)}});
  json atPeak = json::object();
  for (size_t c = 0; c < plan::kTimelineCategories; ++c)
    atPeak[std::string(plan::kTimelineCategoryNames[c])] = {{"a", d.atPeakA[c]}, {"b", d.atPeakB[c]}};
  const auto saved = [](const std::vector<plan::PlanDiff::Saved>& list) {
    json out = json::array();
    for (const auto& s : list) out.push_back({{"node", s.name}, {"reason", toEnglish(s.reason)}});
    return out;
  };
  return {{"kind", "plans"},
          {"same_graph", d.sameGraph},
          {"graph", {{"a", d.graphA}, {"b", d.graphB}}},
          {"fingerprint", {{"a", d.fingerprintA}, {"b", d.fingerprintB}}},
          {"pipeline", {{"a", d.pipelineA}, {"b", d.pipelineB}}},
          {"hardware", {{"a", d.hardwareA}, {"b", d.hardwareB}}},
          {"estimates", estimates},
          {"peak_bytes", {{"a", d.peakA}, {"b", d.peakB}}},
          {"at_peak", atPeak},
          {"saved", {{"a", d.savedA}, {"b", d.savedB}}},
          {"saved_only_a", saved(d.savedOnlyA)},
          {"saved_only_b", saved(d.savedOnlyB)},
          {"recomputed", {{"a", d.recomputedA}, {"b", d.recomputedB}}},
          {"fusion_groups", {{"a", d.groupsA}, {"b", d.groupsB}}},
          {"resident_only_a", d.residentOnlyA},
          {"resident_only_b", d.residentOnlyB}};
}

void printPlanDiff(const plan::PlanDiff& d, const DiffOptions& o) {
  std::cout << fmt::format("A: {}  ({}, {}, {})\nB: {}  ({}, {}, {})\n", o.a, d.graphA, d.hardwareA, d.pipelineA, o.b,
                           d.graphB, d.hardwareB, d.pipelineB);
  std::cout << (d.sameGraph ? "the same graph (fingerprint " + d.fingerprintA + ")\n"
                            : "different graphs (fingerprints " + d.fingerprintA + " and " + d.fingerprintB +
                                  "): decisions compared by node name\n");
  Table estimates({"estimate", "A", "B", "B - A"});
  for (const auto& e : d.estimates) {
    std::string delta;
    if (e.a && e.b) {
      delta = formatEstimateChange(e.name, *e.a, *e.b);
    }
    estimates.add({e.name, e.a ? formatEstimate(e.name, *e.a) : "-", e.b ? formatEstimate(e.name, *e.b) : "-", delta});
  }
  std::cout << '\n';
  estimates.print(std::cout);
  Table memory({"at the peak", "A", "B", "B - A"});
  for (size_t c = 0; c < plan::kTimelineCategories; ++c) {
    if (d.atPeakA[c] == 0 && d.atPeakB[c] == 0) continue;
    memory.add({std::string(plan::kTimelineCategoryNames[c]), formatBytes(d.atPeakA[c]), formatBytes(d.atPeakB[c]),
                formatBytesChange(d.atPeakA[c], d.atPeakB[c])});
  }
  memory.add({"peak", formatBytes(d.peakA), formatBytes(d.peakB), formatBytesChange(d.peakA, d.peakB)});
  std::cout << '\n';
  memory.print(std::cout);
  std::cout << fmt::format("\nrecompute: A {} saves {} and recomputes {}; B {} saves {} and recomputes {}\n",
                           d.recomputePolicyA.empty() ? "(none)" : d.recomputePolicyA, d.savedA, d.recomputedA,
                           d.recomputePolicyB.empty() ? "(none)" : d.recomputePolicyB, d.savedB, d.recomputedB);
  const auto list = [&](const char* title, const std::vector<plan::PlanDiff::Saved>& saved) {
    if (saved.empty()) return;
    std::cout << fmt::format("  {} ({}):\n", title, saved.size());
    for (size_t i = 0; i < saved.size() && i < o.limit; ++i)
      std::cout << fmt::format("    {}  ({})\n", saved[i].name, toEnglish(saved[i].reason));
    if (saved.size() > o.limit) std::cout << fmt::format("    ... {} more (--limit)\n", saved.size() - o.limit);
  };
  list("saved only by A", d.savedOnlyA);
  list("saved only by B", d.savedOnlyB);
  std::cout << fmt::format("fusion groups: A {}, B {}; layer units: A {}, B {}\n", d.groupsA, d.groupsB, d.unitsA, d.unitsB);
  if (!d.residentOnlyA.empty() || !d.residentOnlyB.empty()) {
    std::cout << fmt::format("weights resident only in A: {}\nweights resident only in B: {}\n",
                             d.residentOnlyA.empty() ? "-" : fmt::format("{}", fmt::join(d.residentOnlyA, ", ")),
                             d.residentOnlyB.empty() ? "-" : fmt::format("{}", fmt::join(d.residentOnlyB, ", ")));
  }
}

// --- graphs ----------------------------------------------------------------------------------------

json graphDiffJson(const analysis::GraphDiff& d, const ir::Graph& a, const ir::Graph& b, const std::string& idA,
                   const std::string& idB) {
  json categories = json::object();
  for (size_t c = 0; c < ir::kOpCategoryCount; ++c) {
    if (d.callsA[c] == 0 && d.callsB[c] == 0) continue;
    categories[std::string(ir::categoryName(static_cast<ir::OpCategory>(c)))] = {{"a", d.callsA[c]}, {"b", d.callsB[c]}};
  }
  json changed = json::array(), onlyA = json::array(), onlyB = json::array();
  for (const analysis::NodeDiff& n : d.nodes) {
    if (n.kind == analysis::NodeDiff::Kind::Changed) {
      changed.push_back({{"a", a.name(n.a)}, {"b", b.name(n.b)}, {"by_provenance", n.matchedByProvenance}, {"what", n.what}});
    } else if (n.kind == analysis::NodeDiff::Kind::OnlyInA) {
      onlyA.push_back({{"node", a.name(n.a)}, {"op", a.target(n.a)}, {"value", analysis::valueText(a, n.a)}});
    } else {
      onlyB.push_back({{"node", b.name(n.b)}, {"op", b.target(n.b)}, {"value", analysis::valueText(b, n.b)}});
    }
  }
  return {{"kind", "graphs"},
          {"graph", {{"a", idA}, {"b", idB}}},
          {"nodes", {{"a", d.nodesA}, {"b", d.nodesB}}},
          {"matched_by_name", d.matchedByName},
          {"matched_by_position", d.matchedByPosition},
          {"matched_by_provenance", d.matchedByProvenance},
          {"identical", d.identical()},
          {"calls_by_category", categories},
          {"changed", changed},
          {"only_a", onlyA},
          {"only_b", onlyB}};
}

void printGraphDiff(const analysis::GraphDiff& d, const ir::Graph& a, const ir::Graph& b, const std::string& idA,
                    const std::string& idB, const DiffOptions& o) {
  std::cout << fmt::format("A: {} ({} nodes)\nB: {} ({} nodes)\n", idA, d.nodesA, idB, d.nodesB);
  std::cout << fmt::format(
      "matched {} by name, {} inputs by position, {} by op and source line; {} changed, {} only in A, {} only in B\n",
      d.matchedByName, d.matchedByPosition, d.matchedByProvenance, d.changed, d.onlyInA, d.onlyInB);
  if (d.identical()) {
    std::cout << "the graphs are the same node for node\n";
    return;
  }
  Table categories({"calls", "A", "B", "B - A"});
  for (size_t c = 0; c < ir::kOpCategoryCount; ++c) {
    if (d.callsA[c] == d.callsB[c]) continue;
    categories.add({std::string(ir::categoryName(static_cast<ir::OpCategory>(c))), std::to_string(d.callsA[c]),
                    std::to_string(d.callsB[c]),
                    fmt::format("{:+}", static_cast<int64_t>(d.callsB[c]) - static_cast<int64_t>(d.callsA[c]))});
  }
  std::cout << '\n';
  categories.print(std::cout);
  const auto section = [&](analysis::NodeDiff::Kind kind, const char* title, size_t count) {
    if (count == 0) return;
    std::cout << fmt::format("\n{} ({}):\n", title, count);
    size_t shown = 0;
    for (const analysis::NodeDiff& n : d.nodes) {
      if (n.kind != kind) continue;
      if (shown++ == o.limit) {
        std::cout << fmt::format("  ... {} more (--limit)\n", count - o.limit);
        break;
      }
      if (kind == analysis::NodeDiff::Kind::Changed) {
        const std::string name = a.name(n.a) == b.name(n.b) ? std::string(a.name(n.a))
                                                              : fmt::format("{} (B: {})", a.name(n.a), b.name(n.b));
        std::cout << fmt::format("  {}: {}\n", name, fmt::join(n.what, "; "));
      } else {
        const ir::Graph& g = kind == analysis::NodeDiff::Kind::OnlyInA ? a : b;
        const ir::NodeId id = kind == analysis::NodeDiff::Kind::OnlyInA ? n.a : n.b;
        std::cout << fmt::format("  {}  {}  {}\n", g.name(id), g.target(id), analysis::valueText(g, id));
      }
    }
  };
  section(analysis::NodeDiff::Kind::Changed, "changed", d.changed);
  section(analysis::NodeDiff::Kind::OnlyInA, "only in A", d.onlyInA);
  section(analysis::NodeDiff::Kind::OnlyInB, "only in B", d.onlyInB);
}

int runDiff(const GlobalOptions& global) {
  const DiffOptions& o = diffOptions();
  const std::string b = o.b.empty() ? o.a : o.b;
  if (isPlanPath(o.a) || isPlanPath(b)) {
    if (!isPlanPath(o.a) || !isPlanPath(b))
      throw Error(ErrorCode::Usage, "lathe diff compares two plan bundles or two graphs: " + o.a + " and " + b + " are one of each");
    if (o.b.empty()) throw Error(ErrorCode::Usage, "lathe diff: a plan bundle is compared with another: give B");
    const plan::PlanDiff d = plan::diffPlans(plan::readPlan(o.a), plan::readPlan(b));
    if (o.json) {
      std::cout << planDiffJson(d).dump(2) << '\n';
    } else {
      printPlanDiff(d, o);
    }
    return 0;
  }
  if (o.graphA.empty()) throw Error(ErrorCode::Usage, "lathe diff: name the graph with --graph (as `lathe graphs` lists it)");
  if (o.b.empty() && o.graphB.empty())
    throw Error(ErrorCode::Usage, "lathe diff: one artifact: give the other graph with --graph-b");
  const io::Artifact artifactA = load(o.a, global);
  const std::vector<io::GraphListing> listingA = artifactA.graphs();
  const io::GraphListing& ga = selectGraph(listingA, o.graphA);
  std::optional<io::Artifact> artifactB;
  if (!o.b.empty()) artifactB.emplace(load(b, global));
  const std::vector<io::GraphListing> listingB = artifactB ? artifactB->graphs() : std::vector<io::GraphListing>{};
  const io::GraphListing& gb = selectGraph(artifactB ? listingB : listingA, o.graphB.empty() ? o.graphA : o.graphB);
  const analysis::GraphDiff d = analysis::diffGraphs(*ga.graph, *gb.graph);
  const std::string idA = o.a + ":" + ga.id, idB = b + ":" + gb.id;
  if (o.json) {
    std::cout << graphDiffJson(d, *ga.graph, *gb.graph, idA, idB).dump(2) << '\n';
  } else {
    printGraphDiff(d, *ga.graph, *gb.graph, idA, idB, o);
  }
  return 0;
}

}  // namespace

void registerDiffCommand(CLI::App& app) {
  DiffOptions& o = diffOptions();
  auto* cmd = app.add_subcommand(
      "diff", "Two plan bundles (estimates, memory at the peak, saved sets, offload) or two graphs node by node");
  cmd->add_option("a", o.a, "Plan bundle, or an artifact (TORCH_TRACE log, folder of ranks, .pt2)")->required();
  cmd->add_option("b", o.b, "The other plan bundle or artifact (for two graphs of one artifact: leave it out)");
  cmd->add_option("--graph", o.graphA, "Graph of A, as `lathe graphs` lists it (also of B without --graph-b)");
  cmd->add_option("--graph-b", o.graphB, "Graph of B (or a second graph of A: two compiles, two ranks)");
  cmd->add_option("--limit", o.limit, "Nodes listed per section")->capture_default_str()->check(CLI::Range(0, 1000000));
  cmd->add_flag("--json", o.json, "Print JSON");
}

std::optional<int> runDiffCommand(CLI::App& app, const GlobalOptions& global) {
  if (app.got_subcommand("diff")) return runDiff(global);
  return std::nullopt;
}

}  // namespace lathe::cli
