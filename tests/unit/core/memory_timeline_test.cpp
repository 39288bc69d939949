// The memory timeline of real training and inference graphs: its series agree with each other (the
// total is the sum of the categories, the peak is the largest total and where it is), every storage
// lives within the step, and weights are live throughout, so a plan built on it is self-consistent.
#include "analysis/memory_timeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "analysis/joint.h"
#include "sample_graphs.h"

namespace lathe::analysis {
namespace {

void expectConsistent(const MemoryTimeline& timeline, const StepSchedule& schedule, const std::string& what) {
  const size_t steps = schedule.nodes.size();
  ASSERT_EQ(timeline.live.size(), steps) << what;
  ASSERT_EQ(timeline.total.size(), steps) << what;
  ASSERT_GT(steps, 0u) << what;
  uint64_t largest = 0;
  for (size_t i = 0; i < steps; ++i) {
    EXPECT_EQ(timeline.total[i], std::accumulate(timeline.live[i].begin(), timeline.live[i].end(), uint64_t{0}))
        << what << " step " << i;
    largest = std::max(largest, timeline.total[i]);
  }
  EXPECT_EQ(timeline.peakBytes, largest) << what;
  ASSERT_LT(timeline.peakStep, steps) << what;
  EXPECT_EQ(timeline.total[timeline.peakStep], timeline.peakBytes) << what;
  EXPECT_EQ(timeline.atPeak, timeline.live[timeline.peakStep]) << what;
  // Weights are held for the whole step.
  const auto weights = static_cast<size_t>(MemoryCategory::Weights);
  for (size_t i = 1; i < steps; ++i) EXPECT_EQ(timeline.live[i][weights], timeline.live[0][weights]) << what << " step " << i;
  // Storages lie within the step, and the series at each step is the sum of the storages live then.
  std::vector<uint64_t> fromStorages(steps, 0);
  for (const StorageLife& s : timeline.storages) {
    ASSERT_LE(s.first, s.last) << what << " " << s.node;
    ASSERT_LT(s.last, steps) << what << " " << s.node;
    for (uint32_t i = s.first; i <= s.last; ++i) fromStorages[i] += s.bytes;
  }
  for (size_t i = 0; i < steps; ++i) EXPECT_EQ(fromStorages[i], timeline.total[i]) << what << " step " << i;
}

// llama3_8b_2l's training step saving only the primals (the most recomputation), and its timeline:
// loaded and planned once for the tests that read it.
struct Llama2lStep {
  testing::SampleGraph sample = testing::loadSampleGraph("captures/llama3_8b_2l_train.log.gz", "0/0:aot_joint_graph");
  const ir::Graph& graph = *sample.graph;
  JointInfo joint = analyzeJoint(graph);
  StepPartition partition = partitionJoint(graph, joint, joint.primals);
  StepSchedule schedule = trainingSchedule(graph, partition);
  MemoryTimeline timeline = memoryTimeline(graph, sample.inputs, schedule, &joint, &partition);
};
const Llama2lStep& llama2lStep() {
  static const Llama2lStep step;
  return step;
}

TEST(MemoryTimeline, Llama2lStepIsSelfConsistent) {
  expectConsistent(llama2lStep().timeline, llama2lStep().schedule, "llama3_8b_2l");
}

TEST(MemoryTimeline, TrainingStepsAreSelfConsistent) {
  for (const auto& [capture, graphId] : {std::pair{"captures/llama3_8b_2l_tiny_train.log.gz", "0/0:aot_joint_graph"},
                                         std::pair{"captures/mixtral_2l_tiny_train.log.gz", "0/0:aot_joint_graph"},
                                         std::pair{"captures/gpt2_tiny_train.log.gz", "1/0_1:aot_joint_graph"}}) {
    const testing::SampleGraph sample = testing::loadSampleGraph(capture, graphId);
    const JointInfo joint = analyzeJoint(*sample.graph);
    ASSERT_TRUE(joint.joint) << capture;
    // Saving only the primals: the most recomputation, the backward recomputes what it reads.
    const StepPartition partition = partitionJoint(*sample.graph, joint, joint.primals);
    ASSERT_TRUE(partition.valid()) << capture;
    const StepSchedule schedule = trainingSchedule(*sample.graph, partition);
    EXPECT_EQ(schedule.backwardStart, partition.forward.size()) << capture;
    EXPECT_EQ(schedule.nodes.size(), partition.forward.size() + partition.backward.size()) << capture;
    const MemoryTimeline timeline = memoryTimeline(*sample.graph, sample.inputs, schedule, &joint, &partition);
    expectConsistent(timeline, schedule, capture);
    // The search's peak-only timeline (facts computed once) finds the same peak and storages.
    const StorageFacts facts = storageFacts(*sample.graph);
    const MemoryTimeline peakOnly =
        memoryTimeline(*sample.graph, sample.inputs, schedule, &joint, &partition, {.facts = &facts, .perStep = false});
    EXPECT_TRUE(peakOnly.live.empty() && peakOnly.total.empty()) << capture;
    EXPECT_EQ(peakOnly.peakBytes, timeline.peakBytes) << capture;
    EXPECT_EQ(peakOnly.peakStep, timeline.peakStep) << capture;
    EXPECT_EQ(peakOnly.atPeak, timeline.atPeak) << capture;
    ASSERT_EQ(peakOnly.storages.size(), timeline.storages.size()) << capture;
    for (size_t s = 0; s < timeline.storages.size(); ++s) {
      EXPECT_EQ(peakOnly.storages[s].node, timeline.storages[s].node) << capture;
      EXPECT_EQ(peakOnly.storages[s].category, timeline.storages[s].category) << capture;
      EXPECT_EQ(peakOnly.storages[s].last, timeline.storages[s].last) << capture;
    }
    // Recomputed values exist only in the backward; nothing is saved when only primals are.
    const auto recomputed = static_cast<size_t>(MemoryCategory::Recomputed);
    for (size_t i = 0; i < schedule.backwardStart; ++i) EXPECT_EQ(timeline.live[i][recomputed], 0u) << capture << " step " << i;
    EXPECT_TRUE(std::any_of(timeline.live.begin(), timeline.live.end(), [&](const auto& l) { return l[recomputed] > 0; }))
        << capture;
  }
}

// cuDNN's attention backward takes a float32 buffer of B·H·T·(2·D + 1) elements while it runs
// (measured: docs/benchmarks.md, "What is on the GPU at the peak"): one temporary storage per
// execution, live for that execution only. llama3_8b_2l's query is [1, 32, 2048, 128].
TEST(MemoryTimeline, CudnnAttentionBackwardHoldsItsWorkspaceWhileItRuns) {
  const auto& [sample, graph, joint, partition, schedule, timeline] = llama2lStep();
  size_t backwards = 0;
  for (uint32_t at = 0; at < schedule.nodes.size(); ++at) {
    const ir::NodeId id = schedule.nodes[at];
    if (graph.target(id).find("_scaled_dot_product_cudnn_attention_backward") == std::string_view::npos) continue;
    ++backwards;
    const auto workspace = std::find_if(timeline.storages.begin(), timeline.storages.end(), [&](const StorageLife& s) {
      return s.node == id && s.first == at && s.category == MemoryCategory::Temporaries && s.bytes == 67371008u;
    });
    ASSERT_NE(workspace, timeline.storages.end()) << graph.name(id);
    EXPECT_EQ(workspace->last, at) << graph.name(id);
    // The gradients of the query, key and value it returns are allocated while it runs, beside the
    // workspace, not by the getitems that name them afterwards.
    const size_t parts = std::count_if(timeline.storages.begin(), timeline.storages.end(), [&](const StorageLife& s) {
      const ir::Node& node = graph.node(s.node);
      return s.first == at && node.kind == ir::NodeKind::CallFunction && !node.args.empty() &&
             node.args[0].kind == ir::Arg::Kind::Node && node.args[0].node == id;
    });
    EXPECT_EQ(parts, 3u) << graph.name(id);
  }
  EXPECT_EQ(backwards, 2u);
}

// Inductor's buffer reuse: a buffer its program frees stays allocated until a later allocation of
// the same dtype and size in the same program takes it. Each held buffer is a temporary of its
// program (not an input, a saved value, a gradient or an output), what takes it is an allocation of
// its dtype and size that starts right after it, and some are held past their last read.
TEST(MemoryTimeline, FreedBuffersAreHeldUntilInductorReusesThem) {
  const auto& [sample, graph, joint, partition, schedule, timeline] = llama2lStep();
  size_t held = 0, heldAcrossSteps = 0;
  for (const StorageLife& dead : timeline.storages) {
    if (dead.heldFor == ir::kNoNode) continue;
    ++held;
    EXPECT_TRUE(dead.category == MemoryCategory::Temporaries || dead.category == MemoryCategory::Recomputed)
        << graph.name(dead.node);
    const auto taker = std::find_if(timeline.storages.begin(), timeline.storages.end(), [&](const StorageLife& s) {
      return s.node == dead.heldFor && s.first == dead.last + 1;
    });
    ASSERT_NE(taker, timeline.storages.end()) << graph.name(dead.node);
    EXPECT_EQ(taker->bytes, dead.bytes) << graph.name(dead.node);
    EXPECT_EQ(taker->phase, dead.phase) << graph.name(dead.node);
    EXPECT_EQ(graph.node(taker->node).meta.dtype, graph.node(dead.node).meta.dtype) << graph.name(dead.node);
    // Held past its last read: nothing in the graph reads it at the step before the taker.
    bool readThen = false;
    for (ir::NodeId user : graph.users(dead.node)) readThen |= schedule.nodes[dead.last] == user;
    heldAcrossSteps += readThen ? 0 : 1;
  }
  EXPECT_GT(held, 0u);
  EXPECT_GT(heldAcrossSteps, 0u);
}

// Storages sent to the host for a while (activation offload) do not count there: at every step the
// storages countedAt adds up to the step's total.
TEST(MemoryTimeline, StoragesAwayFromTheGpuAreNotCountedThere) {
  const auto& [sample, graph, joint, partition, schedule, timeline] = llama2lStep();
  std::vector<OffGpuInterval> offGpu;
  for (const StorageLife& s : timeline.storages) {
    // Values of the backward (a recomputed forward value's node names its last storage only).
    if (s.phase == Phase::Backward && s.category != MemoryCategory::Recomputed && s.bytes > 0 && s.last > s.first + 2 &&
        offGpu.size() < 4) {
      offGpu.push_back({s.node, s.first + 1, s.last});
    }
  }
  ASSERT_EQ(offGpu.size(), 4u);
  const MemoryTimeline away = memoryTimeline(graph, sample.inputs, schedule, &joint, &partition, {.offGpu = offGpu});
  ASSERT_EQ(away.away.size(), 4u);
  for (uint32_t step = 0; step < schedule.nodes.size(); ++step) {
    uint64_t counted = 0;
    for (size_t s = 0; s < away.storages.size(); ++s) counted += away.countedAt(s, step) ? away.storages[s].bytes : 0;
    ASSERT_EQ(counted, away.total[step]) << "step " << step;
  }
  EXPECT_LT(away.total[offGpu[0].offStep], timeline.total[offGpu[0].offStep]);
}

TEST(MemoryTimeline, InferenceRunsInProgramOrder) {
  const testing::SampleGraph sample =
      testing::loadSampleGraph("captures/llama3_8b_2l_tiny_infer.log.gz", "0/0:aot_inference_graph");
  const StepSchedule schedule = programSchedule(*sample.graph);
  EXPECT_TRUE(std::is_sorted(schedule.nodes.begin(), schedule.nodes.end()));
  EXPECT_EQ(schedule.backwardStart, schedule.nodes.size());
  const MemoryTimeline timeline = memoryTimeline(*sample.graph, sample.inputs, schedule, nullptr, nullptr);
  expectConsistent(timeline, schedule, "llama inference");
  EXPECT_GT(timeline.live[0][static_cast<size_t>(MemoryCategory::Weights)], 0u);
}

TEST(MemoryTimeline, CategoryNamesAreDistinct) {
  std::vector<std::string_view> names;
  for (size_t c = 0; c < kMemoryCategoryCount; ++c) names.push_back(memoryCategoryName(static_cast<MemoryCategory>(c)));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
}

}  // namespace
}  // namespace lathe::analysis
