// Graphviz (dot, top to bottom) layout of an ir::Graph into plain positions: one box per node
// except the output node, one spline per input relation, one box per module-path cluster. Pure
// data, no Qt: callable on a worker thread; Graphviz's global state is guarded inside.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace lathe::views {

// Scene coordinates: points, origin at the top left of the whole layout, y grows downwards.
struct LayoutPoint {
  double x = 0;
  double y = 0;
};

struct LayoutRect {
  double x = 0;  // left
  double y = 0;  // top
  double width = 0;
  double height = 0;
};

struct NodeLayout {
  ir::NodeId node = ir::kNoNode;
  LayoutRect rect;
};

struct EdgeLayout {
  ir::NodeId from = ir::kNoNode;  // the input
  ir::NodeId to = ir::kNoNode;    // the node reading it
  // Cubic Bézier chain: start point, then three points (two controls and an end) per segment.
  std::vector<LayoutPoint> spline;
  // Where the arrowhead points (the target's border); equals spline.back() when Graphviz left no gap.
  LayoutPoint arrowTip;
};

struct ClusterLayout {
  std::string modulePath;  // "model.layers.0.self_attn"
  std::string label;       // its last component: "self_attn"
  int depth = 0;           // 0 for a top-level module
  LayoutRect rect;
};

struct GraphLayout {
  LayoutRect bounds;
  std::vector<NodeLayout> nodes;  // program order
  std::vector<EdgeLayout> edges;
  std::vector<ClusterLayout> clusters;  // parents before their children
};

struct GraphLayoutOptions {
  // Text metrics the boxes are sized for (the view draws two lines: name and target).
  double charWidth = 7.5;
  double lineHeight = 14;
  double padding = 10;
  double maxLabelChars = 32;  // longer labels are elided by the view
};

// The short form of a node's target shown on its box: "mm" for torch.ops.aten.mm.default,
// "getitem" for operator.getitem, the role for a placeholder ("parameter", "input").
[[nodiscard]] std::string nodeShortTarget(const ir::Graph& graph, ir::NodeId node);

// Lays the graph out with dot. Throws lathe::Error when Graphviz fails.
[[nodiscard]] GraphLayout layoutGraph(const ir::Graph& graph, const GraphLayoutOptions& options = {});

}  // namespace lathe::views
