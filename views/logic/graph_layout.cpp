#include "views/logic/graph_layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string_view>

#include "util/diagnostics.h"

namespace lathe::views {

namespace {

constexpr double kPointsPerInch = 72.0;

// Graphviz keeps global state (the plugin registry, dot's static buffers, the error hook):
// one layout at a time in the whole process.
std::mutex& graphvizMutex() {
  static std::mutex mutex;
  return mutex;
}

// Graphviz 2.x takes `char*` for names and values it only reads.
char* text(std::string& value) {
  return value.data();
}

void setAttribute(void* object, std::string name, std::string value) {
  std::string empty;
  agsafeset(object, text(name), text(value), text(empty));
}

std::string inches(double points) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4f", points / kPointsPerInch);
  return buffer;
}

struct ContextDeleter {
  void operator()(GVC_t* context) const { gvFreeContext(context); }
};

// Frees the layout before the graph, as Graphviz requires.
struct LaidOutGraph {
  GVC_t* context = nullptr;
  Agraph_t* graph = nullptr;
  bool laidOut = false;
  LaidOutGraph(const LaidOutGraph&) = delete;
  LaidOutGraph& operator=(const LaidOutGraph&) = delete;
  LaidOutGraph(GVC_t* gvc, Agraph_t* g) : context(gvc), graph(g) {}
  ~LaidOutGraph() {
    if (laidOut) gvFreeLayout(context, graph);
    agclose(graph);
  }
};

std::string lastComponent(std::string_view path) {
  const size_t dot = path.rfind('.');
  return std::string(dot == std::string_view::npos ? path : path.substr(dot + 1));
}

}  // namespace

std::string nodeShortTarget(const ir::Graph& graph, ir::NodeId node, ir::Role role) {
  const ir::Node& data = graph.node(node);
  switch (data.kind) {
    case ir::NodeKind::Placeholder:
      return std::string(role == ir::Role::Unknown ? std::string_view("input") : ir::roleName(role));
    case ir::NodeKind::Output: return "output";
    case ir::NodeKind::GetAttr: return "get_attr";
    default: break;
  }
  std::string_view target = graph.target(node);
  // torch.ops.<namespace>.<op>.<overload>: the op is what people read.
  constexpr std::string_view kOps = "torch.ops.";
  if (target.starts_with(kOps)) {
    target.remove_prefix(kOps.size());
    const size_t namespaceEnd = target.find('.');
    if (namespaceEnd != std::string_view::npos) {
      target.remove_prefix(namespaceEnd + 1);
      return std::string(target.substr(0, target.find('.')));
    }
  }
  return lastComponent(target);
}

LayoutSize nodeBoxSize(const ir::Graph& graph, ir::NodeId node, ir::Role role, const GraphLayoutOptions& options) {
  const double chars =
      std::min(options.maxLabelChars,
               static_cast<double>(std::max(graph.name(node).size(), nodeShortTarget(graph, node, role).size())));
  return {chars * options.charWidth + 2 * options.padding, 2 * options.lineHeight + options.padding};
}

BoxLayout layoutBoxes(const BoxGraph& boxGraph) {
  BoxLayout layout;
  if (boxGraph.boxes.empty()) return layout;
  if (boxGraph.boxes.size() == 1) {  // nothing to arrange: spare Graphviz the round trip
    layout.size = boxGraph.boxes.front();
    layout.boxes.push_back({0, 0, layout.size.width, layout.size.height});
    return layout;
  }
  const std::lock_guard lock(graphvizMutex());
  const std::unique_ptr<GVC_t, ContextDeleter> context(gvContext());
  if (!context) throw Error(ErrorCode::Internal, "Graphviz: cannot create a context");
  std::string graphName = "g";
  LaidOutGraph laid(context.get(), agopen(text(graphName), Agdirected, nullptr));

  auto setDefault = [&](int kind, std::string name, std::string value) {
    agattr(laid.graph, kind, text(name), text(value));
  };
  setDefault(AGRAPH, "rankdir", "TB");
  setDefault(AGRAPH, "nodesep", "0.2");
  setDefault(AGRAPH, "ranksep", "0.35");
  setDefault(AGRAPH, "label", "");
  // The view draws straight edges between boxes: no spline routing, and the crossing and placement
  // searches stop early (dot's defaults take minutes on a 700-box level).
  setDefault(AGRAPH, "splines", "false");
  setDefault(AGRAPH, "mclimit", "0.3");
  setDefault(AGRAPH, "nslimit", "2");
  setDefault(AGRAPH, "nslimit1", "2");
  setDefault(AGRAPH, "searchsize", "10");
  setDefault(AGNODE, "shape", "box");
  setDefault(AGNODE, "fixedsize", "true");
  setDefault(AGNODE, "label", "");
  setDefault(AGNODE, "width", "1");
  setDefault(AGNODE, "height", "0.5");

  std::vector<Agnode_t*> gvNodes;
  gvNodes.reserve(boxGraph.boxes.size());
  for (size_t box = 0; box < boxGraph.boxes.size(); ++box) {
    std::string name = "b" + std::to_string(box);
    Agnode_t* gvNode = agnode(laid.graph, text(name), 1);
    setAttribute(gvNode, "width", inches(boxGraph.boxes[box].width));
    setAttribute(gvNode, "height", inches(boxGraph.boxes[box].height));
    gvNodes.push_back(gvNode);
  }
  for (const auto& [from, to] : boxGraph.edges) {
    if (from == to) continue;
    agedge(laid.graph, gvNodes.at(static_cast<size_t>(from)), gvNodes.at(static_cast<size_t>(to)), nullptr, 1);
  }

  if (gvLayout(context.get(), laid.graph, "dot") != 0) throw Error(ErrorCode::Internal, "Graphviz: dot layout failed");
  laid.laidOut = true;

  // Graphviz's y grows upwards from the bounding box's bottom.
  const boxf bounds = GD_bb(laid.graph);
  layout.size = {bounds.UR.x - bounds.LL.x, bounds.UR.y - bounds.LL.y};
  layout.boxes.reserve(gvNodes.size());
  for (Agnode_t* gvNode : gvNodes) {
    const double width = ND_width(gvNode) * kPointsPerInch;
    const double height = ND_height(gvNode) * kPointsPerInch;
    const pointf centre = ND_coord(gvNode);
    layout.boxes.push_back({centre.x - bounds.LL.x - width / 2, bounds.UR.y - centre.y - height / 2, width, height});
  }
  return layout;
}

}  // namespace lathe::views
