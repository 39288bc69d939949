#include "views/logic/graph_clusters.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "analysis/layer_units.h"
#include "ir/op_info.h"
#include "plan/plan_state.h"

namespace lathe::views {

namespace {

// Frame geometry of an expanded cluster: title band and margin around the inside.
constexpr double kFramePadding = 10;
// A fold box shows two cards behind its own, this far apart.
constexpr double kFoldCardOffset = 5;
constexpr size_t kMaxBoxTitleChars = 48;
// A cluster with more nodes of its own than this is cut into runs of kChunkNodes.
constexpr size_t kMaxLevelNodes = 1500;
constexpr size_t kChunkNodes = 500;

uint64_t mix(uint64_t seed, uint64_t value) {
  // 64-bit hash combine (boost's, widened): order sensitive.
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

uint64_t key(const Shown& shown) {
  return (static_cast<uint64_t>(shown.kind) << 32) | shown.index;
}

bool allDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "model.layers.3" -> "model.layers"; "" when the last component is not a number.
std::string foldStem(std::string_view path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || !allDigits(path.substr(dot + 1))) return {};
  return std::string(path.substr(0, dot));
}

double titleHeight(const GraphLayoutOptions& options) {
  return options.lineHeight + 8;
}

LayoutSize boxSize(std::string_view title, std::string_view subtitle, const GraphLayoutOptions& options) {
  const size_t chars = std::min(kMaxBoxTitleChars, std::max(title.size(), subtitle.size()));
  return {static_cast<double>(chars) * options.charWidth + 2 * options.padding + 8,
          2 * options.lineHeight + options.padding + 4};
}

std::string nodeCount(size_t count) {
  return std::to_string(count) + (count == 1 ? " node" : " nodes");
}

// Where the segment from the rect's centre towards `towards` leaves the rect.
LayoutPoint borderPoint(const LayoutRect& rect, LayoutPoint towards) {
  const LayoutPoint centre = rect.centre();
  const double dx = towards.x - centre.x;
  const double dy = towards.y - centre.y;
  double t = 1;
  if (std::abs(dx) > 1e-9) t = std::min(t, rect.width / 2 / std::abs(dx));
  if (std::abs(dy) > 1e-9) t = std::min(t, rect.height / 2 / std::abs(dy));
  return {centre.x + t * dx, centre.y + t * dy};
}

// How many nodes run each op (by target hash), sorted by op.
using OpHistogram = std::vector<std::pair<uint64_t, int>>;

OpHistogram opHistogram(const ir::Graph& graph, const std::vector<ir::NodeId>& nodes) {
  std::unordered_map<uint64_t, int> counts;
  const std::hash<std::string_view> hashText;
  for (const ir::NodeId id : nodes)
    ++counts[mix(static_cast<uint64_t>(graph.node(id).kind), hashText(graph.target(id)))];
  OpHistogram histogram(counts.begin(), counts.end());
  std::sort(histogram.begin(), histogram.end());
  return histogram;
}

// Two clusters differ in at most 2% of their ops (at least 2 nodes' worth).
bool nearlySame(const OpHistogram& a, const OpHistogram& b, size_t size) {
  const int allowed = std::max(2, static_cast<int>(size / 50));
  int difference = 0;
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
      difference += a[i++].second;
    } else if (i == a.size() || b[j].first < a[i].first) {
      difference += b[j++].second;
    } else {
      difference += std::abs(a[i++].second - b[j++].second);
    }
    if (difference > allowed) return false;
  }
  return true;
}

struct PairHash {
  size_t operator()(const std::pair<uint64_t, uint64_t>& pair) const { return mix(pair.first, pair.second); }
};

// What the clusters are made from, per node (ClusterTree::modulePath and role).
struct NodeGrouping {
  std::vector<std::string> modulePath;
  std::vector<ir::Role> role;
};

NodeGrouping groupNodes(const passes::PlanTarget& target) {
  const ir::Graph& graph = target.graph();
  const analysis::GraphInputs& inputs = target.inputs();
  NodeGrouping grouping;
  std::vector<std::string>& paths = grouping.modulePath;
  paths.resize(graph.size());
  grouping.role.resize(graph.size());
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    grouping.role[id] = inputs.role[id] != ir::Role::Unknown ? inputs.role[id] : graph.node(id).role;
  }
  bool callsHavePaths = false;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::Node& node = graph.node(id);
    if (node.provenance.modulePath == 0) continue;
    paths[id] = std::string(graph.str(node.provenance.modulePath));
    callsHavePaths = callsHavePaths || node.kind == ir::NodeKind::CallFunction;
  }
  if (callsHavePaths) return grouping;  // torch.export: every op says which module ran it

  // Traced graphs name parameters only: the layer units carry them over the nodes.
  std::fill(paths.begin(), paths.end(), std::string());
  const analysis::LayerUnits& units = target.layerUnits();
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const int32_t unit = units.unit[id];
    if (unit == plan::kNone) continue;
    const std::string& name = units.units[static_cast<size_t>(unit)].name;
    if (name != "prologue" && name != "epilogue") paths[id] = name;
  }
  return grouping;
}

}  // namespace

ClusterTree buildClusterTree(const passes::PlanTarget& target) {
  const ir::Graph& graph = target.graph();
  NodeGrouping grouping = groupNodes(target);
  ClusterTree tree;
  tree.modulePath = std::move(grouping.modulePath);
  tree.role = std::move(grouping.role);
  const std::vector<std::string>& modulePaths = tree.modulePath;
  tree.clusterOf.assign(graph.size(), -1);
  tree.clusters.push_back(Cluster{});

  const analysis::JointInfo& joint = target.joint();
  tree.backward.assign(graph.size(), 0);
  if (joint.joint) {
    for (ir::NodeId id = 0; id < graph.size(); ++id) tree.backward[id] = joint.isBackward(id) ? 1 : 0;
  }
  int backward = -1;
  auto scopeOf = [&](ir::NodeId id) {
    if (!joint.joint || !joint.isBackward(id)) return kRootCluster;
    if (backward < 0) {
      backward = static_cast<int>(tree.clusters.size());
      tree.clusters.push_back(Cluster{.path = {}, .title = "backward", .parent = kRootCluster, .depth = 1});
      tree.clusters[kRootCluster].children.push_back(backward);
    }
    return backward;
  };

  // Only paths that own nodes get a cluster; a cluster's parent is the nearest prefix that owns some.
  std::set<std::pair<int, std::string>> owning;
  std::vector<int> scope(graph.size(), kRootCluster);
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).kind == ir::NodeKind::Output) continue;
    scope[id] = scopeOf(id);
    if (!modulePaths[id].empty()) owning.emplace(scope[id], modulePaths[id]);
  }
  std::map<std::pair<int, std::string>, int> byPath;
  std::function<int(int, const std::string&)> clusterFor = [&](int scopeCluster, const std::string& path) -> int {
    if (auto found = byPath.find({scopeCluster, path}); found != byPath.end()) return found->second;
    int parent = scopeCluster;
    for (size_t dot = path.rfind('.'); dot != std::string::npos && dot > 0; dot = path.rfind('.', dot - 1)) {
      const std::string prefix = path.substr(0, dot);
      if (owning.contains({scopeCluster, prefix})) {
        parent = clusterFor(scopeCluster, prefix);
        break;
      }
    }
    const int id = static_cast<int>(tree.clusters.size());
    tree.clusters.push_back(Cluster{
        .path = path, .title = path, .parent = parent, .depth = tree.clusters[static_cast<size_t>(parent)].depth + 1});
    tree.clusters[static_cast<size_t>(parent)].children.push_back(id);
    byPath.emplace(std::pair{scopeCluster, path}, id);
    return id;
  };
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).kind == ir::NodeKind::Output) continue;
    const int cluster = modulePaths[id].empty() ? scope[id] : clusterFor(scope[id], modulePaths[id]);
    tree.clusterOf[id] = cluster;
    tree.clusters[static_cast<size_t>(cluster)].nodes.push_back(id);
    for (int c = cluster; c != -1; c = tree.clusters[static_cast<size_t>(c)].parent) {
      tree.clusters[static_cast<size_t>(c)].subtree.push_back(id);
    }
  }

  // Thousands of boxes on one level are slow to lay out and unreadable: runs of a cluster's own nodes
  // in program order become clusters of their own, titled by their first and last node.
  const size_t named = tree.clusters.size();
  for (size_t c = 0; c < named; ++c) {
    if (tree.clusters[c].nodes.size() <= kMaxLevelNodes) continue;
    const std::vector<ir::NodeId> own = std::exchange(tree.clusters[c].nodes, {});
    for (size_t begin = 0; begin < own.size(); begin += kChunkNodes) {
      const size_t end = std::min(own.size(), begin + kChunkNodes);
      const int chunk = static_cast<int>(tree.clusters.size());
      Cluster run{.path = {},
                  .title = std::string(graph.name(own[begin])) + " \u2026 " + std::string(graph.name(own[end - 1])),
                  .parent = static_cast<int>(c),
                  .depth = tree.clusters[c].depth + 1};
      run.nodes.assign(own.begin() + static_cast<std::ptrdiff_t>(begin),
                       own.begin() + static_cast<std::ptrdiff_t>(end));
      run.subtree = run.nodes;
      for (const ir::NodeId id : run.nodes) tree.clusterOf[id] = chunk;
      tree.clusters[c].children.push_back(chunk);
      tree.clusters.push_back(std::move(run));
    }
  }

  // Structure signatures: what each node computes, where it sits relative to the cluster and which
  // earlier nodes of the subtree it reads, by distance; reads from outside count as one kind.
  std::vector<int64_t> position(graph.size(), -1);
  const std::hash<std::string_view> hashText;
  for (size_t c = 1; c < tree.clusters.size(); ++c) {
    Cluster& cluster = tree.clusters[c];
    for (size_t i = 0; i < cluster.subtree.size(); ++i) position[cluster.subtree[i]] = static_cast<int64_t>(i);
    uint64_t signature = mix(0, cluster.subtree.size());
    for (const ir::NodeId id : cluster.subtree) {
      const ir::Node& node = graph.node(id);
      signature = mix(signature, (static_cast<uint64_t>(node.kind) << 8) | static_cast<uint64_t>(node.role));
      signature = mix(signature, node.kind == ir::NodeKind::Placeholder ? 0 : hashText(graph.target(id)));
      const Cluster& owner = tree.clusters[static_cast<size_t>(tree.clusterOf[id])];
      const std::string_view relative =
          std::string_view(owner.path).substr(std::min(owner.path.size(), cluster.path.size()));
      signature = mix(signature, hashText(relative));
      for (const ir::NodeId input : graph.inputs(id)) {
        signature =
            mix(signature, position[input] < 0 ? UINT64_MAX : static_cast<uint64_t>(position[id] - position[input]));
      }
    }
    cluster.signature = signature;
    for (const ir::NodeId id : cluster.subtree) position[id] = -1;
  }

  // Folds: siblings "stem.N" of one structure, or nearly one: the first and last layers of a model
  // differ by a node or two where they meet the embedding or the head (the backward's first layer
  // adds the gradient coming from the head, the others the one from the layer above).
  for (size_t parent = 0; parent < tree.clusters.size(); ++parent) {
    struct Group {
      std::string stem;
      std::vector<int> members;
      OpHistogram ops;  // of the first member
    };
    std::vector<Group> groups;
    for (const int child : tree.clusters[parent].children) {
      const Cluster& cluster = tree.clusters[static_cast<size_t>(child)];
      std::string stem = foldStem(cluster.path);
      if (stem.empty()) continue;
      OpHistogram ops = opHistogram(graph, cluster.subtree);
      auto same = std::find_if(groups.begin(), groups.end(), [&](const Group& group) {
        const Cluster& first = tree.clusters[static_cast<size_t>(group.members.front())];
        return group.stem == stem &&
               (first.signature == cluster.signature || nearlySame(group.ops, ops, cluster.subtree.size()));
      });
      if (same != groups.end()) {
        same->members.push_back(child);
      } else {
        groups.push_back({std::move(stem), {child}, std::move(ops)});
      }
    }
    for (const Group& group : groups) {
      if (group.members.size() < 2) continue;
      const int fold = static_cast<int>(tree.folds.size());
      for (const int member : group.members) tree.clusters[static_cast<size_t>(member)].fold = fold;
      tree.folds.push_back(Fold{.parent = static_cast<int>(parent),
                                .members = group.members,
                                .title = group.stem + " \u00d7 " + std::to_string(group.members.size())});
    }
  }
  return tree;
}

namespace {

// The boxes a cluster's level draws when expanded (with folds folded as the state says).
size_t levelBoxCount(const ClusterTree& tree, const ExpansionState& state, int cluster) {
  const Cluster& data = tree.clusters[static_cast<size_t>(cluster)];
  size_t count = data.nodes.size();
  std::unordered_set<int> folds;
  for (const int child : data.children) {
    const int fold = tree.clusters[static_cast<size_t>(child)].fold;
    if (fold >= 0 && !state.unfolded[static_cast<size_t>(fold)]) {
      folds.insert(fold);
    } else {
      ++count;
    }
  }
  return count + folds.size();
}

bool drawnAsBox(const ClusterTree& tree, const ExpansionState& state, int cluster) {
  const int fold = tree.clusters[static_cast<size_t>(cluster)].fold;
  return fold < 0 || state.unfolded[static_cast<size_t>(fold)];
}

}  // namespace

ExpansionState defaultExpansion(const ClusterTree& tree, size_t boxBudget) {
  ExpansionState state;
  state.expanded.assign(tree.clusters.size(), 0);
  state.unfolded.assign(tree.folds.size(), 0);
  state.expanded[kRootCluster] = 1;
  size_t drawn = levelBoxCount(tree, state, kRootCluster);
  std::vector<int> queue;
  auto enqueueChildren = [&](int cluster) {
    for (const int child : tree.clusters[static_cast<size_t>(cluster)].children) {
      if (drawnAsBox(tree, state, child)) queue.push_back(child);
    }
  };
  enqueueChildren(kRootCluster);
  for (size_t next = 0; next < queue.size(); ++next) {
    const int cluster = queue[next];
    const size_t more = levelBoxCount(tree, state, cluster) - 1;  // its boxes replace its own
    if (drawn + more > boxBudget) continue;
    drawn += more;
    state.expanded[static_cast<size_t>(cluster)] = 1;
    enqueueChildren(cluster);
  }
  return state;
}

bool revealNode(const ClusterTree& tree, ir::NodeId node, ExpansionState& state, std::vector<int>& changed) {
  changed.clear();
  if (node >= tree.clusterOf.size() || tree.clusterOf[node] < 0) return false;
  for (int c = tree.clusterOf[node]; c != kRootCluster; c = tree.clusters[static_cast<size_t>(c)].parent) {
    const int fold = tree.clusters[static_cast<size_t>(c)].fold;
    if (fold >= 0 && !state.unfolded[static_cast<size_t>(fold)]) {
      state.unfolded[static_cast<size_t>(fold)] = 1;
      changed.push_back(c);
    }
    if (!state.expanded[static_cast<size_t>(c)]) {
      state.expanded[static_cast<size_t>(c)] = 1;
      changed.push_back(c);
    }
  }
  return !changed.empty();
}

Shown shownAs(const ClusterTree& tree, const ExpansionState& state, ir::NodeId node) {
  if (node >= tree.clusterOf.size() || tree.clusterOf[node] < 0) return {};
  Shown shown{Shown::Kind::Node, node};
  // The outermost hiding cluster wins: walk up and keep the last one found.
  for (int c = tree.clusterOf[node]; c != kRootCluster; c = tree.clusters[static_cast<size_t>(c)].parent) {
    const int fold = tree.clusters[static_cast<size_t>(c)].fold;
    if (fold >= 0 && !state.unfolded[static_cast<size_t>(fold)]) {
      shown = {Shown::Kind::Fold, static_cast<uint32_t>(fold)};
    } else if (!state.expanded[static_cast<size_t>(c)]) {
      shown = {Shown::Kind::Cluster, static_cast<uint32_t>(c)};
    }
  }
  return shown;
}

void invalidateAround(const ClusterTree& tree, int cluster, LevelCache& cache) {
  for (int c = tree.clusters[static_cast<size_t>(cluster)].parent; c >= 0;
       c = tree.clusters[static_cast<size_t>(c)].parent) {
    cache.erase(c);
  }
}

namespace {

class Composer {
 public:
  Composer(const ir::Graph& graph, const ClusterTree& tree, const ExpansionState& state, LevelCache& cache,
           const GraphLayoutOptions& options)
      : graph_(graph), tree_(tree), state_(state), cache_(cache), options_(options), itemOfNode_(graph.size(), -1) {}

  SceneLayout compose() {
    const LevelLayout& root = level(kRootCluster);
    scene_.bounds = {0, 0, root.layout.size.width, root.layout.size.height};
    place(kRootCluster, 0, 0);
    std::sort(scene_.nodes.begin(), scene_.nodes.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    connect();
    return std::move(scene_);
  }

 private:
  // The box standing at `cluster`'s level for a node of its subtree.
  Shown levelItem(int cluster, ir::NodeId node) const {
    int child = tree_.clusterOf[node];
    if (child == cluster) return {Shown::Kind::Node, node};
    while (tree_.clusters[static_cast<size_t>(child)].parent != cluster)
      child = tree_.clusters[static_cast<size_t>(child)].parent;
    const int fold = tree_.clusters[static_cast<size_t>(child)].fold;
    if (fold >= 0 && !state_.unfolded[static_cast<size_t>(fold)])
      return {Shown::Kind::Fold, static_cast<uint32_t>(fold)};
    return {Shown::Kind::Cluster, static_cast<uint32_t>(child)};
  }

  LayoutSize itemSize(const Shown& item) {
    switch (item.kind) {
      case Shown::Kind::Node: return nodeBoxSize(graph_, item.index, tree_.role[item.index], options_);
      case Shown::Kind::Fold: {
        const ClusterBox box = describe(item);
        const LayoutSize size = boxSize(box.title, box.subtitle, options_);
        return {size.width + 2 * kFoldCardOffset, size.height + 2 * kFoldCardOffset};
      }
      case Shown::Kind::Cluster: {
        const Cluster& cluster = tree_.clusters[item.index];
        if (!state_.expanded[item.index]) {
          const ClusterBox box = describe(item);
          return boxSize(box.title, box.subtitle, options_);
        }
        const LayoutSize inside = level(static_cast<int>(item.index)).layout.size;
        const double titleWidth =
            static_cast<double>(std::min(kMaxBoxTitleChars, cluster.title.size())) * options_.charWidth;
        return {std::max(inside.width, titleWidth) + 2 * kFramePadding,
                inside.height + titleHeight(options_) + 2 * kFramePadding};
      }
      case Shown::Kind::None: break;
    }
    return {};
  }

  ClusterBox describe(const Shown& item) const {
    ClusterBox box;
    box.what = item;
    if (item.kind == Shown::Kind::Fold) {
      const Fold& fold = tree_.folds[item.index];
      const Cluster& first = tree_.clusters[static_cast<size_t>(fold.members.front())];
      box.title = fold.title;
      size_t fewest = first.subtree.size();
      size_t most = fewest;
      for (const int member : fold.members) {
        fewest = std::min(fewest, tree_.clusters[static_cast<size_t>(member)].subtree.size());
        most = std::max(most, tree_.clusters[static_cast<size_t>(member)].subtree.size());
      }
      box.subtitle = std::to_string(fold.members.size()) + " \u00d7 " +
                     (fewest == most ? nodeCount(most) : std::to_string(fewest) + "\u2013" + nodeCount(most));
      box.depth = first.depth;
    } else {
      const Cluster& cluster = tree_.clusters[item.index];
      box.title = cluster.title;
      box.subtitle = nodeCount(cluster.subtree.size());
      box.depth = cluster.depth;
    }
    return box;
  }

  const LevelLayout& level(int cluster) {
    if (auto found = cache_.find(cluster); found != cache_.end()) return *found->second;
    const Cluster& data = tree_.clusters[static_cast<size_t>(cluster)];
    // Expanded children first: their size is this level's input, and they use the scratch below.
    for (const int child : data.children) {
      if (state_.expanded[static_cast<size_t>(child)] && drawnAsBox(tree_, state_, child)) level(child);
    }
    auto result = std::make_shared<LevelLayout>();
    std::unordered_map<uint64_t, int> indexOfItem;
    for (const ir::NodeId id : data.subtree) {
      const Shown item = levelItem(cluster, id);
      auto [found, added] = indexOfItem.emplace(key(item), static_cast<int>(result->items.size()));
      if (added) result->items.push_back(item);
      itemOfNode_[id] = found->second;
    }
    BoxGraph boxes;
    boxes.boxes.reserve(result->items.size());
    for (const Shown& item : result->items) boxes.boxes.push_back(itemSize(item));
    std::unordered_set<std::pair<uint64_t, uint64_t>, PairHash> seen;
    for (const ir::NodeId id : data.subtree) {
      for (const ir::NodeId input : graph_.inputs(id)) {
        const int from = itemOfNode_[input];
        const int to = itemOfNode_[id];
        if (from < 0 || from == to || !seen.emplace(from, to).second) continue;
        boxes.edges.emplace_back(from, to);
      }
    }
    for (const ir::NodeId id : data.subtree) itemOfNode_[id] = -1;
    result->layout = layoutBoxes(boxes);
    ++scene_.levelsLaidOut;
    return *cache_.emplace(cluster, std::move(result)).first->second;
  }

  void place(int cluster, double left, double top) {
    const LevelLayout& laid = *cache_.at(cluster);
    for (size_t i = 0; i < laid.items.size(); ++i) {
      const Shown& item = laid.items[i];
      LayoutRect rect = laid.layout.boxes[i];
      rect.x += left;
      rect.y += top;
      drawn_.emplace(key(item), rect);
      if (item.kind == Shown::Kind::Node) {
        scene_.nodes.emplace_back(item.index, rect);
      } else if (item.kind == Shown::Kind::Cluster && state_.expanded[item.index]) {
        scene_.frames.push_back({static_cast<int>(item.index), rect, titleHeight(options_)});
        const LayoutSize inside = cache_.at(static_cast<int>(item.index))->layout.size;
        place(static_cast<int>(item.index), rect.x + (rect.width - inside.width) / 2,
              rect.y + titleHeight(options_) + kFramePadding);
      } else {
        ClusterBox box = describe(item);
        box.rect = rect;
        scene_.boxes.push_back(std::move(box));
      }
    }
  }

  void connect() {
    std::vector<Shown> shown(graph_.size());
    for (ir::NodeId id = 0; id < graph_.size(); ++id) shown[id] = shownAs(tree_, state_, id);
    std::unordered_set<std::pair<uint64_t, uint64_t>, PairHash> seen;
    for (ir::NodeId id = 0; id < graph_.size(); ++id) {
      const Shown to = shown[id];
      if (to.kind == Shown::Kind::None) continue;
      for (const ir::NodeId input : graph_.inputs(id)) {
        const Shown from = shown[input];
        if (from.kind == Shown::Kind::None || from == to || !seen.emplace(key(from), key(to)).second) continue;
        const LayoutRect& fromRect = drawn_.at(key(from));
        const LayoutRect& toRect = drawn_.at(key(to));
        scene_.edges.push_back(
            {from, to, borderPoint(fromRect, toRect.centre()), borderPoint(toRect, fromRect.centre())});
      }
    }
  }

  const ir::Graph& graph_;
  const ClusterTree& tree_;
  const ExpansionState& state_;
  LevelCache& cache_;
  const GraphLayoutOptions& options_;
  std::vector<int> itemOfNode_;  // scratch while building one level, -1 elsewhere
  std::unordered_map<uint64_t, LayoutRect> drawn_;
  SceneLayout scene_;
};

}  // namespace

SceneLayout composeLayout(const ir::Graph& graph, const ClusterTree& tree, const ExpansionState& state,
                          LevelCache& cache, const GraphLayoutOptions& options) {
  return Composer(graph, tree, state, cache, options).compose();
}

}  // namespace lathe::views
