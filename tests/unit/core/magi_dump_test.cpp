// MagiCompiler's magi_depyf dumps (tests/data/magi_depyf, made by tests/data/make_magi_dumps.py on the
// CPU): found from any folder of the dump, read as compiles with their graphs, guards and code, and
// their timelines; figures checked against the dump's own text. A damaged copy loads with diagnostics.
#include "io/magi/magi_dump.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "io/artifact.h"
#include "ir/graph.h"
#include "temp_dir.h"

namespace fs = std::filesystem;
using namespace lathe;
using namespace lathe::io;

namespace {

const fs::path kDumps = fs::path(LATHE_SOURCE_DIR) / "tests/data/magi_depyf";
const fs::path kPiecewise = kDumps / "piecewise";
const fs::path kGraphBreak = kDumps / "graph_break";

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t lineCount(const fs::path& path) {
  const std::string text = slurp(path);
  return static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
}

// The leaves guards.txt announces in its manager lines: `[X] (n leaf guards, m children)`.
size_t announcedLeaves(const std::string& text) {
  static const std::regex kManager(R"(\((\d+) leaf guards, \d+ children\))");
  size_t sum = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kManager); it != std::sregex_iterator(); ++it)
    sum += std::stoul((*it)[1].str());
  return sum;
}

size_t callCount(const ir::Graph& graph) {
  return static_cast<size_t>(
      std::count_if(graph.nodes().begin(), graph.nodes().end(), [](const ir::Node& n) { return n.isCall(); }));
}

const fs::path& modelFolder() {
  static const fs::path folder = [] {
    for (const auto& entry : fs::directory_iterator(kPiecewise))
      if (entry.is_directory()) return entry.path();
    return fs::path();
  }();
  return folder;
}

TEST(MagiDump, FoundFromEveryFolderOfTheDumpAndNowhereElse) {
  for (const fs::path& path : {kDumps, kPiecewise, modelFolder(), kGraphBreak}) {
    EXPECT_EQ(detectArtifactKind(path), ArtifactKind::MagiDump) << path;
  }
  EXPECT_FALSE(isMagiDump(fs::path(LATHE_SOURCE_DIR) / "tests/data/run_folder"));
  EXPECT_EQ(detectArtifactKind(fs::path(LATHE_SOURCE_DIR) / "tests/data/run_folder"), ArtifactKind::TraceLog);
  lathe::testing::TempDir empty;
  EXPECT_THROW((void)loadMagiDump(empty.path()), Error);
}

TEST(MagiDump, PiecewiseCompileHasItsGraphPiecesGuardsAndCode) {
  const Artifact artifact = loadArtifact(kPiecewise);
  ASSERT_TRUE(artifact.trace && artifact.magi);
  ASSERT_EQ(artifact.magi->models.size(), 1u);
  const MagiModel& model = artifact.magi->models[0];
  EXPECT_EQ(model.name, "TwoLayers");
  EXPECT_EQ(model.rank, 0);
  const TraceLog& log = *artifact.trace;
  ASSERT_EQ(log.compiles.size(), 1u);
  const TraceCompile& compile = log.compiles[0];
  EXPECT_EQ(compile.id, "forward/0");
  EXPECT_EQ(model.compiles, std::vector<std::string>{"forward/0"});

  // The captured graph, the split graph and five pieces: the two attention calls are the splitting ops.
  std::vector<std::string> kinds;
  for (size_t g : compile.graphs) kinds.push_back(log.graphs[g].kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"dynamo_output_graph", "magi_piece", "magi_splitting_op", "magi_piece",
                                             "magi_splitting_op", "magi_piece", "magi_split_graph"}));
  const GraphEntry* full = log.findGraph("forward/0:dynamo_output_graph");
  ASSERT_TRUE(full && full->graph);
  size_t pieceCalls = 0;
  for (int k = 0; k < 5; ++k) {
    const GraphEntry* piece = log.findGraph("forward/0:submod_" + std::to_string(k));
    ASSERT_TRUE(piece && piece->graph) << k;
    pieceCalls += callCount(*piece->graph);
    if (piece->kind != "magi_splitting_op") continue;
    EXPECT_EQ(callCount(*piece->graph), 1u) << k;
    for (const ir::Node& node : piece->graph->nodes()) {
      if (node.isCall()) {
        EXPECT_NE(piece->graph->str(node.target).find("attention"), std::string::npos);
      }
    }
  }
  // Splitting moves every call of the captured graph into exactly one piece.
  EXPECT_EQ(pieceCalls, callCount(*full->graph));

  // Guards: what the file announces, read as a tree; x is guarded as a tensor.
  Diagnostics diagnostics;
  const std::optional<GuardTree> guards = compileGuards(log, compile, diagnostics);
  ASSERT_TRUE(guards);
  const std::string guardsText = slurp(modelFolder() / "compiled_functions/forward/entry_0/guards.txt");
  EXPECT_EQ(guards->leafCount(), announcedLeaves(guardsText));
  EXPECT_EQ(guards->text(guards->node(0).type), "RootGuardManager");
  bool tensorMatchOnX = false;
  for (uint32_t i = 0; i < guards->size(); ++i) {
    const GuardNode& node = guards->node(i);
    if (node.isLeaf() && guards->text(node.type) == "TENSOR_MATCH" && guardPath(*guards, i) == "L['x']")
      tensorMatchOnX = true;
    EXPECT_GE(node.line, 1u);
    EXPECT_NE(guardsText.find(guards->text(node.code)), std::string::npos);
  }
  EXPECT_TRUE(tensorMatchOnX);
  EXPECT_EQ(diagnostics.count(Severity::Warning), 0u);
  ASSERT_EQ(diagnostics.count(Severity::Note), 1u);  // MagiCompiler's 120-character cut, said once
  EXPECT_EQ(diagnostics.items()[0].code, "guards_clipped");

  // The decompiled bytecode apart, each compiled piece's Inductor output as output code.
  ASSERT_GE(compile.decompiledCodeEvent, 0);
  const TraceLogEvent& decompiled = log.events[static_cast<size_t>(compile.decompiledCodeEvent)];
  EXPECT_EQ(decompiled.kind, "magi_decompiled_code");
  EXPECT_NE(decompiled.payload.find("def forward"), std::string::npos);
  ASSERT_EQ(compile.outputCodeEvents.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(log.events[compile.outputCodeEvents[k]].kind, "inductor_output_code");
  EXPECT_EQ(artifact.diagnostics().count(Severity::Error), 0u);
  EXPECT_EQ(artifact.diagnostics().count(Severity::Warning), 0u);
}

TEST(MagiDump, TimelineReadsEveryEventInOrderWithTheRestartedCompile) {
  const Artifact artifact = loadArtifact(modelFolder());
  const MagiModel& model = artifact.magi->models.at(0);
  ASSERT_EQ(model.timeline.size(), lineCount(model.timelineFile));
  EXPECT_EQ(model.timeline.front().seconds, 0.0);
  for (size_t i = 0; i < model.timeline.size(); ++i) {
    const MagiTimelineEvent& e = model.timeline[i];
    EXPECT_EQ(e.index, static_cast<int64_t>(i));
    EXPECT_EQ(e.line, i + 1);
    if (i > 0) {
      EXPECT_GE(e.seconds, model.timeline[i - 1].seconds);
    }
    EXPECT_FALSE(e.lifecycle.empty()) << e.name;
    for (const fs::path& file : e.files) EXPECT_TRUE(fs::is_regular_file(file)) << file;
    // An after or failed event has its lifecycle's duration (logged, or since its before event),
    // but for the two lifecycles MagiCompiler marks only at their end.
    if (e.phase == MagiPhase::After || e.phase == MagiPhase::Failed) {
      EXPECT_TRUE(e.durationS || e.lifecycle == "inductor_schedule" || e.lifecycle == "dynamo_bytecode_transform")
          << e.name;
    }
  }
  // The first compile of piece 0 restarted (TensorifyScalarRestartAnalysis): failed events, then
  // the whole backend call again; the lifecycle totals count it.
  const auto failed = std::count_if(model.timeline.begin(), model.timeline.end(),
                                    [](const MagiTimelineEvent& e) { return e.phase == MagiPhase::Failed; });
  EXPECT_EQ(failed, 5);
  const std::vector<MagiLifecycleTotal> totals = magiLifecycleTotals(model);
  const auto call = std::find_if(totals.begin(), totals.end(),
                                 [](const MagiLifecycleTotal& t) { return t.lifecycle == "magi_backend_call"; });
  ASSERT_NE(call, totals.end());
  EXPECT_EQ(call->runs, 2u);
  EXPECT_EQ(call->failed, 1u);
  EXPECT_EQ(call->lastError, "TensorifyScalarRestartAnalysis");
  // The failed attempt's time (not logged) is the span from its before event: index 0 to 17.
  const MagiTimelineEvent& failedCall = model.timeline.at(17);
  ASSERT_EQ(failedCall.phase, MagiPhase::Failed);
  EXPECT_DOUBLE_EQ(*failedCall.durationS, failedCall.seconds - model.timeline[0].seconds);
  for (size_t i = 1; i < totals.size(); ++i) EXPECT_GE(totals[i - 1].seconds, totals[i].seconds);
  // Every compile of a piece lies inside the backend call that made it.
  const auto compiles = std::find_if(totals.begin(), totals.end(),
                                     [](const MagiLifecycleTotal& t) { return t.lifecycle == "compiler_compile"; });
  ASSERT_NE(compiles, totals.end());
  EXPECT_EQ(compiles->runs, 4u);  // the failed attempt of piece 0, then pieces 0, 2 and 4
  EXPECT_GE(call->seconds, compiles->seconds);
}

TEST(MagiDump, GraphBreakGivesOneCompilePerResumeFunction) {
  const Artifact artifact = loadArtifact(kGraphBreak);
  const TraceLog& log = *artifact.trace;
  std::vector<std::string> ids;
  for (const TraceCompile& c : log.compiles) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"scaled/0", "__resume_at_102_6/0", "__resume_at_108_7/0"}));
  for (const TraceCompile& c : log.compiles) {
    Diagnostics diagnostics;
    const std::optional<GuardTree> guards = compileGuards(log, c, diagnostics);
    ASSERT_TRUE(guards) << c.id;
    EXPECT_EQ(guards->leafCount(), announcedLeaves(std::string(log.guards(c)))) << c.id;
    EXPECT_TRUE(c.graphs.empty()) << c.id;  // torch.compile's own backend: MagiCompiler keeps no graph
  }
  // The frame's decompiled code calls its resume functions.
  ASSERT_GE(log.compiles[0].decompiledCodeEvent, 0);
  const std::string& code = log.events[static_cast<size_t>(log.compiles[0].decompiledCodeEvent)].payload;
  EXPECT_NE(code.find("__resume_at_102_6("), std::string::npos);
  EXPECT_NE(code.find("__resume_at_108_7("), std::string::npos);
  // Three Inductor compiles in the timeline, each with its output code.
  const MagiModel& model = artifact.magi->models.at(0);
  ASSERT_EQ(model.timeline.size(), 3u);
  for (const MagiTimelineEvent& e : model.timeline) {
    EXPECT_EQ(e.lifecycle, "inductor_schedule");
    ASSERT_EQ(e.files.size(), 1u);
    EXPECT_EQ(e.files[0].filename(), "inductor_output.py");
  }
  EXPECT_EQ(artifact.diagnostics().countCode("magi_graph_not_captured"), 3u);
}

TEST(MagiDump, DamagedCopyLoadsWithDiagnostics) {
  lathe::testing::TempDir dir;
  const fs::path copy = dir.path() / "dump";
  fs::copy(kPiecewise, copy, fs::copy_options::recursive);
  fs::path model;
  for (const auto& entry : fs::directory_iterator(copy)) model = entry.path();
  const fs::path timeline = model / "timeline_events/timeline.jsonl";
  const size_t events = lineCount(timeline);
  {
    std::ofstream out(timeline, std::ios::app);
    out << "{\"index\": 999, \"na\n[1, 2]\n{\"name\": \"fullgraph_after_nothing\", \"files\": [\"../../escape\"]}\n";
  }
  const fs::path guards = model / "compiled_functions/forward/entry_0/guards.txt";
  {  // two bad lines under the root manager, before the closure variables that end the tree
    std::string text = slurp(guards);
    text.insert(text.find('\n') + 1, "   LEAF: at an odd indent\n??? not a guard line\n");
    std::ofstream(guards, std::ios::trunc) << text;
  }
  fs::path graph;
  for (const auto& entry : fs::recursive_directory_iterator(model / "compiled_functions"))
    if (entry.path().filename() == "graph_module.py") graph = entry.path();
  {
    std::ofstream out(graph, std::ios::trunc);
    out << "this is not a graph\n";
  }
  const Artifact artifact = loadArtifact(copy);
  const MagiModel& m = artifact.magi->models.at(0);
  EXPECT_EQ(m.timeline.size(), events + 1);  // the readable one of the three appended lines
  EXPECT_TRUE(m.timeline.back().files.empty());  // a name that leaves the event's folder is not followed
  EXPECT_EQ(artifact.diagnostics().countCode("magi_timeline_line_unreadable"), 2u);
  Diagnostics diagnostics;
  const std::optional<GuardTree> tree = compileGuards(*artifact.trace, artifact.trace->compiles.at(0), diagnostics);
  ASSERT_TRUE(tree);
  EXPECT_EQ(tree->leafCount(), announcedLeaves(slurp(guards)));
  EXPECT_EQ(diagnostics.count(Severity::Warning), 2u);
  // The damaged piece is missing from the graphs, the others are there.
  EXPECT_EQ(artifact.trace->compiles.at(0).graphs.size(), 6u);
}

}  // namespace
