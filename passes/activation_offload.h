// Activation offload: which saved values the forward copies to pinned host memory after their last
// forward read and the backward copies back before its first read, and where each copy is issued
// and waited for, on the step schedule of a saved set.
//
// Model (algorithms.md §1.5, §2.3): one device-to-host and one host-to-device copy stream, each
// serial, each copy taking bytes / bandwidth. A copy out is issued when the value's last forward
// reader ends; the compute stream waits for it before the first execution that starts after its
// estimated end, and the GPU storage is free from there. A copy in is issued as late as the serial
// stream allows it to end when the first backward reader starts. Only hidden copies are planned: a
// value whose copy out would not end inside the forward, or whose copy in would have to begin
// before the backward does, stays on the GPU, so the step time does not change (offloading is free
// only if hidden). Candidates: saved values whose elements fill their storage (the storage's owner,
// or a reshape or permutation of it), the only saved value reading that storage, which no forward
// output shares, that is neither a weight nor an input and holds at least ActivationOffloadOptions::minBytes;
// copies out are placed in order of the last forward read (the first layers' values, which the
// backward reads last).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "analysis/joint.h"
#include "analysis/memory_timeline.h"
#include "passes/pass.h"
#include "plan/plan_state.h"

namespace lathe::passes {

struct ActivationOffloadOptions {
  // Smaller values are not worth two copies and four dispatches.
  uint64_t minBytes = uint64_t{1} << 20;
  // The share of each link's bandwidth the copies are planned at. The roofline prices compute
  // slower than the H200 runs it (98 ms estimated for a 76 ms step, docs/benchmarks.md), and a copy
  // planned to the last estimated millisecond stalls the real, faster step; at 0.6 a copy stays
  // hidden while compute runs up to 1.6x faster than estimated.
  double linkShare = 0.6;
};

// executionSeconds: the estimated time of each execution of `schedule`.
[[nodiscard]] plan::ActivationOffloadDecision planActivationOffload(const PassContext& context,
                                                                   const analysis::StepPartition& partition,
                                                                   const analysis::StepSchedule& schedule,
                                                                   std::span<const double> executionSeconds,
                                                                   const ActivationOffloadOptions& options = {});

// Copies in on one serial stream, as late as each can end by its deadline: latest deadline first, each
// ending by its deadline and before the next one on the stream begins. `start` holds the start of each
// execution and the step's end (size executions + 1); deadlines are execution indices. A copy is
// issued at a boundary (the start of an execution) no earlier than `earliest` and no later than its
// start; one that would have to begin before `earliest` is not placed (nullopt) and leaves the stream
// free for the others.
struct CopyIn {
  uint32_t boundary = 0;  // issued before this execution
  double start = 0, end = 0;
};
[[nodiscard]] std::vector<std::optional<CopyIn>> placeCopiesIn(std::span<const double> start, uint32_t earliest,
                                                               std::span<const uint32_t> deadlines,
                                                               std::span<const uint64_t> bytes, double bandwidth);

// The decision's storages away from the GPU, for memoryTimeline.
[[nodiscard]] std::vector<analysis::OffGpuInterval> offGpuIntervals(const plan::ActivationOffloadDecision& decision);

}  // namespace lathe::passes
