#include "analysis/memory_timeline.h"

#include <algorithm>

#include "ir/op_info.h"

namespace lathe::analysis {

StepSchedule programSchedule(const ir::Graph& graph) {
  StepSchedule schedule;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::NodeKind kind = graph.node(id).kind;
    if (kind == ir::NodeKind::Placeholder || kind == ir::NodeKind::Output) continue;
    schedule.nodes.push_back(id);
    schedule.phase.push_back(Phase::Forward);
  }
  schedule.backwardStart = schedule.nodes.size();
  return schedule;
}

StepSchedule trainingSchedule(const StepPartition& partition) {
  StepSchedule schedule;
  schedule.nodes = partition.forward;
  schedule.phase.assign(partition.forward.size(), Phase::Forward);
  schedule.backwardStart = schedule.nodes.size();
  schedule.nodes.insert(schedule.nodes.end(), partition.backward.begin(), partition.backward.end());
  schedule.phase.resize(schedule.nodes.size(), Phase::Backward);
  return schedule;
}

StorageFacts storageFacts(const ir::Graph& graph) {
  StorageFacts facts;
  facts.aliasOf.assign(graph.size(), ir::kNoNode);
  facts.bytes.resize(graph.size());
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::Node& node = graph.node(id);
    facts.bytes[id] = node.meta.storageBytes();
    if (node.kind != ir::NodeKind::CallFunction && node.kind != ir::NodeKind::CallMethod) continue;
    const ir::OpCategory category = ir::lookupOp(graph.str(node.target)).category;
    if (category != ir::OpCategory::View && category != ir::OpCategory::Getitem) continue;
    const auto ins = graph.inputs(id);
    if (ins.empty() || !graph.node(ins[0]).meta.isTensor()) continue;  // getitem of a tuple allocates
    facts.aliasOf[id] = ins[0];
  }
  return facts;
}

MemoryTimeline memoryTimeline(const ir::Graph& graph, const GraphInputs& inputs, const StepSchedule& schedule,
                              const JointInfo* joint, const StepPartition* partition, const TimelineOptions& options) {
  MemoryTimeline timeline;
  const size_t n = graph.size();
  const size_t steps = schedule.nodes.size();
  if (steps == 0) return timeline;
  StorageFacts ownFacts;
  if (options.facts == nullptr) ownFacts = storageFacts(graph);
  const StorageFacts& facts = options.facts != nullptr ? *options.facts : ownFacts;
  const uint32_t lastStep = static_cast<uint32_t>(steps - 1);
  std::vector<int32_t> current(n, -1);
  auto& storages = timeline.storages;
  storages.reserve(n);

  std::vector<uint8_t> forwardOutput(n, 0), gradient(n, 0);
  if (joint != nullptr && joint->joint) {
    for (ir::NodeId id : joint->forwardOutputs) forwardOutput[id] = 1;
    for (ir::NodeId id : joint->backwardOutputs) gradient[id] = 1;
  } else {
    for (ir::NodeId id : outputItems(graph)) {
      if (id != ir::kNoNode) forwardOutput[id] = 1;
    }
  }

  for (ir::NodeId id : inputs.placeholders) {
    const ir::Node& node = graph.node(id);
    if (!node.meta.isTensor()) continue;
    StorageLife life;
    life.node = id;
    life.bytes = facts.bytes[id];
    if (inputs.isWeight(id)) {
      life.category = MemoryCategory::Weights;
      life.last = lastStep;
    } else {
      life.category = MemoryCategory::Inputs;
      if (node.role == ir::Role::Tangent) {
        life.phase = Phase::Backward;
        life.first = life.last = static_cast<uint32_t>(std::min(schedule.backwardStart, steps - 1));
      }
    }
    current[id] = static_cast<int32_t>(storages.size());
    storages.push_back(life);
  }

  for (uint32_t step = 0; step < steps; ++step) {
    const ir::NodeId id = schedule.nodes[step];
    const Phase phase = schedule.phase[step];
    for (ir::NodeId in : graph.inputs(id)) {
      if (current[in] >= 0) storages[current[in]].last = std::max(storages[current[in]].last, step);
    }
    const ir::NodeId base = facts.aliasOf[id];
    if (base != ir::kNoNode) {
      current[id] = current[base];
      continue;
    }
    const ir::Node& node = graph.node(id);
    if (!node.meta.isTensor()) {
      current[id] = -1;
      continue;
    }
    StorageLife life;
    life.node = id;
    life.phase = phase;
    life.bytes = facts.bytes[id];
    life.first = life.last = step;
    current[id] = static_cast<int32_t>(storages.size());
    storages.push_back(life);
  }
  // Outputs of the step stay live to its end; a storage is a gradient or an output when any view
  // of it is returned as one.
  std::vector<uint8_t> returnsGradient(storages.size(), 0), returnsOutput(storages.size(), 0);
  for (ir::NodeId id = 0; id < n; ++id) {
    if (current[id] < 0 || !(forwardOutput[id] || gradient[id])) continue;
    storages[current[id]].last = lastStep;
    (gradient[id] ? returnsGradient : returnsOutput)[current[id]] = 1;
  }

  for (size_t s = 0; s < storages.size(); ++s) {
    StorageLife& life = storages[s];
    if (life.category == MemoryCategory::Weights || graph.node(life.node).kind == ir::NodeKind::Placeholder) continue;
    if (returnsGradient[s]) {
      life.category = MemoryCategory::Gradients;
    } else if (returnsOutput[s]) {
      life.category = MemoryCategory::Outputs;
    } else if (life.phase == Phase::Backward) {
      life.category = partition != nullptr && partition->inForward[life.node] ? MemoryCategory::Recomputed
                                                                              : MemoryCategory::Temporaries;
    } else if (life.last >= schedule.backwardStart) {
      life.category = MemoryCategory::Saved;
    } else {
      life.category = MemoryCategory::Temporaries;
    }
  }

  // Live bytes per step by difference arrays. A storage counts at most its share of INT64_MAX, so
  // that no sum of them leaves int64 whatever sizes a graph claims (graphs the planner accepts stay
  // far below the share).
  const uint64_t share = static_cast<uint64_t>(INT64_MAX) / (storages.size() + 1);
  auto counted = [&](const StorageLife& life) { return static_cast<int64_t>(std::min(life.bytes, share)); };
  // The part of each off-GPU interval inside its storage's life, by storage.
  struct Away {
    size_t storage;
    uint32_t first, last;  // inclusive steps
  };
  std::vector<Away> away;
  for (const OffGpuInterval& interval : options.offGpu) {
    if (interval.node >= n || current[interval.node] < 0) continue;
    const size_t s = static_cast<size_t>(current[interval.node]);
    const uint32_t first = std::max(interval.offStep, storages[s].first);
    const uint32_t last = std::min<uint32_t>(interval.onStep == 0 ? 0 : interval.onStep - 1, storages[s].last);
    if (interval.onStep > interval.offStep && first <= last) away.push_back({s, first, last});
  }
  auto awayAt = [&](size_t s, uint32_t step) {
    return std::any_of(away.begin(), away.end(), [&](const Away& a) { return a.storage == s && a.first <= step && step <= a.last; });
  };
  if (!options.perStep) {
    std::vector<int64_t> delta(steps + 1, 0);
    for (const StorageLife& life : storages) {
      delta[life.first] += counted(life);
      delta[life.last + 1] -= counted(life);
    }
    for (const Away& a : away) {
      delta[a.first] -= counted(storages[a.storage]);
      delta[a.last + 1] += counted(storages[a.storage]);
    }
    int64_t running = 0;
    for (size_t step = 0; step < steps; ++step) {
      running += delta[step];
      if (static_cast<uint64_t>(running) > timeline.peakBytes) {
        timeline.peakBytes = static_cast<uint64_t>(running);
        timeline.peakStep = static_cast<uint32_t>(step);
      }
    }
    for (size_t s = 0; s < storages.size(); ++s) {
      const StorageLife& life = storages[s];
      if (life.first <= timeline.peakStep && timeline.peakStep <= life.last && !awayAt(s, timeline.peakStep)) {
        timeline.atPeak[static_cast<size_t>(life.category)] += static_cast<uint64_t>(counted(life));
      }
    }
    return timeline;
  }
  std::vector<std::array<int64_t, kMemoryCategoryCount>> delta(steps + 1);
  for (auto& d : delta) d.fill(0);
  for (const StorageLife& life : storages) {
    const size_t c = static_cast<size_t>(life.category);
    delta[life.first][c] += counted(life);
    delta[life.last + 1][c] -= counted(life);
  }
  for (const Away& a : away) {
    const size_t c = static_cast<size_t>(storages[a.storage].category);
    delta[a.first][c] -= counted(storages[a.storage]);
    delta[a.last + 1][c] += counted(storages[a.storage]);
  }
  timeline.live.resize(steps);
  timeline.total.resize(steps);
  std::array<int64_t, kMemoryCategoryCount> running{};
  for (size_t step = 0; step < steps; ++step) {
    uint64_t total = 0;
    for (size_t c = 0; c < kMemoryCategoryCount; ++c) {
      running[c] += delta[step][c];
      timeline.live[step][c] = static_cast<uint64_t>(running[c]);
      total += timeline.live[step][c];
    }
    timeline.total[step] = total;
    if (total > timeline.peakBytes) {
      timeline.peakBytes = total;
      timeline.peakStep = static_cast<uint32_t>(step);
    }
  }
  timeline.atPeak = timeline.live[timeline.peakStep];
  return timeline;
}

}  // namespace lathe::analysis
