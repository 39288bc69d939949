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
#include <set>
#include <string>
#include <vector>

#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "ir/op_info.h"

namespace fs = std::filesystem;
using namespace lathe;

namespace {

const fs::path kCaptures = fs::path(LATHE_SAMPLES_DIR) / "captures";

std::shared_ptr<const ir::Graph> graphById(const io::Artifact& artifact, std::string_view id) {
  for (const io::GraphListing& listing : artifact.graphs()) {
    if (listing.id == id) return listing.graph;
  }
  return nullptr;
}

// A graph with its placeholder roles joined with the Dynamo graph of the same compile.
struct Sample {
  std::shared_ptr<const ir::Graph> graph;
  analysis::GraphInputs inputs;
};

Sample loadSample(const std::string& file, const std::string& compile, const std::string& kind) {
  const io::Artifact artifact = io::loadArtifact(kCaptures / file);
  Sample sample;
  sample.graph = graphById(artifact, compile + ":" + kind);
  const auto dynamo = graphById(artifact, compile + ":dynamo_output_graph");
  if (sample.graph == nullptr || dynamo == nullptr) throw std::runtime_error(file + ": no " + compile + ":" + kind);
  sample.inputs = analysis::inferGraphInputs(*sample.graph, dynamo.get());
  return sample;
}

const Sample& llamaJoint() {
  static const Sample sample = loadSample("llama3_8b_2l_tiny_train.log.gz", "0/0", "aot_joint_graph");
  return sample;
}

passes::PassResult runSplit(const ir::Graph& graph, const analysis::GraphInputs& inputs, const ir::OpRegistry& ops,
                            std::map<std::string, std::string> options = {}) {
  const hw::HwProfile hw;
  const passes::PassContext context{graph, inputs, hw, ops, {}};
  return passes::SplitPass().run(context, plan::PlanState::empty(graph.size()),
                                 passes::PassOptions(std::move(options)));
}

bool isCategory(const ir::Graph& graph, ir::NodeId node, const ir::OpRegistry& ops, ir::OpCategory category) {
  const ir::NodeKind kind = graph.node(node).kind;
  return kind == ir::NodeKind::CallFunction && ops.lookup(graph.target(node)).category == category;
}

double stat(const passes::PassResult& result, std::string_view name) {
  for (const passes::PassStat& s : result.stats) {
    if (s.name == name) return s.value;
  }
  ADD_FAILURE() << "no stat " << name;
  return -1;
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

TEST(Split, LayerUnitKeys) {
  EXPECT_EQ(passes::layerUnitKey("model.layers.3.mlp.up_proj"), "model.layers.3");
  EXPECT_EQ(passes::layerUnitKey("transformer.h.7"), "transformer.h.7");
  EXPECT_EQ(passes::layerUnitKey("vit.encoder.layer.11.attention.query"), "vit.encoder.layer.11");
  EXPECT_EQ(passes::layerUnitKey("blocks.0.mlp.fc1"), "blocks.0");
  EXPECT_EQ(passes::layerUnitKey("model.layers.12"), "model.layers.12");
  EXPECT_EQ(passes::layerUnitKey("model.norm"), "");
  EXPECT_EQ(passes::layerUnitKey("0.weight"), "");  // a number with no container above it
  EXPECT_EQ(passes::layerUnitKey("layers.1a.mlp"), "");
  EXPECT_EQ(passes::layerUnitKey(""), "");
}

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
  EXPECT_EQ(stat(result, "pieces"), 9);
  EXPECT_EQ(stat(result, "split_ops"), 4);

  // Placeholders sit in the piece of their first user.
  for (ir::NodeId node : llama.inputs.placeholders) {
    if (graph.users(node).empty()) continue;
    EXPECT_EQ(result.state.piece[node], result.state.piece[graph.users(node)[0]]) << graph.name(node);
  }
  const ir::NodeId second = *std::next(attention.begin());
  const std::string after = "(after split op " + std::string(graph.name(second)) + ")";
  EXPECT_EQ(
      std::count_if(result.diff.begin(), result.diff.end(),
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
  EXPECT_EQ(result.diff[0], "+ piece 0: 2 nodes (split op a)");
  EXPECT_EQ(result.diff[1], "+ piece 1: 1 node (split op b)");
  EXPECT_EQ(result.diff[2], "+ piece 2: 1 node (after split op b)");
  EXPECT_TRUE(result.state.units.empty());  // no parameters
}

TEST(Split, LayerUnitsFromModulePaths) {
  const Sample& llama = llamaJoint();
  const ir::Graph& graph = *llama.graph;
  const ir::OpRegistry ops;
  ASSERT_TRUE(llama.inputs.joinedWithDynamo);
  const passes::PassResult result = runSplit(graph, llama.inputs, ops);
  const plan::PlanState& state = result.state;

  std::vector<std::string> names;
  for (const plan::LayerUnit& unit : state.units) names.push_back(unit.name);
  EXPECT_EQ(names, (std::vector<std::string>{"prologue", "model.layers.0", "model.layers.1", "epilogue"}));

  std::map<ir::NodeId, int> owners;
  uint64_t unitBytes = 0, parameterBytes = 0;
  for (const plan::LayerUnit& unit : state.units) {
    unitBytes += unit.weightBytes;
    for (ir::NodeId w : unit.weights) {
      ++owners[w];
      EXPECT_EQ(state.unit[w], unit.id);
      const std::string& path = llama.inputs.modulePath[w];
      if (unit.name.starts_with("model.layers.")) {
        EXPECT_TRUE(path.starts_with(unit.name + ".")) << path;
      }
    }
  }
  for (ir::NodeId p : llama.inputs.placeholders) {
    if (llama.inputs.role[p] != ir::Role::Parameter) {
      EXPECT_EQ(owners.count(p), 0u) << graph.name(p);
      continue;
    }
    parameterBytes += graph.node(p).meta.storageBytes();
    EXPECT_EQ(owners[p], 1) << graph.name(p);
  }
  EXPECT_EQ(owners.size(), 21u);  // 9 per layer, embedding, final norm, lm_head (inv_freq is a buffer)
  EXPECT_EQ(unitBytes, parameterBytes);
  EXPECT_EQ(state.units[0].weights.size(), 1u);  // embed_tokens
  EXPECT_EQ(llama.inputs.modulePath[state.units[0].weights[0]], "model.embed_tokens");
  EXPECT_EQ(state.units[1].weights.size(), 9u);
  EXPECT_EQ(state.units[3].weights.size(), 2u);  // model.norm, lm_head
  EXPECT_EQ(stat(result, "units"), 4);
  EXPECT_EQ(stat(result, "unit_weight_bytes_max"), static_cast<double>(state.units[1].weightBytes));
  const std::string unitLine = "+ unit model.layers.0: 9 weights, " + formatBytes(state.units[1].weightBytes);
  EXPECT_NE(std::find(result.diff.begin(), result.diff.end(), unitLine), result.diff.end()) << unitLine;

  // Every node but the output has a unit; a gradient lies in the unit of its parameter; forward
  // matmuls lie in the unit of the weight they multiply.
  for (ir::NodeId node = 0; node < graph.size(); ++node) {
    const bool output = graph.node(node).kind == ir::NodeKind::Output;
    EXPECT_EQ(state.unit[node] == plan::kNone, output) << graph.name(node);
  }
  const analysis::JointInfo joint = analysis::analyzeJoint(graph);
  const std::vector<ir::NodeId> items = analysis::outputItems(graph);
  ASSERT_TRUE(joint.joint);
  size_t gradients = 0;
  for (size_t i = 0; i < joint.primals.size(); ++i) {
    const ir::NodeId gradient = items[joint.forwardOutputCount + i];
    if (gradient == ir::kNoNode || state.unit[joint.primals[i]] == plan::kNone) continue;
    if (llama.inputs.role[joint.primals[i]] != ir::Role::Parameter) continue;
    EXPECT_EQ(state.unit[gradient], state.unit[joint.primals[i]]) << graph.name(gradient);
    ++gradients;
  }
  EXPECT_EQ(gradients, 21u);
  size_t matmuls = 0;
  for (ir::NodeId node = 0; node < graph.size(); ++node) {
    if (graph.target(node) != "torch.ops.aten.mm.default" || joint.tangentClosure[node]) continue;
    const ir::NodeId weightView = graph.inputs(node)[1];  // x @ permute(W)
    if (graph.inputs(weightView).empty()) continue;
    const ir::NodeId weight = graph.inputs(weightView)[0];
    if (llama.inputs.role[weight] != ir::Role::Parameter) continue;
    EXPECT_EQ(state.unit[node], state.unit[weight]) << graph.name(node);
    ++matmuls;
  }
  EXPECT_EQ(matmuls, 2u * 7 + 1);  // q, k, v, o, gate, up, down per layer; lm_head
}

TEST(Split, LayerUnitsFromRepeatedStructureWithoutModulePaths) {
  Sample llama = llamaJoint();
  for (std::string& path : llama.inputs.modulePath) path.clear();
  const ir::Graph& graph = *llama.graph;
  const ir::OpRegistry ops;
  const passes::PassResult result = runSplit(graph, llama.inputs, ops);
  const plan::PlanState& state = result.state;
  const Sample& named = llamaJoint();

  // Cut at the two forward attention ops: embedding and layer 0 up to attention; the rest of
  // layer 0 and layer 1 up to attention; the rest.
  ASSERT_EQ(state.units.size(), 3u);
  std::map<std::string, std::set<std::string>> paths;
  size_t weights = 0;
  for (const plan::LayerUnit& unit : state.units) {
    EXPECT_EQ(unit.name, "block." + std::to_string(unit.id));
    for (ir::NodeId w : unit.weights) paths[unit.name].insert(named.inputs.modulePath[w]);
    weights += unit.weights.size();
  }
  EXPECT_EQ(weights, 21u);
  EXPECT_TRUE(paths["block.0"].count("model.embed_tokens"));
  EXPECT_TRUE(paths["block.0"].count("model.layers.0.self_attn.v_proj"));
  EXPECT_TRUE(paths["block.1"].count("model.layers.0.self_attn.o_proj"));
  EXPECT_TRUE(paths["block.1"].count("model.layers.1.self_attn.q_proj"));
  EXPECT_TRUE(paths["block.2"].count("model.layers.1.mlp.down_proj"));
  EXPECT_TRUE(paths["block.2"].count("lm_head"));
}

TEST(Split, EveryTrainingSampleGetsUnitsOwningEachParameterOnce) {
  struct Case {
    std::string file, compile;
    size_t layers;
  };
  for (const Case& c : std::vector<Case>{{"gpt2_tiny_train.log.gz", "1/0_1", 2},
                                         {"vit_b16_tiny_train.log.gz", "0/0", 2},
                                         {"mixtral_2l_tiny_train.log.gz", "0/0", 2},
                                         {"llama3_8b_4l_train.log.gz", "0/0", 4}}) {
    SCOPED_TRACE(c.file);
    const Sample sample = loadSample(c.file, c.compile, "aot_joint_graph");
    const ir::OpRegistry ops;
    const passes::PassResult result = runSplit(*sample.graph, sample.inputs, ops);
    size_t layers = 0, owned = 0, parameters = 0;
    uint64_t bytes = 0, parameterBytes = 0;
    for (const plan::LayerUnit& unit : result.state.units) {
      layers += passes::layerUnitKey(unit.name).empty() ? 0 : 1;
      owned += unit.weights.size();
      bytes += unit.weightBytes;
    }
    for (ir::NodeId p : sample.inputs.placeholders) {
      if (sample.inputs.role[p] != ir::Role::Parameter) continue;
      ++parameters;
      parameterBytes += sample.graph->node(p).meta.storageBytes();
    }
    EXPECT_EQ(layers, c.layers);
    EXPECT_EQ(owned, parameters);
    EXPECT_GT(parameters, 0u);
    EXPECT_EQ(bytes, parameterBytes);
    EXPECT_EQ(result.state.pieceCount % 2, 1);
  }
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
