// What a CUDA memory snapshot says about memory over time: the data behind `lathe memory`.
//
// Allocated bytes follow PyTorch MemoryViz's "Active Memory Timeline", per device:
// - Events are the device's trace entries in file order; eventIndex is the index into
//   MemorySnapshot::deviceTraces[device] (no merging or renumbering).
// - An allocation starts at an `alloc` event and ends at the next `free_completed` (or bare `free`)
//   at the same address. `free_requested` ends nothing: with its `free_completed` it is one free,
//   counted once. An `alloc` at an address that is still live replaces it in the address map, and
//   the replaced allocation stays live to the end (as MemoryViz does); allocsOverLive counts these.
// - Initially allocated (live before the first event, "allocated before recording"): every free
//   whose address has no live allocation (its size is the free's `size`), and every block that is
//   `active_allocated` in the final segments at an address with no allocation live at the end of
//   the trace (its size is the block's requested size).
// - Sizes are the `size` of the alloc event, i.e. requested bytes, not the rounded block size.
// - allocated[0] is the state before the first event (eventIndex kBeforeTrace); then one point for
//   every event that changes the total. The peak is the largest total, the initial state included
//   (MemoryViz's max_size looks only after events); peakEventIndex is the first event reaching it.
// Reserved bytes follow MemoryViz's "Allocator State History": start from the final segments
// (sum of total_size of the device's segments) and undo the trace backwards: segment_alloc and
// segment_map added size, segment_free and segment_unmap removed it. reserved[0] is the state
// before the first event; then one point per segment event. A trace that would need negative
// reserved bytes (damaged, or segments missing) sets reservedInconsistent and clamps at zero;
// so do sizes so large that the sums would overflow.
// Time and memory are linear in the snapshot's events, segments and blocks (and one timeline per
// device), which the loader bounds by the size of the file (memory_snapshot.h).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "io/snapshot/memory_snapshot.h"
#include "util/progress.h"

namespace lathe::analysis {

// Event index for "before the first event of the trace".
inline constexpr uint32_t kBeforeTrace = UINT32_MAX;

struct MemoryPoint {
  uint32_t eventIndex = kBeforeTrace;
  int64_t timeUs = io::kNoTime;  // of that event; kNoTime before the trace or when the file has no times
  uint64_t bytes = 0;            // total after the event
};

struct LiveAllocation {
  uint64_t addr = 0;
  uint64_t size = 0;
  uint32_t allocEvent = kBeforeTrace;  // kBeforeTrace: initially allocated
  io::SnapshotStackId frames = 0;      // of the alloc event, or of the free / block for initial ones
  uint32_t userFrame = io::kNoFrame;   // index into MemorySnapshot::frames; see userFrameOf
};

// Allocated before recording started (see above), with the event that frees it.
inline constexpr uint32_t kNeverFreed = UINT32_MAX;
struct InitialAllocation {
  LiveAllocation alloc;
  uint32_t endEvent = kNeverFreed;
};

struct OomEvent {
  uint32_t eventIndex = 0;
  int64_t timeUs = io::kNoTime;
  uint64_t requestedBytes = 0;
  uint64_t deviceFreeBytes = 0;
  int64_t stream = 0;
};

struct DeviceMemoryTimeline {
  int64_t device = 0;
  size_t eventCount = 0;
  std::array<uint64_t, io::kTraceActionCount> actionCounts{};  // indexed by io::TraceAction
  int64_t firstTimeUs = io::kNoTime;  // the first trace event's time: times are read from it

  // Active (allocated) memory.
  std::vector<MemoryPoint> allocated;
  uint64_t initialAllocatedBytes = 0;
  uint64_t initialAllocationCount = 0;
  uint64_t finalAllocatedBytes = 0;
  uint64_t peakAllocatedBytes = 0;
  uint32_t peakEventIndex = kBeforeTrace;
  int64_t peakTimeUs = io::kNoTime;
  uint64_t liveAtPeakCount = 0;
  std::vector<LiveAllocation> largestAtPeak;  // largest first, at most options.largestAtPeak
  std::vector<InitialAllocation> initialAllocations;
  uint64_t unmatchedFrees = 0;                // frees of memory allocated before recording
  uint64_t allocsOverLive = 0;

  // Reserved (segment) memory.
  std::vector<MemoryPoint> reserved;
  uint64_t initialReservedBytes = 0;
  uint64_t finalReservedBytes = 0;
  uint64_t peakReservedBytes = 0;
  uint32_t peakReservedEventIndex = kBeforeTrace;
  bool reservedInconsistent = false;

  std::vector<OomEvent> ooms;
};

struct SnapshotTimelineOptions {
  size_t largestAtPeak = 20;
};

struct SnapshotTimeline {
  // Every device that has a trace or a segment, by device number.
  std::vector<DeviceMemoryTimeline> devices;
};

[[nodiscard]] SnapshotTimeline buildSnapshotTimeline(const io::MemorySnapshot& snapshot,
                                                     const SnapshotTimelineOptions& options = {},
                                                     const Progress& progress = {});

// The training iterations a trace recorded, read from the shape of its allocated memory (the
// snapshot has no step markers): each iteration's forward raises memory far above the level it
// returns to between iterations, and its backward brings it back. A hump is a run of points above
// a quarter of the way from the trace's lowest to its highest allocated bytes; consecutive humps are
// split at the lowest point between them (its last event at that level: where the next forward
// starts) when it comes back within an eighth of the way (else the dip is inside one iteration). The first iteration starts before the trace, the last ends with it. One hump (or none)
// is one iteration: the whole trace. Linear in the points.
struct SnapshotIteration {
  uint32_t firstEvent = kBeforeTrace;  // kBeforeTrace: from before the trace
  uint32_t lastEvent = 0;              // inclusive
  uint64_t peakBytes = 0;
  uint32_t peakEventIndex = kBeforeTrace;
};
[[nodiscard]] std::vector<SnapshotIteration> snapshotIterations(const DeviceMemoryTimeline& device);

// The allocator's state at one moment, as memory_viz's "allocator state" shows it: what is live
// just after event `eventIndex` of the device's trace (kBeforeTrace: before the first event),
// largest first, at most `limit`, each with its user frame; `liveCount` is how many are live.
struct LiveAllocations {
  std::vector<LiveAllocation> largest;
  uint64_t liveCount = 0;
  uint64_t liveBytes = 0;
};
[[nodiscard]] LiveAllocations liveAllocationsAt(const io::MemorySnapshot& snapshot, const DeviceMemoryTimeline& device,
                                                uint32_t eventIndex, size_t limit, const Progress& progress = {});

// Whether a frame's file is the user's Python code: a `.py` file outside the torch package
// (no `/torch/` directory in its path) and outside Inductor's generated-code cache
// (`torchinductor_`). Native frames ("??", "CUDACachingAllocator.cpp") are not.
[[nodiscard]] bool isUserFrameFile(std::string_view filename);

// The innermost frame of a stack that isUserFrameFile accepts, as an index into snapshot.frames;
// io::kNoFrame when none does.
[[nodiscard]] uint32_t userFrameOf(const io::MemorySnapshot& snapshot, io::SnapshotStackId stack);

}  // namespace lathe::analysis
