// The two-stream simulator against hand-computed timelines, and its invariants on random task sets.
#include "analysis/stream_sim.h"

#include <gtest/gtest.h>

#include <random>

#include "util/diagnostics.h"

using namespace lathe;
using namespace lathe::analysis;

namespace {

SimTask compute(std::string name, double seconds, std::vector<Dependency> after = {}) {
  return {std::move(name), Stream::Compute, seconds, std::move(after), 0, kNoTask};
}

SimTask copy(std::string name, double seconds, std::vector<Dependency> after = {}, uint64_t bytes = 0,
             TaskIndex freedBy = kNoTask, Stream stream = Stream::HostToDevice) {
  return {std::move(name), stream, seconds, std::move(after), bytes, freedBy};
}

void expectSpan(const TaskRecord& task, double start, double end) {
  EXPECT_DOUBLE_EQ(task.start, start) << task.name;
  EXPECT_DOUBLE_EQ(task.end, end) << task.name;
}

}  // namespace

TEST(StreamSim, CopyThenCompute) {
  SimInput input;
  input.tasks = {copy("h2d w", 2), compute("layer", 3, {{0, Edge::End}})};
  const SimResult r = simulateStreams(input);
  expectSpan(r.tasks[0], 0, 2);
  expectSpan(r.tasks[1], 2, 5);
  EXPECT_DOUBLE_EQ(r.makespan, 5);
  EXPECT_DOUBLE_EQ(r.busySeconds[static_cast<size_t>(Stream::Compute)], 3);
  EXPECT_DOUBLE_EQ(r.busySeconds[static_cast<size_t>(Stream::HostToDevice)], 2);
  ASSERT_EQ(r.bubbles.size(), 1U);
  EXPECT_EQ(r.bubbles[0].before, 1);
  EXPECT_DOUBLE_EQ(r.bubbles[0].start, 0);
  EXPECT_DOUBLE_EQ(r.bubbles[0].end, 2);
  EXPECT_DOUBLE_EQ(r.bubbleSeconds, 2);
}

TEST(StreamSim, CopyOverlapsCompute) {
  // Layer a runs while the copy for layer b, triggered by a's start, proceeds on the copy stream.
  SimInput input;
  input.tasks = {compute("a", 3), copy("h2d b", 2, {{0, Edge::Start}}), compute("b", 1, {{1, Edge::End}})};
  const SimResult r = simulateStreams(input);
  expectSpan(r.tasks[0], 0, 3);
  expectSpan(r.tasks[1], 0, 2);
  expectSpan(r.tasks[2], 3, 4);
  EXPECT_TRUE(r.bubbles.empty());
  EXPECT_DOUBLE_EQ(r.makespan, 4);

  // Triggered by a's end instead, the copy no longer hides: b waits 2 s.
  input.tasks[1].after = {{0, Edge::End}};
  const SimResult late = simulateStreams(input);
  expectSpan(late.tasks[1], 3, 5);
  expectSpan(late.tasks[2], 5, 6);
  EXPECT_DOUBLE_EQ(late.bubbleSeconds, 2);
}

TEST(StreamSim, CopiesAreSerialPerStream) {
  // Two copies on one stream run back to back; the second compute waits for the second copy.
  SimInput input;
  input.tasks = {copy("h2d 1", 2), copy("h2d 2", 2), compute("c1", 1, {{0, Edge::End}}),
                 compute("c2", 1, {{1, Edge::End}})};
  const SimResult r = simulateStreams(input);
  expectSpan(r.tasks[0], 0, 2);
  expectSpan(r.tasks[1], 2, 4);
  expectSpan(r.tasks[2], 2, 3);
  expectSpan(r.tasks[3], 4, 5);
  ASSERT_EQ(r.bubbles.size(), 2U);
  EXPECT_DOUBLE_EQ(r.bubbles[1].start, 3);
  EXPECT_DOUBLE_EQ(r.bubbles[1].end, 4);
  EXPECT_DOUBLE_EQ(r.bubbleSeconds, 3);

  // The device-to-host stream is a separate engine: a D2H copy overlaps both.
  input.tasks.push_back(copy("d2h g", 3, {}, 0, kNoTask, Stream::DeviceToHost));
  const SimResult both = simulateStreams(input);
  expectSpan(both.tasks[4], 0, 3);
  expectSpan(both.tasks[1], 2, 4);
  EXPECT_DOUBLE_EQ(both.busySeconds[static_cast<size_t>(Stream::DeviceToHost)], 3);
}

TEST(StreamSim, MemoryPeakAndSteps) {
  // 10 bytes resident; copy 1 (100 bytes) is freed by c1's end, copy 2 (50 bytes) by c2's end.
  SimInput input;
  input.baseBytes = 10;
  input.tasks = {copy("h2d 1", 2, {}, 100, 2), copy("h2d 2", 2, {}, 50, 3), compute("c1", 1, {{0, Edge::End}}),
                 compute("c2", 1, {{1, Edge::End}})};
  const SimResult r = simulateStreams(input);
  const std::vector<std::pair<double, uint64_t>> expected{{0, 110}, {2, 160}, {3, 60}, {5, 10}};
  ASSERT_EQ(r.memory.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_DOUBLE_EQ(r.memory[i].time, expected[i].first);
    EXPECT_EQ(r.memory[i].bytes, expected[i].second);
  }
  EXPECT_EQ(r.peakBytes, 160U);
  EXPECT_DOUBLE_EQ(r.peakTime, 2);
}

TEST(StreamSim, BufferReusedAtTheInstantItIsReleased) {
  // Copy 2 reuses copy 1's buffer: it waits for c1's end, which frees copy 1. The release and the new
  // allocation happen at one instant and net out, so the peak is one buffer.
  SimInput input;
  input.tasks = {copy("h2d 1", 2, {}, 100, 1), compute("c1", 1, {{0, Edge::End}}),
                 copy("h2d 2", 2, {{1, Edge::End}}, 100, 3), compute("c2", 1, {{2, Edge::End}})};
  const SimResult r = simulateStreams(input);
  expectSpan(r.tasks[2], 3, 5);
  expectSpan(r.tasks[3], 5, 6);
  EXPECT_EQ(r.peakBytes, 100U);
  EXPECT_DOUBLE_EQ(r.bubbleSeconds, 4);
  ASSERT_EQ(r.memory.size(), 2U);  // 100 from 0, 0 from 6: nothing changes at 3
  EXPECT_DOUBLE_EQ(r.memory[1].time, 6);
  EXPECT_EQ(r.memory[1].bytes, 0U);
}

TEST(StreamSim, RejectsCyclesAndBadReferences) {
  SimInput cycle;
  cycle.tasks = {compute("c", 1, {{1, Edge::End}}), copy("h2d", 1, {{0, Edge::Start}})};
  try {
    (void)simulateStreams(cycle);
    FAIL() << "a cycle must not simulate";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Usage);
    EXPECT_NE(std::string(e.what()).find("'c'"), std::string::npos) << e.what();
  }
  SimInput missing;
  missing.tasks = {compute("c", 1, {{5, Edge::End}})};
  EXPECT_THROW((void)simulateStreams(missing), Error);
  SimInput negative;
  negative.tasks = {compute("c", -1)};
  EXPECT_THROW((void)simulateStreams(negative), Error);
  SimInput freedEarly;  // the copy starts at 2, after c, whose end at 1 would free its bytes
  freedEarly.tasks = {compute("c", 1), compute("d", 1), copy("h2d", 1, {{1, Edge::End}}, 10, 0)};
  EXPECT_THROW((void)simulateStreams(freedEarly), Error);
}

TEST(StreamSim, InvariantsAndDeterminismOnRandomTaskSets) {
  std::mt19937 random(20240611);
  for (int trial = 0; trial < 200; ++trial) {
    SimInput input;
    input.baseBytes = random() % 1000;
    const size_t count = 1 + random() % 40;
    for (size_t i = 0; i < count; ++i) {
      SimTask task;
      task.name = "t" + std::to_string(i);
      task.stream = static_cast<Stream>(random() % kStreamCount);
      task.seconds = static_cast<double>(random() % 1000) / 100;
      // Dependencies only on earlier tasks: acyclic whatever the stream order.
      const size_t dependencies = i > 0 ? random() % 3 : 0;
      for (size_t k = 0; k < dependencies; ++k) {
        task.after.push_back({static_cast<TaskIndex>(random() % i), random() % 2 ? Edge::End : Edge::Start});
      }
      task.bytes = random() % 3 == 0 ? random() % 500 : 0;
      input.tasks.push_back(task);
    }
    const SimResult r = simulateStreams(input);
    const SimResult again = simulateStreams(input);
    double previousEnd[kStreamCount] = {0, 0, 0};
    double busy[kStreamCount] = {0, 0, 0};
    for (size_t i = 0; i < count; ++i) {
      const SimTask& task = input.tasks[i];
      const TaskRecord& record = r.tasks[i];
      const auto s = static_cast<size_t>(task.stream);
      EXPECT_GE(record.start, previousEnd[s]);
      EXPECT_NEAR(record.end - record.start, task.seconds, 1e-12);
      for (const Dependency& d : task.after) {
        const TaskRecord& other = r.tasks[static_cast<size_t>(d.task)];
        EXPECT_GE(record.start, d.edge == Edge::End ? other.end : other.start);
      }
      previousEnd[s] = record.end;
      busy[s] += task.seconds;
      EXPECT_EQ(record.start, again.tasks[i].start);
      EXPECT_EQ(record.end, again.tasks[i].end);
    }
    for (size_t s = 0; s < kStreamCount; ++s) EXPECT_DOUBLE_EQ(r.busySeconds[s], busy[s]);
    EXPECT_DOUBLE_EQ(r.bubbleSeconds, again.bubbleSeconds);
    EXPECT_EQ(r.peakBytes, again.peakBytes);
    ASSERT_EQ(r.memory.size(), again.memory.size());
    // The peak is the largest step; everything allocated is freed by the end.
    uint64_t largest = 0;
    for (const MemoryStep& step : r.memory) largest = std::max(largest, step.bytes);
    EXPECT_EQ(r.peakBytes, largest);
    EXPECT_EQ(r.memory.back().bytes, input.baseBytes);
    // Compute stream: busy + bubbles = end of its last task.
    double computeEnd = 0;
    for (size_t i = 0; i < count; ++i) {
      if (input.tasks[i].stream == Stream::Compute) computeEnd = r.tasks[i].end;
    }
    EXPECT_NEAR(r.busySeconds[0] + r.bubbleSeconds, computeEnd, 1e-9);
  }
}
