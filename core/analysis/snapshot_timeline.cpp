#include "analysis/snapshot_timeline.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace lathe::analysis {

namespace {

using io::AllocatorEvent;
using io::TraceAction;

constexpr size_t kCancelStride = 65536;

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

const std::vector<AllocatorEvent>& deviceEvents(const io::MemorySnapshot& snapshot, int64_t device) {
  static const std::vector<AllocatorEvent> kNoEvents;
  const bool hasTrace = device >= 0 && static_cast<uint64_t>(device) < snapshot.deviceTraces.size();
  return hasTrace ? snapshot.deviceTraces[static_cast<size_t>(device)] : kNoEvents;
}

// Replays the trace up to `eventIndex` to list what is live there: the initial allocations not yet
// freed, and what the trace allocated and had not freed.
LiveAllocations liveAllocationsAt(const io::MemorySnapshot& snapshot, const DeviceMemoryTimeline& timeline,
                                  const std::vector<AllocatorEvent>& events, uint32_t eventIndex, size_t limit,
                                  const Progress& progress) {
  std::vector<LiveAllocation> live;
  for (const InitialAllocation& s : timeline.initialAllocations)
    if (s.endEvent == kNeverFreed || eventIndex == kBeforeTrace || s.endEvent > eventIndex) live.push_back(s.alloc);
  if (eventIndex != kBeforeTrace) {
    std::unordered_map<uint64_t, LiveAllocation> byAddress;
    const uint32_t last = static_cast<uint32_t>(std::min<size_t>(eventIndex, events.size() - 1));
    for (uint32_t i = 0; !events.empty() && i <= last; ++i) {
      if (i % kCancelStride == 0) progress.checkCancelled();
      const AllocatorEvent& e = events[i];
      if (e.action == TraceAction::Alloc) {
        const LiveAllocation alloc{e.addr, e.size, i, e.frames, io::kNoFrame};
        auto [it, inserted] = byAddress.try_emplace(e.addr, alloc);
        if (!inserted) {
          live.push_back(it->second);  // replaced while live: stays live for good
          it->second = alloc;
        }
      } else if (endsAllocation(e.action)) {
        byAddress.erase(e.addr);  // an unmatched free ends an initial allocation, handled above
      }
    }
    for (const auto& [addr, alloc] : byAddress) live.push_back(alloc);
  }
  LiveAllocations result;
  result.liveCount = live.size();
  for (const LiveAllocation& a : live) result.liveBytes += a.size;
  const size_t keep = std::min(limit, live.size());
  std::partial_sort(live.begin(), live.begin() + static_cast<ptrdiff_t>(keep), live.end(),
                    [](const LiveAllocation& a, const LiveAllocation& b) {
                      if (a.size != b.size) return a.size > b.size;
                      if (a.allocEvent != b.allocEvent) return a.allocEvent < b.allocEvent;
                      return a.addr < b.addr;
                    });
  live.resize(keep);
  for (LiveAllocation& a : live) a.userFrame = userFrameOf(snapshot, a.frames);
  result.largest = std::move(live);
  return result;
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
          addInitial({b.address, b.requestedSize, kBeforeTrace, b.frames, io::kNoFrame}, kNeverFreed);
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
    timeline_.initialAllocations.push_back({alloc, endEvent});
  }

  // Pass 2: what is live at the peak.
  void collectLargestAtPeak() {
    LiveAllocations atPeak = liveAllocationsAt(snapshot_, timeline_, events_, timeline_.peakEventIndex,
                                               options_.largestAtPeak, progress_);
    timeline_.liveAtPeakCount = atPeak.liveCount;
    timeline_.largestAtPeak = std::move(atPeak.largest);
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
  SnapshotTimeline timeline;
  for (const auto& [device, segments] : devices) {
    timeline.devices.push_back(
        DeviceReplay(snapshot, device, deviceEvents(snapshot, device), segments, options, progress).run());
  }
  return timeline;
}

LiveAllocations liveAllocationsAt(const io::MemorySnapshot& snapshot, const DeviceMemoryTimeline& device,
                                  uint32_t eventIndex, size_t limit, const Progress& progress) {
  return liveAllocationsAt(snapshot, device, deviceEvents(snapshot, device.device), eventIndex, limit, progress);
}

std::vector<SnapshotIteration> snapshotIterations(const DeviceMemoryTimeline& device) {
  const std::vector<MemoryPoint>& points = device.allocated;
  const auto lastEvent = static_cast<uint32_t>(device.eventCount > 0 ? device.eventCount - 1 : 0);
  if (points.empty()) return {};
  uint64_t low = points.front().bytes, high = points.front().bytes;
  for (const MemoryPoint& p : points) {
    low = std::min(low, p.bytes);
    high = std::max(high, p.bytes);
  }
  const uint64_t threshold = low + (high - low) / 4;
  // Humps as [first, last] point indices.
  std::vector<std::pair<size_t, size_t>> humps;
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].bytes <= threshold || high == low) continue;
    if (!humps.empty() && humps.back().second + 1 == i) {
      humps.back().second = i;
    } else {
      humps.emplace_back(i, i);
    }
  }
  std::vector<SnapshotIteration> iterations;
  SnapshotIteration current;
  // Ends `current` at event `last`; its peak is the first of its points [from, to] at their highest.
  const auto close = [&](uint32_t last, size_t from, size_t to) {
    current.lastEvent = last;
    for (size_t i = from; i <= to; ++i) {
      if (i == from || points[i].bytes > current.peakBytes) {
        current.peakBytes = points[i].bytes;
        current.peakEventIndex = points[i].eventIndex;
      }
    }
    iterations.push_back(current);
    current = SnapshotIteration{};
  };
  size_t startPoint = 0;
  for (size_t h = 0; h + 1 < humps.size(); ++h) {
    // The lowest point between this hump and the next, its last event at that level.
    size_t lowest = humps[h].second + 1;
    for (size_t i = lowest; i < humps[h + 1].first; ++i) {
      if (points[i].bytes <= points[lowest].bytes) lowest = i;
    }
    // A dip that stays well above the level between iterations is inside one (a brief free in
    // the backward): no boundary.
    if (points[lowest].bytes > low + (high - low) / 8) continue;
    const uint32_t boundary = points[lowest].eventIndex;
    close(boundary, startPoint, lowest);
    current.firstEvent = boundary + 1;
    startPoint = lowest + 1;
  }
  close(lastEvent, startPoint, points.size() - 1);
  return iterations;
}

}  // namespace lathe::analysis
