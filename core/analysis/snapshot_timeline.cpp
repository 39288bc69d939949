#include "analysis/snapshot_timeline.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace lathe::analysis {

namespace {

using io::AllocatorEvent;
using io::TraceAction;

constexpr uint32_t kStillLive = UINT32_MAX;  // end event of an allocation never freed in the trace
constexpr size_t kCancelStride = 65536;

// An initial allocation with the event that frees it (kStillLive: none).
struct InitialAllocation {
  LiveAllocation alloc;
  uint32_t endEvent = kStillLive;
};

bool endsAllocation(TraceAction action) {
  return action == TraceAction::FreeCompleted || action == TraceAction::Free;
}

// Reserved bytes are replayed in signed 64-bit arithmetic that saturates instead of overflowing:
// sizes near 2^63 only come from damaged files, which then report reservedInconsistent.
int64_t saturatingAdd(int64_t a, int64_t b, bool& saturated) {
  int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  saturated = true;
  return b > 0 ? INT64_MAX : INT64_MIN;
}

int64_t signedBytes(uint64_t bytes, bool& saturated) {
  if (bytes <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(bytes);
  saturated = true;
  return INT64_MAX;
}

int64_t reservedDelta(const AllocatorEvent& e, bool& saturated) {
  switch (e.action) {
    case TraceAction::SegmentAlloc:
    case TraceAction::SegmentMap: return signedBytes(e.size, saturated);
    case TraceAction::SegmentFree:
    case TraceAction::SegmentUnmap: return -signedBytes(e.size, saturated);
    default: return 0;
  }
}

bool isSegmentAction(TraceAction action) {
  return action == TraceAction::SegmentAlloc || action == TraceAction::SegmentMap ||
         action == TraceAction::SegmentFree || action == TraceAction::SegmentUnmap;
}

class DeviceReplay {
 public:
  DeviceReplay(const io::MemorySnapshot& snapshot, int64_t device, const std::vector<AllocatorEvent>& events,
               const std::vector<const io::SnapshotSegment*>& segments, const SnapshotTimelineOptions& options,
               const Progress& progress)
      : snapshot_(snapshot), events_(events), segments_(segments), options_(options), progress_(progress) {
    timeline_.device = device;
    timeline_.eventCount = events.size();
  }

  DeviceMemoryTimeline run() {
    countActions();
    replayAllocations();
    collectLargestAtPeak();
    replayReserved();
    return std::move(timeline_);
  }

 private:
  void tick(size_t i) const {
    if (i % kCancelStride == 0) progress_.checkCancelled();
  }

  void countActions() {
    for (uint32_t i = 0; i < events_.size(); ++i) {
      const AllocatorEvent& e = events_[i];
      ++timeline_.actionCounts[static_cast<size_t>(e.action)];
      if (timeline_.firstTimeUs == io::kNoTime) timeline_.firstTimeUs = e.timeUs;
      if (e.action == TraceAction::Oom) timeline_.ooms.push_back({i, e.timeUs, e.size, e.deviceFree, e.stream});
    }
  }

  // Pass 1: pairs allocs with frees, finds the initially allocated memory, the series and its peak.
  void replayAllocations() {
    // Points first hold the running sum of the trace's changes (modulo 2^64, as a free can come
    // before the initial bytes are known); the initial bytes are added once known.
    std::unordered_map<uint64_t, uint64_t> liveSize;  // address -> size
    timeline_.allocated.push_back({kBeforeTrace, io::kNoTime, 0});
    uint64_t running = 0;
    for (uint32_t i = 0; i < events_.size(); ++i) {
      tick(i);
      const AllocatorEvent& e = events_[i];
      if (e.action == TraceAction::Alloc) {
        auto [it, inserted] = liveSize.try_emplace(e.addr, e.size);
        if (!inserted) {  // the old allocation is never freed in the trace: it stays live
          ++timeline_.allocsOverLive;
          it->second = e.size;
        }
        running += e.size;
      } else if (endsAllocation(e.action)) {
        if (auto it = liveSize.find(e.addr); it != liveSize.end()) {
          running -= it->second;
          liveSize.erase(it);
        } else {
          ++timeline_.unmatchedFrees;
          addInitial({e.addr, e.size, kBeforeTrace, e.frames, io::kNoFrame}, i);
          running -= e.size;
        }
      } else {
        continue;
      }
      timeline_.allocated.push_back({i, e.timeUs, running});
    }
    for (const io::SnapshotSegment* seg : segments_) {
      for (const io::SnapshotBlock& b : seg->blocks) {
        if (b.state == io::BlockState::ActiveAllocated && !liveSize.contains(b.address))
          addInitial({b.address, b.requestedSize, kBeforeTrace, b.frames, io::kNoFrame}, kStillLive);
      }
    }
    for (MemoryPoint& point : timeline_.allocated) {
      point.bytes += timeline_.initialAllocatedBytes;
      if (point.bytes > timeline_.peakAllocatedBytes || point.eventIndex == kBeforeTrace) {
        timeline_.peakAllocatedBytes = point.bytes;
        timeline_.peakEventIndex = point.eventIndex;
        timeline_.peakTimeUs = point.timeUs;
      }
    }
    timeline_.finalAllocatedBytes = timeline_.allocated.back().bytes;
  }

  void addInitial(const LiveAllocation& alloc, uint32_t endEvent) {
    timeline_.initialAllocatedBytes += alloc.size;
    ++timeline_.initialAllocationCount;
    initial_.push_back({alloc, endEvent});
  }

  // Pass 2: replays the trace up to the peak to list what is live there: the initial allocations
  // not yet freed, and what the trace allocated and had not freed.
  void collectLargestAtPeak() {
    const uint32_t peak = timeline_.peakEventIndex;
    std::vector<LiveAllocation> atPeak;
    for (const InitialAllocation& s : initial_)
      if (s.endEvent == kStillLive || peak == kBeforeTrace || s.endEvent > peak) atPeak.push_back(s.alloc);
    if (peak != kBeforeTrace) {
      std::unordered_map<uint64_t, LiveAllocation> live;
      for (uint32_t i = 0; i <= peak; ++i) {
        tick(i);
        const AllocatorEvent& e = events_[i];
        if (e.action == TraceAction::Alloc) {
          const LiveAllocation alloc{e.addr, e.size, i, e.frames, io::kNoFrame};
          auto [it, inserted] = live.try_emplace(e.addr, alloc);
          if (!inserted) {
            atPeak.push_back(it->second);  // replaced while live: stays live for good
            it->second = alloc;
          }
        } else if (endsAllocation(e.action)) {
          live.erase(e.addr);  // an unmatched free ends an initial allocation, handled above
        }
      }
      for (const auto& [addr, alloc] : live) atPeak.push_back(alloc);
    }
    timeline_.liveAtPeakCount = atPeak.size();
    const size_t keep = std::min(options_.largestAtPeak, atPeak.size());
    std::partial_sort(atPeak.begin(), atPeak.begin() + static_cast<ptrdiff_t>(keep), atPeak.end(),
                      [](const LiveAllocation& a, const LiveAllocation& b) {
                        if (a.size != b.size) return a.size > b.size;
                        if (a.allocEvent != b.allocEvent) return a.allocEvent < b.allocEvent;
                        return a.addr < b.addr;
                      });
    atPeak.resize(keep);
    for (LiveAllocation& a : atPeak) a.userFrame = userFrameOf(snapshot_, a.frames);
    timeline_.largestAtPeak = std::move(atPeak);
  }

  void replayReserved() {
    bool saturated = false;
    int64_t finalBytes = 0;
    for (const io::SnapshotSegment* seg : segments_)
      finalBytes = saturatingAdd(finalBytes, signedBytes(seg->totalSize, saturated), saturated);
    int64_t net = 0;
    for (const AllocatorEvent& e : events_) net = saturatingAdd(net, reservedDelta(e, saturated), saturated);
    int64_t current = saturatingAdd(finalBytes, net == INT64_MIN ? INT64_MAX : -net, saturated);
    const auto clamp = [this](int64_t v) {
      if (v >= 0) return static_cast<uint64_t>(v);
      timeline_.reservedInconsistent = true;
      return uint64_t{0};
    };
    timeline_.finalReservedBytes = static_cast<uint64_t>(finalBytes);
    timeline_.initialReservedBytes = clamp(current);
    timeline_.peakReservedBytes = timeline_.initialReservedBytes;
    timeline_.reserved.push_back({kBeforeTrace, io::kNoTime, timeline_.initialReservedBytes});
    for (uint32_t i = 0; i < events_.size(); ++i) {
      const AllocatorEvent& e = events_[i];
      if (!isSegmentAction(e.action)) continue;
      current = saturatingAdd(current, reservedDelta(e, saturated), saturated);
      const uint64_t bytes = clamp(current);
      timeline_.reserved.push_back({i, e.timeUs, bytes});
      if (bytes > timeline_.peakReservedBytes) {
        timeline_.peakReservedBytes = bytes;
        timeline_.peakReservedEventIndex = i;
      }
    }
    if (saturated) timeline_.reservedInconsistent = true;
  }

  const io::MemorySnapshot& snapshot_;
  const std::vector<AllocatorEvent>& events_;
  const std::vector<const io::SnapshotSegment*>& segments_;  // the device's
  const SnapshotTimelineOptions& options_;
  const Progress& progress_;
  DeviceMemoryTimeline timeline_;
  std::vector<InitialAllocation> initial_;  // initially allocated, with the event that frees them
};

}  // namespace

bool isUserFrameFile(std::string_view filename) {
  return filename.ends_with(".py") && filename.find("/torch/") == std::string_view::npos &&
         filename.find("\\torch\\") == std::string_view::npos && !filename.starts_with("torch/") &&
         filename.find("torchinductor_") == std::string_view::npos;
}

uint32_t userFrameOf(const io::MemorySnapshot& snapshot, io::SnapshotStackId stack) {
  for (uint32_t frame : snapshot.stack(stack))
    if (isUserFrameFile(snapshot.str(snapshot.frames[frame].filename))) return frame;
  return io::kNoFrame;
}

SnapshotTimeline buildSnapshotTimeline(const io::MemorySnapshot& snapshot, const SnapshotTimelineOptions& options,
                                       const Progress& progress) {
  // Segments grouped by device once, so that each device's replay looks only at its own.
  std::map<int64_t, std::vector<const io::SnapshotSegment*>> devices;
  for (size_t d = 0; d < snapshot.deviceTraces.size(); ++d) devices[static_cast<int64_t>(d)];
  for (const io::SnapshotSegment& seg : snapshot.segments) devices[seg.device].push_back(&seg);
  static const std::vector<AllocatorEvent> kNoEvents;
  SnapshotTimeline timeline;
  for (const auto& [device, segments] : devices) {
    const bool hasTrace = device >= 0 && static_cast<uint64_t>(device) < snapshot.deviceTraces.size();
    const auto& events = hasTrace ? snapshot.deviceTraces[static_cast<size_t>(device)] : kNoEvents;
    timeline.devices.push_back(DeviceReplay(snapshot, device, events, segments, options, progress).run());
  }
  return timeline;
}

}  // namespace lathe::analysis
