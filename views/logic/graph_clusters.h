// The graph view's structure and hierarchical layout. Pure data, no Qt: runs on worker threads.
//
// Clusters. Each node gets a module path: its provenance's (torch.export keeps one per node), else
// its layer unit ("model.layers.3", analysis/layer_units.h; AOT graphs only name their parameters,
// the units spread those names over the nodes). Clusters exist for the paths that own nodes,
// nested by prefix under the nearest one that does (model.layers.3.self_attn inside
// model.layers.3). In a joint graph the backward nodes sit in a cluster of their own, "backward",
// with the same module clusters inside, so that a layer's forward and backward are not one box
// spanning the whole graph.
//
// A cluster with more than 1500 nodes of its own (a graph without module paths) is cut into runs of
// 500 nodes in program order, each a cluster titled by its first and last node.
//
// Folding. Sibling clusters whose paths differ only in a trailing number ("model.layers.0",
// "model.layers.1", ...) and whose interiors have the same structure (op sequence, internal edges,
// nested clusters) form a fold: one box "model.layers × 32" until unfolded.
//
// Layout. Every expanded cluster is one level: its own nodes, its child clusters and its folds as
// boxes, laid out by dot with the graph's edges lifted to those boxes. A level's layout depends
// only on the expansion state inside it, so it is cached per cluster; toggling a cluster
// invalidates only the levels that enclose it. The composed scene places each expanded cluster's
// level inside its box.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "passes/plan_target.h"
#include "views/logic/graph_layout.h"

namespace lathe::views {

inline constexpr int kRootCluster = 0;

struct Cluster {
  std::string path;   // module path, "" for the root and the backward cluster
  std::string title;  // what its box says: the path, or "backward"
  int parent = -1;
  int depth = 0;                    // 0 for the root
  std::vector<int> children;        // in program order of their first node
  std::vector<ir::NodeId> nodes;    // its own nodes, program order (the output node is never in one)
  std::vector<ir::NodeId> subtree;  // its nodes and its descendants', program order
  uint64_t signature = 0;           // structure hash of the subtree (position independent)
  int fold = -1;                    // the fold it belongs to
};

struct Fold {
  int parent = -1;           // the cluster holding the members
  std::vector<int> members;  // clusters, in order
  std::string title;         // "model.layers × 4"
};

struct ClusterTree {
  std::vector<Cluster> clusters;  // [kRootCluster] is the root; parents before children
  std::vector<Fold> folds;
  std::vector<int> clusterOf;           // per node; -1 for the output node (not drawn)
  // Per node: the provenance's module path, else the node's layer unit; "" where neither says.
  std::vector<std::string> modulePath;
  // Per node: the role the graph gives, or the compile's Dynamo graph names (parameter, buffer, ...).
  std::vector<ir::Role> role;
  std::vector<uint8_t> backward;        // per node: in a joint graph's backward
};

// Clusters and folds of the target's graph, from its inputs (roles, module paths), layer units and
// joint split; backward nodes of a joint graph go in a "backward" cluster. Reads no hardware.
[[nodiscard]] ClusterTree buildClusterTree(const passes::PlanTarget& target);

// Which clusters show their inside and which folds show their members. The root is always expanded.
struct ExpansionState {
  std::vector<uint8_t> expanded;  // per cluster
  std::vector<uint8_t> unfolded;  // per fold
};

// Folds folded; clusters expanded breadth first while the drawn boxes stay within `boxBudget`.
[[nodiscard]] ExpansionState defaultExpansion(const ClusterTree& tree, size_t boxBudget = 250);

// Expands every cluster and unfolds every fold on the way from the root to the node's cluster.
// False when the node was drawn already (nothing changed). `changed` receives the clusters whose
// expansion changed, or the fold parents, for cache invalidation.
bool revealNode(const ClusterTree& tree, ir::NodeId node, ExpansionState& state, std::vector<int>& changed);

// What stands for a node in the drawing: the node itself, or the collapsed cluster or folded fold
// that hides it.
struct Shown {
  enum class Kind : uint8_t { Node, Cluster, Fold, None };
  Kind kind = Kind::None;
  uint32_t index = 0;  // node id, cluster or fold index
  friend bool operator==(const Shown&, const Shown&) = default;
};
[[nodiscard]] Shown shownAs(const ClusterTree& tree, const ExpansionState& state, ir::NodeId node);

// One expanded cluster laid out: its boxes (what each is, and where) and its size.
struct LevelLayout {
  std::vector<Shown> items;
  BoxLayout layout;
};
using LevelCache = std::unordered_map<int, std::shared_ptr<const LevelLayout>>;

// Forgets the cached levels that change when `cluster`'s box changes: its ancestors' levels.
void invalidateAround(const ClusterTree& tree, int cluster, LevelCache& cache);

struct ClusterFrame {  // an expanded cluster: a frame with its title, its inside drawn within
  int cluster = -1;
  LayoutRect rect;
  double titleHeight = 0;
};

struct ClusterBox {  // a collapsed cluster or a folded fold
  Shown what;
  std::string title;     // "model.layers.3" or "model.layers × 4"
  std::string subtitle;  // "130 nodes" or "4 × 130 nodes"
  LayoutRect rect;
  int depth = 0;
};

struct SceneEdge {
  Shown from;
  Shown to;
  LayoutPoint start;  // on the border of from's box
  LayoutPoint end;    // on the border of to's box
};

struct SceneLayout {
  LayoutRect bounds;
  std::vector<std::pair<ir::NodeId, LayoutRect>> nodes;  // drawn nodes, program order
  std::vector<ClusterFrame> frames;                      // outer before inner
  std::vector<ClusterBox> boxes;
  std::vector<SceneEdge> edges;  // one per pair of drawn boxes with a graph edge between them
  size_t levelsLaidOut = 0;      // levels dot ran for (the others came from the cache)
};

// Lays out the levels missing from `cache` (adding them) and composes the scene. Throws
// lathe::Error when Graphviz fails.
[[nodiscard]] SceneLayout composeLayout(const ir::Graph& graph, const ClusterTree& tree, const ExpansionState& state,
                                        LevelCache& cache, const GraphLayoutOptions& options = {});

}  // namespace lathe::views
