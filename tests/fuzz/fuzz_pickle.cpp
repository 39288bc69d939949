// Fuzzes the restricted unpickler (core/io/snapshot/detail/pickle.h) and the memory-snapshot decoder and timeline
// built on it: the same bytes are unpickled and printed, then decoded as a snapshot and replayed.
// Bad input may only ever raise lathe::Error(BadInput).
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/snapshot_timeline.h"
#include "io/snapshot/detail/pickle.h"
#include "io/snapshot/memory_snapshot.h"
#include "util/diagnostics.h"

namespace {

void checkInvariants(const lathe::io::MemorySnapshot& snapshot) {
  for (size_t s = 0; s < snapshot.stackCount(); ++s)
    for (uint32_t frame : snapshot.stack(static_cast<lathe::io::SnapshotStackId>(s)))
      if (frame >= snapshot.frames.size()) __builtin_trap();
  const lathe::analysis::SnapshotTimeline timeline = lathe::analysis::buildSnapshotTimeline(snapshot);
  for (const auto& device : timeline.devices) {
    uint64_t peak = 0;
    for (const auto& point : device.allocated) peak = point.bytes > peak ? point.bytes : peak;
    if (peak != device.peakAllocatedBytes) __builtin_trap();
    uint64_t live = 0;
    for (const auto& a : device.largestAtPeak) {
      live += a.size;
      if (a.userFrame != lathe::io::kNoFrame && a.userFrame >= snapshot.frames.size()) __builtin_trap();
    }
    if (device.largestAtPeak.size() == device.liveAtPeakCount && live != device.peakAllocatedBytes)
      __builtin_trap();  // when every live allocation is listed, they add up to the peak
    // The iterations tile the trace in order and the highest of their peaks is the trace's.
    const auto iterations = lathe::analysis::snapshotIterations(device);
    if (device.allocated.empty() != iterations.empty()) __builtin_trap();
    uint64_t highest = 0;
    for (size_t i = 0; i < iterations.size(); ++i) {
      if (i > 0 && iterations[i].firstEvent != iterations[i - 1].lastEvent + 1) __builtin_trap();
      highest = iterations[i].peakBytes > highest ? iterations[i].peakBytes : highest;
    }
    if (!iterations.empty() && highest != device.peakAllocatedBytes) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const lathe::io::PickleDocument doc = lathe::io::unpickle(bytes, "fuzz");
    if (lathe::io::pyRepr(doc.root(), 2000).size() > 2003) __builtin_trap();
  } catch (const lathe::Error& e) {
    if (e.code() != lathe::ErrorCode::BadInput) __builtin_trap();
  }
  try {
    checkInvariants(lathe::io::decodeMemorySnapshot(bytes, "fuzz"));
  } catch (const lathe::Error& e) {
    if (e.code() != lathe::ErrorCode::BadInput) __builtin_trap();
  }
  return 0;
}
