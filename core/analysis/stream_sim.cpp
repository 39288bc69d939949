#include "analysis/stream_sim.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "util/diagnostics.h"

namespace lathe::analysis {

namespace {

std::string taskLabel(const SimInput& input, TaskIndex index) {
  const std::string& name = input.tasks[static_cast<size_t>(index)].name;
  return "task " + std::to_string(index) + (name.empty() ? std::string() : " '" + name + "'");
}

void validate(const SimInput& input) {
  if (input.tasks.size() > static_cast<size_t>(INT32_MAX)) {
    throw Error(ErrorCode::Usage, "stream simulation: too many tasks");
  }
  const auto count = static_cast<TaskIndex>(input.tasks.size());
  uint64_t held = input.baseBytes;  // at most, were every task's bytes held at once
  for (TaskIndex i = 0; i < count; ++i) {
    const SimTask& task = input.tasks[static_cast<size_t>(i)];
    if (__builtin_add_overflow(held, task.bytes, &held)) {
      throw Error(ErrorCode::Usage, "stream simulation: the tasks hold more than 2^64 bytes together");
    }
    if (!std::isfinite(task.seconds) || task.seconds < 0) {
      throw Error(ErrorCode::Usage, "stream simulation: " + taskLabel(input, i) + " has duration " +
                                        std::to_string(task.seconds) + " s");
    }
    if (static_cast<size_t>(task.stream) >= kStreamCount) {
      throw Error(ErrorCode::Usage, "stream simulation: " + taskLabel(input, i) + " names no stream");
    }
    for (const Dependency& dependency : task.after) {
      if (dependency.task < 0 || dependency.task >= count) {
        throw Error(ErrorCode::Usage, "stream simulation: " + taskLabel(input, i) + " depends on task " +
                                          std::to_string(dependency.task) + ", which does not exist");
      }
    }
    if (task.freedBy != kNoTask && (task.freedBy < 0 || task.freedBy >= count)) {
      throw Error(ErrorCode::Usage, "stream simulation: " + taskLabel(input, i) + " is freed by task " +
                                        std::to_string(task.freedBy) + ", which does not exist");
    }
  }
}

// Start times of every task: each stream advances through its FIFO while the head's dependencies
// are scheduled. Tasks never compete for anything but their stream, so the order streams are visited
// in does not change any time.
std::vector<double> scheduleStarts(const SimInput& input) {
  const size_t count = input.tasks.size();
  std::array<std::vector<TaskIndex>, kStreamCount> queues;
  for (size_t i = 0; i < count; ++i) {
    queues[static_cast<size_t>(input.tasks[i].stream)].push_back(static_cast<TaskIndex>(i));
  }
  std::vector<double> start(count, 0);
  std::vector<bool> scheduled(count, false);
  std::array<size_t, kStreamCount> head{};
  std::array<double, kStreamCount> streamFree{};
  size_t done = 0;
  while (done < count) {
    bool moved = false;
    for (size_t s = 0; s < kStreamCount; ++s) {
      while (head[s] < queues[s].size()) {
        const TaskIndex index = queues[s][head[s]];
        const SimTask& task = input.tasks[static_cast<size_t>(index)];
        double ready = streamFree[s];
        bool blocked = false;
        for (const Dependency& dependency : task.after) {
          const auto other = static_cast<size_t>(dependency.task);
          if (!scheduled[other]) {
            blocked = true;
            break;
          }
          const double at = dependency.edge == Edge::Start ? start[other] : start[other] + input.tasks[other].seconds;
          ready = std::max(ready, at);
        }
        if (blocked) break;
        start[static_cast<size_t>(index)] = ready;
        scheduled[static_cast<size_t>(index)] = true;
        streamFree[s] = ready + task.seconds;
        ++head[s];
        ++done;
        moved = true;
      }
    }
    if (!moved) {
      std::string stuck;
      for (size_t s = 0; s < kStreamCount; ++s) {
        if (head[s] == queues[s].size()) continue;
        if (!stuck.empty()) stuck += ", ";
        stuck += taskLabel(input, queues[s][head[s]]) + " on " + streamName(static_cast<Stream>(s));
      }
      throw Error(ErrorCode::Usage, "stream simulation: tasks wait on each other in a cycle: " + stuck);
    }
  }
  return start;
}

struct MemoryEvent {
  double time = 0;
  bool free = false;
  uint64_t bytes = 0;
};

void accountMemory(const SimInput& input, SimResult& result) {
  std::vector<MemoryEvent> events;
  for (size_t i = 0; i < input.tasks.size(); ++i) {
    const SimTask& task = input.tasks[i];
    if (task.bytes == 0) continue;
    const size_t freer = task.freedBy == kNoTask ? i : static_cast<size_t>(task.freedBy);
    const double allocated = result.tasks[i].start;
    const double freed = result.tasks[freer].end;
    if (freed < allocated) {
      throw Error(ErrorCode::Usage, "stream simulation: " + taskLabel(input, static_cast<TaskIndex>(i)) +
                                        " has its bytes freed by " + taskLabel(input, static_cast<TaskIndex>(freer)) +
                                        " before it starts");
    }
    events.push_back({allocated, false, task.bytes});
    events.push_back({freed, true, task.bytes});
  }
  // At one instant allocations come first, so a free never goes below zero; only the net is recorded.
  std::stable_sort(events.begin(), events.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
    return a.time != b.time ? a.time < b.time : !a.free && b.free;
  });
  uint64_t held = input.baseBytes;
  result.memory.push_back({0, held});
  for (size_t i = 0; i < events.size();) {
    const double time = events[i].time;
    for (; i < events.size() && events[i].time == time; ++i) {
      held = events[i].free ? held - events[i].bytes : held + events[i].bytes;
    }
    if (result.memory.back().time == time) {
      result.memory.back().bytes = held;
    } else if (result.memory.back().bytes != held) {
      result.memory.push_back({time, held});
    }
  }
  for (const MemoryStep& step : result.memory) {
    if (step.bytes > result.peakBytes) {
      result.peakBytes = step.bytes;
      result.peakTime = step.time;
    }
  }
}

}  // namespace

const char* streamName(Stream stream) {
  switch (stream) {
    case Stream::Compute: return "compute";
    case Stream::HostToDevice: return "h2d";
    case Stream::DeviceToHost: return "d2h";
  }
  return "?";
}

SimResult simulateStreams(const SimInput& input) {
  validate(input);
  const std::vector<double> start = scheduleStarts(input);
  SimResult result;
  result.tasks.reserve(input.tasks.size());
  for (size_t i = 0; i < input.tasks.size(); ++i) {
    const SimTask& task = input.tasks[i];
    const double end = start[i] + task.seconds;
    result.tasks.push_back({task.name, task.stream, start[i], end, task.bytes});
    result.busySeconds[static_cast<size_t>(task.stream)] += task.seconds;
    result.makespan = std::max(result.makespan, end);
  }
  double computeFree = 0;
  for (size_t i = 0; i < input.tasks.size(); ++i) {
    if (input.tasks[i].stream != Stream::Compute) continue;
    if (start[i] > computeFree) {
      result.bubbles.push_back({static_cast<TaskIndex>(i), computeFree, start[i]});
      result.bubbleSeconds += start[i] - computeFree;
    }
    computeFree = result.tasks[i].end;
  }
  accountMemory(input, result);
  return result;
}

}  // namespace lathe::analysis
