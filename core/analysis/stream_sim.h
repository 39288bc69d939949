// Discrete-event simulation of a compute stream and copy streams (host to device, optionally device
// to host): the timing model behind offload planning and the compute/copy Gantt view.
//
// - Each stream runs its tasks one at a time, in the order they appear in SimInput::tasks (FIFO, as
//   a CUDA stream does).
// - A task starts when the previous task of its stream has ended and every dependency is met: the
//   named task has started (Edge::Start) or ended (Edge::End). A compute task waits for the copies of
//   the weights it reads; a copy waits for the compute that triggers it and for the one that releases
//   the buffer it reuses.
// - Memory: a task allocates `bytes` when it starts; they are freed when `freedBy` ends (the task
//   itself by default). Allocations and frees at the same instant are netted, as a caching allocator
//   hands a released buffer to the next copy at once, so the step function and the peak show the
//   bytes held after each instant.
// - Times are seconds from 0. The same input always gives the same output.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace lathe::analysis {

enum class Stream : uint8_t { Compute, HostToDevice, DeviceToHost };
inline constexpr size_t kStreamCount = 3;

// "compute", "h2d", "d2h".
[[nodiscard]] const char* streamName(Stream stream);

using TaskIndex = int32_t;
inline constexpr TaskIndex kNoTask = -1;

enum class Edge : uint8_t { Start, End };

struct Dependency {
  TaskIndex task = kNoTask;
  Edge edge = Edge::End;
};

struct SimTask {
  std::string name;
  Stream stream = Stream::Compute;
  double seconds = 0;
  std::vector<Dependency> after;
  uint64_t bytes = 0;           // allocated when the task starts
  TaskIndex freedBy = kNoTask;  // the task whose end frees `bytes`; kNoTask: this task's own end
};

struct SimInput {
  std::vector<SimTask> tasks;  // per stream, in execution order
  uint64_t baseBytes = 0;      // held for the whole run (resident weights)
};

// One task as it ran, for the Gantt view.
struct TaskRecord {
  std::string name;
  Stream stream = Stream::Compute;
  double start = 0;
  double end = 0;
  uint64_t bytes = 0;
};

// The compute stream idle before `before` started, waiting for one of its dependencies.
struct Bubble {
  TaskIndex before = kNoTask;
  double start = 0;
  double end = 0;
};

// Bytes held from `time` until the next step.
struct MemoryStep {
  double time = 0;
  uint64_t bytes = 0;
};

struct SimResult {
  std::vector<TaskRecord> tasks;  // parallel to SimInput::tasks
  std::array<double, kStreamCount> busySeconds{};  // indexed by Stream
  std::vector<Bubble> bubbles;                     // in time order, from time 0 on
  double bubbleSeconds = 0;
  double makespan = 0;  // end of the last task
  uint64_t peakBytes = 0;
  double peakTime = 0;             // first instant the peak is held
  std::vector<MemoryStep> memory;  // starts at (0, baseBytes); one step per instant the total changes
};

// Throws Error(Usage) when a dependency or freedBy names no task, a duration is negative or not
// finite, bytes are freed before they are allocated, or tasks wait on each other in a cycle (the
// message names the tasks that cannot start).
[[nodiscard]] SimResult simulateStreams(const SimInput& input);

}  // namespace lathe::analysis
