// The split pass on real captures: pieces at attention and subgraph_boundary ops, numbered densely;
// layer units from module paths and from repeated structure.
#include "passes/split.h"

#include <gtest/gtest.h>

#include "util/format.h"
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "analysis/layer_units.h"
#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "ir/op_info.h"
#include "passes/pipeline.h"
#include "passes/plan_target.h"

namespace fs = std::filesystem;
using namespace lathe;

namespace {

const fs::path kCaptures = fs::path(LATHE_SAMPLES_DIR) / "captures";

// A graph with its placeholder roles joined with the Dynamo graph of the same compile.
struct Sample {
  std::shared_ptr<const ir::Graph> graph;
  analysis::GraphInputs inputs;
};

Sample loadSample(const std::string& file, const std::string& compile, const std::string& kind) {
  const io::Artifact artifact = io::loadArtifact(kCaptures / file);
  const std::vector<io::GraphListing> graphs = artifact.graphs();
  const io::GraphListing* graph = io::findGraph(graphs, compile + ":" + kind);
  const io::GraphListing* dynamo = io::findGraph(graphs, compile + ":dynamo_output_graph");
  if (graph == nullptr || dynamo == nullptr) throw std::runtime_error(file + ": no " + compile + ":" + kind);
  Sample sample;
  sample.graph = graph->graph;
  sample.inputs = analysis::inferGraphInputs(*sample.graph, dynamo->graph.get());
  return sample;
}

const Sample& llamaJoint() {
  static const Sample sample = loadSample("llama3_8b_2l_tiny_train.log.gz", "0/0", "aot_joint_graph");
  return sample;
}

// The split pass as a pipeline runs it (options checked first), on a graph the caller keeps alive.
passes::PassResult runSplit(const ir::Graph& graph, const analysis::GraphInputs& inputs, const ir::OpRegistry& ops,
                            std::map<std::string, std::string> options = {}) {
  const passes::PlanTarget target(std::shared_ptr<const ir::Graph>(std::shared_ptr<const ir::Graph>(), &graph), "test",
                                  inputs, hw::HwProfile{}, ops);
  const std::vector<passes::PipelineStep> steps{{"split", passes::PassOptions(std::move(options))}};
  return passes::runPipeline(target.context(), steps).history.front().result;
}

bool isCategory(const ir::Graph& graph, ir::NodeId node, const ir::OpRegistry& ops, ir::OpCategory category) {
  const ir::NodeKind kind = graph.node(node).kind;
  return kind == ir::NodeKind::CallFunction && ops.lookup(graph.target(node)).category == category;
}

double stat(const passes::PassResult& result, const passes::StatKey& key) {
  const std::optional<double> value = result.stat(key);
  if (!value) ADD_FAILURE() << "no stat " << key.name;
  return value.value_or(-1);
}

// Pieces are dense, cover every node but the output, and split ops are exactly `splitOps`.
void expectWellFormedPieces(const ir::Graph& graph, const plan::PlanState& state,
                            const std::set<ir::NodeId>& splitOps) {
  std::set<int32_t> seen;
  for (ir::NodeId node = 0; node < graph.size(); ++node) {
    const bool output = graph.node(node).kind == ir::NodeKind::Output;
    EXPECT_EQ(state.piece[node] == plan::kNone, output) << graph.name(node);
    if (!output) seen.insert(state.piece[node]);
    EXPECT_EQ(state.boundary[node], splitOps.count(node) == 1) << graph.name(node);
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(state.pieceCount));
  EXPECT_EQ(*seen.begin(), 0);
  EXPECT_EQ(*seen.rbegin(), state.pieceCount - 1);
  // Calls run through the pieces in order: a split op and the call after it each open a new piece.
  int32_t previous = plan::kNone;
  bool previousSplit = false;
  for (ir::NodeId node = 0; node < graph.size(); ++node) {
    if (graph.node(node).kind != ir::NodeKind::CallFunction) continue;
    if (graph.target(node) == "operator.getitem" && state.boundary[graph.inputs(node)[0]]) {
      EXPECT_EQ(state.piece[node], state.piece[graph.inputs(node)[0]]);
      continue;
    }
    const int32_t expected = previous == plan::kNone                 ? 0
                             : state.boundary[node] || previousSplit ? previous + 1
                                                                     : previous;
    EXPECT_EQ(state.piece[node], expected) << graph.name(node);
    previous = state.piece[node];
    previousSplit = state.boundary[node];
  }
  for (ir::NodeId a : splitOps) {
    for (ir::NodeId node = 0; node < graph.size(); ++node) {
      if (node == a || state.piece[node] != state.piece[a]) continue;
      const bool getitem = graph.target(node) == "operator.getitem" && graph.inputs(node)[0] == a;
      const bool placeholder = graph.node(node).kind == ir::NodeKind::Placeholder;
      EXPECT_TRUE(getitem || placeholder) << graph.name(node) << " shares the piece of split op " << graph.name(a);
    }
  }
}

}  // namespace

TEST(Split, JointGraphSplitsAtForwardAndBackwardAttention) {
  const Sample& llama = llamaJoint();
  const ir::Graph& graph = *llama.graph;
  const ir::OpRegistry ops;
  std::set<ir::NodeId> attention;
  size_t backwardAttention = 0;
  for (ir::NodeId node = 0; node < graph.size(); ++node) {
    if (!isCategory(graph, node, ops, ir::OpCategory::Attention)) continue;
    attention.insert(node);
    backwardAttention += graph.target(node).find("backward") != std::string_view::npos ? 1 : 0;
  }
  ASSERT_EQ(attention.size(), 4u);  // two layers, forward and backward
  ASSERT_EQ(backwardAttention, 2u);

  const passes::PassResult result = runSplit(graph, llama.inputs, ops);
  EXPECT_EQ(result.state.pieceCount, static_cast<int32_t>(2 * attention.size() + 1));
  expectWellFormedPieces(graph, result.state, attention);
  EXPECT_EQ(stat(result, passes::SplitPass::kPieces), 9);
  EXPECT_EQ(stat(result, passes::SplitPass::kSplitOps), 4);

  // Placeholders sit in the piece of their first user.
  for (ir::NodeId node : llama.inputs.placeholders) {
    if (graph.users(node).empty()) continue;
    EXPECT_EQ(result.state.piece[node], result.state.piece[graph.users(node)[0]]) << graph.name(node);
  }
  const ir::NodeId second = *std::next(attention.begin());
  const std::string after = "(after split op " + std::string(graph.name(second)) + ")";
  EXPECT_EQ(
      std::ranges::count_if(toEnglish(result.diff),
                            [&](const std::string& line) { return line.starts_with("+ piece 4: ") && line.ends_with(after); }),
      1)
      << "diff lacks piece 4 after " << graph.name(second);

  const passes::PassResult noAttention = runSplit(graph, llama.inputs, ops, {{"attention", "false"}});
  EXPECT_EQ(noAttention.state.pieceCount, 1);
  expectWellFormedPieces(graph, noAttention.state, {});
}

TEST(Split, FlagsFileMovesTheSplit) {
  const Sample& llama = llamaJoint();
  const ir::Graph& graph = *llama.graph;
  const fs::path flags = fs::temp_directory_path() / ("lathe_split_flags_" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(flags);
    out << R"({"aten.embedding": {"subgraph_boundary": true}})";
  }
  ir::OpRegistry ops;
  Diagnostics diagnostics;
  ops.loadFlagsFile(flags, diagnostics);
  fs::remove(flags);
  ASSERT_TRUE(diagnostics.empty());

  std::set<ir::NodeId> embeddings, splitOps;
  for (ir::NodeId node = 0; node < graph.size(); ++node) {
    if (graph.target(node) == "torch.ops.aten.embedding.default") embeddings.insert(node);
    if (isCategory(graph, node, ops, ir::OpCategory::Attention)) splitOps.insert(node);
  }
  ASSERT_EQ(embeddings.size(), 1u);
  // The embedding is the first call: MagiCompiler's numbering would leave piece 0 empty.
  const passes::PassResult only = runSplit(graph, llama.inputs, ops, {{"attention", "false"}});
  EXPECT_EQ(only.state.pieceCount, 2);
  expectWellFormedPieces(graph, only.state, embeddings);
  EXPECT_EQ(only.state.piece[*embeddings.begin()], 0);

  splitOps.insert(*embeddings.begin());
  const passes::PassResult both = runSplit(graph, llama.inputs, ops);
  EXPECT_EQ(both.state.pieceCount, 2 * 5 + 1 - 1);
  expectWellFormedPieces(graph, both.state, splitOps);
}

TEST(Split, ConsecutiveSplitOpsGetNoGaps) {
  // x -> boundary -> boundary -> relu: MagiCompiler numbers the calls 1, 3, 4.
  ir::Graph graph;
  auto add = [&](ir::NodeKind kind, std::string_view name, std::string_view target, std::vector<ir::NodeId> args) {
    ir::Node node;
    node.kind = kind;
    node.name = graph.intern(name);
    node.target = graph.intern(target);
    for (ir::NodeId a : args) node.args.push_back(ir::Arg::ofNode(a));
    node.meta.kind = ir::ValueKind::Tensor;
    node.meta.dtype = ir::DType::F32;
    node.meta.sizes = {{8, 0, true}};
    return graph.addNode(std::move(node));
  };
  const ir::NodeId x = add(ir::NodeKind::Placeholder, "x", "", {});
  const ir::NodeId a = add(ir::NodeKind::CallFunction, "a", "torch.ops.mylib.cut.default", {x});
  const ir::NodeId b = add(ir::NodeKind::CallFunction, "b", "torch.ops.mylib.cut.default", {a});
  const ir::NodeId c = add(ir::NodeKind::CallFunction, "c", "torch.ops.aten.relu.default", {b});
  add(ir::NodeKind::Output, "output", "output", {c});
  graph.finalize();
  ir::OpRegistry ops;
  Diagnostics diagnostics;
  ops.loadFlagsJson(R"({"mylib.cut": {"subgraph_boundary": true}})", "flags.json", diagnostics);
  const analysis::GraphInputs inputs = analysis::inferGraphInputs(graph, nullptr);
  const passes::PassResult result = runSplit(graph, inputs, ops);
  EXPECT_EQ(result.state.pieceCount, 3);
  EXPECT_EQ(result.state.piece, (std::vector<int32_t>{0, 0, 1, 2, plan::kNone}));
  EXPECT_EQ(result.state.boundary, (std::vector<bool>{false, true, true, false, false}));
  EXPECT_EQ(toEnglish(result.diff[0]), "+ piece 0: 2 nodes (split op a)");
  EXPECT_EQ(toEnglish(result.diff[1]), "+ piece 1: 1 node (split op b)");
  EXPECT_EQ(toEnglish(result.diff[2]), "+ piece 2: 1 node (after split op b)");
  EXPECT_TRUE(result.state.units.empty());  // no parameters
}

TEST(Split, LayerUnitsAreTheTargetsWithTheirStatisticsAndDiff) {
  const Sample& llama = llamaJoint();
  const ir::OpRegistry ops;
  const passes::PassResult result = runSplit(*llama.graph, llama.inputs, ops);
  const analysis::LayerUnits units = analysis::layerUnits(*llama.graph, llama.inputs, ops);
  const plan::PlanState& state = result.state;
  EXPECT_EQ(state.unit, units.unit);
  ASSERT_EQ(state.units.size(), units.units.size());
  for (size_t u = 0; u < units.units.size(); ++u) {
    EXPECT_EQ(state.units[u].name, units.units[u].name);
    EXPECT_EQ(state.units[u].weights, units.units[u].weights);
  }
  EXPECT_EQ(stat(result, passes::SplitPass::kLayerUnits), 4);
  EXPECT_EQ(stat(result, passes::SplitPass::kUnitWeightBytesMax), static_cast<double>(state.units[1].weightBytes));
  const std::string unitLine = "+ unit model.layers.0: 9 weights, " + formatBytes(state.units[1].weightBytes);
  EXPECT_TRUE(std::ranges::count(toEnglish(result.diff), unitLine) == 1) << unitLine;
}

TEST(Split, Options) {
  const Sample& llama = llamaJoint();
  const ir::OpRegistry ops;
  const passes::PassResult result = runSplit(*llama.graph, llama.inputs, ops, {{"units", "false"}});
  EXPECT_TRUE(result.state.units.empty());
  EXPECT_TRUE(
      std::all_of(result.state.unit.begin(), result.state.unit.end(), [](int32_t u) { return u == plan::kNone; }));
  EXPECT_EQ(result.state.pieceCount, 9);
  try {
    (void)runSplit(*llama.graph, llama.inputs, ops, {{"atention", "false"}});
    FAIL() << "a misspelt option was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Usage);
  }
  // Deterministic: the same input gives the same plan.
  const passes::PassResult again = runSplit(*llama.graph, llama.inputs, ops, {{"units", "false"}});
  EXPECT_EQ(again.state.piece, result.state.piece);
  EXPECT_EQ(again.diff, result.diff);
}
