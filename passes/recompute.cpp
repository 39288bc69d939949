#include "passes/recompute.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <queue>
#include <set>
#include <cstdio>
#include <string_view>
#include <unordered_set>

#include "analysis/canonical.h"
#include "analysis/cost_model.h"
#include "passes/min_cut.h"
#include "passes/step_time.h"
#include "plan/plan_bind.h"
#include "util/diagnostics.h"
#include "util/format.h"
#include "util/input.h"
#include "util/json_limits.h"

namespace lathe::passes {

namespace {

using analysis::JointInfo;
using ir::NodeId;

#include "passes/torch_op_lists.inc"

// "torch.ops.aten.add.Tensor" -> "aten.add"; "operator.getitem" stays.
std::string_view overloadPacket(std::string_view target) {
  if (target.starts_with("torch.ops.")) target.remove_prefix(10);
  const size_t first = target.find('.');
  if (first == std::string_view::npos) return target;
  const size_t second = target.find('.', first + 1);
  if (second == std::string_view::npos || target.starts_with("operator.")) return target;
  return target.substr(0, second);
}

struct TorchOpTypes {
  std::unordered_set<std::string_view> recomputable, views, computeIntensive, random;
  TorchOpTypes() {
    for (const char* name : kTorchRecomputableOps) recomputable.insert(name);
    for (const char* name : kTorchViewOps) views.insert(name);
    for (const char* name : kTorchComputeIntensiveOps) computeIntensive.insert(name);
    for (const char* name : kTorchRandomOps) random.insert(name);
  }
  static const TorchOpTypes& get() {
    static const TorchOpTypes types;
    return types;
  }
};

// Per-node facts torch's partitioner reads, computed once.
struct TorchNodeFacts {
  std::vector<uint8_t> fusible, view, recomputable, isCat, callFunction, getitem;
  std::vector<int64_t> size;  // torch's _size_of: numel x itemsize (tuples: sum of elements); SymInt: 1
  std::vector<uint8_t> tensor, symbolic;
};

int64_t tensorSize(const ir::TensorMeta& meta) {
  const int64_t numel = meta.numel();
  return numel * static_cast<int64_t>(std::max(1u, ir::dtypeSize(meta.dtype)));
}

TorchNodeFacts torchFacts(const ir::Graph& graph) {
  const TorchOpTypes& ops = TorchOpTypes::get();
  const size_t n = graph.size();
  TorchNodeFacts f;
  f.fusible.assign(n, 0);
  f.view.assign(n, 0);
  f.recomputable.assign(n, 0);
  f.isCat.assign(n, 0);
  f.callFunction.assign(n, 0);
  f.getitem.assign(n, 0);
  f.size.assign(n, 0);
  f.tensor.assign(n, 0);
  f.symbolic.assign(n, 0);
  for (NodeId id = 0; id < n; ++id) {
    const ir::Node& node = graph.node(id);
    const ir::TensorMeta& meta = node.meta;
    f.tensor[id] = meta.isTensor();
    f.symbolic[id] = meta.kind == ir::ValueKind::SymInt || meta.kind == ir::ValueKind::SymBool ||
                     meta.kind == ir::ValueKind::SymFloat;
    if (meta.isTensor()) {
      f.size[id] = tensorSize(meta);
    } else if (f.symbolic[id]) {
      f.size[id] = 1;
    }
    if (node.kind != ir::NodeKind::CallFunction) continue;
    f.callFunction[id] = 1;
    const std::string_view packet = overloadPacket(graph.target(id));
    f.getitem[id] = packet == "operator.getitem";
    f.recomputable[id] = ops.recomputable.contains(packet);
    f.fusible[id] = f.recomputable[id] || ops.random.contains(packet);
    f.view[id] = ops.views.contains(packet);
    f.isCat[id] = packet == "aten.cat";
  }
  // A tuple result's size is the sum of its elements (read by getitems).
  for (NodeId id = 0; id < n; ++id) {
    if (!f.getitem[id] || !f.tensor[id]) continue;
    const auto ins = graph.inputs(id);
    if (!ins.empty() && !f.tensor[ins[0]] && !f.symbolic[ins[0]]) f.size[ins[0]] += f.size[id];
  }
  return f;
}

class TorchMinCut {
 public:
  TorchMinCut(const ir::Graph& graph, const JointInfo& joint, const analysis::GraphInputs& inputs)
      : graph_(graph), joint_(joint), inputs_(inputs), f_(torchFacts(graph)), network_(2 * graph.size() + 2) {
    source_ = static_cast<uint32_t>(2 * graph.size());
    sink_ = source_ + 1;
    banned_.assign(graph.size(), 0);
    walked_.assign(graph.size(), 0);
  }

  // The saved values; nullopt when no finite cut exists (every path to the backward is banned).
  std::optional<std::vector<NodeId>> solve() {
    const size_t n = graph_.size();
    for (NodeId id = 0; id < n; ++id) {
      const ir::Node& node = graph_.node(id);
      if (node.kind == ir::NodeKind::Output) continue;
      if (joint_.isBackward(id)) {
        if (!joint_.tangentClosure[id]) {
          network_.addEdge(out(id), sink_, FlowNetwork::kInfinite);
        } else {
          network_.addEdge(in(id), sink_, FlowNetwork::kInfinite);
          continue;
        }
      }
      if (node.kind == ir::NodeKind::Placeholder && node.role != ir::Role::Tangent) ban(id);
      if (joint_.isForward(id) && shouldBan(id)) ban(id);
      network_.addEdge(in(id), out(id), weight(id));
      for (NodeId user : graph_.users(id)) {
        if (graph_.node(user).kind != ir::NodeKind::Output) network_.addEdge(out(id), in(user), FlowNetwork::kInfinite);
      }
    }
    banUsedFarApart();
    banLongFusibleChains();
    const FlowNetwork::Cut cut = network_.minimumCut(source_, sink_);
    if (cut.value >= FlowNetwork::kInfinite) return std::nullopt;
    std::vector<NodeId> saved;
    for (NodeId id = 0; id < n; ++id) {
      if (!cut.sinkSide[in(id)] && cut.sinkSide[out(id)]) saved.push_back(id);
    }
    return saved;
  }

 private:
  [[nodiscard]] uint32_t in(NodeId id) const { return 2 * id; }
  [[nodiscard]] uint32_t out(NodeId id) const { return 2 * id + 1; }

  [[nodiscard]] bool fusible(NodeId a, NodeId b) const { return f_.isCat[b] || (f_.fusible[a] && f_.fusible[b]); }

  void ban(NodeId id) {
    if (f_.view[id] || graph_.node(id).meta.kind == ir::ValueKind::SymFloat) return;
    banned_[id] = 1;
    network_.addEdge(source_, in(id), FlowNetwork::kInfinite);
  }

  [[nodiscard]] bool materializedInBackward(NodeId id) {
    if (f_.view[id]) return false;
    std::vector<NodeId> pending{id};
    ++walk_;
    walked_[id] = walk_;
    while (!pending.empty()) {
      const NodeId cur = pending.back();
      pending.pop_back();
      for (NodeId user : graph_.users(cur)) {
        if (!joint_.isForward(user) && !fusible(cur, user)) return true;
        if (f_.view[user] && walked_[user] != walk_) {
          walked_[user] = walk_;
          pending.push_back(user);
        }
      }
    }
    return false;
  }

  [[nodiscard]] bool shouldBan(NodeId id) {
    if (!f_.callFunction[id] || f_.getitem[id]) return false;
    const std::string_view packet = overloadPacket(graph_.target(id));
    if (packet == "aten.lift_fresh_copy" || packet == "aten.lift_fresh") return false;
    if (!f_.recomputable[id]) return true;
    if (materializedInBackward(id)) return true;
    // A reduction whose output is 4x smaller than its inputs (norm statistics) is kept.
    int64_t inputSize = 0;
    for (const ir::Arg& arg : graph_.node(id).args) {
      if (arg.kind == ir::Arg::Kind::Node) inputSize += f_.size[arg.node];
    }
    return f_.size[id] * 4 < inputSize;
  }

  [[nodiscard]] int64_t weight(NodeId id) const {
    const ir::Node& node = graph_.node(id);
    if (f_.symbolic[id]) return 1;
    if (!f_.tensor[id]) return FlowNetwork::kInfinite;  // tuples and opaque values cannot be saved
    if (node.kind == ir::NodeKind::Placeholder && inputs_.isWeight(id)) return 0;  // treat_parameters_as_free_to_save
    const int dist = std::max(std::min(joint_.distanceFromBackward[id], 100), 1);
    const double scaled = static_cast<double>(f_.size[id]) * std::pow(1.1, dist);
    const int64_t size = static_cast<int64_t>(scaled);
    bool materialized = node.kind == ir::NodeKind::Placeholder;
    if (!materialized) {
      for (NodeId user : graph_.users(id)) materialized = materialized || graph_.node(user).kind == ir::NodeKind::Output || !fusible(id, user);
    }
    return materialized ? size : size * 2;
  }

  // torch's find_first_unfusible: the forward position of the first unfusible use reachable
  // through fusible users from `starts`, or `maxRange`.
  [[nodiscard]] int32_t firstUnfusible(const std::vector<NodeId>& starts, int32_t maxRange) const {
    std::set<std::tuple<int32_t, NodeId, bool>> heap;
    for (NodeId s : starts) heap.emplace(joint_.forwardOrder[s], s, true);
    while (!heap.empty()) {
      const auto [order, node, nodeFusible] = *heap.begin();
      heap.erase(heap.begin());
      if (!nodeFusible) return order;
      for (NodeId user : graph_.users(node)) {
        if (!joint_.isForward(user) || joint_.forwardOrder[user] > maxRange) continue;
        heap.emplace(joint_.forwardOrder[user], user, fusible(node, user));
      }
    }
    return maxRange;
  }

  void banUsedFarApart() {
    for (NodeId used = 0; used < graph_.size(); ++used) {
      if (!joint_.isForward(used)) continue;
      std::vector<NodeId> forwardUsers;
      int32_t maxOrder = -1;
      for (NodeId user : graph_.users(used)) {
        if (!joint_.isForward(user)) continue;
        forwardUsers.push_back(user);
        maxOrder = std::max(maxOrder, joint_.forwardOrder[user]);
      }
      if (forwardUsers.empty()) continue;
      const int32_t first = firstUnfusible(forwardUsers, maxOrder);
      for (NodeId user : forwardUsers) {
        if (joint_.forwardOrder[user] > first && fusible(used, user) && !banned_[user]) ban(user);
      }
    }
  }

  void banLongFusibleChains() {
    std::vector<uint8_t> visited(graph_.size(), 0);
    using Item = std::pair<int32_t, NodeId>;
    for (NodeId start = 0; start < graph_.size(); ++start) {
      if (!joint_.isForward(start)) continue;
      const int32_t startOrder = joint_.forwardOrder[start];
      std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
      heap.emplace(startOrder, start);
      while (!heap.empty()) {
        const NodeId cur = heap.top().second;
        heap.pop();
        if (visited[cur]) continue;
        visited[cur] = 1;
        if (joint_.forwardOrder[cur] > startOrder + 100 && heap.empty()) {
          ban(cur);
          break;
        }
        for (NodeId user : graph_.users(cur)) {
          if (joint_.isForward(user) && fusible(cur, user) && !banned_[user]) heap.emplace(joint_.forwardOrder[user], user);
        }
      }
    }
  }

  const ir::Graph& graph_;
  const JointInfo& joint_;
  const analysis::GraphInputs& inputs_;
  TorchNodeFacts f_;
  FlowNetwork network_;
  uint32_t source_ = 0, sink_ = 0;
  std::vector<uint8_t> banned_;
  // Nodes materializedInBackward's walks reached, stamped with the walk: one vector for all walks.
  std::vector<uint32_t> walked_;
  uint32_t walk_ = 0;
};

void requireJoint(const ir::Graph& graph, const JointInfo& joint) {
  if (!joint.joint) {
    throw Error(ErrorCode::Usage, "recompute needs a joint graph (an aot_joint_graph with tangents); this graph has " +
                                      std::to_string(joint.tangents.size()) + " tangents and " +
                                      std::to_string(graph.size()) + " nodes");
  }
}

// A joint graph no saved set splits into a step (a forward output computed from the tangents) is
// refused as the input it is: saving everything outside the tangents' closure is the most any set
// can save, so once it splits, a policy's set that does not is our own bug.
void requireTrainingStep(const ir::Graph& graph, const JointInfo& joint) {
  std::vector<NodeId> everything;
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (!joint.tangentClosure[id] && graph.node(id).kind != ir::NodeKind::Output) everything.push_back(id);
  }
  const analysis::StepPartition step = analysis::partitionJoint(graph, joint, everything);
  if (step.valid()) return;
  const NodeId first = step.missing.front();
  throw Error(ErrorCode::BadInput,
              "recompute: not a training step the planner can split: " + std::string(graph.name(first)) +
                  (joint.tangentClosure[first] ? " is returned by the forward but computed from the tangents"
                                               : " cannot be computed whatever the forward saves"));
}

// Completes a saved set so that the backward can run and computes what the forward did: a value the
// backward needs but cannot compute is saved itself, and so is one it would recompute that must run
// once: a random op would draw other numbers (gpt2's dropout masks under the heuristic, as the
// executor's gradient check shows), a collective or host op would run twice. The step the completed set
// makes comes with it.
struct ClosedSet {
  std::vector<NodeId> saved;  // the set given, with what it lacked (sorted when anything was added)
  analysis::StepPartition step;
};
ClosedSet closeSavedSet(const ir::Graph& graph, const JointInfo& joint, const ir::OpRegistry& ops,
                        std::vector<NodeId> saved) {
  for (int round = 0; round < 64; ++round) {
    analysis::StepPartition step = analysis::partitionJoint(graph, joint, saved);
    std::vector<NodeId> add;
    for (NodeId id : step.missing) {
      if (!joint.tangentClosure[id]) add.push_back(id);
    }
    for (NodeId id : step.recomputed) {
      const ir::OpCategory category = ops.lookup(graph.target(id)).category;
      if (category == ir::OpCategory::Random || category == ir::OpCategory::Collective ||
          category == ir::OpCategory::Host) {
        add.push_back(id);
      }
    }
    if (add.empty()) return {std::move(saved), std::move(step)};
    saved.insert(saved.end(), add.begin(), add.end());
    std::sort(saved.begin(), saved.end());
    saved.erase(std::unique(saved.begin(), saved.end()), saved.end());
  }
  analysis::StepPartition step = analysis::partitionJoint(graph, joint, saved);
  return {std::move(saved), std::move(step)};
}

plan::RecomputeDecision decisionFor(const ir::Graph& graph, const JointInfo& joint, std::string policy,
                                    const std::vector<NodeId>& chosen, const std::vector<Message>& reasons) {
  const analysis::StepPartition step = analysis::partitionJoint(graph, joint, chosen);
  plan::RecomputeDecision decision;
  decision.policy = std::move(policy);
  decision.saved = step.saved;
  decision.recomputed = step.recomputed;
  for (NodeId id : decision.saved) {
    const auto it = std::lower_bound(chosen.begin(), chosen.end(), id);
    const size_t index = static_cast<size_t>(it - chosen.begin());
    decision.savedReasons.push_back(index < reasons.size() ? reasons[index]
                                                         : Message(LATHE_TEXT("lathe::passes", "needed by the backward")));
  }
  return decision;
}

// MagiCompiler's list (torch's compute-intensive ops plus flagged custom ops) misses grouped MoE
// GEMMs and cuDNN attention; every matmul, attention and convolution counts here.
bool computeSensitive(const ir::Graph& graph, NodeId id, const ir::OpRegistry& ops) {
  const ir::OpInfo& info = ops.lookup(graph.target(id));
  return info.computeSensitive || info.category == ir::OpCategory::Matmul || info.category == ir::OpCategory::Attention ||
         info.category == ir::OpCategory::Convolution;
}

}  // namespace

plan::RecomputeDecision torchPolicy(const ir::Graph& graph, const JointInfo& joint, const analysis::GraphInputs& inputs,
                                    bool inductorJointPasses) {
  requireJoint(graph, joint);
  // torch partitions the graph Inductor's joint passes and its own CSE leave (canonical.h).
  const analysis::CanonicalGraph canonical =
      analysis::canonicalize(graph, {.removeNoOps = inductorJointPasses, .mergeDuplicates = true});
  const ir::Graph& cg = *canonical.graph;
  const JointInfo canonicalJoint = analysis::analyzeJoint(cg);
  requireJoint(cg, canonicalJoint);
  analysis::GraphInputs canonicalInputs;
  canonicalInputs.role.resize(cg.size());
  canonicalInputs.modulePath.resize(cg.size());
  for (NodeId c = 0; c < cg.size(); ++c) {
    canonicalInputs.role[c] = inputs.role[canonical.toOriginal[c]];
    if (cg.node(c).kind == ir::NodeKind::Placeholder) canonicalInputs.placeholders.push_back(c);
  }
  TorchMinCut minCut(cg, canonicalJoint, canonicalInputs);
  const std::optional<std::vector<NodeId>> cut = minCut.solve();
  if (!cut) throw Error(ErrorCode::BadInput, "torch policy: the flow network has no finite cut (every value is banned)");
  // Torch saves the node CSE kept. Where the logged graph's backward reads a duplicate that cannot
  // be recomputed, closeSavedSet saves that duplicate too.
  std::vector<NodeId> saved;
  for (NodeId c : *cut) saved.push_back(canonical.toOriginal[c]);
  std::sort(saved.begin(), saved.end());
  saved = closeSavedSet(graph, joint, ir::OpRegistry::global(), std::move(saved)).saved;
  return decisionFor(graph, joint, "torch", saved,
                     std::vector<Message>(saved.size(), Message(LATHE_TEXT("lathe::passes", "min cut"))));
}

plan::RecomputeDecision heuristicPolicy(const ir::Graph& graph, const JointInfo& joint, const ir::OpRegistry& ops) {
  requireJoint(graph, joint);
  const size_t n = graph.size();
  std::vector<std::pair<NodeId, Message>> picks;
  auto forwardUsers = [&](NodeId id) {
    std::vector<NodeId> users;
    for (NodeId user : graph.users(id)) {
      if (joint.isForward(user) || graph.node(user).kind == ir::NodeKind::Output) users.push_back(user);
    }
    return users;
  };
  // Whether the backward reaches a node's value without passing a compute-sensitive op: a user
  // outside the forward reads it, or a forward user that is not compute sensitive is reached so.
  // Users come later in program order, so one backward sweep settles every node.
  std::vector<uint8_t> reachedByBackward(n, 0);
  for (NodeId id = static_cast<NodeId>(n); id-- > 0;) {
    for (NodeId user : graph.users(id)) {
      if (graph.node(user).kind == ir::NodeKind::Output) continue;
      if (!joint.isForward(user) || (reachedByBackward[user] && !computeSensitive(graph, user, ops))) {
        reachedByBackward[id] = 1;
        break;
      }
    }
  }
  for (NodeId id = 0; id < n; ++id) {
    const ir::Node& node = graph.node(id);
    if (node.kind == ir::NodeKind::Placeholder && node.role != ir::Role::Tangent) {
      if (reachedByBackward[id]) picks.emplace_back(id, Message(LATHE_TEXT("lathe::passes", "primal read by the backward")));
      continue;
    }
    if (!joint.isForward(id) || node.kind != ir::NodeKind::CallFunction || !computeSensitive(graph, id, ops)) continue;
    // Push the save point down through one view and through narrowing casts.
    NodeId point = id;
    bool movedThroughView = false;
    for (;;) {
      const std::vector<NodeId> users = forwardUsers(point);
      if (users.size() != 1 || graph.node(users[0]).kind == ir::NodeKind::Output) break;
      const NodeId user = users[0];
      const ir::OpInfo& info = ops.lookup(graph.target(user));
      if (info.category == ir::OpCategory::View && !movedThroughView) {
        movedThroughView = true;
        point = user;
        continue;
      }
      const bool cast = graph.target(user).find("convert_element_type") != std::string_view::npos;
      if (cast && graph.node(user).meta.isTensor() && graph.node(point).meta.isTensor() &&
          ir::dtypeSize(graph.node(user).meta.dtype) <= ir::dtypeSize(graph.node(point).meta.dtype)) {
        point = user;
        continue;
      }
      break;
    }
    const Message reason(LATHE_TEXT("lathe::passes", "compute sensitive: %1"), {ir::canonicalOpName(graph.target(id))});
    if (!graph.node(point).meta.isTensor()) {
      for (NodeId user : graph.users(point)) picks.emplace_back(user, reason);  // a tuple: its elements
    } else {
      picks.emplace_back(point, reason);
    }
  }
  // By node, then by reason as English reads it (one reason per node, the same on every run).
  std::sort(picks.begin(), picks.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : toEnglish(a.second) < toEnglish(b.second);
  });
  picks.erase(std::unique(picks.begin(), picks.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
              picks.end());
  std::vector<NodeId> chosen;
  for (const auto& [id, reason] : picks) chosen.push_back(id);
  chosen = closeSavedSet(graph, joint, ops, std::move(chosen)).saved;
  std::vector<Message> reasons;
  for (NodeId id : chosen) {
    const auto it = std::lower_bound(picks.begin(), picks.end(), std::make_pair(id, Message()),
                                     [](const auto& a, const auto& b) { return a.first < b.first; });
    reasons.push_back(it != picks.end() && it->first == id
                          ? it->second
                          : Message(LATHE_TEXT("lathe::passes", "needed by the backward, not recomputable")));
  }
  return decisionFor(graph, joint, "heuristic", chosen, reasons);
}

std::vector<double> recomputeSeconds(const PassContext& context) {
  std::vector<double> seconds(context.graph.size(), 0.0);
  for (NodeId id = 0; id < context.graph.size(); ++id) {
    const analysis::NodeCost cost = analysis::nodeCost(context.graph, id, context.hw, context.ops);
    if (!cost.kernel) continue;
    const bool fusible = context.ops.lookup(context.graph.target(id)).fusible;
    seconds[id] = std::max(cost.computeSeconds, cost.memorySeconds) + (fusible ? 0.0 : context.hw.launchOverhead);
  }
  return seconds;
}

namespace {

// Storage of the saved values that are not weights (weights stay resident whatever is saved).
uint64_t savedActivationBytes(const PassContext& context, std::span<const NodeId> saved) {
  uint64_t bytes = 0;
  for (NodeId id : saved) {
    if (!context.inputs.isWeight(id) && context.graph.node(id).meta.isTensor()) bytes += context.graph.node(id).meta.storageBytes();
  }
  return bytes;
}

RecomputeEvaluation evaluatePartition(const PassContext& context, analysis::StepPartition partition,
                                      analysis::TimelineOptions timelineOptions,
                                      const ActivationOffloadOptions* activationOffload = nullptr) {
  const JointInfo& joint = context.joint();
  RecomputeEvaluation eval;
  eval.partition = std::move(partition);
  const analysis::StepSchedule schedule = analysis::trainingSchedule(context.graph, eval.partition, timelineOptions.facts);
  // A recomputed value costs its recompute price (fused into its backward consumer where it can
  // be); everything else its node time; the host launches the kernels (step_time.h).
  const StepTime time = stepTime(context, schedule, &eval.partition);
  const std::vector<double>& executionSeconds = time.executionSeconds;
  eval.stepSeconds = time.stepSeconds;
  eval.recomputeSeconds = time.recomputeSeconds;
  std::vector<analysis::OffGpuInterval> offGpu;
  if (activationOffload != nullptr) {
    eval.activationOffload = planActivationOffload(context, eval.partition, schedule, executionSeconds, *activationOffload);
    offGpu = offGpuIntervals(*eval.activationOffload);
    timelineOptions.offGpu = offGpu;
  }
  eval.timeline = analysis::memoryTimeline(context.graph, context.inputs, schedule, &joint, &eval.partition, timelineOptions);
  eval.savedBytes = savedActivationBytes(context, eval.partition.saved);
  return eval;
}

}  // namespace

RecomputeEvaluation evaluateSavedSet(const PassContext& context, std::span<const NodeId> saved,
                                     const ActivationOffloadOptions* activationOffload) {
  return evaluatePartition(context, analysis::partitionJoint(context.graph, context.joint(), saved), {},
                           activationOffload);
}

namespace {

// A capacity of whole units: infinite from FlowNetwork::kInfinite on, where the roofline time of an
// absurd shape (picoseconds) leaves int64.
int64_t capacity(double units) {
  return units < static_cast<double>(FlowNetwork::kInfinite) ? static_cast<int64_t>(std::llround(units))
                                                             : FlowNetwork::kInfinite;
}

// The cut minimising recompute picoseconds + lambda x saved bytes.
class LagrangianCut {
 public:
  explicit LagrangianCut(const PassContext& context)
      : graph_(context.graph), joint_(context.joint()), inputs_(context.inputs), cost_(context.recomputeCost()) {
    const size_t n = graph_.size();
    recomputable_.assign(n, 0);
    for (NodeId id = 0; id < n; ++id) {
      const ir::Node& node = graph_.node(id);
      if (node.kind != ir::NodeKind::CallFunction || !joint_.isForward(id)) continue;
      const ir::OpCategory category = context.ops.lookup(graph_.target(id)).category;
      // Random ops would draw new numbers; collectives and host ops must run once.
      recomputable_[id] = category != ir::OpCategory::Random && category != ir::OpCategory::Collective &&
                          category != ir::OpCategory::Host;
    }
  }

  struct Solution {
    std::vector<NodeId> saved;
    double recomputePs = 0;  // the cut's recompute term
    double savedBytes = 0;   // the cut's saved-bytes term (weights are free)
  };

  // lambdaEarly applies to forward values before forward position `split`, lambdaLate to the rest;
  // equal lambdas give the plain Lagrangian cut.
  [[nodiscard]] Solution solve(double lambdaEarly, double lambdaLate, int32_t split) const {
    const size_t n = graph_.size();
    FlowNetwork network(static_cast<uint32_t>(2 * n + 2));
    const uint32_t source = static_cast<uint32_t>(2 * n), sink = source + 1;
    auto in = [](NodeId id) { return 2 * id; };
    auto out = [](NodeId id) { return 2 * id + 1; };
    for (NodeId id = 0; id < n; ++id) {
      const ir::Node& node = graph_.node(id);
      if (node.kind == ir::NodeKind::Output) continue;
      if (joint_.isBackward(id)) {
        if (joint_.tangentClosure[id]) {
          network.addEdge(in(id), sink, FlowNetwork::kInfinite);
          continue;
        }
        network.addEdge(out(id), sink, FlowNetwork::kInfinite);
      }
      if (node.kind == ir::NodeKind::Placeholder) {
        network.addEdge(source, in(id), FlowNetwork::kInfinite);
      } else if (joint_.isForward(id)) {
        network.addEdge(source, in(id), recomputable_[id] ? capacity(cost_[id] * 1e12) : FlowNetwork::kInfinite);
      }
      int64_t saveCost = FlowNetwork::kInfinite;
      if (node.meta.isTensor()) {
        const bool early = joint_.forwardOrder[id] >= 0 && joint_.forwardOrder[id] < split;
        saveCost = inputs_.isWeight(id)
                       ? 0
                       : capacity((early ? lambdaEarly : lambdaLate) * static_cast<double>(node.meta.storageBytes()));
      } else if (node.meta.kind == ir::ValueKind::SymInt || node.meta.kind == ir::ValueKind::SymBool) {
        saveCost = 0;
      }
      network.addEdge(in(id), out(id), saveCost);
      for (NodeId user : graph_.users(id)) {
        if (graph_.node(user).kind != ir::NodeKind::Output) network.addEdge(out(id), in(user), FlowNetwork::kInfinite);
      }
    }
    const FlowNetwork::Cut cut = network.minimumCut(source, sink);
    Solution solution;
    for (NodeId id = 0; id < n; ++id) {
      if (!cut.sinkSide[in(id)] && cut.sinkSide[out(id)]) {
        solution.saved.push_back(id);
        const ir::Node& node = graph_.node(id);
        if (node.meta.isTensor() && !inputs_.isWeight(id)) solution.savedBytes += static_cast<double>(node.meta.storageBytes());
      }
      if (cut.sinkSide[in(id)] && recomputable_[id]) solution.recomputePs += std::round(cost_[id] * 1e12);
    }
    return solution;
  }

  // Total bytes of values that could be saved: bounds lambda so that capacities stay exact.
  [[nodiscard]] double saveableBytes() const {
    double total = 0;
    for (NodeId id = 0; id < graph_.size(); ++id) {
      if (graph_.node(id).meta.isTensor() && !inputs_.isWeight(id)) total += static_cast<double>(graph_.node(id).meta.storageBytes());
    }
    return total;
  }

 private:
  const ir::Graph& graph_;
  const JointInfo& joint_;
  const analysis::GraphInputs& inputs_;
  std::span<const double> cost_;
  std::vector<uint8_t> recomputable_;
};

// What the frontier search keeps of a priced saved set: enough to compare it and to descend from
// it, not its timeline (a large graph prices thousands of sets).
struct PricedSet {
  std::vector<NodeId> saved;  // the step's saved set (values the backward reads)
  bool valid = false;
  uint64_t peakBytes = 0;
  double recomputeSeconds = 0;
  double stepSeconds = 0;
  std::vector<std::pair<uint64_t, NodeId>> savedAtPeak;  // saved storages live at the peak, largest first
};

// Prices saved sets for the frontier search: completes each (closeSavedSet) and evaluates it on
// the memory timeline. The searches ask for the same sets many times (descents from neighbouring
// points converge), so a set is priced once; the graph's storage facts are found once.
class SavedSetPricer {
 public:
  explicit SavedSetPricer(const PassContext& context)
      : context_(context), facts_(analysis::storageFacts(context.graph)) {}

  // `fresh` is set when the set had not been priced before.
  const PricedSet& price(std::vector<NodeId> requested, bool* fresh = nullptr) {
    std::sort(requested.begin(), requested.end());
    requested.erase(std::unique(requested.begin(), requested.end()), requested.end());
    auto [it, inserted] = priced_.try_emplace(std::move(requested));
    if (fresh != nullptr) *fresh = inserted;
    if (!inserted) return it->second;
    ClosedSet closed = closeSavedSet(context_.graph, context_.joint(), context_.ops, it->first);
    const RecomputeEvaluation eval =
        evaluatePartition(context_, std::move(closed.step), {.facts = &facts_, .perStep = false});
    PricedSet& set = it->second;
    set.saved = eval.partition.saved;
    set.valid = eval.partition.valid();
    set.peakBytes = eval.timeline.peakBytes;
    set.recomputeSeconds = eval.recomputeSeconds;
    set.stepSeconds = eval.stepSeconds;
    const uint32_t peak = eval.timeline.peakStep;
    for (const analysis::StorageLife& life : eval.timeline.storages) {
      if (life.category == analysis::MemoryCategory::Saved && life.first <= peak && peak <= life.last) {
        set.savedAtPeak.emplace_back(life.bytes, life.node);
      }
    }
    std::sort(set.savedAtPeak.begin(), set.savedAtPeak.end(), std::greater<>());
    return set;
  }

 private:
  const PassContext& context_;
  analysis::StorageFacts facts_;
  std::map<std::vector<NodeId>, PricedSet> priced_;  // by requested set; node-based, so references stay valid
};

// Peak descent. The peak is one moment of the step, which the Lagrangian cuts (they price saved
// bytes, not liveness) do not see. From each candidate, recomputing one of the largest saved
// values live at the peak (saving its inputs instead where they cannot be recomputed) may lower the
// peak for little time: take the move with the most bytes per second, repeat. Bounded by a budget
// of fresh evaluations that shrinks with the graph, so large graphs stay interactive.
template <typename Consider>
void descendPeaks(const PassContext& context, SavedSetPricer& pricer,
                  const std::vector<const PricedSet*>& starts, Consider&& consider) {
  const ir::Graph& graph = context.graph;
  const JointInfo& joint = context.joint();
  const size_t n = graph.size();
  std::vector<NodeId> base(n);
  std::vector<uint8_t> movable(n, 0);
  for (NodeId id = 0; id < n; ++id) {
    base[id] = id;
    const ir::Node& node = graph.node(id);
    if (node.kind != ir::NodeKind::CallFunction) continue;
    const ir::OpCategory category = context.ops.lookup(graph.target(id)).category;
    const auto ins = graph.inputs(id);
    if ((category == ir::OpCategory::View || category == ir::OpCategory::Getitem) && !ins.empty() &&
        graph.node(ins[0]).meta.isTensor()) {
      base[id] = base[ins[0]];
    }
    movable[id] = joint.isForward(id) && category != ir::OpCategory::Random && category != ir::OpCategory::Collective &&
                  category != ir::OpCategory::Host;
  }
  constexpr size_t kMovesPerStep = 8;
  constexpr int kSteps = 24;
  size_t evaluations = n <= 5000 ? 1000 : 40;
  for (const PricedSet* seed : starts) {
    const PricedSet* current = seed;
    for (int step = 0; step < kSteps && evaluations > 0 && current->valid; ++step) {
      context.progress.checkCancelled();
      const PricedSet* best = nullptr;
      double bestScore = 0;
      size_t moves = 0;
      for (const auto& [bytes, storage] : current->savedAtPeak) {
        if (moves == kMovesPerStep || evaluations == 0) break;
        if (!movable[storage]) continue;
        ++moves;
        std::vector<NodeId> trial;
        for (NodeId v : current->saved) {
          if (base[v] != storage) trial.push_back(v);
        }
        bool fresh = false;
        const PricedSet& e = pricer.price(std::move(trial), &fresh);
        // The completion saved the storage again: the move is not possible.
        if (std::any_of(e.saved.begin(), e.saved.end(), [&](NodeId v) { return base[v] == storage; })) continue;
        if (fresh) --evaluations;
        if (!e.valid || e.peakBytes >= current->peakBytes) continue;
        const double gain = static_cast<double>(current->peakBytes - e.peakBytes);
        const double score = gain / std::max(1e-9, e.recomputeSeconds - current->recomputeSeconds);
        if (best == nullptr || score > bestScore) {
          bestScore = score;
          best = &e;
        }
      }
      if (best == nullptr) break;
      current = best;
      consider(*current, -1);
    }
  }
}

}  // namespace

std::vector<FrontierPoint> budgetFrontier(const PassContext& context) {
  requireSupportedGraph(context.graph);
  const JointInfo& joint = context.joint();
  requireJoint(context.graph, joint);
  requireTrainingStep(context.graph, joint);
  const LagrangianCut cuts(context);
  SavedSetPricer pricer(context);
  std::vector<FrontierPoint> points;
  std::vector<const PricedSet*> pricedPoints;  // parallel to points
  std::set<std::vector<NodeId>> seen;
  auto consider = [&](const PricedSet& set, double lambda) {
    if (!set.valid || !seen.insert(set.saved).second) return;
    FrontierPoint point;
    point.saved = set.saved;
    point.savedBytes = savedActivationBytes(context, set.saved);
    point.peakBytes = set.peakBytes;
    point.recomputeSeconds = set.recomputeSeconds;
    point.stepSeconds = set.stepSeconds;
    point.lambda = lambda;
    points.push_back(std::move(point));
    pricedPoints.push_back(&set);
  };
  // The lower convex hull of (saved bytes, recompute time), found exactly by parametric search
  // (Eisner-Severance): between two hull cuts, solve at the lambda where their Lagrangian values
  // are equal; a cut below that line is a new hull vertex, else the two are adjacent. Lambda is in
  // picoseconds per byte, from 0 (save everything the backward reads) to a value at which saving a
  // byte costs more than any recomputation.
  using Solution = LagrangianCut::Solution;
  const double lambdaMax = 1e17 / std::max(1.0, cuts.saveableBytes());
  std::vector<std::pair<double, Solution>> hull;  // by increasing lambda
  std::vector<std::pair<std::pair<double, Solution>, std::pair<double, Solution>>> pending;
  pending.push_back({{0.0, cuts.solve(0.0, 0.0, 0)}, {lambdaMax, cuts.solve(lambdaMax, lambdaMax, 0)}});
  hull.push_back(pending.back().first);
  hull.push_back(pending.back().second);
  constexpr size_t kMaxCuts = 64;
  size_t solved = 2;
  while (!pending.empty() && solved < kMaxCuts) {
    context.progress.checkCancelled();
    auto [lo, hi] = std::move(pending.back());
    pending.pop_back();
    const double bytesDrop = lo.second.savedBytes - hi.second.savedBytes;
    const double timeRise = hi.second.recomputePs - lo.second.recomputePs;
    // Vertices closer than 0.5% in both terms change no decision anyone would make.
    if (bytesDrop <= 0.005 * lo.second.savedBytes || timeRise <= 0.005 * hi.second.recomputePs) continue;
    const double lambda = timeRise / bytesDrop;
    Solution mid = cuts.solve(lambda, lambda, 0);
    ++solved;
    const double line = lo.second.recomputePs + lambda * lo.second.savedBytes;
    const double value = mid.recomputePs + lambda * mid.savedBytes;
    // Capacities are rounded to whole picoseconds: one per node is the slack.
    if (value >= line - static_cast<double>(context.graph.size())) continue;
    hull.emplace_back(lambda, mid);
    pending.push_back({lo, {lambda, mid}});
    pending.push_back({{lambda, std::move(mid)}, hi});
    context.progress.update(solved, kMaxCuts);
  }
  std::sort(hull.begin(), hull.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<uint64_t> hullPeak;
  for (const auto& [lambda, solution] : hull) {
    const PricedSet& set = pricer.price(solution.saved);
    consider(set, lambda);
    hullPeak.push_back(set.valid ? set.peakBytes : 0);
  }
  // torch's and MagiCompiler's choices are candidates too, so the frontier never loses to them.
  consider(pricer.price(torchPolicy(context.graph, joint, context.inputs, context.inductorJointPasses).saved), -1);
  consider(pricer.price(heuristicPolicy(context.graph, joint, context.ops).saved), -1);
  // Between two hull vertices the frontier is not convex: the peak is reached at one moment, so
  // keeping the higher lambda only for the forward values that come first (or last) gives the
  // points in between.
  int32_t forwardCount = 0;
  for (NodeId id = 0; id < context.graph.size(); ++id) forwardCount += joint.isForward(id) ? 1 : 0;
  constexpr int kSplits = 8;
  for (size_t h = 0; h + 1 < hull.size(); ++h) {
    context.progress.checkCancelled();
    const uint64_t a = hullPeak[h], b = hullPeak[h + 1];
    if (std::max(a, b) - std::min(a, b) < std::max(a, b) / 100) continue;  // no gap worth filling
    const double low = hull[h].first, high = hull[h + 1].first;
    for (int k = 1; k < kSplits; ++k) {
      const int32_t split = forwardCount * k / kSplits;
      consider(pricer.price(cuts.solve(high, low, split).saved), low);
      consider(pricer.price(cuts.solve(low, high, split).saved), low);
    }
  }
  // Descents start from the points no other point dominates: a dominated start's descent walks
  // ground a better start covers.
  std::vector<const PricedSet*> starts;
  for (const PricedSet* a : pricedPoints) {
    const bool dominated = std::any_of(pricedPoints.begin(), pricedPoints.end(), [&](const PricedSet* b) {
      return b != a && b->peakBytes <= a->peakBytes && b->recomputeSeconds <= a->recomputeSeconds &&
             (b->peakBytes < a->peakBytes || b->recomputeSeconds < a->recomputeSeconds);
    });
    if (!dominated) starts.push_back(a);
  }
  descendPeaks(context, pricer, starts, consider);
  std::sort(points.begin(), points.end(), [](const FrontierPoint& a, const FrontierPoint& b) {
    return a.peakBytes != b.peakBytes ? a.peakBytes < b.peakBytes : a.recomputeSeconds < b.recomputeSeconds;
  });
  // Keep points that cost less recompute than every smaller-peak point (ties within 0.1% merge).
  std::vector<FrontierPoint> frontier;
  for (FrontierPoint& p : points) {
    if (!frontier.empty() && frontier.back().recomputeSeconds <= p.recomputeSeconds * 1.001) continue;
    frontier.push_back(std::move(p));
  }
  return frontier;
}

namespace {

// The saved set a file gives: a plan bundle, bound to this graph (a plan made for another graph is
// refused), or a JSON list of node names, bare or as {"saved": [...]}, every one a node of the graph.
std::vector<NodeId> savedFromFile(const ir::Graph& graph, const std::string& path) {
  const std::string text = readFile(path, plan::kMaxPlanBytes);
  nlohmann::json json;
  try {
    json = parseJsonBounded(text, path);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::BadInput, path + ": not JSON (" + e.what() + ")");
  }
  if (json.is_object() && json.contains("format")) {
    const plan::BoundPlan bound = plan::bind(plan::planFromJson(text, path), graph, path);
    if (!bound.state.recompute) throw Error(ErrorCode::BadInput, path + ": the plan holds no recompute decision");
    return bound.state.recompute->saved;
  }
  if (json.is_object() && json.contains("saved")) json = json["saved"];
  if (!json.is_array()) throw Error(ErrorCode::BadInput, path + ": expected a JSON list of node names or {\"saved\": [...]}");
  std::vector<NodeId> saved;
  std::vector<std::string> missing;
  for (const auto& item : json) {
    if (!item.is_string()) throw Error(ErrorCode::BadInput, path + ": saved values must be node names");
    const NodeId id = graph.find(item.get<std::string>());
    if (id == ir::kNoNode) {
      missing.push_back(item.get<std::string>());
    } else {
      saved.push_back(id);
    }
  }
  if (!missing.empty()) {
    throw Error(ErrorCode::BadInput, path + ": " + std::to_string(missing.size()) + " saved names are not nodes of the graph (" +
                                         missing.front() + (missing.size() > 1 ? ", ..." : "") + ")");
  }
  std::sort(saved.begin(), saved.end());
  saved.erase(std::unique(saved.begin(), saved.end()), saved.end());
  return saved;
}


}  // namespace

namespace {

// Why the budget policy keeps each value it saves: what recomputing it would cost and free, or why
// it cannot be recomputed. `saved` is sorted, as decisionFor reads the reasons.
std::vector<Message> budgetReasons(const PassContext& context, const std::vector<NodeId>& saved) {
  const std::vector<double>& cost = context.recomputeCost();
  std::vector<Message> reasons;
  reasons.reserve(saved.size());
  for (NodeId id : saved) {
    const ir::Node& node = context.graph.node(id);
    if (node.kind != ir::NodeKind::CallFunction) {
      reasons.emplace_back(context.inputs.isWeight(id) ? LATHE_TEXT("lathe::passes", "a weight: held for the whole step anyway")
                                                       : LATHE_TEXT("lathe::passes", "an input of the step: nothing to recompute"));
      continue;
    }
    const ir::OpCategory category = context.ops.lookup(context.graph.target(id)).category;
    if (category == ir::OpCategory::Random || category == ir::OpCategory::Collective ||
        category == ir::OpCategory::Host) {
      reasons.push_back({LATHE_TEXT("lathe::passes", "must run once (%1 op)"), {std::string(ir::categoryName(category))}});
      continue;
    }
    reasons.push_back({LATHE_TEXT("lathe::passes", "kept: recomputing it alone would take %1 to free %2"),
                       {formatSeconds(cost[id]), formatBytes(node.meta.storageBytes())}});
  }
  return reasons;
}

// The budget asked for, and whether a frontier point fits it.
struct BudgetOutcome {
  uint64_t bytes = 0;
  bool met = true;
};

// The pass's result for a decision: statistics, the diff, and the state with the decision in it.
PassResult resultFor(const PassContext& context, const std::string& policy, plan::RecomputeDecision decision,
                     const plan::PlanState& before, std::optional<BudgetOutcome> budget,
                     const ActivationOffloadOptions* activationOffload) {
  const RecomputeEvaluation eval = evaluateSavedSet(context, decision.saved, activationOffload);
  if (!eval.partition.valid()) {
    throw Error(ErrorCode::Internal, "recompute(" + policy + "): the backward cannot compute " +
                                         std::string(context.graph.name(eval.partition.missing.front())));
  }
  PassResult result;
  result.state = before;
  uint64_t savedTensors = 0;
  for (NodeId id : decision.saved) savedTensors += context.graph.node(id).meta.isTensor() ? 1 : 0;
  using P = RecomputePass;
  result.set(P::kSavedValues, static_cast<double>(savedTensors));
  result.set(P::kSavedBytes, static_cast<double>(eval.savedBytes));
  result.set(P::kRecomputedNodes, static_cast<double>(decision.recomputed.size()));
  result.set(P::kRecomputeSeconds, eval.recomputeSeconds);
  result.set(P::kStepSeconds, eval.stepSeconds);
  result.set(P::kPeakBytes, static_cast<double>(eval.timeline.peakBytes));
  const bool budgetMet = !budget || budget->met;
  if (budget) {
    result.set(P::kBudgetBytes, static_cast<double>(budget->bytes));
    result.set(P::kBudgetMet, budgetMet ? 1.0 : 0.0);
  }
  result.diff.push_back({LATHE_TEXT("lathe::passes", "recompute(%1): save %2 (%3), recompute %4, step peak %5"),
                         {policy, Message(LATHE_TEXT_N("lathe::passes", "%n value(s)"), static_cast<int64_t>(savedTensors)),
                          formatBytes(eval.savedBytes),
                          Message(LATHE_TEXT_N("lathe::passes", "%n node(s)"), static_cast<int64_t>(decision.recomputed.size())),
                          formatBytes(eval.timeline.peakBytes)}});
  if (!budgetMet) {
    result.diff.push_back({LATHE_TEXT("lathe::passes", "! budget %1 is below the smallest peak found, %2; the plan with that peak is kept"),
                           {formatBytes(budget->bytes), formatBytes(eval.timeline.peakBytes)}});
  }
  for (size_t i = 0; i < decision.saved.size(); ++i) {
    result.diff.push_back({LATHE_TEXT("lathe::passes", "+ saved %1  (%2)"),
                           {std::string(context.graph.name(decision.saved[i])), decision.savedReasons[i]}});
  }
  for (NodeId id : decision.recomputed) {
    result.diff.push_back({LATHE_TEXT("lathe::passes", "+ recomputed %1"), {std::string(context.graph.name(id))}});
  }
  if (eval.activationOffload) {
    const plan::ActivationOffloadDecision& offload = *eval.activationOffload;
    result.set(P::kOffloadedValues, static_cast<double>(offload.tensors.size()));
    result.set(P::kOffloadedBytes, static_cast<double>(offload.bytes));
    result.diff.push_back(
        {LATHE_TEXT("lathe::passes", "recompute(%1): offload %2 (%3) to host memory, copies hidden behind %4 of forward and %5 of backward"),
         {policy, Message(LATHE_TEXT_N("lathe::passes", "%n saved value(s)"), static_cast<int64_t>(offload.tensors.size())),
          formatBytes(offload.bytes), formatMilliseconds(offload.copyOutSeconds), formatMilliseconds(offload.copyInSeconds)}});
    for (const plan::OffloadedActivation& a : offload.tensors) {
      const auto name = [&](NodeId id) {
        return id == ir::kNoNode ? Message(LATHE_TEXT("lathe::passes", "the backward's start"))
                                 : Message(std::string(context.graph.name(id)));
      };
      result.diff.push_back({LATHE_TEXT("lathe::passes", "+ offloaded %1  (%2; on host from %3 to %4)"),
                             {name(a.node), formatBytes(a.bytes), name(a.waitAfter), name(a.reloadAfter)}});
    }
  }
  result.state.recompute = std::move(decision);
  result.state.activationOffload = eval.activationOffload;
  return result;
}

}  // namespace

const FrontierPoint& BudgetFrontier::pick(uint64_t budgetBytes) const {
  if (points.empty()) throw Error(ErrorCode::Internal, "budget policy: no valid cut");
  const FrontierPoint* best = nullptr;
  for (const FrontierPoint& p : points) {
    if (p.peakBytes <= budgetBytes && (best == nullptr || p.recomputeSeconds < best->recomputeSeconds)) best = &p;
  }
  return best ? *best : points.front();  // none fits: the smallest peak there is
}

const FrontierPoint* BudgetFrontier::pickNoSlowerThan(double stepSeconds) const {
  // A step priced within 0.1% is the same step (the frontier merges recompute times that close).
  for (const FrontierPoint& p : points) {
    if (p.stepSeconds <= stepSeconds * 1.001) return &p;  // by increasing peak: the first is the least
  }
  return nullptr;
}

BudgetFrontier solveBudgetFrontier(const PassContext& context) {
  BudgetFrontier frontier;
  frontier.points = budgetFrontier(context);
  if (frontier.points.empty()) throw Error(ErrorCode::Internal, "budget policy: no valid cut");
  return frontier;
}

PassResult budgetRecompute(const PassContext& context, const BudgetFrontier& frontier, uint64_t budgetBytes,
                           const plan::PlanState& before, const ActivationOffloadOptions* activationOffload) {
  const FrontierPoint* point = &frontier.pick(budgetBytes);
  uint64_t peak = point->peakBytes;
  if (activationOffload != nullptr) {
    // Hidden copies cost no step time, so a point that recomputes less may fit once its saved values
    // are offloaded: the least recompute time among the points whose peak with offload fits, else the
    // smallest peak with offload.
    std::vector<const FrontierPoint*> byRecompute;
    for (const FrontierPoint& p : frontier.points) byRecompute.push_back(&p);
    std::stable_sort(byRecompute.begin(), byRecompute.end(),
                     [](const FrontierPoint* a, const FrontierPoint* b) { return a->recomputeSeconds < b->recomputeSeconds; });
    const FrontierPoint* smallest = nullptr;
    uint64_t smallestPeak = UINT64_MAX;
    point = nullptr;
    for (const FrontierPoint* p : byRecompute) {
      const uint64_t offloadedPeak = evaluateSavedSet(context, p->saved, activationOffload).timeline.peakBytes;
      if (offloadedPeak <= budgetBytes) {
        point = p;
        peak = offloadedPeak;
        break;
      }
      if (offloadedPeak < smallestPeak) {
        smallest = p;
        smallestPeak = offloadedPeak;
      }
    }
    if (point == nullptr) {
      point = smallest;
      peak = smallestPeak;
    }
  }
  plan::RecomputeDecision decision =
      decisionFor(context.graph, context.joint(), "budget", point->saved, budgetReasons(context, point->saved));
  return resultFor(context, "budget", std::move(decision), before, BudgetOutcome{budgetBytes, peak <= budgetBytes},
                   activationOffload);
}

PassResult noSlowerRecompute(const PassContext& context, const BudgetFrontier& frontier, const plan::PlanState& before,
                             const ActivationOffloadOptions* activationOffload) {
  const std::vector<NodeId> torchSaved =
      torchPolicy(context.graph, context.joint(), context.inputs, context.inductorJointPasses).saved;
  const RecomputeEvaluation torch = evaluateSavedSet(context, torchSaved);
  // The frontier is made of (peak, recompute time) points: one that recomputes less may still launch
  // more kernels than torch's set, so torch's own set stays a candidate.
  const FrontierPoint* point = frontier.pickNoSlowerThan(torch.stepSeconds);
  const std::vector<NodeId>& saved =
      point != nullptr && point->peakBytes <= torch.timeline.peakBytes ? point->saved : torchSaved;
  plan::RecomputeDecision decision =
      decisionFor(context.graph, context.joint(), "budget", saved, budgetReasons(context, saved));
  PassResult result = resultFor(context, "budget", std::move(decision), before, std::nullopt, activationOffload);
  result.diff.insert(result.diff.begin(),
                     Message(LATHE_TEXT("lathe::passes",
                                        "recompute(budget): no memory given: the least peak at no more step time than "
                                        "torch's saved set (%1, peak %2)"),
                             {formatMilliseconds(torch.stepSeconds), formatBytes(torch.timeline.peakBytes)}));
  return result;
}

const PassInfo& RecomputePass::info() const {
  static constexpr OptionSpec kOptions[] = {kPolicy, kMemory, kPath, kOffload, kOffloadMin, kOffloadLink};
  static constexpr StatKey kStats[] = {kSavedValues, kSavedBytes,  kRecomputedNodes, kRecomputeSeconds, kStepSeconds,
                                       kPeakBytes,   kBudgetBytes, kBudgetMet,       kOffloadedValues,  kOffloadedBytes};
  static const PassInfo info{"recompute",
                             "the values a training step's forward saves for its backward; the backward recomputes the rest",
                             kOptions, kStats, {}, true};
  return info;
}

void RecomputePass::checkOptions(const PassOptions& options) const {
  const std::string policy = options.text(kPolicy);
  if (policy == "file" && !options.has(kPath)) throw Error(ErrorCode::Usage, "recompute(policy=file) needs path=FILE");
  if (!options.flag(kOffload) && (options.has(kOffloadMin) || options.has(kOffloadLink))) {
    throw Error(ErrorCode::Usage, "recompute: offload_min and offload_link apply with offload=true");
  }
}

PassResult RecomputePass::run(const PassContext& context, const plan::PlanState& before, const PassOptions& options) const {
  std::optional<ActivationOffloadOptions> offloadOptions;
  if (options.flag(kOffload)) {
    offloadOptions.emplace();
    offloadOptions->minBytes = options.bytes(kOffloadMin);
    offloadOptions->linkShare = options.number(kOffloadLink);
  }
  const ActivationOffloadOptions* activationOffload = offloadOptions ? &*offloadOptions : nullptr;
  requireSupportedGraph(context.graph);
  const analysis::JointInfo& joint = context.joint();
  requireJoint(context.graph, joint);
  requireTrainingStep(context.graph, joint);
  const std::string policy = options.text(kPolicy);
  if (policy == "budget") {
    const BudgetFrontier frontier = solveBudgetFrontier(context);
    if (!options.has(kMemory)) return noSlowerRecompute(context, frontier, before, activationOffload);
    return budgetRecompute(context, frontier, options.bytes(kMemory), before, activationOffload);
  }
  plan::RecomputeDecision decision;
  if (policy == "torch") {
    decision = torchPolicy(context.graph, joint, context.inputs, context.inductorJointPasses);
  } else if (policy == "heuristic") {
    decision = heuristicPolicy(context.graph, joint, context.ops);
  } else {
    const std::string path = options.text(kPath);
    std::vector<NodeId> listed = savedFromFile(context.graph, path);
    for (NodeId id : listed) {
      if (joint.tangentClosure[id] && context.graph.node(id).kind != ir::NodeKind::Placeholder) {
        throw Error(ErrorCode::BadInput, path + ": " + std::string(context.graph.name(id)) +
                                             " is computed from the tangents: the forward cannot save it");
      }
    }
    const std::vector<NodeId> saved = closeSavedSet(context.graph, joint, context.ops, std::move(listed)).saved;
    decision = decisionFor(context.graph, joint, "file", saved,
                           std::vector<Message>(saved.size(), Message(LATHE_TEXT("lathe::passes", "listed in the file"))));
  }
  return resultFor(context, policy, std::move(decision), before, std::nullopt, activationOffload);
}

}  // namespace lathe::passes
