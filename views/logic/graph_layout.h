// Graphviz (dot, top to bottom) placement of fixed-size boxes joined by edges: one level of the
// graph view's hierarchical layout (graph_clusters.h), whose boxes are nodes, collapsed clusters,
// folded layers and expanded clusters. Pure data, no Qt: callable on a worker thread; Graphviz's
// global state is guarded inside.
#pragma once

#include <string>
#include <utility>
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

  [[nodiscard]] LayoutPoint centre() const { return {x + width / 2, y + height / 2}; }
};

struct LayoutSize {
  double width = 0;
  double height = 0;
};

// Boxes in a preferred order (dot keeps it where edges allow) and edges by box index; repeated
// edges are allowed and pull their boxes closer.
struct BoxGraph {
  std::vector<LayoutSize> boxes;
  std::vector<std::pair<int, int>> edges;
};

struct BoxLayout {
  LayoutSize size;                // of the whole arrangement
  std::vector<LayoutRect> boxes;  // parallel to BoxGraph::boxes, relative to the top left
};

struct GraphLayoutOptions {
  // Text metrics the boxes are sized for (the view draws two lines: name and target).
  double charWidth = 7.5;
  double lineHeight = 14;
  double padding = 10;
  double maxLabelChars = 32;  // longer labels are elided by the view
};

// The short form of a node's target shown on its box: "mm" for torch.ops.aten.mm.default,
// "getitem" for operator.getitem, the role for a placeholder ("parameter", "input"): `role`, which
// may be known better than the graph says (AOT primals are parameters by the Dynamo graph's names).
[[nodiscard]] std::string nodeShortTarget(const ir::Graph& graph, ir::NodeId node, ir::Role role);

// The box a node is drawn in: wide enough for its name and short target, two lines high.
[[nodiscard]] LayoutSize nodeBoxSize(const ir::Graph& graph, ir::NodeId node, ir::Role role,
                                     const GraphLayoutOptions& options);

// Places the boxes with dot, top to bottom. Throws lathe::Error when Graphviz fails.
[[nodiscard]] BoxLayout layoutBoxes(const BoxGraph& graph);

}  // namespace lathe::views
