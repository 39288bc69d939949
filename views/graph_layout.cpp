#include "views/graph_layout.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <algorithm>
#include <cstdio>
#include <map>
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

std::string nodeShortTarget(const ir::Graph& graph, ir::NodeId node) {
  const ir::Node& data = graph.node(node);
  switch (data.kind) {
    case ir::NodeKind::Placeholder:
      return std::string(data.role == ir::Role::Unknown ? std::string_view("input") : ir::roleName(data.role));
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

GraphLayout layoutGraph(const ir::Graph& graph, const GraphLayoutOptions& options) {
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
  setDefault(AGRAPH, "fontsize", "12");
  setDefault(AGRAPH, "label", "");
  // dot's defaults take minutes on a 700-node joint graph with clusters: straight edges skip spline
  // routing around clusters, and the crossing and placement searches stop early.
  setDefault(AGRAPH, "splines", "line");
  setDefault(AGRAPH, "mclimit", "0.3");
  setDefault(AGRAPH, "nslimit", "2");
  setDefault(AGRAPH, "nslimit1", "2");
  setDefault(AGRAPH, "searchsize", "10");
  setDefault(AGNODE, "shape", "box");
  setDefault(AGNODE, "fixedsize", "true");
  setDefault(AGNODE, "label", "");
  setDefault(AGNODE, "width", "1");
  setDefault(AGNODE, "height", "0.5");
  setDefault(AGEDGE, "arrowsize", "0.6");

  // Clusters by module path, nested by prefix: "model.layers.0" holds "model.layers.0.mlp".
  std::map<std::string, Agraph_t*> clusterGraphs;
  std::vector<std::string> clusterOrder;
  auto clusterFor = [&](const std::string& path, auto&& self) -> Agraph_t* {
    if (auto found = clusterGraphs.find(path); found != clusterGraphs.end()) return found->second;
    const size_t dot = path.rfind('.');
    Agraph_t* parent = dot == std::string::npos ? laid.graph : self(path.substr(0, dot), self);
    std::string name = "cluster_" + std::to_string(clusterGraphs.size());
    Agraph_t* cluster = agsubg(parent, text(name), 1);
    setAttribute(cluster, "label", lastComponent(path));
    clusterGraphs.emplace(path, cluster);
    clusterOrder.push_back(path);
    return cluster;
  };

  const double boxHeight = 2 * options.lineHeight + options.padding;
  std::vector<Agnode_t*> gvNodes(graph.size(), nullptr);
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::Node& node = graph.node(id);
    if (node.kind == ir::NodeKind::Output) continue;
    const double chars = std::min(
        options.maxLabelChars, static_cast<double>(std::max(graph.name(id).size(), nodeShortTarget(graph, id).size())));
    Agraph_t* owner = laid.graph;
    if (node.provenance.modulePath != 0) {
      owner = clusterFor(std::string(graph.str(node.provenance.modulePath)), clusterFor);
    }
    std::string name = "n" + std::to_string(id);
    Agnode_t* gvNode = agnode(owner, text(name), 1);
    setAttribute(gvNode, "width", inches(chars * options.charWidth + 2 * options.padding));
    setAttribute(gvNode, "height", inches(boxHeight));
    gvNodes[id] = gvNode;
  }

  struct EdgeEnds {
    ir::NodeId from;
    ir::NodeId to;
    Agedge_t* edge;
  };
  std::vector<EdgeEnds> gvEdges;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (!gvNodes[id]) continue;
    for (const ir::NodeId input : graph.inputs(id)) {
      if (!gvNodes[input]) continue;
      gvEdges.push_back({input, id, agedge(laid.graph, gvNodes[input], gvNodes[id], nullptr, 1)});
    }
  }

  if (gvLayout(context.get(), laid.graph, "dot") != 0) throw Error(ErrorCode::Internal, "Graphviz: dot layout failed");
  laid.laidOut = true;

  // Graphviz's y grows upwards from the bounding box's bottom.
  const boxf bounds = GD_bb(laid.graph);
  auto toScene = [&](pointf p) { return LayoutPoint{p.x - bounds.LL.x, bounds.UR.y - p.y}; };
  auto boxToScene = [&](boxf box) {
    return LayoutRect{box.LL.x - bounds.LL.x, bounds.UR.y - box.UR.y, box.UR.x - box.LL.x, box.UR.y - box.LL.y};
  };

  GraphLayout layout;
  layout.bounds = {0, 0, bounds.UR.x - bounds.LL.x, bounds.UR.y - bounds.LL.y};
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    Agnode_t* gvNode = gvNodes[id];
    if (!gvNode) continue;
    const double width = ND_width(gvNode) * kPointsPerInch;
    const double height = ND_height(gvNode) * kPointsPerInch;
    const LayoutPoint centre = toScene(ND_coord(gvNode));
    layout.nodes.push_back({id, {centre.x - width / 2, centre.y - height / 2, width, height}});
  }
  layout.edges.reserve(gvEdges.size());
  for (const EdgeEnds& ends : gvEdges) {
    EdgeLayout edge{.from = ends.from, .to = ends.to, .spline = {}, .arrowTip = {}};
    const splines* spl = ED_spl(ends.edge);
    if (spl && spl->size > 0) {
      for (int part = 0; part < spl->size; ++part) {
        const bezier& curve = spl->list[part];
        // Later parts continue from the previous end: skip their repeated start point.
        for (int i = (part == 0 || edge.spline.empty()) ? 0 : 1; i < curve.size; ++i) {
          edge.spline.push_back(toScene(curve.list[i]));
        }
      }
      const bezier& last = spl->list[spl->size - 1];
      edge.arrowTip = last.eflag ? toScene(last.ep) : edge.spline.back();
    }
    layout.edges.push_back(std::move(edge));
  }
  for (const std::string& path : clusterOrder) {
    const int depth = static_cast<int>(std::count(path.begin(), path.end(), '.'));
    layout.clusters.push_back({.modulePath = path,
                               .label = lastComponent(path),
                               .depth = depth,
                               .rect = boxToScene(GD_bb(clusterGraphs[path]))});
  }
  return layout;
}

}  // namespace lathe::views
