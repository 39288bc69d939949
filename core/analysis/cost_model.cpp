#include "analysis/cost_model.h"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "util/diagnostics.h"

namespace lathe::analysis {
namespace {

using ir::NodeId;

void requireFinalized(const ir::Graph& graph) {
  if (!graph.finalized()) throw Error(ErrorCode::Internal, "cost model needs a finalized graph");
}

void requireInRange(const ir::Graph& graph, NodeId id) {
  if (id >= graph.size()) throw Error(ErrorCode::Internal, "cost model: node id out of range");
}

// The op behind a node when it launches a kernel, else nullptr.
const ir::OpInfo* kernelOp(const ir::Graph& graph, NodeId id, const ir::OpRegistry& registry) {
  const ir::Node& node = graph.node(id);
  if (!node.isCall()) return nullptr;
  const ir::OpInfo& info = registry.lookup(graph.str(node.target));
  return info.formula == ir::CostFormula::None ? nullptr : &info;
}

bool usesMatrixUnits(ir::OpCategory category) {
  return category == ir::OpCategory::Matmul || category == ir::OpCategory::Attention ||
         category == ir::OpCategory::Convolution;
}

// The dtype the matrix units multiply in: that of the first input with two dimensions or more (a
// leading scalar, such as the loss gradient of a fused loss backward, is no matrix operand).
ir::DType matrixOperandDtype(const ir::Graph& graph, NodeId id) {
  ir::DType first = ir::DType::Unknown;
  for (NodeId in : graph.inputs(id)) {
    const ir::TensorMeta& meta = graph.node(in).meta;
    if (!meta.isTensor()) continue;
    if (meta.sizes.size() >= 2) return meta.dtype;
    if (first == ir::DType::Unknown) first = meta.dtype;
  }
  return first;
}

// FLOP/s a kernel of this op reaches: see the header for which rate applies.
double flopRate(const ir::Graph& graph, NodeId id, const ir::OpInfo& info, const hw::HwProfile& profile) {
  const double peak =
      usesMatrixUnits(info.category) ? profile.flopsFor(matrixOperandDtype(graph, id)) : profile.flopsFp32;
  return peak * profile.efficiencyOf(info.category);
}

// Work over rate, where no work takes no time even at a zero rate.
double timeFor(double work, double rate) {
  return work > 0 ? work / rate : 0.0;
}

void finish(NodeCost& cost, double memoryRate, const hw::HwProfile& profile) {
  cost.memorySeconds = timeFor(cost.bytes, memoryRate);
  cost.seconds = std::max(cost.computeSeconds, cost.memorySeconds) + profile.launchOverhead;
}

// The ranks a collective spans: its group_size argument (all_gather_into_tensor(x, 2, '0'),
// reduce_scatter_tensor(x, 'sum', 2, '0')); all_reduce names only its group, so it takes the
// largest group_size of the graph's other collectives, else 2, the smallest group that communicates.
int64_t collectiveGroupSize(const ir::Graph& graph, NodeId id, const ir::OpRegistry& registry) {
  const auto groupSizeArg = [&](NodeId n) -> int64_t {
    for (const ir::Arg& arg : graph.node(n).args) {
      if (arg.kind == ir::Arg::Kind::Int && arg.i >= 2 && arg.i <= (int64_t{1} << 20)) return arg.i;
    }
    return 0;
  };
  if (const int64_t own = groupSizeArg(id)) return own;
  int64_t largest = 0;
  for (NodeId n = 0; n < graph.size(); ++n) {
    if (graph.node(n).isCall() && registry.lookup(graph.target(n)).category == ir::OpCategory::Collective)
      largest = std::max(largest, groupSizeArg(n));
  }
  return largest > 0 ? largest : 2;
}

// A collective over the peer link as NCCL's ring runs it: each rank sends (n-1)/n of the payload
// in n-1 steps (all_gather of the output, reduce_scatter of the input, all_to_all), twice for
// all_reduce (a reduce_scatter, then an all_gather), the whole payload once for a broadcast.
double linkSeconds(const ir::Graph& graph, NodeId id, const ir::OpInfo& info, double payloadBytes,
                   const hw::HwProfile& profile, const ir::OpRegistry& registry) {
  const double ranks = static_cast<double>(collectiveGroupSize(graph, id, registry));
  const bool allReduce = info.name.find("all_reduce") != std::string::npos || info.name.find("allreduce") != std::string::npos;
  const bool broadcast = info.name.find("broadcast") != std::string::npos;
  const double passes = allReduce ? 2.0 : 1.0;
  const double share = broadcast ? 1.0 : (ranks - 1) / ranks;
  const double steps = broadcast ? 1.0 : passes * (ranks - 1);
  return steps * profile.peerLatency + passes * share * payloadBytes / profile.peerBandwidth;
}

NodeCost priceKernel(const ir::Graph& graph, NodeId id, const ir::OpInfo& info, const hw::HwProfile& profile,
                     const ir::OpRegistry& registry) {
  const ir::OpCost op = ir::estimateCost(graph, id, registry);
  NodeCost cost;
  cost.kernel = true;
  cost.flops = op.flops;
  cost.bytes = op.bytesRead + op.bytesWritten;
  cost.computeSeconds = timeFor(cost.flops, flopRate(graph, id, info, profile));
  finish(cost, profile.hbmBandwidth * profile.efficiencyOf(info.category), profile);
  if (info.category == ir::OpCategory::Collective && profile.peerBandwidth > 0) {
    cost.linkSeconds = linkSeconds(graph, id, info, op.commBytes, profile, registry);
    cost.seconds = std::max({cost.computeSeconds, cost.memorySeconds, cost.linkSeconds}) + profile.launchOverhead;
  }
  return cost;
}

double storageBytes(const ir::Graph& graph, NodeId id) {
  return static_cast<double>(graph.node(id).meta.storageBytes());
}

double outputBytes(const ir::Graph& graph, NodeId id, const ir::OpRegistry& registry) {
  double total = 0;
  for (const auto& meta : ir::outputMetas(graph, id, registry)) total += static_cast<double>(meta.storageBytes());
  return total;
}

// Bytes a kernel node reads of one of its inputs: none for ops that read only metadata (*_like),
// at most as much of a gather's table as the gather writes, else the input's storage.
double bytesReadOf(const ir::Graph& graph, NodeId id, const ir::OpInfo& info, NodeId input,
                   const ir::OpRegistry& registry) {
  if (info.formula == ir::CostFormula::Fill) return 0;
  if (info.formula == ir::CostFormula::Gather) {
    const auto& args = graph.node(id).args;
    if (!args.empty() && args[0].kind == ir::Arg::Kind::Node && args[0].node == input)
      return std::min(storageBytes(graph, input), outputBytes(graph, id, registry));
  }
  return storageBytes(graph, input);
}

}  // namespace

NodeCost nodeCost(const ir::Graph& graph, NodeId id, const hw::HwProfile& profile, const ir::OpRegistry& registry) {
  requireFinalized(graph);
  requireInRange(graph, id);
  const ir::OpInfo* info = kernelOp(graph, id, registry);
  return info ? priceKernel(graph, id, *info, profile, registry) : NodeCost{};
}

NodeCost groupCost(const ir::Graph& graph, std::span<const NodeId> nodes, const hw::HwProfile& profile,
                   const ir::OpRegistry& registry) {
  requireFinalized(graph);
  struct Member {
    NodeId id;
    const ir::OpInfo* op;  // nullptr: no kernel of its own (a view)
  };
  std::vector<Member> members;
  members.reserve(nodes.size());
  for (NodeId id : nodes) {
    requireInRange(graph, id);
    if (graph.node(id).isCall()) members.push_back({id, kernelOp(graph, id, registry)});
  }
  std::sort(members.begin(), members.end(), [](const Member& a, const Member& b) { return a.id < b.id; });
  members.erase(
      std::unique(members.begin(), members.end(), [](const Member& a, const Member& b) { return a.id == b.id; }),
      members.end());
  const auto find = [&](NodeId id) -> const Member* {
    auto it = std::lower_bound(members.begin(), members.end(), id,
                               [](const Member& m, NodeId value) { return m.id < value; });
    return it != members.end() && it->id == id ? &*it : nullptr;
  };

  NodeCost cost;
  double efficiency = std::numeric_limits<double>::infinity();
  for (const Member& m : members) {
    if (!m.op) continue;
    cost.kernel = true;
    const double flops = ir::estimateCost(graph, m.id, registry).flops;
    cost.flops += flops;
    cost.computeSeconds += timeFor(flops, flopRate(graph, m.id, *m.op, profile));
    efficiency = std::min(efficiency, profile.efficiencyOf(m.op->category));
  }
  if (!cost.kernel) return {};

  // Reads from outside, keyed by the node whose storage is read (each tensor once).
  std::unordered_map<NodeId, double> reads;
  const auto read = [&](NodeId source, double bytes) {
    double& slot = reads[source];
    slot = std::max(slot, bytes);
  };
  for (const Member& m : members) {
    for (NodeId input : graph.inputs(m.id)) {
      if (find(input)) continue;
      if (m.op) {
        read(input, bytesReadOf(graph, m.id, *m.op, input, registry));
      } else {
        // A view of an outside tensor: the kernel reads the view's extent, if anything inside uses it.
        const auto users = graph.users(m.id);
        if (std::any_of(users.begin(), users.end(), [&](NodeId u) { return find(u) != nullptr; }))
          read(m.id, storageBytes(graph, m.id));
      }
    }
  }
  for (const auto& [source, bytes] : reads) cost.bytes += bytes;

  // Writes: values read outside the group (the output node included), directly or through views
  // in the group. Users come later in program order, so one backward sweep settles each member.
  std::vector<char> escapes(members.size(), 0);
  for (size_t i = members.size(); i-- > 0;) {
    for (NodeId user : graph.users(members[i].id)) {
      const Member* inside = find(user);
      if (!inside || (!inside->op && escapes[static_cast<size_t>(inside - members.data())])) {
        escapes[i] = 1;
        break;
      }
    }
    if (escapes[i] && members[i].op) cost.bytes += outputBytes(graph, members[i].id, registry);
  }

  finish(cost, profile.hbmBandwidth * efficiency, profile);
  return cost;
}

std::vector<double> nodeSeconds(const ir::Graph& graph, const hw::HwProfile& profile, const ir::OpRegistry& registry) {
  requireFinalized(graph);
  std::vector<double> seconds(graph.size(), 0.0);
  for (NodeId id = 0; id < graph.size(); ++id)
    if (const ir::OpInfo* info = kernelOp(graph, id, registry))
      seconds[id] = priceKernel(graph, id, *info, profile, registry).seconds;
  return seconds;
}

}  // namespace lathe::analysis
