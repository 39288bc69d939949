#include "analysis/snapshot_timeline.h"

#include <algorithm>
#include <set>
#include <unordered_map>

namespace lathe::analysis {

namespace {

using io::TraceAction;
using io::AllocatorEvent;

constexpr uint32_t kStillLive = UINT32_MAX;  // end event of an allocation never freed in the trace
constexpr size_t kCancelStride = 65536;

// An allocation with the event that ends it, for finding what is live at a given event.
struct Span {
  LiveAllocation alloc;
  uint32_t endEvent = kStillLive;
};

bool endsAllocation(TraceAction action) {
  return action == TraceAction::FreeCompleted || action == TraceAction::Free;
}

int64_t reservedDelta(const AllocatorEvent& e) {
  const auto size = static_cast<int64_t>(e.size);
  switch (e.action) {
    case TraceAction::SegmentAlloc:
    case TraceAction::SegmentMap: return size;
    case TraceAction::SegmentFree:
    case TraceAction::SegmentUnmap: return -size;
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
               const SnapshotTimelineOptions& options, const Progress& progress)
      : snapshot_(snapshot), events_(events), options_(options), progress_(progress) {
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
      if (e.action == TraceAction::Oom) timeline_.ooms.push_back({i, e.timeUs, e.size, e.deviceFree, e.stream});
    }
  }

  // Pass 1: pairs allocs with frees, finds the initially allocated memory and the series.
  void replayAllocations() {
    struct Change {
      uint32_t event;
      bool add;
      uint64_t size;
    };
    std::vector<Change> changes;
    std::unordered_map<uint64_t, Span> live;
    for (uint32_t i = 0; i < events_.size(); ++i) {
      tick(i);
      const AllocatorEvent& e = events_[i];
      if (e.action == TraceAction::Alloc) {
        const Span span{{e.addr, e.size, i, e.frames, io::kNoFrame}, kStillLive};
        auto [it, inserted] = live.try_emplace(e.addr, span);
        if (!inserted) {  // the old allocation is never freed in the trace: it stays live
          ++timeline_.allocsOverLive;
          spans_.push_back(it->second);
          it->second = span;
        }
        changes.push_back({i, true, e.size});
      } else if (endsAllocation(e.action)) {
        if (auto it = live.find(e.addr); it != live.end()) {
          it->second.endEvent = i;
          spans_.push_back(it->second);
          changes.push_back({i, false, it->second.alloc.size});
          live.erase(it);
        } else {
          ++timeline_.unmatchedFrees;
          addInitial({{e.addr, e.size, kBeforeTrace, e.frames, io::kNoFrame}, i});
          changes.push_back({i, false, e.size});
        }
      }
    }
    for (const io::SnapshotSegment& seg : snapshot_.segments) {
      if (seg.device != timeline_.device) continue;
      for (const io::SnapshotBlock& b : seg.blocks) {
        if (b.state == io::BlockState::ActiveAllocated && !live.contains(b.address))
          addInitial({{b.address, b.requestedSize, kBeforeTrace, b.frames, io::kNoFrame}, kStillLive});
      }
    }
    for (const auto& [addr, span] : live) spans_.push_back(span);

    uint64_t current = timeline_.initialAllocatedBytes;
    timeline_.allocated.reserve(changes.size() + 1);
    timeline_.allocated.push_back({kBeforeTrace, io::kNoTime, current});
    timeline_.peakAllocatedBytes = current;
    for (const Change& c : changes) {
      // A free only ever removes bytes an earlier alloc or the initial state added.
      current = c.add ? current + c.size : current - c.size;
      timeline_.allocated.push_back({c.event, events_[c.event].timeUs, current});
      if (current > timeline_.peakAllocatedBytes) {
        timeline_.peakAllocatedBytes = current;
        timeline_.peakEventIndex = c.event;
        timeline_.peakTimeUs = events_[c.event].timeUs;
      }
    }
    timeline_.finalAllocatedBytes = current;
  }

  void addInitial(const Span& span) {
    timeline_.initialAllocatedBytes += span.alloc.size;
    ++timeline_.initialAllocationCount;
    spans_.push_back(span);
  }

  // Live at the peak: started at or before it (initial ones before everything) and not ended by it.
  void collectLargestAtPeak() {
    const uint32_t peak = timeline_.peakEventIndex;
    std::vector<LiveAllocation> atPeak;
    for (const Span& s : spans_) {
      const bool started = s.alloc.allocEvent == kBeforeTrace || (peak != kBeforeTrace && s.alloc.allocEvent <= peak);
      const bool ended = s.endEvent != kStillLive && peak != kBeforeTrace && s.endEvent <= peak;
      if (started && !ended) atPeak.push_back(s.alloc);
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
    int64_t finalBytes = 0;
    for (const io::SnapshotSegment& seg : snapshot_.segments)
      if (seg.device == timeline_.device) finalBytes += static_cast<int64_t>(seg.totalSize);
    int64_t net = 0;
    for (const AllocatorEvent& e : events_) net += reservedDelta(e);
    int64_t current = finalBytes - net;
    const auto clamp = [this](int64_t v) {
      if (v >= 0) return static_cast<uint64_t>(v);
      timeline_.reservedUnderflow = true;
      return uint64_t{0};
    };
    timeline_.finalReservedBytes = static_cast<uint64_t>(finalBytes);
    timeline_.initialReservedBytes = clamp(current);
    timeline_.peakReservedBytes = timeline_.initialReservedBytes;
    timeline_.reserved.push_back({kBeforeTrace, io::kNoTime, timeline_.initialReservedBytes});
    for (uint32_t i = 0; i < events_.size(); ++i) {
      const AllocatorEvent& e = events_[i];
      if (!isSegmentAction(e.action)) continue;
      current += reservedDelta(e);
      const uint64_t bytes = clamp(current);
      timeline_.reserved.push_back({i, e.timeUs, bytes});
      if (bytes > timeline_.peakReservedBytes) {
        timeline_.peakReservedBytes = bytes;
        timeline_.peakReservedEventIndex = i;
      }
    }
  }

  const io::MemorySnapshot& snapshot_;
  const std::vector<AllocatorEvent>& events_;
  const SnapshotTimelineOptions& options_;
  const Progress& progress_;
  DeviceMemoryTimeline timeline_;
  std::vector<Span> spans_;  // every allocation seen, with the event that ends it
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
  std::set<int64_t> devices;
  for (size_t d = 0; d < snapshot.deviceTraces.size(); ++d) devices.insert(static_cast<int64_t>(d));
  for (const io::SnapshotSegment& seg : snapshot.segments) devices.insert(seg.device);
  static const std::vector<AllocatorEvent> kNoEvents;
  SnapshotTimeline timeline;
  for (int64_t device : devices) {
    const bool hasTrace = device >= 0 && static_cast<uint64_t>(device) < snapshot.deviceTraces.size();
    const auto& events = hasTrace ? snapshot.deviceTraces[static_cast<size_t>(device)] : kNoEvents;
    timeline.devices.push_back(DeviceReplay(snapshot, device, events, options, progress).run());
  }
  return timeline;
}

}  // namespace lathe::analysis
