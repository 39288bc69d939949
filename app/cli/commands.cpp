#include "commands.h"

#include <spdlog/spdlog.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "analysis/graph_inputs.h"
#include "analysis/snapshot_timeline.h"
#include "io/artifact.h"
#include "io/fx/fx_text.h"
#include "io/graph_export.h"
#include "io/guards/guards.h"
#include "io/trace/compile_metrics.h"
#include "output.h"
#include "util/diagnostics.h"

namespace lathe::cli {
Progress progressFor(const GlobalOptions& global) {
  Progress p;
  if (global.progress) {
    p.report = [last = -1](uint64_t done, uint64_t total) mutable {
      if (total == 0) return;
      const int percent = static_cast<int>(done * 100 / total);
      if (percent == last) return;
      last = percent;
      std::cerr << fmt::format("\rloading {:3d}%", percent) << (percent >= 100 ? "\r            \r" : "") << std::flush;
    };
  }
  return p;
}

io::Artifact load(const std::string& path, const GlobalOptions& global) {
  spdlog::debug("loading {}", path);
  io::Artifact artifact = io::loadArtifact(path, progressFor(global));
  spdlog::debug("loaded {} ({} diagnostics)", io::artifactKindName(artifact.kind), artifact.diagnostics().size());
  return artifact;
}

const io::GraphListing& selectGraph(const std::vector<io::GraphListing>& graphs, const std::string& id) {
  if (const io::GraphListing* g = io::findGraph(graphs, id)) return *g;
  throw Error(ErrorCode::Usage, fmt::format("no graph '{}' (there are {}; `lathe graphs` lists them)", id,
                                            graphs.size()));
}

namespace {

using nlohmann::json;

struct PathOptions {
  std::string path;
  bool json = false;
  bool diagnostics = false;
};

struct CommandOptions {
  PathOptions info, graphs, show, guards, memory;
  std::string graphId;
  std::string format = "text";
  std::string compileId;
  size_t points = 24;
};

CommandOptions& options() {
  static CommandOptions o;
  return o;
}

json diagnosticsJson(const Diagnostics& d, bool full) {
  json out{{"warnings", d.count(Severity::Warning)},
           {"errors", d.count(Severity::Error)},
           {"notes", d.count(Severity::Note)},
           {"suppressed", d.suppressed()}};
  if (full) {
    json items = json::array();
    for (const auto& item : d.items())
      items.push_back({{"severity", severityName(item.severity)},
                       {"code", item.code},
                       {"message", item.message},
                       {"where", item.where.str()}});
    out["items"] = std::move(items);
  }
  return out;
}

void printDiagnostics(const Diagnostics& d, bool full) {
  const size_t warnings = d.count(Severity::Warning), errors = d.count(Severity::Error);
  std::cout << fmt::format("diagnostics: {} warning{}, {} error{}", warnings, warnings == 1 ? "" : "s", errors,
                           errors == 1 ? "" : "s");
  if (d.suppressed()) std::cout << fmt::format(" ({} more not kept)", d.suppressed());
  std::cout << (full || d.empty() ? "\n" : " (--diagnostics lists them)\n");
  if (!full) return;
  for (const auto& item : d.items())
    std::cout << fmt::format("  {}: {}: {} [{}]\n", item.where.str().empty() ? "-" : item.where.str(),
                             severityName(item.severity), item.message, item.code);
}

json countsJson(const io::GraphListing& g) {
  const ir::GraphCounts c = ir::countGraph(*g.graph);
  json out{{"id", g.id},           {"compile_id", g.compileId}, {"kind", g.kind}, {"nodes", c.nodes},
           {"calls", c.calls},     {"torch_ops", c.torchOps},   {"placeholders", c.placeholders}};
  if (!g.parent.empty()) out["parent"] = g.parent;
  if (g.rank >= 0) out["rank"] = g.rank;
  return out;
}

std::string optionalText(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "-"; }

// --- info ---------------------------------------------------------------------------------------

json compileMetricsJson(const io::CompileMetrics& m) {
  const auto value = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  const auto cache = [](const io::CacheOutcome& c) { return json{{"hits", c.hits}, {"misses", c.misses}}; };
  json kernels = json::array();
  for (const auto& [name, seconds] : m.tritonKernels) kernels.push_back({{"kernel", name}, {"seconds", seconds}});
  return {{"phases_s",
           {{"total", value(m.totalSeconds)},
            {"dynamo", value(m.dynamoSeconds)},
            {"aot_autograd", value(m.aotAutogradSeconds)},
            {"inductor", value(m.inductorSeconds)},
            {"codegen", value(m.codegenSeconds)},
            {"triton_compile", value(m.tritonSeconds)},
            {"joint_graph_passes", value(m.jointGraphPassSeconds)},
            {"pre_grad_passes", value(m.preGradPassSeconds)},
            {"post_grad_passes", value(m.postGradPassSeconds)},
            {"dynamo_before_restart", value(m.dynamoBeforeRestartSeconds)},
            {"backward_inductor", value(m.backwardInductorSeconds)},
            {"backward_codegen", value(m.backwardCodegenSeconds)}}},
          {"caches",
           {{"fx_graph_local", cache(m.fxGraphLocal)},
            {"fx_graph_remote", cache(m.fxGraphRemote)},
            {"aot_autograd_local", cache(m.aotAutogradLocal)},
            {"aot_autograd_remote", cache(m.aotAutogradRemote)}}},
          {"graph_breaks", m.graphBreaks ? json(*m.graphBreaks) : json(nullptr)},
          {"triton_kernels", kernels}};
}

// The compile's time by phase, its caches and graph breaks, a line each; nothing the log lacks.
void printCompileMetrics(const io::CompileMetrics& m) {
  std::vector<std::string> phases;
  const auto add = [&](const char* name, const std::optional<double>& seconds, std::string detail = {}) {
    if (seconds) phases.push_back(fmt::format("{} {}{}", name, formatSeconds(*seconds), detail));
  };
  add("Dynamo", m.dynamoSeconds);
  add("AOTAutograd", m.aotAutogradSeconds,
      m.jointGraphPassSeconds ? fmt::format(" (joint-graph passes {})", formatSeconds(*m.jointGraphPassSeconds)) : "");
  add("Inductor", m.inductorSeconds);
  add("code generation", m.codegenSeconds,
      m.tritonSeconds ? fmt::format(" (Triton compiles {})", formatSeconds(*m.tritonSeconds)) : "");
  add("backward Inductor at first call", m.backwardInductorSeconds);
  add("its code generation", m.backwardCodegenSeconds);
  if (!phases.empty()) std::cout << "  by phase: " << fmt::format("{}", fmt::join(phases, " · ")) << '\n';
  if (m.dynamoBeforeRestartSeconds && *m.dynamoBeforeRestartSeconds > 0)
    std::cout << "  tracing thrown away by restarts " << formatSeconds(*m.dynamoBeforeRestartSeconds) << '\n';
  std::vector<std::string> caches;
  const auto cache = [&](const char* name, const io::CacheOutcome& c) {
    if (c.any()) caches.push_back(fmt::format("{} {} hit{}, {} miss{}", name, c.hits, c.hits == 1 ? "" : "s", c.misses,
                                              c.misses == 1 ? "" : "es"));
  };
  cache("FX graph (local)", m.fxGraphLocal);
  cache("FX graph (remote)", m.fxGraphRemote);
  cache("AOTAutograd (local)", m.aotAutogradLocal);
  cache("AOTAutograd (remote)", m.aotAutogradRemote);
  if (!caches.empty()) std::cout << "  caches: " << fmt::format("{}", fmt::join(caches, " · ")) << '\n';
  if (m.graphBreaks && *m.graphBreaks > 0) std::cout << "  graph breaks " << *m.graphBreaks << '\n';
}

json traceInfoJson(const io::TraceLog& log, const std::vector<io::GraphListing>& graphs) {
  json files = json::array();
  for (const auto& f : log.files) files.push_back({{"path", f.path.string()}, {"rank", f.rank}, {"bytes", f.bytes}});
  std::map<std::string, size_t> kinds;
  for (const auto& e : log.events) ++kinds[e.kind];
  std::map<std::string_view, const io::GraphListing*> listingById;
  for (const auto& g : graphs) listingById.emplace(g.id, &g);
  json compiles = json::array();
  for (const auto& c : log.compiles) {
    json cj{{"id", c.id},
            {"rank", c.rank},
            {"attempt", c.attempt},
            {"frame", {{"name", c.frameName}, {"file", c.frameFile}, {"line", c.frameLine}}},
            {"status", io::compileStatusName(c.status)},
            {"guard_count", c.guardCount ? json(*c.guardCount) : json(nullptr)},  // Dynamo's metric
            {"compile_time_s", c.entireFrameCompileTimeS ? json(*c.entireFrameCompileTimeS) : json(nullptr)},
            {"recompile_reasons", c.recompileReasons},
            {"restart_reasons", c.restartReasons}};
    const io::CompileMetrics metrics = io::compileMetrics(c);
    if (!metrics.empty()) cj["compile_metrics"] = compileMetricsJson(metrics);
    if (c.status == io::CompileStatus::Failed) {
      cj["fail_type"] = c.failType;
      cj["fail_reason"] = c.failReason;
    }
    json gs = json::array();
    for (size_t gi : c.graphs)
      if (auto it = listingById.find(log.graphs[gi].id); it != listingById.end()) gs.push_back(countsJson(*it->second));
    cj["graphs"] = std::move(gs);
    compiles.push_back(std::move(cj));
  }
  return {{"files", files}, {"events", log.events.size()}, {"event_kinds", kinds}, {"compiles", compiles}};
}

json magiInfoJson(const io::MagiDump& dump) {
  json models = json::array();
  for (const io::MagiModel& m : dump.models) {
    json lifecycles = json::array();
    for (const io::MagiLifecycleTotal& t : io::magiLifecycleTotals(m))
      lifecycles.push_back({{"lifecycle", t.lifecycle}, {"runs", t.runs}, {"failed", t.failed},
                            {"seconds", t.timed > 0 ? json(t.seconds) : json(nullptr)},
                            {"last_error", t.lastError}});
    models.push_back({{"name", m.name},
                      {"folder", m.folder.string()},
                      {"rank", m.rank},
                      {"timeline_events", m.timeline.size()},
                      {"timeline_s", m.timeline.empty() ? 0.0 : m.timeline.back().seconds},
                      {"lifecycles", lifecycles},
                      {"compiles", m.compiles}});
  }
  return {{"magi_models", models}};
}

void printMagiInfo(const io::MagiDump& dump) {
  for (const io::MagiModel& m : dump.models) {
    std::cout << fmt::format("\nmodel {}", m.name);
    if (m.rank >= 0) std::cout << fmt::format("  rank {}", m.rank);
    std::cout << fmt::format("  {} compile{}", m.compiles.size(), m.compiles.size() == 1 ? "" : "s");
    if (m.timeline.empty()) {
      std::cout << "  no timeline\n";
      continue;
    }
    std::cout << fmt::format("  timeline: {} events over {}\n", m.timeline.size(), formatSeconds(m.timeline.back().seconds));
    Table table({"lifecycle", "runs", "failed", "time", "last error"});
    for (const io::MagiLifecycleTotal& t : io::magiLifecycleTotals(m)) {
      table.add({t.lifecycle, std::to_string(t.runs), std::to_string(t.failed),
                 t.timed > 0 ? formatSeconds(t.seconds) : "-", t.lastError});
    }
    table.print(std::cout, "  ");
  }
}

// A TORCH_TRACE log, or a MagiCompiler dump's compiled functions read as one (`magi` set).
void printTraceInfo(const io::TraceLog& log, const std::vector<io::GraphListing>& graphs,
                    const io::MagiDump* magi = nullptr) {
  uint64_t bytes = 0;
  for (const auto& f : log.files) bytes += f.bytes;
  if (magi) {
    std::cout << fmt::format("MagiCompiler dump: {} model{}, {} files read ({}), {} compile{}, {} graphs\n",
                             magi->models.size(), magi->models.size() == 1 ? "" : "s", log.files.size(),
                             formatBytes(bytes), log.compiles.size(), log.compiles.size() == 1 ? "" : "s",
                             graphs.size());
    printMagiInfo(*magi);
  } else {
    std::cout << fmt::format("TORCH_TRACE log: {} file{} ({}), {} events, {} compile{}, {} graphs\n",
                             log.files.size(), log.files.size() == 1 ? "" : "s", formatBytes(bytes),
                             log.events.size(), log.compiles.size(), log.compiles.size() == 1 ? "" : "s",
                             graphs.size());
  }
  for (const auto& c : log.compiles) {
    std::cout << fmt::format("\ncompile {}", c.id);
    if (c.rank >= 0) std::cout << fmt::format("  rank {}", c.rank);
    std::cout << fmt::format("  attempt {}  status {}", c.attempt, io::compileStatusName(c.status));
    if (!c.frameName.empty() && !c.frameFile.empty()) {
      std::string where = c.frameFile;
      if (auto slash = where.rfind('/'); slash != std::string::npos) where = where.substr(slash + 1);
      std::cout << fmt::format("  frame {} ({}:{})", c.frameName, where, c.frameLine);
    } else if (!c.frameName.empty()) {
      std::cout << fmt::format("  frame {}", c.frameName);
    }
    // Dynamo's guard_count metric counts more than the guards its tree prints (`lathe guards`):
    // both are shown, each named.
    Diagnostics ignored;  // the guards command reports a damaged tree
    const std::optional<io::GuardTree> tree = io::compileGuards(log, c, ignored);
    if (tree && !c.guardCount) {
      std::cout << fmt::format("  guards {}", tree->leafCount());
    } else if (tree) {
      std::cout << fmt::format("  guards {} (Dynamo's guard_count {})", tree->leafCount(), optionalText(c.guardCount));
    } else {
      std::cout << fmt::format("  Dynamo's guard_count {}", optionalText(c.guardCount));
    }
    if (c.entireFrameCompileTimeS) std::cout << "  compile time " << formatSeconds(*c.entireFrameCompileTimeS);
    std::cout << '\n';
    printCompileMetrics(io::compileMetrics(c));
    if (c.status == io::CompileStatus::Failed) std::cout << fmt::format("  failed: {}: {}\n", c.failType, c.failReason);
    for (const auto& r : c.recompileReasons) std::cout << "  recompiled because: " << r << '\n';
    for (const auto& r : c.restartReasons) std::cout << "  restarted because: " << r << '\n';
    if (c.graphs.empty()) continue;
    Table table({"graph", "kind", "nodes", "calls"});
    for (size_t gi : c.graphs) {
      const io::GraphEntry& g = log.graphs[gi];
      const ir::GraphCounts counts = ir::countGraph(*g.graph);
      table.add({g.id, g.kind, std::to_string(counts.nodes), std::to_string(counts.calls)});
    }
    table.print(std::cout, "  ");
  }
  const size_t outside = static_cast<size_t>(
      std::count_if(log.events.begin(), log.events.end(), [](const io::TraceLogEvent& e) { return e.compile < 0; }));
  if (outside) std::cout << fmt::format("\n{} events outside any compile\n", outside);
}

json pt2InfoJson(const io::Pt2Archive& archive) {
  json models = json::array();
  for (const auto& m : archive.models) {
    uint64_t weightBytes = 0;
    for (const auto& w : m.weights) weightBytes += w.bytesNeeded();
    std::map<std::string, size_t> inputs;
    for (const auto& in : m.inputs) ++inputs[std::string(io::pt2InputKindName(in.kind))];
    models.push_back({{"name", m.name},
                      {"schema_version", m.schemaVersion},
                      {"torch_version", m.torchVersion},
                      {"serialized_nodes", m.serializedNodes},
                      {"inputs", inputs},
                      {"outputs", m.outputs.size()},
                      {"weights", m.weights.size()},
                      {"weight_bytes", weightBytes},
                      {"constants", m.constants.size()}});
  }
  return {{"layout", archive.layout == io::Pt2Layout::Archive ? "pt2" : "legacy"},
          {"entries", archive.entries.size()},
          {"models", models}};
}

void printPt2Info(const io::Pt2Archive& archive) {
  std::cout << fmt::format("torch.export archive ({} layout), {} zip entries, {} model{}\n",
                           archive.layout == io::Pt2Layout::Archive ? "pt2" : "legacy", archive.entries.size(),
                           archive.models.size(), archive.models.size() == 1 ? "" : "s");
  for (const auto& m : archive.models) {
    uint64_t weightBytes = 0;
    for (const auto& w : m.weights) weightBytes += w.bytesNeeded();
    std::cout << fmt::format("\nmodel {}: schema {}, torch {}, {} graph nodes\n", m.name, m.schemaVersion,
                             m.torchVersion.empty() ? "?" : m.torchVersion, m.serializedNodes);
    std::map<std::string, size_t> inputs;
    for (const auto& in : m.inputs) ++inputs[std::string(io::pt2InputKindName(in.kind))];
    std::string inputText;
    for (const auto& [kind, count] : inputs) inputText += fmt::format("{}{} {}", inputText.empty() ? "" : ", ", count, kind);
    std::cout << fmt::format("  inputs: {}; outputs: {}\n", inputText.empty() ? "none" : inputText, m.outputs.size());
    std::cout << fmt::format("  weights: {} tensors, {}; constants: {}\n", m.weights.size(), formatBytes(weightBytes),
                             m.constants.size());
    if (m.graph) {
      const ir::GraphCounts c = ir::countGraph(*m.graph);
      std::cout << fmt::format("  graph {}:exported_program: {} calls, {} torch ops, {} placeholders\n", m.name,
                               c.calls, c.torchOps, c.placeholders);
    }
  }
}

json snapshotInfoJson(const io::MemorySnapshot& snapshot) {
  json devices = json::array();
  for (size_t d = 0; d < snapshot.deviceTraces.size(); ++d)
    devices.push_back({{"device", d}, {"trace_events", snapshot.deviceTraces[d].size()}});
  uint64_t reserved = 0;
  for (const auto& s : snapshot.segments) reserved += s.totalSize;
  return {{"segments", snapshot.segments.size()}, {"reserved_bytes", reserved}, {"devices", devices}};
}

int runInfo(const GlobalOptions& global) {
  const auto& o = options().info;
  const io::Artifact artifact = load(o.path, global);
  const auto graphs = artifact.graphs();
  if (o.json) {
    json out{{"path", o.path}, {"kind", io::artifactKindName(artifact.kind)}, {"graphs", graphs.size()}};
    if (artifact.trace) out.update(traceInfoJson(*artifact.trace, graphs));
    if (artifact.magi) out.update(magiInfoJson(*artifact.magi));
    if (artifact.exported) out.update(pt2InfoJson(*artifact.exported));
    if (artifact.snapshot) out.update(snapshotInfoJson(*artifact.snapshot));
    out["diagnostics"] = diagnosticsJson(artifact.diagnostics(), o.diagnostics);
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  std::cout << o.path << ": ";
  if (artifact.trace) printTraceInfo(*artifact.trace, graphs, artifact.magi ? &*artifact.magi : nullptr);
  if (artifact.exported) printPt2Info(*artifact.exported);
  if (artifact.snapshot) {
    const json s = snapshotInfoJson(*artifact.snapshot);
    std::cout << fmt::format("CUDA memory snapshot: {} segments, {} reserved; `lathe memory` for the timeline\n",
                             s["segments"].get<size_t>(), formatBytes(s["reserved_bytes"].get<uint64_t>()));
  }
  std::cout << '\n';
  printDiagnostics(artifact.diagnostics(), o.diagnostics);
  return 0;
}

// --- graphs / show ------------------------------------------------------------------------------

int runGraphs(const GlobalOptions& global) {
  const auto& o = options().graphs;
  const io::Artifact artifact = load(o.path, global);
  const auto graphs = artifact.graphs();
  if (o.json) {
    json out = json::array();
    for (const auto& g : graphs) out.push_back(countsJson(g));
    std::cout << out.dump(2) << '\n';
    return 0;
  }
  Table table({"#", "id", "kind", "nodes", "calls", "torch_ops", "placeholders"});
  for (size_t i = 0; i < graphs.size(); ++i) {
    const ir::GraphCounts c = ir::countGraph(*graphs[i].graph);
    table.add({std::to_string(i), graphs[i].id, graphs[i].kind, std::to_string(c.nodes), std::to_string(c.calls),
               std::to_string(c.torchOps), std::to_string(c.placeholders)});
  }
  table.print(std::cout);
  if (!artifact.diagnostics().empty()) {
    std::cout << '\n';
    printDiagnostics(artifact.diagnostics(), o.diagnostics);
  }
  return 0;
}

int runShow(const GlobalOptions& global) {
  const auto& o = options().show;
  const io::Artifact artifact = load(o.path, global);
  const auto graphs = artifact.graphs();
  const io::GraphListing& g = selectGraph(graphs, options().graphId);
  const std::string& format = options().format;
  if (format == "text") {
    std::cout << io::printFxText(*g.graph);
  } else if (format == "json") {
    json out = io::graphToJson(*g.graph);
    // What each input is, as the planner and the studio see it: an AOT graph's primals are
    // parameters, buffers or user inputs by its compile's Dynamo graph.
    const analysis::GraphInputs inputs = analysis::inferGraphInputs(*g.graph, io::dynamoGraphOf(graphs, g));
    for (const ir::NodeId id : inputs.placeholders) {
      json& node = out["nodes"][id];
      node["role"] = ir::roleName(inputs.role[id]);
      if (!inputs.modulePath[id].empty()) node["module"] = inputs.modulePath[id];
    }
    out["id"] = g.id;
    out["kind"] = g.kind;
    std::cout << out.dump(2) << '\n';
  } else {
    std::cout << io::graphToDot(*g.graph, g.id);
  }
  return 0;
}

// --- guards -------------------------------------------------------------------------------------

json guardTreeJson(const io::GuardTree& tree) {
  json nodes = json::array();
  for (const auto& n : tree.nodes()) {
    json node{{"kind", n.isLeaf() ? "leaf" : "manager"}, {"depth", n.depth}, {"type", tree.text(n.type)}};
    if (n.parent != io::kNoGuardNode) node["parent"] = n.parent;
    if (!n.source.empty()) node["source"] = tree.text(n.source);
    if (!n.accessor.empty()) node["accessed_by"] = tree.text(n.accessor);
    if (!n.code.empty()) node["code"] = tree.text(n.code);
    if (!n.userSource.empty()) node["user_source"] = tree.text(n.userSource);
    if (!n.userFile.empty()) node["user_location"] = fmt::format("{}:{}", tree.text(n.userFile), n.userLine);
    nodes.push_back(std::move(node));
  }
  json counts = json::object();
  for (const auto& c : io::countGuardsByType(tree)) counts[c.type] = c.count;
  return {{"nodes", nodes}, {"counts", counts}};
}

void printGuardTree(const io::GuardTree& tree) {
  for (const auto& n : tree.nodes()) {
    std::string line(2 * n.depth, ' ');
    for (uint32_t d = 0; d < n.depth; ++d) line.replace(2 * d, 2, "| ");
    line += "+- ";
    line += tree.text(n.type);
    if (n.isLeaf() && !n.code.empty()) {
      line += ": ";
      line += tree.text(n.code);
    } else if (!n.source.empty()) {
      line += fmt::format(": source={}", tree.text(n.source));
    }
    if (!n.userFile.empty()) line += fmt::format("    # {}:{}", tree.text(n.userFile), n.userLine);
    std::cout << "  " << line << '\n';
  }
}

int runGuards(const GlobalOptions& global) {
  const auto& o = options().guards;
  const io::Artifact artifact = load(o.path, global);
  if (!artifact.trace) {
    throw Error(ErrorCode::BadInput, "guards are recorded in TORCH_TRACE logs and MagiCompiler dumps only", {o.path});
  }
  const io::TraceLog& log = *artifact.trace;
  Diagnostics diagnostics;
  // A compile's guards are read by its own listing and by every later reason that points at it:
  // parse each tree once.
  std::map<const io::TraceCompile*, std::optional<io::GuardTree>> trees;
  auto guardsOf = [&](const io::TraceCompile& c) -> const std::optional<io::GuardTree>& {
    auto it = trees.find(&c);
    if (it == trees.end()) it = trees.emplace(&c, io::compileGuards(log, c, diagnostics)).first;
    return it->second;
  };
  json out = json::array();
  bool any = false;
  for (const auto& c : log.compiles) {
    if (!options().compileId.empty() && c.id != options().compileId) continue;
    any = true;
    const auto& tree = guardsOf(c);
    json reasons = json::array();
    std::vector<std::string> reasonLines;
    for (const auto& text : c.recompileReasons) {
      // Reasons read "<failed compile>: <why>"; point at the failed compile's guards where possible.
      Diagnostics ignored;
      std::vector<std::string> matched;
      for (const auto& r : io::parseRecompileReasons(text, {}, ignored)) {
        const io::TraceCompile* failed = log.findCompile(r.compileId, c.rank >= 0 ? std::optional(c.rank) : std::nullopt);
        if (!failed) continue;
        if (const auto& failedTree = guardsOf(*failed))
          for (uint32_t leaf : io::matchRecompileReason(r, *failedTree))
            matched.push_back(fmt::format("{}: {}", failedTree->text(failedTree->node(leaf).type),
                                          failedTree->text(failedTree->node(leaf).code)));
      }
      reasons.push_back({{"reason", text}, {"failed_guards", matched}});
      reasonLines.push_back("recompiled because: " + text);
      for (const auto& m : matched) reasonLines.push_back("  failed guard: " + m);
    }
    if (o.json) {
      json cj{{"compile_id", c.id}, {"rank", c.rank}, {"recompile_reasons", reasons}};
      cj["guards"] = tree ? guardTreeJson(*tree) : json(nullptr);
      out.push_back(std::move(cj));
      continue;
    }
    std::cout << fmt::format("compile {}{}: ", c.id, c.rank >= 0 ? fmt::format(" (rank {})", c.rank) : "");
    if (!tree) {
      std::cout << "no guards logged\n";
    } else {
      std::string counts;
      for (const auto& tc : io::countGuardsByType(*tree))
        counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", tc.count, tc.type);
      std::cout << fmt::format("{} guards ({})\n", tree->leafCount(), counts);
    }
    for (const auto& line : reasonLines) std::cout << "  " << line << '\n';
    if (tree) printGuardTree(*tree);
    std::cout << '\n';
  }
  if (!any && !options().compileId.empty())
    throw Error(ErrorCode::Usage, fmt::format("no compile '{}' in {}", options().compileId, o.path));
  if (o.json) std::cout << out.dump(2) << '\n';
  else if (!diagnostics.empty()) printDiagnostics(diagnostics, o.diagnostics);
  return 0;
}

// --- memory -------------------------------------------------------------------------------------

std::string frameText(const io::MemorySnapshot& s, uint32_t frame) {
  if (frame == io::kNoFrame) return "-";
  const auto& f = s.frames[frame];
  std::string file(s.str(f.filename));
  if (auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
  return fmt::format("{}:{} in {}", file, f.line, s.str(f.name));
}

std::vector<analysis::MemoryPoint> downsample(const std::vector<analysis::MemoryPoint>& points, size_t count) {
  // Keeps, for each of `count` equal slices of the events, the point with the most bytes, so peaks
  // survive the reduction.
  if (points.size() <= count || count == 0) return points;
  std::vector<analysis::MemoryPoint> out;
  const size_t slice = (points.size() + count - 1) / count;
  for (size_t begin = 0; begin < points.size(); begin += slice) {
    const size_t end = std::min(points.size(), begin + slice);
    out.push_back(*std::max_element(points.begin() + static_cast<std::ptrdiff_t>(begin),
                                    points.begin() + static_cast<std::ptrdiff_t>(end),
                                    [](const auto& a, const auto& b) { return a.bytes < b.bytes; }));
  }
  return out;
}

std::string eventText(uint32_t index) { return index == analysis::kBeforeTrace ? "start" : std::to_string(index); }

int runMemory(const GlobalOptions& global) {
  const auto& o = options().memory;
  const io::Artifact artifact = load(o.path, global);
  if (!artifact.snapshot)
    throw Error(ErrorCode::BadInput,
                fmt::format("not a CUDA memory snapshot (it is {})", io::artifactKindName(artifact.kind)), {o.path});
  const io::MemorySnapshot& snapshot = *artifact.snapshot;
  const analysis::SnapshotTimeline timeline = analysis::buildSnapshotTimeline(snapshot);
  if (o.json) {
    json devices = json::array();
    for (const auto& d : timeline.devices) {
      json series = json::array();
      for (const auto& p : downsample(d.allocated, options().points))
        series.push_back({{"event", p.eventIndex == analysis::kBeforeTrace ? json(nullptr) : json(p.eventIndex)},
                          {"time_us", p.timeUs == io::kNoTime ? json(nullptr) : json(p.timeUs)},
                          {"bytes", p.bytes}});
      json largest = json::array();
      for (const auto& a : d.largestAtPeak)
        largest.push_back({{"bytes", a.size},
                           {"address", a.addr},
                           {"alloc_event", a.allocEvent == analysis::kBeforeTrace ? json(nullptr) : json(a.allocEvent)},
                           {"user_frame", frameText(snapshot, a.userFrame)}});
      json actions = json::object();
      for (size_t a = 0; a < io::kTraceActionCount; ++a)
        if (d.actionCounts[a]) actions[io::traceActionName(static_cast<io::TraceAction>(a))] = d.actionCounts[a];
      devices.push_back({{"device", d.device},
                         {"events", d.eventCount},
                         {"actions", actions},
                         {"peak_allocated_bytes", d.peakAllocatedBytes},
                         {"peak_event", d.peakEventIndex == analysis::kBeforeTrace ? json(nullptr) : json(d.peakEventIndex)},
                         {"first_time_us", d.firstTimeUs == io::kNoTime ? json(nullptr) : json(d.firstTimeUs)},
                         {"peak_time_us", d.peakTimeUs == io::kNoTime ? json(nullptr) : json(d.peakTimeUs)},
                         {"live_at_peak", d.liveAtPeakCount},
                         {"initial_allocated_bytes", d.initialAllocatedBytes},
                         {"final_allocated_bytes", d.finalAllocatedBytes},
                         {"peak_reserved_bytes", d.peakReservedBytes},
                         {"final_reserved_bytes", d.finalReservedBytes},
                         {"ooms", d.ooms.size()},
                         {"largest_at_peak", largest},
                         {"allocated_over_time", series}});
    }
    std::cout << json{{"path", o.path}, {"devices", devices}, {"diagnostics", diagnosticsJson(snapshot.diagnostics, o.diagnostics)}}.dump(2)
              << '\n';
    return 0;
  }
  std::cout << o.path << ": CUDA memory snapshot\n";
  for (const auto& d : timeline.devices) {
    std::cout << fmt::format("\ndevice {}: {} trace events\n", d.device, d.eventCount);
    // Times as memory_viz reads them: from the first event, not the epoch the allocator stamps.
    const bool timed = d.peakTimeUs != io::kNoTime && d.firstTimeUs != io::kNoTime;
    std::cout << fmt::format("  peak allocated  {}  at event {}{}  ({} allocations live)\n",
                             formatBytes(d.peakAllocatedBytes), eventText(d.peakEventIndex),
                             timed ? fmt::format(", {} after the first event",
                                                 formatSeconds(static_cast<double>(d.peakTimeUs - d.firstTimeUs) * 1e-6))
                                   : "",
                             d.liveAtPeakCount);
    std::cout << fmt::format("  allocated       {} at start, {} at end\n", formatBytes(d.initialAllocatedBytes),
                             formatBytes(d.finalAllocatedBytes));
    std::cout << fmt::format("  peak reserved   {}  ({} at end)\n", formatBytes(d.peakReservedBytes),
                             formatBytes(d.finalReservedBytes));
    if (!d.ooms.empty()) std::cout << fmt::format("  out of memory   {} time(s)\n", d.ooms.size());
    if (!d.largestAtPeak.empty()) {
      std::cout << "\n  largest allocations live at the peak:\n";
      // Runs of alike allocations (a layer's weights, say) read as one row with their count.
      Table table({"bytes", "count", "allocated at event", "user frame"});
      struct Run {
        uint64_t bytes;
        std::string at, frame;
        size_t count;
      };
      std::vector<Run> runs;
      for (const auto& a : d.largestAtPeak) {
        Run row{a.size, eventText(a.allocEvent), frameText(snapshot, a.userFrame), 1};
        if (!runs.empty() && runs.back().bytes == row.bytes && runs.back().at == row.at && runs.back().frame == row.frame)
          ++runs.back().count;
        else
          runs.push_back(std::move(row));
      }
      for (const Run& r : runs) table.add({formatBytes(r.bytes), std::to_string(r.count), r.at, r.frame});
      table.print(std::cout, "    ");
    }
    if (d.allocated.size() > 1) {
      std::cout << "\n  allocated over time (max per slice of events):\n";
      std::cout << fmt::format("    {:>8}  {:>10}\n", "event", "allocated");
      const auto series = downsample(d.allocated, options().points);
      const double scale = d.peakAllocatedBytes ? 40.0 / static_cast<double>(d.peakAllocatedBytes) : 0.0;
      for (const auto& p : series)
        std::cout << fmt::format("    {:>8}  {:>10}  {}\n", eventText(p.eventIndex), formatBytes(p.bytes),
                                 std::string(static_cast<size_t>(static_cast<double>(p.bytes) * scale + 0.5), '#'));
    }
  }
  std::cout << '\n';
  printDiagnostics(snapshot.diagnostics, o.diagnostics);
  return 0;
}

void addPathOptions(CLI::App* cmd, PathOptions& o, const std::string& what) {
  cmd->add_option("path", o.path, what)->required();
  cmd->add_flag("--json", o.json, "Print JSON");
  cmd->add_flag("--diagnostics", o.diagnostics, "List every diagnostic (damage Lathe read past)");
}

}  // namespace

void registerCommands(CLI::App& app, GlobalOptions& /*global*/) {
  auto& o = options();
  const std::string artifactHelp =
      "TORCH_TRACE log (file, .gz or directory of ranks), .pt2, memory snapshot, or MagiCompiler magi_depyf folder";
  addPathOptions(app.add_subcommand("info", "What an artifact holds: compiles, graphs, guards, diagnostics"), o.info,
                 artifactHelp);
  addPathOptions(app.add_subcommand("graphs", "List every graph with node counts"), o.graphs, artifactHelp);
  auto* show = app.add_subcommand("show", "Print one graph as FX text, JSON or Graphviz dot");
  addPathOptions(show, o.show, artifactHelp);
  show->add_option("--graph", o.graphId, "Graph id as listed by `lathe graphs`, or its index")->required();
  show->add_option("--format", o.format, "text | json | dot")->check(CLI::IsMember({"text", "json", "dot"}));
  auto* guards = app.add_subcommand("guards", "Guard trees and recompile reasons of each compile");
  addPathOptions(guards, o.guards, "TORCH_TRACE log or MagiCompiler magi_depyf folder");
  guards->add_option("--compile", o.compileId, "Only this compile id (e.g. 0/1)");
  auto* memory = app.add_subcommand("memory", "Peak and allocations over time of a CUDA memory snapshot");
  addPathOptions(memory, o.memory, "torch.cuda.memory._dump_snapshot pickle");
  memory->add_option("--points", o.points, "Points of the allocated-over-time series")->check(CLI::Range(1, 1000000));
  registerPlanCommands(app);
  registerExportCommand(app);
  registerMeasureCommand(app);
  registerDiffCommand(app);
  registerReportCommand(app);
}

int runSelectedCommand(CLI::App& app, const GlobalOptions& global) {
  if (const std::optional<int> rc = runPlanCommand(app, global)) return *rc;
  if (const std::optional<int> rc = runExportCommand(app, global)) return *rc;
  if (const std::optional<int> rc = runMeasureCommand(app, global)) return *rc;
  if (const std::optional<int> rc = runDiffCommand(app, global)) return *rc;
  if (const std::optional<int> rc = runReportCommand(app, global)) return *rc;
  if (app.got_subcommand("info")) return runInfo(global);
  if (app.got_subcommand("graphs")) return runGraphs(global);
  if (app.got_subcommand("show")) return runShow(global);
  if (app.got_subcommand("guards")) return runGuards(global);
  if (app.got_subcommand("memory")) return runMemory(global);
  throw Error(ErrorCode::Usage, "no subcommand");
}

}  // namespace lathe::cli
