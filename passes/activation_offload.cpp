#include "passes/activation_offload.h"

#include <algorithm>
#include <limits>

#include "ir/dtype.h"

namespace lathe::passes {

namespace {

using ir::NodeId;

// Dense: the elements fill the storage exactly (contiguous or a permutation of it, not a slice), so
// the storage is copied as a whole and comes back with the same strides.
bool coversStorage(const ir::TensorMeta& meta, uint64_t storageBytes) {
  const int64_t numel = meta.numel();
  return numel > 0 && static_cast<uint64_t>(numel) * ir::dtypeSize(meta.dtype) == storageBytes;
}

struct Candidate {
  NodeId node = ir::kNoNode;  // the saved value (the storage's owner or a view covering it)
  uint64_t bytes = 0;
  uint32_t lastForwardRead = 0;
  uint32_t firstBackwardRead = std::numeric_limits<uint32_t>::max();
};

}  // namespace

plan::ActivationOffloadDecision planActivationOffload(const PassContext& context,
                                                      const analysis::StepPartition& partition,
                                                      const analysis::StepSchedule& schedule,
                                                      std::span<const double> executionSeconds,
                                                      const ActivationOffloadOptions& options) {
  const analysis::JointInfo& joint = context.joint();
  plan::ActivationOffloadDecision decision;
  decision.linkShare = options.linkShare;
  const ir::Graph& graph = context.graph;
  const size_t steps = schedule.nodes.size();
  const uint32_t backwardStart = static_cast<uint32_t>(schedule.backwardStart);
  if (backwardStart == 0 || backwardStart >= steps || context.hw.d2hBandwidth <= 0 || context.hw.h2dBandwidth <= 0 ||
      !(options.linkShare > 0)) {
    return decision;
  }
  const analysis::StorageFacts facts = analysis::storageFacts(graph);
  auto root = [&](NodeId id) {
    while (facts.aliasOf[id] != ir::kNoNode) id = facts.aliasOf[id];
    return id;
  };

  // A storage can leave the GPU when exactly one saved value reads it and nothing returned does.
  std::vector<uint8_t> excluded(graph.size(), 0);
  std::vector<uint32_t> savedViews(graph.size(), 0);
  for (NodeId id : joint.forwardOutputs) excluded[root(id)] = 1;
  for (NodeId id : partition.saved) ++savedViews[root(id)];
  std::vector<int32_t> candidateOf(graph.size(), -1);  // by storage root
  std::vector<Candidate> candidates;
  for (NodeId id : partition.saved) {
    const NodeId base = root(id);
    const ir::Node& node = graph.node(id);
    if (excluded[base] || savedViews[base] != 1 || graph.node(base).kind != ir::NodeKind::CallFunction ||
        !node.meta.isTensor() || context.inputs.isWeight(base) || facts.bytes[base] < options.minBytes ||
        !coversStorage(node.meta, facts.bytes[base])) {
      continue;
    }
    candidateOf[base] = static_cast<int32_t>(candidates.size());
    candidates.push_back({id, facts.bytes[base]});
  }
  if (candidates.empty()) return decision;

  std::vector<double> start(steps + 1, 0.0);
  for (size_t i = 0; i < steps; ++i) start[i + 1] = start[i] + executionSeconds[i];
  for (uint32_t step = 0; step < steps; ++step) {
    for (NodeId in : graph.inputs(schedule.nodes[step])) {
      const int32_t c = candidateOf[root(in)];
      if (c < 0) continue;
      Candidate& candidate = candidates[static_cast<size_t>(c)];
      if (step < backwardStart) {
        candidate.lastForwardRead = std::max(candidate.lastForwardRead, step);
      } else {
        candidate.firstBackwardRead = std::min(candidate.firstBackwardRead, step);
      }
    }
  }
  std::erase_if(candidates, [&](const Candidate& c) { return c.firstBackwardRead >= steps; });
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.lastForwardRead < b.lastForwardRead; });

  const double forwardEnd = start[backwardStart];

  // Copies out, serial in order of the last forward read, kept when they end inside the forward;
  // then copies in, latest deadline first, kept when they begin inside the backward. Dropping a
  // value only makes the other copies out earlier, so the copies out are placed again until stable.
  constexpr int kPlacementRounds = 8;
  std::vector<plan::OffloadedActivation> chosen;
  std::vector<Candidate> pool = candidates;
  for (int round = 0; round < kPlacementRounds; ++round) {
    chosen.clear();
    decision.tensors.clear();
    std::vector<Candidate> kept;
    double outFree = 0;
    for (const Candidate& c : pool) {
      const double outStart = std::max(start[c.lastForwardRead + 1], outFree);
      const double outEnd = outStart + static_cast<double>(c.bytes) / (context.hw.d2hBandwidth * options.linkShare);
      if (outEnd > forwardEnd) continue;
      outFree = outEnd;
      plan::OffloadedActivation a;
      a.node = c.node;
      a.bytes = c.bytes;
      a.outStart = outStart;
      a.outEnd = outEnd;
      // The compute stream waits for the copies out at the forward's end, where they have surely
      // ended: a wait at the estimated end stalls the real step, whose compute runs faster than
      // estimated, and leaving the storage to the allocator (record_stream) holds it until a later
      // allocation finds the copy done (docs/benchmarks.md, "Activation offload").
      a.offGpuStep = backwardStart;
      a.waitAfter = schedule.nodes[backwardStart - 1];
      a.firstUse = schedule.nodes[c.firstBackwardRead];
      chosen.push_back(a);
      kept.push_back(c);
    }
    std::vector<uint32_t> deadlines;
    std::vector<uint64_t> sizes;
    for (const Candidate& c : kept) {
      deadlines.push_back(c.firstBackwardRead);
      sizes.push_back(c.bytes);
    }
    const std::vector<std::optional<CopyIn>> copies =
        placeCopiesIn(start, backwardStart, deadlines, sizes, context.hw.h2dBandwidth * options.linkShare);
    std::vector<uint8_t> dropped(chosen.size(), 0);
    for (size_t i = 0; i < chosen.size(); ++i) {
      if (!copies[i]) {
        dropped[i] = 1;
        continue;
      }
      chosen[i].inStart = copies[i]->start;
      chosen[i].inEnd = copies[i]->end;
      chosen[i].onGpuStep = copies[i]->boundary;
      chosen[i].reloadAfter = copies[i]->boundary > backwardStart ? schedule.nodes[copies[i]->boundary - 1] : ir::kNoNode;
    }
    // Dropping values only makes the others' copies out earlier: the last round's are upper bounds.
    const bool stable = std::none_of(dropped.begin(), dropped.end(), [](uint8_t d) { return d != 0; });
    pool.clear();
    for (size_t i = 0; i < kept.size(); ++i) {
      if (!dropped[i]) {
        pool.push_back(kept[i]);
        decision.tensors.push_back(chosen[i]);
      }
    }
    if (stable) break;
  }
  for (const plan::OffloadedActivation& a : decision.tensors) {
    decision.bytes += a.bytes;
    decision.copyOutSeconds += a.outEnd - a.outStart;
    decision.copyInSeconds += a.inEnd - a.inStart;
  }
  return decision;
}

std::vector<std::optional<CopyIn>> placeCopiesIn(std::span<const double> start, uint32_t earliest,
                                                 std::span<const uint32_t> deadlines, std::span<const uint64_t> bytes,
                                                 double bandwidth) {
  std::vector<std::optional<CopyIn>> copies(deadlines.size());
  if (start.empty() || bandwidth <= 0) return copies;
  const uint32_t executions = static_cast<uint32_t>(start.size() - 1);
  std::vector<size_t> byDeadline(deadlines.size());
  for (size_t i = 0; i < byDeadline.size(); ++i) byDeadline[i] = i;
  std::stable_sort(byDeadline.begin(), byDeadline.end(), [&](size_t a, size_t b) { return deadlines[a] > deadlines[b]; });
  double streamFree = std::numeric_limits<double>::infinity();  // where the next later copy begins
  for (size_t i : byDeadline) {
    const uint32_t use = std::min(deadlines[i], executions);
    if (use < earliest) continue;
    const double end = std::min(start[use], streamFree);
    const double begin = end - static_cast<double>(bytes[i]) / bandwidth;
    if (begin < start[earliest]) continue;
    streamFree = begin;
    // The last boundary at or before the copy's start (executions before it have ended by then).
    const uint32_t boundary = static_cast<uint32_t>(
        std::upper_bound(start.begin() + earliest, start.begin() + use + 1, begin) - start.begin() - 1);
    copies[i] = CopyIn{boundary, begin, end};
  }
  return copies;
}

std::vector<analysis::OffGpuInterval> offGpuIntervals(const plan::ActivationOffloadDecision& decision) {
  std::vector<analysis::OffGpuInterval> intervals;
  intervals.reserve(decision.tensors.size());
  for (const plan::OffloadedActivation& a : decision.tensors) intervals.push_back({a.node, a.offGpuStep, a.onGpuStep});
  return intervals;
}

}  // namespace lathe::passes
