#include "passes/fusion.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "util/diagnostics.h"

namespace lathe::passes {

namespace {

using ir::NodeId;
using plan::kNone;

// The element count a loop runs over; 0 when unknown (no tensor, a size without a hint) or empty.
int64_t loopNumel(const ir::TensorMeta& meta) {
  return meta.isTensor() && meta.allHinted() ? meta.numel() : 0;
}

// Loop numel and, for a group with a reduction, the reduced numel (see the shape rule in fusion.h).
struct Shape {
  bool reduction = false;
  int64_t loop = 0;
  int64_t reduced = 0;
};

std::optional<Shape> combine(const Shape& a, const Shape& b) {
  if (a.reduction && b.reduction) return std::nullopt;
  if (!a.reduction && !b.reduction) return a.loop == b.loop ? std::optional<Shape>(a) : std::nullopt;
  const Shape& reduction = a.reduction ? a : b;
  const Shape& pointwise = a.reduction ? b : a;
  if (pointwise.loop == reduction.loop || pointwise.loop == reduction.reduced) return reduction;
  return std::nullopt;
}

enum class Fusion : uint8_t {
  Barrier,    // never in a group
  Pointwise,  // a fusible kernel that is not a reduction
  Reduction,  // a reduction or normalization: at most one per group
  RideAlong,  // a view or getitem: joins the group of the node it reads
};

struct Facts {
  Fusion kind = Fusion::Barrier;
  Shape shape;
  int64_t segment = 0;  // piece and forward/backward side; groups never span two
};

bool isKernel(const ir::Graph& graph, NodeId node, const ir::OpRegistry& ops) {
  if (!graph.node(node).isCall()) return false;
  const ir::OpCategory category = ops.lookup(graph.target(node)).category;
  return category != ir::OpCategory::View && category != ir::OpCategory::Getitem && category != ir::OpCategory::Host;
}

std::vector<Facts> nodeFacts(const PassContext& context, const plan::PlanState& before) {
  const ir::Graph& graph = context.graph;
  const size_t n = graph.size();
  const bool piecesSet = before.piece.size() == n && before.pieceCount > 0;
  const bool boundariesSet = before.boundary.size() == n;
  std::vector<Facts> facts(n);
  std::vector<bool> backward(n, false);
  int64_t stretch = 0;  // split ops seen so far, where no piece is set
  for (NodeId node = 0; node < n; ++node) {
    if (node % 4096 == 0) context.progress.checkCancelled();
    const ir::Node& info = graph.node(node);
    backward[node] = context.inputs.role[node] == ir::Role::Tangent;
    for (NodeId in : graph.inputs(node)) backward[node] = backward[node] || backward[in];
    if (!info.isCall()) continue;
    const ir::OpInfo& op = context.ops.lookup(graph.target(node));
    const bool splitOp = op.subgraphBoundary || (boundariesSet && before.boundary[node]);
    if (splitOp) ++stretch;
    Facts& fact = facts[node];
    fact.segment = 2 * (piecesSet ? before.piece[node] : stretch) + (backward[node] ? 1 : 0);
    if (splitOp || !op.fusible) continue;
    switch (op.category) {
      case ir::OpCategory::View:
      case ir::OpCategory::Getitem: fact.kind = Fusion::RideAlong; break;
      case ir::OpCategory::Reduction:
      case ir::OpCategory::Normalization: {
        const auto inputs = graph.inputs(node);
        if (inputs.empty()) break;
        int64_t reduced = loopNumel(info.meta);
        if (!info.meta.isTensor()) {
          // A tuple result (var_mean, native_layer_norm): the smallest of its outputs, all known.
          bool known = true;
          for (const ir::TensorMeta& out : ir::outputMetas(graph, node, context.ops)) {
            if (!out.isTensor()) continue;
            const int64_t numel = loopNumel(out);
            known = known && numel > 0;
            reduced = reduced == 0 ? numel : std::min(reduced, numel);
          }
          if (!known) reduced = 0;
        }
        const int64_t loop = loopNumel(graph.node(inputs[0]).meta);
        if (loop > 0 && reduced > 0) fact = {Fusion::Reduction, {true, loop, reduced}, fact.segment};
        break;
      }
      default: {
        const int64_t numel = loopNumel(info.meta);
        if (numel > 0) fact = {Fusion::Pointwise, {false, numel, 0}, fact.segment};
      }
    }
  }
  return facts;
}

// The nodes that run as one with a node: its fusion group, or none for a node on its own.
struct Cluster {
  std::span<const NodeId> nodes;
  NodeId lowest = 0;  // first in program order
};

// Whether a path leaves a node set and comes back into it. A path that enters a cluster may leave
// from any node of it, as a fused group runs as one kernel: checked that way, merging never makes a
// cycle between groups either (two convex groups can still feed each other). Marks are stamped
// with an epoch, so one checker serves many checks without clearing.
class PathCheck {
 public:
  explicit PathCheck(const ir::Graph& graph) : graph_(graph), mark_(graph.size(), 0) {}

  void begin() {
    epoch_ += 2;  // mark epoch_: in the set; epoch_ + 1: visited
    members_.clear();
    highest_ = 0;
  }
  void add(std::span<const NodeId> nodes) {
    for (NodeId node : nodes) {
      mark_[node] = epoch_;
      members_.push_back(node);
      highest_ = std::max(highest_, node);
    }
  }
  // `cluster(node)` gives the node's Cluster. Program order is topological, so a path that gets
  // past the set's last member cannot return, provided no cluster straddles that member (groups
  // are built in program order: none holds a node after the node being added).
  template <typename ClusterOf>
  [[nodiscard]] bool returns(ClusterOf&& cluster) {
    stack_.clear();
    auto leave = [&](NodeId from) {
      for (NodeId user : graph_.users(from)) {
        if (mark_[user] == epoch_) return true;
        if (mark_[user] != epoch_ + 1) stack_.push_back(user);
      }
      return false;
    };
    for (NodeId member : members_) {
      for (NodeId user : graph_.users(member)) {
        if (mark_[user] != epoch_) stack_.push_back(user);
      }
    }
    while (!stack_.empty()) {
      const NodeId node = stack_.back();
      stack_.pop_back();
      if (mark_[node] == epoch_ + 1) continue;
      const Cluster around = cluster(node);
      if (around.nodes.empty()) {
        if (node > highest_) continue;
        mark_[node] = epoch_ + 1;
        if (leave(node)) return true;
        continue;
      }
      if (around.lowest > highest_) continue;
      for (NodeId peer : around.nodes) mark_[peer] = epoch_ + 1;
      for (NodeId peer : around.nodes) {
        if (leave(peer)) return true;
      }
    }
    return false;
  }

 private:
  const ir::Graph& graph_;
  std::vector<uint32_t> mark_;
  std::vector<NodeId> members_, stack_;
  uint32_t epoch_ = 0;
  NodeId highest_ = 0;
};

struct Group {
  std::vector<NodeId> nodes;
  NodeId lowest = 0;
  Shape shape;
  int64_t segment = 0;
  NodeId reduction = ir::kNoNode;
  bool alive = true;
};

class GroupBuilder {
 public:
  GroupBuilder(const PassContext& context, std::vector<Facts> facts, size_t maxNodes)
      : graph_(context.graph),
        facts_(std::move(facts)),
        maxNodes_(maxNodes),
        groupOf_(context.graph.size(), kNone),
        paths_(context.graph) {}

  void add(NodeId node) {
    const Fusion kind = facts_[node].kind;
    if (kind != Fusion::Pointwise && kind != Fusion::Reduction) return;
    std::vector<Producer> producers = producerGroups(node);
    int32_t joined = kNone;
    size_t next = 0;
    while (next < producers.size() && joined == kNone) {
      Producer& producer = producers[next++];
      producer.chain.push_back(node);
      if (fits({producer.group}, producer.chain)) {
        absorb(producer.group, producer.chain);
        joined = producer.group;
      }
    }
    if (joined == kNone) {
      joined = static_cast<int32_t>(groups_.size());
      const Facts& fact = facts_[node];
      groups_.push_back({{node}, node, fact.shape, fact.segment, kind == Fusion::Reduction ? node : ir::kNoNode, true});
      groupOf_[node] = joined;
    }
    for (; next < producers.size(); ++next) {
      const Producer& producer = producers[next];
      if (!fits({joined, producer.group}, producer.chain)) continue;
      merge(joined, producer.group);
      absorb(joined, producer.chain);
    }
  }

  // Groups of two or more nodes, nodes in program order, ids in order of their first node.
  std::vector<plan::FusionGroup> finish(const ir::OpRegistry& ops) {
    std::vector<plan::FusionGroup> out;
    for (Group& group : groups_) {
      if (!group.alive || group.nodes.size() < 2) continue;
      std::sort(group.nodes.begin(), group.nodes.end());
      plan::FusionGroup fused;
      fused.nodes = group.nodes;
      fused.anchor = group.reduction == ir::kNoNode ? group.nodes.front() : group.reduction;
      fused.kind = group.reduction == ir::kNoNode ? "pointwise"
                   : ops.lookup(graph_.target(group.reduction)).category == ir::OpCategory::Normalization
                       ? "normalization"
                       : "reduction";
      out.push_back(std::move(fused));
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.nodes.front() < b.nodes.front(); });
    for (size_t i = 0; i < out.size(); ++i) out[i].id = static_cast<int32_t>(i);
    return out;
  }

 private:
  // A producer group of a node and the views/getitems between them, outside any group so far.
  struct Producer {
    int32_t group = kNone;
    std::vector<NodeId> chain;
  };

  std::vector<Producer> producerGroups(NodeId node) const {
    std::vector<Producer> producers;
    for (NodeId in : graph_.inputs(node)) {
      std::vector<NodeId> chain;
      NodeId at = in;
      bool reachable = true;
      while (facts_[at].kind == Fusion::RideAlong && groupOf_[at] == kNone) {
        chain.push_back(at);
        const auto base = graph_.inputs(at);
        if (base.empty()) {
          reachable = false;
          break;
        }
        at = base[0];
      }
      if (!reachable || groupOf_[at] == kNone) continue;
      auto known =
          std::find_if(producers.begin(), producers.end(), [&](const Producer& p) { return p.group == groupOf_[at]; });
      if (known == producers.end()) known = producers.insert(producers.end(), Producer{groupOf_[at], {}});
      known->chain.insert(known->chain.end(), chain.begin(), chain.end());
    }
    for (Producer& producer : producers) {
      std::sort(producer.chain.begin(), producer.chain.end());
      producer.chain.erase(std::unique(producer.chain.begin(), producer.chain.end()), producer.chain.end());
    }
    return producers;
  }

  bool fits(std::initializer_list<int32_t> parts, std::span<const NodeId> extra) {
    const int64_t segment = groups_[static_cast<size_t>(*parts.begin())].segment;
    size_t size = extra.size();
    std::optional<Shape> shape;
    auto fold = [&](const Shape& s) {
      shape = shape ? combine(*shape, s) : s;
      return shape.has_value();
    };
    for (int32_t part : parts) {
      const Group& group = groups_[static_cast<size_t>(part)];
      size += group.nodes.size();
      if (group.segment != segment || !fold(group.shape)) return false;
    }
    for (NodeId node : extra) {
      const Facts& fact = facts_[node];
      if (fact.segment != segment) return false;
      if (fact.kind != Fusion::RideAlong && !fold(fact.shape)) return false;
    }
    if (size > maxNodes_) return false;
    paths_.begin();
    for (int32_t part : parts) paths_.add(groups_[static_cast<size_t>(part)].nodes);
    paths_.add(extra);
    return !paths_.returns([&](NodeId node) {
      const int32_t group = groupOf_[node];
      if (group == kNone) return Cluster{};
      const Group& around = groups_[static_cast<size_t>(group)];
      return Cluster{around.nodes, around.lowest};
    });
  }

  void absorb(int32_t into, std::span<const NodeId> nodes) {
    Group& group = groups_[static_cast<size_t>(into)];
    for (NodeId node : nodes) {
      groupOf_[node] = into;
      group.nodes.push_back(node);
      group.lowest = std::min(group.lowest, node);
      const Facts& fact = facts_[node];
      if (fact.kind == Fusion::RideAlong) continue;
      group.shape = *combine(group.shape, fact.shape);
      if (fact.kind == Fusion::Reduction) group.reduction = node;
    }
  }

  void merge(int32_t into, int32_t from) {
    Group& source = groups_[static_cast<size_t>(from)];
    Group& target = groups_[static_cast<size_t>(into)];
    for (NodeId node : source.nodes) groupOf_[node] = into;
    target.nodes.insert(target.nodes.end(), source.nodes.begin(), source.nodes.end());
    target.lowest = std::min(target.lowest, source.lowest);
    target.shape = *combine(target.shape, source.shape);
    if (source.reduction != ir::kNoNode) target.reduction = source.reduction;
    source.nodes.clear();
    source.alive = false;
  }

  const ir::Graph& graph_;
  std::vector<Facts> facts_;
  size_t maxNodes_;
  std::vector<int32_t> groupOf_;
  std::vector<Group> groups_;
  PathCheck paths_;
};

uint64_t outputBytes(const ir::Graph& graph, NodeId node, const ir::OpRegistry& ops) {
  const ir::TensorMeta& meta = graph.node(node).meta;
  if (meta.isTensor()) return meta.storageBytes();
  uint64_t bytes = 0;
  for (const ir::TensorMeta& out : ir::outputMetas(graph, node, ops)) bytes += out.storageBytes();
  return bytes;
}

// Whether a user outside the group reads the node, directly or through in-group views.
bool readOutside(const ir::Graph& graph, NodeId node, const std::vector<int32_t>& group, const ir::OpRegistry& ops) {
  std::vector<NodeId> pending{node};  // the node and its in-group views, each once
  std::set<NodeId> seen{node};
  while (!pending.empty()) {
    const NodeId at = pending.back();
    pending.pop_back();
    for (NodeId user : graph.users(at)) {
      if (group[user] != group[node]) return true;
      const ir::OpCategory category = ops.lookup(graph.target(user)).category;
      if ((category == ir::OpCategory::View || category == ir::OpCategory::Getitem) && seen.insert(user).second) {
        pending.push_back(user);
      }
    }
  }
  return false;
}

uint64_t savedBytes(const ir::Graph& graph, const plan::FusionGroup& fused, const std::vector<int32_t>& group,
                    const ir::OpRegistry& ops) {
  uint64_t saved = 0;
  for (NodeId node : fused.nodes) {
    if (!isKernel(graph, node, ops)) continue;
    for (NodeId in : graph.inputs(node)) {
      if (group[in] == fused.id) saved += outputBytes(graph, in, ops);
    }
    if (!readOutside(graph, node, group, ops)) saved += outputBytes(graph, node, ops);
  }
  return saved;
}

// A group's kind as its diff line names it.
Message fusionKindText(const std::string& kind) {
  if (kind == "pointwise") return Message(LATHE_TEXT("lathe::passes", "pointwise"));
  if (kind == "reduction") return Message(LATHE_TEXT("lathe::passes", "reduction"));
  if (kind == "normalization") return Message(LATHE_TEXT("lathe::passes", "normalization"));
  return kind;
}

}  // namespace

bool isConvex(const ir::Graph& graph, std::span<const ir::NodeId> group) {
  PathCheck check(graph);
  check.begin();
  check.add(group);
  return !check.returns([](NodeId) { return Cluster{}; });
}

const PassInfo& FusionPass::info() const {
  static constexpr OptionSpec kOptions[] = {kMaxNodes};
  static constexpr StatKey kStats[] = {kGroups,      kGroupsPointwise, kGroupsReduction, kGroupsNormalization,
                                       kFusedNodes,  kKernelsBefore,   kKernelsAfter,    kTrafficRemoved};
  static const PassInfo info{"fusion", "Inductor-style groups of nodes that become one generated kernel", kOptions,
                             kStats};
  return info;
}

PassResult FusionPass::run(const PassContext& context, const plan::PlanState& before,
                           const PassOptions& options) const {
  requireSupportedGraph(context.graph);
  const double maxNodes = options.number(kMaxNodes);
  const ir::Graph& graph = context.graph;
  const size_t n = graph.size();
  if (context.inputs.role.size() != n) {
    throw Error(ErrorCode::Internal, "fusion: graph inputs describe " + std::to_string(context.inputs.role.size()) +
                                         " nodes, the graph has " + std::to_string(n));
  }

  GroupBuilder builder(context, nodeFacts(context, before), static_cast<size_t>(maxNodes));
  for (NodeId node = 0; node < n; ++node) {
    if (node % 1024 == 0) {
      context.progress.checkCancelled();
      context.progress.update(node, n);
    }
    builder.add(node);
  }

  PassResult result;
  result.state = before;
  result.state.groups = builder.finish(context.ops);
  result.state.group.assign(n, kNone);
  for (const plan::FusionGroup& fused : result.state.groups) {
    for (NodeId node : fused.nodes) result.state.group[node] = fused.id;
  }

  size_t kernelsBefore = 0, fusedNodes = 0, fusedKernels = 0;
  size_t byKind[3] = {0, 0, 0};  // pointwise, reduction, normalization
  uint64_t saved = 0;
  for (NodeId node = 0; node < n; ++node) kernelsBefore += isKernel(graph, node, context.ops) ? 1 : 0;
  for (const plan::FusionGroup& fused : result.state.groups) {
    size_t kernels = 0;
    std::string names;
    for (NodeId node : fused.nodes) {
      kernels += isKernel(graph, node, context.ops) ? 1 : 0;
      names += (node == fused.nodes.front() ? "" : ", ") + std::string(graph.name(node));
    }
    result.diff.push_back({LATHE_TEXT("lathe::passes", "+ group %1 (%2): %3"),
                           {std::to_string(fused.id), fusionKindText(fused.kind), std::move(names)}});
    fusedNodes += fused.nodes.size();
    fusedKernels += kernels > 0 ? kernels - 1 : 0;
    ++byKind[fused.kind == "pointwise" ? 0 : fused.kind == "reduction" ? 1 : 2];
    saved += savedBytes(graph, fused, result.state.group, context.ops);
  }
  result.set(kGroups, static_cast<double>(result.state.groups.size()));
  result.set(kGroupsPointwise, static_cast<double>(byKind[0]));
  result.set(kGroupsReduction, static_cast<double>(byKind[1]));
  result.set(kGroupsNormalization, static_cast<double>(byKind[2]));
  result.set(kFusedNodes, static_cast<double>(fusedNodes));
  result.set(kKernelsBefore, static_cast<double>(kernelsBefore));
  result.set(kKernelsAfter, static_cast<double>(kernelsBefore - fusedKernels));
  result.set(kTrafficRemoved, static_cast<double>(saved));
  return result;
}

}  // namespace lathe::passes
