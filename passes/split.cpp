#include "passes/split.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <limits>
#include <map>
#include <vector>

#include "analysis/joint.h"
#include "util/diagnostics.h"
#include "util/format.h"

namespace lathe::passes {

namespace {

using ir::NodeId;
using plan::kNone;

// ---- pieces ----

struct Pieces {
  std::vector<int32_t> piece;
  std::vector<bool> boundary;
  int32_t count = 0;
  size_t splitOps = 0;
};

Pieces splitPieces(const PassContext& context, bool attention) {
  const ir::Graph& graph = context.graph;
  const size_t n = graph.size();
  Pieces out;
  out.piece.assign(n, kNone);
  out.boundary.assign(n, false);

  std::vector<int32_t> raw(n, kNone);
  int32_t id = 0;
  for (NodeId node = 0; node < n; ++node) {
    if (node % 4096 == 0) context.progress.checkCancelled();
    const ir::Node& info = graph.node(node);
    if (!info.isCall()) continue;
    const ir::OpInfo& op = context.ops.lookup(graph.target(node));
    if (op.subgraphBoundary || (attention && op.category == ir::OpCategory::Attention)) {
      out.boundary[node] = true;
      ++out.splitOps;
      id += 1;
      raw[node] = id;
      id += 1;
      continue;
    }
    // An element of the split op's tuple result (not an index into a tensor it returned).
    const bool element = op.category == ir::OpCategory::Getitem && info.args.size() == 2 &&
                         info.args[0].kind == ir::Arg::Kind::Node && info.args[1].kind == ir::Arg::Kind::Int;
    if (element && out.boundary[info.args[0].node]) {
      raw[node] = raw[info.args[0].node];
      continue;
    }
    raw[node] = id;
  }

  // Dense renumbering: ids in use, in increasing order, become 0, 1, 2, ...
  std::vector<int32_t> used;
  for (int32_t r : raw) {
    if (r != kNone) used.push_back(r);
  }
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  for (NodeId node = 0; node < n; ++node) {
    if (raw[node] == kNone) continue;
    out.piece[node] = static_cast<int32_t>(std::lower_bound(used.begin(), used.end(), raw[node]) - used.begin());
  }
  out.count = static_cast<int32_t>(used.size());

  for (NodeId node = 0; node < n; ++node) {
    if (!graph.node(node).isInput()) continue;
    int32_t first = 0;
    for (NodeId user : graph.users(node)) {
      if (out.piece[user] != kNone) {
        first = out.piece[user];
        break;
      }
    }
    out.piece[node] = first;
    out.count = std::max(out.count, first + 1);
  }
  return out;
}

std::vector<Message> pieceDiff(const ir::Graph& graph, const Pieces& pieces) {
  std::vector<size_t> sizes(static_cast<size_t>(pieces.count), 0);
  std::vector<NodeId> splitOpOf(static_cast<size_t>(pieces.count), ir::kNoNode);
  for (NodeId node = 0; node < graph.size(); ++node) {
    if (pieces.piece[node] == kNone) continue;
    ++sizes[static_cast<size_t>(pieces.piece[node])];
    if (pieces.boundary[node]) splitOpOf[static_cast<size_t>(pieces.piece[node])] = node;
  }
  std::vector<Message> lines;
  for (size_t p = 0; p < sizes.size(); ++p) {
    const Message nodes(LATHE_TEXT_N("lathe::passes", "%n node(s)"), static_cast<int64_t>(sizes[p]));
    if (splitOpOf[p] != ir::kNoNode) {
      lines.push_back({LATHE_TEXT("lathe::passes", "+ piece %1: %2 (split op %3)"),
                       {std::to_string(p), nodes, std::string(graph.name(splitOpOf[p]))}});
    } else if (p > 0 && splitOpOf[p - 1] != ir::kNoNode) {
      lines.push_back({LATHE_TEXT("lathe::passes", "+ piece %1: %2 (after split op %3)"),
                       {std::to_string(p), nodes, std::string(graph.name(splitOpOf[p - 1]))}});
    } else {
      lines.push_back({LATHE_TEXT("lathe::passes", "+ piece %1: %2"), {std::to_string(p), nodes}});
    }
  }
  return lines;
}

}  // namespace

const PassInfo& SplitPass::info() const {
  static constexpr OptionSpec kOptions[] = {kAttention, kUnits};
  static constexpr StatKey kStats[] = {kPieces, kSplitOps, kLayerUnits, kUnitWeightBytesMin, kUnitWeightBytesMax};
  static const PassInfo info{"split", "MagiCompiler's piecewise split at attention and subgraph_boundary ops, and layer units",
                             kOptions, kStats};
  return info;
}

PassResult SplitPass::run(const PassContext& context, const plan::PlanState& before, const PassOptions& options) const {
  requireSupportedGraph(context.graph);
  const bool attention = options.flag(kAttention);
  const bool withUnits = options.flag(kUnits);
  const ir::Graph& graph = context.graph;
  const size_t n = graph.size();
  if (context.inputs.role.size() != n || context.inputs.modulePath.size() != n) {
    throw Error(ErrorCode::Internal, "split: graph inputs describe " + std::to_string(context.inputs.role.size()) +
                                         " nodes, the graph has " + std::to_string(n));
  }

  PassResult result;
  result.state = before;
  const Pieces pieces = splitPieces(context, attention);
  result.diff = pieceDiff(graph, pieces);
  result.state.piece = pieces.piece;
  result.state.boundary = pieces.boundary;
  result.state.pieceCount = pieces.count;

  if (withUnits) {
    const analysis::LayerUnits& units = context.layerUnits();
    result.state.unit = units.unit;
    result.state.units = units.units;
  } else {
    result.state.unit.assign(n, kNone);
    result.state.units.clear();
  }

  uint64_t minBytes = 0, maxBytes = 0;
  for (const plan::LayerUnit& unit : result.state.units) {
    minBytes = unit.id == 0 ? unit.weightBytes : std::min(minBytes, unit.weightBytes);
    maxBytes = std::max(maxBytes, unit.weightBytes);
    result.diff.push_back({LATHE_TEXT("lathe::passes", "+ unit %1: %2, %3"),
                           {unit.name, Message(LATHE_TEXT_N("lathe::passes", "%n weight(s)"), static_cast<int64_t>(unit.weights.size())),
                            formatBytes(unit.weightBytes)}});
  }
  result.set(kPieces, static_cast<double>(result.state.pieceCount));
  result.set(kSplitOps, static_cast<double>(pieces.splitOps));
  result.set(kLayerUnits, static_cast<double>(result.state.units.size()));
  result.set(kUnitWeightBytesMin, static_cast<double>(minBytes));
  result.set(kUnitWeightBytesMax, static_cast<double>(maxBytes));
  return result;
}

}  // namespace lathe::passes
