// The fusion pass on every forward and inference graph of the sample captures and on random DAGs:
// groups are convex (checked by brute force), acyclic between each other, bounded, within one
// piece, made of fusible nodes, and deterministic; an RMSNorm becomes one reduction group.
#include "passes/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/graph_inputs.h"
#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "io/fx/fx_text.h"
#include "ir/op_info.h"
#include "passes/pipeline.h"
#include "passes/plan_target.h"
#include "passes/split.h"

namespace fs = std::filesystem;
using namespace lathe;

namespace {

const fs::path kCaptures = fs::path(LATHE_SAMPLES_DIR) / "captures";

struct Planned {
  passes::PassResult split, fusion;
};

// split (unless left out) and fusion as a pipeline runs them, on a graph the caller keeps alive.
Planned runPasses(const ir::Graph& graph, const analysis::GraphInputs& inputs, const ir::OpRegistry& ops,
                  std::map<std::string, std::string> fusionOptions = {}, bool split = true) {
  const passes::PlanTarget target(std::shared_ptr<const ir::Graph>(std::shared_ptr<const ir::Graph>(), &graph), "test",
                                  inputs, hw::HwProfile{}, ops);
  std::vector<passes::PipelineStep> steps;
  if (split) steps.push_back({"split", {}});
  steps.push_back({"fusion", passes::PassOptions(std::move(fusionOptions))});
  passes::PipelineRun run = passes::runPipeline(target.context(), steps);
  Planned out;
  out.split = split ? run.history.front().result : passes::PassResult{run.initial, {}, {}};
  out.fusion = std::move(run.history.back().result);
  return out;
}

std::shared_ptr<const ir::Graph> graphOf(const io::Artifact& artifact, std::string_view id) {
  const std::vector<io::GraphListing> graphs = artifact.graphs();
  const io::GraphListing* listing = io::findGraph(graphs, id);
  return listing ? listing->graph : nullptr;
}

double stat(const passes::PassResult& result, const passes::StatKey& key) {
  const std::optional<double> value = result.stat(key);
  if (!value) ADD_FAILURE() << "no stat " << key.name;
  return value.value_or(-1);
}

// Convex by definition: no node outside the set is both reachable from it and reaching into it.
bool bruteForceConvex(const ir::Graph& graph, const std::set<ir::NodeId>& group) {
  std::vector<bool> below(graph.size(), false), above(graph.size(), false);
  std::vector<ir::NodeId> stack;
  for (ir::NodeId member : group) {
    for (ir::NodeId user : graph.users(member)) stack.push_back(user);
  }
  while (!stack.empty()) {
    const ir::NodeId node = stack.back();
    stack.pop_back();
    if (group.count(node) || below[node]) continue;
    below[node] = true;
    for (ir::NodeId user : graph.users(node)) stack.push_back(user);
  }
  for (ir::NodeId member : group) {
    for (ir::NodeId in : graph.inputs(member)) stack.push_back(in);
  }
  while (!stack.empty()) {
    const ir::NodeId node = stack.back();
    stack.pop_back();
    if (group.count(node) || above[node]) continue;
    if (below[node]) return false;
    above[node] = true;
    for (ir::NodeId in : graph.inputs(node)) stack.push_back(in);
  }
  return true;
}

// The graph with every group contracted to one node has no cycle (Kahn's algorithm).
bool contractedGraphIsAcyclic(const ir::Graph& graph, const plan::PlanState& state) {
  const size_t n = graph.size();
  std::vector<size_t> cluster(n);
  size_t clusters = state.groups.size();
  for (ir::NodeId node = 0; node < n; ++node) {
    cluster[node] = state.group[node] == plan::kNone ? clusters++ : static_cast<size_t>(state.group[node]);
  }
  std::vector<std::set<size_t>> edges(clusters);
  std::vector<size_t> indegree(clusters, 0);
  for (ir::NodeId node = 0; node < n; ++node) {
    for (ir::NodeId user : graph.users(node)) {
      if (cluster[user] != cluster[node] && edges[cluster[node]].insert(cluster[user]).second)
        ++indegree[cluster[user]];
    }
  }
  std::vector<size_t> ready;
  for (size_t c = 0; c < clusters; ++c) {
    if (indegree[c] == 0) ready.push_back(c);
  }
  size_t done = 0;
  while (!ready.empty()) {
    const size_t c = ready.back();
    ready.pop_back();
    ++done;
    for (size_t next : edges[c]) {
      if (--indegree[next] == 0) ready.push_back(next);
    }
  }
  return done == clusters;
}

// Everything a fusion plan promises, checked from the graph alone.
void expectValidGroups(const ir::Graph& graph, const ir::OpRegistry& ops, const plan::PlanState& state,
                       size_t maxNodes) {
  std::vector<int32_t> expectedGroup(graph.size(), plan::kNone);
  for (size_t i = 0; i < state.groups.size(); ++i) {
    const plan::FusionGroup& group = state.groups[i];
    SCOPED_TRACE("group " + std::to_string(group.id) + " at " + std::string(graph.name(group.nodes.front())));
    EXPECT_EQ(group.id, static_cast<int32_t>(i));
    ASSERT_GE(group.nodes.size(), 2u);
    EXPECT_LE(group.nodes.size(), maxNodes);
    EXPECT_TRUE(std::is_sorted(group.nodes.begin(), group.nodes.end()));
    EXPECT_TRUE(std::find(group.nodes.begin(), group.nodes.end(), group.anchor) != group.nodes.end());
    if (i > 0) {
      EXPECT_LT(state.groups[i - 1].nodes.front(), group.nodes.front());
    }
    const std::set<ir::NodeId> members(group.nodes.begin(), group.nodes.end());
    EXPECT_EQ(members.size(), group.nodes.size());
    EXPECT_TRUE(bruteForceConvex(graph, members));
    EXPECT_TRUE(passes::isConvex(graph, group.nodes));
    size_t reductions = 0;
    for (ir::NodeId node : group.nodes) {
      expectedGroup[node] = group.id;
      const ir::OpInfo& info = ops.lookup(graph.target(node));
      EXPECT_TRUE(info.fusible) << graph.name(node);
      EXPECT_FALSE(info.subgraphBoundary) << graph.name(node);
      if (!state.boundary.empty()) {
        EXPECT_FALSE(state.boundary[node]) << graph.name(node);
      }
      if (state.pieceCount > 0) {
        EXPECT_EQ(state.piece[node], state.piece[group.nodes.front()]) << graph.name(node);
      }
      const bool reduction =
          info.category == ir::OpCategory::Reduction || info.category == ir::OpCategory::Normalization;
      reductions += reduction ? 1 : 0;
      if (reduction) {
        EXPECT_EQ(group.anchor, node);
      }
    }
    EXPECT_LE(reductions, 1u);
    EXPECT_EQ(group.kind == "pointwise", reductions == 0) << group.kind;
  }
  EXPECT_EQ(state.group, expectedGroup);
  EXPECT_TRUE(contractedGraphIsAcyclic(graph, state));
}

void expectSamePlan(const passes::PassResult& a, const passes::PassResult& b) {
  EXPECT_EQ(a.state.group, b.state.group);
  ASSERT_EQ(a.state.groups.size(), b.state.groups.size());
  for (size_t i = 0; i < a.state.groups.size(); ++i) {
    EXPECT_EQ(a.state.groups[i].nodes, b.state.groups[i].nodes);
    EXPECT_EQ(a.state.groups[i].kind, b.state.groups[i].kind);
    EXPECT_EQ(a.state.groups[i].anchor, b.state.groups[i].anchor);
  }
  EXPECT_EQ(a.diff, b.diff);
}

std::vector<fs::path> captures() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(kCaptures)) out.push_back(entry.path());
  std::sort(out.begin(), out.end());
  return out;
}

// A small random DAG in program order: placeholders, then pointwise ops, reductions, views and
// matmuls (which do not fuse) reading random earlier values, with two sizes that broadcast.
std::shared_ptr<ir::Graph> randomGraph(std::mt19937& rng) {
  auto graph = std::make_shared<ir::Graph>();
  std::vector<ir::NodeId> values;
  std::vector<int64_t> rows;  // per value: 8 = a [4, 8] tensor, 1 = a reduced [4, 1] one
  auto pick = [&]() { return values[std::uniform_int_distribution<size_t>(0, values.size() - 1)(rng)]; };
  auto add = [&](ir::NodeKind kind, std::string_view target, std::vector<ir::NodeId> args, int64_t columns) {
    ir::Node node;
    node.kind = kind;
    node.name = graph->intern("n" + std::to_string(graph->size()));
    node.target = graph->intern(target);
    for (ir::NodeId a : args) node.args.push_back(ir::Arg::ofNode(a));
    node.meta.kind = ir::ValueKind::Tensor;
    node.meta.dtype = ir::DType::F32;
    node.meta.sizes = {{4, 0, true}, {columns, 0, true}};
    const ir::NodeId id = graph->addNode(std::move(node));
    values.push_back(id);
    rows.push_back(columns);
    return id;
  };
  const int placeholders = std::uniform_int_distribution<int>(1, 3)(rng);
  for (int i = 0; i < placeholders; ++i) add(ir::NodeKind::Placeholder, "", {}, i == 2 ? 1 : 8);
  const int ops = std::uniform_int_distribution<int>(5, 60)(rng);
  for (int i = 0; i < ops; ++i) {
    const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
    const ir::NodeId a = pick(), b = pick();
    const int64_t columns = std::max(rows[a], rows[b]);
    if (kind <= 3) {
      add(ir::NodeKind::CallFunction, kind % 2 ? "torch.ops.aten.add.Tensor" : "torch.ops.aten.mul.Tensor", {a, b},
          columns);
    } else if (kind <= 5) {
      add(ir::NodeKind::CallFunction, kind == 4 ? "torch.ops.aten.relu.default" : "torch.ops.aten.exp.default", {a},
          rows[a]);
    } else if (kind == 6) {
      add(ir::NodeKind::CallFunction, "torch.ops.aten.sum.dim_IntList", {a}, 1);
    } else if (kind == 7) {
      add(ir::NodeKind::CallFunction, "torch.ops.aten.view.default", {a}, rows[a]);
    } else if (kind == 8) {
      add(ir::NodeKind::CallFunction, "torch.ops.aten.mm.default", {a, b}, 8);
    } else {
      add(ir::NodeKind::CallFunction, "torch.ops.mylib.cut.default", {a}, rows[a]);
    }
  }
  const size_t returned = std::min<size_t>(values.size(), 3);
  std::vector<ir::NodeId> outputs(values.end() - static_cast<std::ptrdiff_t>(returned), values.end());
  ir::Node output;
  output.kind = ir::NodeKind::Output;
  output.name = graph->intern("output");
  output.target = graph->intern("output");
  ir::Arg items;
  items.kind = ir::Arg::Kind::Tuple;
  for (ir::NodeId o : outputs) items.items.push_back(ir::Arg::ofNode(o));
  output.args.push_back(items);
  graph->addNode(std::move(output));
  graph->finalize();
  return graph;
}

}  // namespace

TEST(Fusion, IsConvexOnASmallDiamond) {
  // a -> b -> c and a -> c: {a, c} has the path a -> b -> c leaving it.
  ir::Graph graph;
  auto add = [&](std::string_view name, std::vector<ir::NodeId> args) {
    ir::Node node;
    node.kind = args.empty() ? ir::NodeKind::Placeholder : ir::NodeKind::CallFunction;
    node.name = graph.intern(name);
    node.target = graph.intern(args.empty() ? "" : "torch.ops.aten.add.Tensor");
    for (ir::NodeId a : args) node.args.push_back(ir::Arg::ofNode(a));
    return graph.addNode(std::move(node));
  };
  const ir::NodeId a = add("a", {});
  const ir::NodeId b = add("b", {a});
  const ir::NodeId c = add("c", {a, b});
  const ir::NodeId d = add("d", {c});
  graph.finalize();
  EXPECT_FALSE(passes::isConvex(graph, std::vector<ir::NodeId>{a, c}));
  EXPECT_FALSE(passes::isConvex(graph, std::vector<ir::NodeId>{c, a, d}));
  EXPECT_TRUE(passes::isConvex(graph, std::vector<ir::NodeId>{a, b, c}));
  EXPECT_TRUE(passes::isConvex(graph, std::vector<ir::NodeId>{b, c, d}));
  EXPECT_FALSE(passes::isConvex(graph, std::vector<ir::NodeId>{a, d}));
  EXPECT_TRUE(passes::isConvex(graph, std::vector<ir::NodeId>{a, b}));  // a -> c -> d never comes back
  EXPECT_TRUE(passes::isConvex(graph, std::vector<ir::NodeId>{b}));
  EXPECT_TRUE(passes::isConvex(graph, std::vector<ir::NodeId>{}));
}

TEST(Fusion, EveryForwardAndInferenceGraphOfTheSamples) {
  const ir::OpRegistry ops;
  size_t graphs = 0, trainingGraphs = 0;
  for (const fs::path& path : captures()) {
    const io::Artifact artifact = io::loadArtifact(path);
    const std::vector<io::GraphListing> listings = artifact.graphs();
    for (const io::GraphListing& listing : listings) {
      if (listing.kind != "aot_forward_graph" && listing.kind != "aot_inference_graph") continue;
      SCOPED_TRACE(path.filename().string() + " " + listing.id);
      const std::string dynamoId = listing.id.substr(0, listing.id.rfind(':')) + ":dynamo_output_graph";
      const ir::Graph* dynamo = nullptr;
      for (const io::GraphListing& other : listings) {
        if (other.id == dynamoId) dynamo = other.graph.get();
      }
      const ir::Graph& graph = *listing.graph;
      const analysis::GraphInputs inputs = analysis::inferGraphInputs(graph, dynamo);
      const Planned first = runPasses(graph, inputs, ops);
      expectValidGroups(graph, ops, first.fusion.state, 64);
      EXPECT_EQ(first.fusion.state.piece, first.split.state.piece);  // fusion keeps the other layers
      EXPECT_EQ(first.fusion.diff.size(), first.fusion.state.groups.size());
      EXPECT_LT(stat(first.fusion, passes::FusionPass::kKernelsAfter), stat(first.fusion, passes::FusionPass::kKernelsBefore));
      EXPECT_GT(stat(first.fusion, passes::FusionPass::kTrafficRemoved), 0);
      size_t fused = 0;
      for (const plan::FusionGroup& group : first.fusion.state.groups) fused += group.nodes.size();
      EXPECT_EQ(stat(first.fusion, passes::FusionPass::kFusedNodes), static_cast<double>(fused));
      expectSamePlan(first.fusion, runPasses(graph, inputs, ops).fusion);
      ++graphs;
      trainingGraphs += listing.kind == "aot_forward_graph" ? 1 : 0;
    }
  }
  EXPECT_EQ(graphs, 22u);
  EXPECT_EQ(trainingGraphs, 14u);
}

TEST(Fusion, JointGraphGroupsStayOnOneSideAndInOnePiece) {
  const io::Artifact artifact = io::loadArtifact(kCaptures / "llama3_8b_2l_tiny_train.log.gz");
  const std::shared_ptr<const ir::Graph> joint = graphOf(artifact, "0/0:aot_joint_graph");
  const std::shared_ptr<const ir::Graph> dynamo = graphOf(artifact, "0/0:dynamo_output_graph");
  ASSERT_TRUE(joint && dynamo);
  const analysis::GraphInputs inputs = analysis::inferGraphInputs(*joint, dynamo.get());
  std::vector<bool> backward(joint->size(), false);
  for (ir::NodeId node = 0; node < joint->size(); ++node) {
    backward[node] = inputs.role[node] == ir::Role::Tangent;
    for (ir::NodeId in : joint->inputs(node)) backward[node] = backward[node] || backward[in];
  }
  const ir::OpRegistry ops;
  for (bool split : {true, false}) {
    SCOPED_TRACE(split ? "after split" : "alone");
    const Planned planned = runPasses(*joint, inputs, ops, {}, split);
    expectValidGroups(*joint, ops, planned.fusion.state, 64);
    size_t backwardGroups = 0;
    for (const plan::FusionGroup& group : planned.fusion.state.groups) {
      for (ir::NodeId node : group.nodes) EXPECT_EQ(backward[node], backward[group.nodes.front()]);
      backwardGroups += backward[group.nodes.front()] ? 1 : 0;
    }
    EXPECT_GT(backwardGroups, 10u);
  }
}

TEST(Fusion, RmsNormBecomesOneReductionGroup) {
  const io::Artifact artifact = io::loadArtifact(kCaptures / "llama3_8b_2l_tiny_train.log.gz");
  const std::shared_ptr<const ir::Graph> forward = graphOf(artifact, "0/0:aot_forward_graph");
  ASSERT_TRUE(forward);
  const ir::Graph& graph = *forward;
  const ir::OpRegistry ops;
  const Planned planned = runPasses(graph, analysis::inferGraphInputs(graph, nullptr), ops);
  const plan::PlanState& state = planned.fusion.state;
  auto targetIs = [&](ir::NodeId node, std::string_view op) { return graph.target(node).starts_with(op); };
  size_t norms = 0;
  for (ir::NodeId mean = 0; mean < graph.size(); ++mean) {
    if (!targetIs(mean, "torch.ops.aten.mean.") || !targetIs(graph.inputs(mean)[0], "torch.ops.aten.pow.")) continue;
    SCOPED_TRACE(std::string(graph.name(mean)));
    ++norms;
    const int32_t group = state.group[mean];
    ASSERT_NE(group, plan::kNone);
    const plan::FusionGroup& fused = state.groups[static_cast<size_t>(group)];
    EXPECT_TRUE(fused.kind == "reduction" || fused.kind == "normalization") << fused.kind;
    EXPECT_EQ(fused.anchor, mean);
    // variance = x.pow(2).mean(-1); x * rsqrt(variance + eps), then * weight
    const ir::NodeId pow = graph.inputs(mean)[0];
    const ir::NodeId add = graph.users(mean)[0];
    const ir::NodeId rsqrt = graph.users(add)[0];
    const ir::NodeId scale = graph.users(rsqrt)[0];
    EXPECT_TRUE(targetIs(add, "torch.ops.aten.add."));
    EXPECT_TRUE(targetIs(rsqrt, "torch.ops.aten.rsqrt."));
    EXPECT_TRUE(targetIs(scale, "torch.ops.aten.mul."));
    for (ir::NodeId member : {pow, graph.inputs(pow)[0], add, rsqrt, scale}) {
      EXPECT_EQ(state.group[member], group) << graph.name(member);
    }
  }
  EXPECT_EQ(norms, 5u);  // two per layer and the final norm
}

TEST(Fusion, Options) {
  const io::Artifact artifact = io::loadArtifact(kCaptures / "gpt2_tiny_train.log.gz");
  const std::shared_ptr<const ir::Graph> forward = graphOf(artifact, "1/0_1:aot_forward_graph");
  ASSERT_TRUE(forward);
  const analysis::GraphInputs inputs = analysis::inferGraphInputs(*forward, nullptr);
  const ir::OpRegistry ops;
  const Planned wide = runPasses(*forward, inputs, ops);
  const Planned narrow = runPasses(*forward, inputs, ops, {{"max_nodes", "3"}});
  expectValidGroups(*forward, ops, narrow.fusion.state, 3);
  EXPECT_GT(stat(narrow.fusion, passes::FusionPass::kKernelsAfter), stat(wide.fusion, passes::FusionPass::kKernelsAfter));
  const Planned none = runPasses(*forward, inputs, ops, {{"max_nodes", "1"}});
  EXPECT_TRUE(none.fusion.state.groups.empty());
  EXPECT_EQ(stat(none.fusion, passes::FusionPass::kKernelsAfter), stat(none.fusion, passes::FusionPass::kKernelsBefore));
  for (const auto& [key, value] : std::map<std::string, std::string>{
           {"max_nodes", "0"}, {"max_nodes", "2.5"}, {"max_nodes", "many"}, {"max_node", "8"}}) {
    try {
      (void)runPasses(*forward, inputs, ops, {{key, value}});
      ADD_FAILURE() << key << "=" << value << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::Usage) << key << "=" << value;
    }
  }
}

TEST(Fusion, RandomGraphsGetConvexAcyclicGroups) {
  ir::OpRegistry ops;
  Diagnostics diagnostics;
  ops.loadFlagsJson(R"({"mylib.cut": {"subgraph_boundary": true, "fusible": true}})", "flags.json", diagnostics);
  size_t groups = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 rng(seed);
    const auto graph = randomGraph(rng);
    const analysis::GraphInputs inputs = analysis::inferGraphInputs(*graph, nullptr);
    const size_t maxNodes = std::uniform_int_distribution<size_t>(2, 12)(rng);
    const bool split = seed % 2 == 0;
    const Planned planned = runPasses(*graph, inputs, ops, {{"max_nodes", std::to_string(maxNodes)}}, split);
    expectValidGroups(*graph, ops, planned.fusion.state, maxNodes);
    groups += planned.fusion.state.groups.size();
    // isConvex agrees with the definition on random node sets too.
    for (int trial = 0; trial < 20; ++trial) {
      std::set<ir::NodeId> subset;
      const size_t size = std::uniform_int_distribution<size_t>(1, 6)(rng);
      for (size_t i = 0; i < size; ++i)
        subset.insert(std::uniform_int_distribution<ir::NodeId>(0, graph->size() - 2)(rng));
      const std::vector<ir::NodeId> nodes(subset.rbegin(), subset.rend());
      EXPECT_EQ(passes::isConvex(*graph, nodes), bruteForceConvex(*graph, subset));
    }
    if (::testing::Test::HasFailure()) break;
  }
  EXPECT_GT(groups, 300u);
}

TEST(Fusion, LongViewChainsInsideAGroupAreWalkedWithoutRecursion) {
  // An add, 4000 views of it one after another, and a mul of the last view: the views ride along
  // into the add's group, whose saved bytes walk the chain from the add to the mul.
  const std::string a = "\"f32[64][1]cuda:0\"";
  std::string text = "class GraphModule(torch.nn.Module):\n    def forward(self, x: " + a + "):\n";
  text += "        add: " + a + " = torch.ops.aten.add.Tensor(x, 1)\n";
  std::string previous = "add";
  for (int i = 0; i < 4000; ++i) {
    const std::string name = "view_" + std::to_string(i);
    text += "        " + name + ": " + a + " = torch.ops.aten.view.default(" + previous + ", [64])\n";
    previous = name;
  }
  text += "        mul: " + a + " = torch.ops.aten.mul.Tensor(" + previous + ", 2)\n        return (mul,)\n";
  Diagnostics diagnostics;
  const std::shared_ptr<ir::Graph> graph = io::parseFxText(text, {}, diagnostics);
  ASSERT_NE(graph, nullptr);
  const analysis::GraphInputs inputs = analysis::inferGraphInputs(*graph, nullptr);
  const Planned planned = runPasses(*graph, inputs, ir::OpRegistry::global(), {{"max_nodes", "5000"}});
  ASSERT_EQ(planned.fusion.state.groups.size(), 1u);
  EXPECT_EQ(planned.fusion.state.groups[0].nodes.size(), 4002u);
  // The add's value is neither stored nor read back (through the views) by the mul.
  EXPECT_EQ(stat(planned.fusion, passes::FusionPass::kTrafficRemoved), 2 * 64.0 * 4);
}
