// CUDA caching-allocator memory snapshots: the pickle written by
// torch.cuda.memory._dump_snapshot() (formats.md section 5), read with the restricted unpickler.
//
// Reads the 2023+ layout (segments with blocks, device_traces, allocator_settings,
// external_annotations) and the legacy 2022 block `history` form. Fields that are missing or of an
// unexpected type become diagnostics ("snapshot_missing_field", "snapshot_bad_field", ...) and take
// their default; only a file that is not a readable pickle, or one refused as hostile (below),
// throws lathe::Error(BadInput).
//
// Frames are stored once: every distinct frame is one SnapshotFrame (strings interned in
// `strings`), every distinct call stack one entry of a CSR table, and blocks and trace events hold
// a SnapshotStackId. Stacks the pickle shares through its memo are decoded once.
//
// Hostile files are refused with Error(BadInput) naming the file, within memory proportional to
// the pickle: a pickle can reference one trace, segment, block list or event any number of times
// through its memo (a few bytes a reference), and each reference decodes to a copy. torch writes
// a new dict and list for each of those, so only crafted files share them. Limits:
// - the pickle (decompressed) is at most kMaxSnapshotBytes, and gzip output is capped by ratio
//   (util/input.h);
// - device_traces, and the segments' device numbers, name at most kMaxSnapshotDevices devices;
// - what decoding materializes (trace events, segments, blocks, history entries, frames, stack
//   slots, annotations and settings, counted in bytes of the structs below) is at most
//   kDecodedBytesPerPickleByte per byte of the pickle, or kDecodedBytesFloor when that is more,
//   and never more than kMaxDecodedBytes. Real snapshots decode to under half a byte per pickle
//   byte; the densest plain data (stacks of shared frames, 2 bytes a slot) to two;
// - the dict entries it reads (of events, segments, blocks, history entries, annotations and
//   frames; a shared dict is read once per reference) are at most kDictEntriesPerPickleByte per
//   byte, or kDictEntriesFloor: an entry takes at least 3 bytes of pickle where nothing is shared.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/string_pool.h"
#include "util/diagnostics.h"
#include "util/progress.h"

namespace lathe::io {

// Index of a call stack in MemorySnapshot; 0 is the empty stack (torch writes `frames: []` for
// what was allocated before recording started, and older files write no frames at all).
using SnapshotStackId = uint32_t;
inline constexpr uint32_t kNoFrame = UINT32_MAX;
// AllocatorEvent::timeUs when the file has no `time_us` (snapshots before 2024).
inline constexpr int64_t kNoTime = INT64_MIN;

// Limits against hostile files (see above).
inline constexpr uint64_t kMaxSnapshotBytes = uint64_t{4} << 30;
// CUDA device indices are 8-bit (c10::DeviceIndex); a machine has a few dozen devices at most.
inline constexpr size_t kMaxSnapshotDevices = 1024;
inline constexpr uint64_t kDecodedBytesPerPickleByte = 8;
inline constexpr uint64_t kDecodedBytesFloor = uint64_t{16} << 20;
// Keeps every count (stack slots, history entries, events of a device) within uint32.
inline constexpr uint64_t kMaxDecodedBytes = uint64_t{8} << 30;
inline constexpr uint64_t kDictEntriesPerPickleByte = 1;
inline constexpr uint64_t kDictEntriesFloor = uint64_t{8} << 20;

struct SnapshotFrame {
  ir::StrId filename = 0;  // "??" (or a bare C++ file name) for native frames
  ir::StrId name = 0;
  int64_t line = 0;
  // FX provenance that torch.compile'd code may record; 0 when absent.
  ir::StrId fxNodeOp = 0;
  ir::StrId fxNodeName = 0;
  ir::StrId fxNodeTarget = 0;
  ir::StrId fxOriginalTrace = 0;

  friend bool operator==(const SnapshotFrame&, const SnapshotFrame&) = default;
};

enum class BlockState : uint8_t { ActiveAllocated, ActivePendingFree, Inactive, Unknown };
[[nodiscard]] const char* blockStateName(BlockState state);

// One entry of a legacy (2022) block `history` list.
struct SnapshotBlockHistory {
  uint64_t addr = 0;
  uint64_t realSize = 0;
  SnapshotStackId frames = 0;
};

struct SnapshotBlock {
  // The block's `address` when given, else the segment address plus the sizes of the blocks
  // before it (blocks tile their segment in order).
  uint64_t address = 0;
  uint64_t size = 0;           // bytes the allocator reserved for it (rounded)
  uint64_t requestedSize = 0;  // bytes the program asked for; legacy files: history[0].real_size
  BlockState state = BlockState::Unknown;
  SnapshotStackId frames = 0;  // where it was allocated; legacy files: history[0].frames
  // Legacy `history` entries: MemorySnapshot::blockHistory[historyBegin, historyBegin + historyCount).
  uint32_t historyBegin = 0;
  uint32_t historyCount = 0;
};

enum class SegmentType : uint8_t { Large, Small, Unknown };

struct SnapshotSegment {
  int64_t device = 0;
  uint64_t address = 0;
  uint64_t totalSize = 0;
  uint64_t allocatedSize = 0;
  uint64_t activeSize = 0;
  uint64_t requestedSize = 0;
  int64_t stream = 0;
  SegmentType type = SegmentType::Unknown;
  std::pair<int64_t, int64_t> poolId{0, 0};  // != (0, 0): a CUDA-graph private pool
  bool isExpandable = false;
  SnapshotStackId frames = 0;  // where the segment was cudaMalloc'ed (2025 files)
  std::vector<SnapshotBlock> blocks;
};

enum class TraceAction : uint8_t {
  Alloc,
  FreeRequested,
  FreeCompleted,
  Free,  // a bare "free" (free_requested and free_completed in one, as MemoryViz merges them)
  SegmentAlloc,
  SegmentFree,
  SegmentMap,
  SegmentUnmap,
  Snapshot,
  Oom,
  Unknown,  // anything else; its text is in AllocatorEvent::actionName
};
inline constexpr size_t kTraceActionCount = 11;
[[nodiscard]] const char* traceActionName(TraceAction action);

struct AllocatorEvent {
  TraceAction action = TraceAction::Unknown;
  uint64_t addr = 0;  // not written for oom
  uint64_t size = 0;  // bytes; for oom the request that failed
  int64_t stream = 0;
  int64_t timeUs = kNoTime;
  uint64_t deviceFree = 0;  // oom: bytes CUDA reported free
  SnapshotStackId frames = 0;
  ir::StrId compileContext = 0;
  ir::StrId userMetadata = 0;
  ir::StrId actionName = 0;  // the raw action, kept only for Unknown
};

struct ExternalAnnotation {
  ir::StrId stage = 0;  // "START" or "END"
  ir::StrId name = 0;   // e.g. "_compile.compile_inner (dynamo_timed)"
  int64_t device = 0;
  int64_t timeUs = kNoTime;
};

struct MemorySnapshot {
  std::string source;  // file name, for messages
  ir::StringPool strings;
  std::vector<SnapshotFrame> frames;
  // Stack s holds frames stackFrames[stackOffsets[s] .. stackOffsets[s + 1]), innermost first.
  std::vector<uint32_t> stackOffsets{0, 0};
  std::vector<uint32_t> stackFrames;

  std::vector<SnapshotSegment> segments;
  std::vector<std::vector<AllocatorEvent>> deviceTraces;  // index = device
  std::vector<SnapshotBlockHistory> blockHistory;
  // `allocator_settings` (2025 files): each key with the Python repr of its value, in file order.
  std::vector<std::pair<std::string, std::string>> allocatorSettings;
  bool hasAllocatorSettings = false;
  std::vector<ExternalAnnotation> externalAnnotations;
  bool hasTimes = false;  // some trace event has time_us

  Diagnostics diagnostics;

  [[nodiscard]] std::string_view str(ir::StrId id) const { return strings.view(id); }
  [[nodiscard]] size_t stackCount() const { return stackOffsets.size() - 1; }
  // Indices into `frames`, innermost first.
  [[nodiscard]] std::span<const uint32_t> stack(SnapshotStackId id) const {
    return std::span<const uint32_t>(stackFrames).subspan(stackOffsets[id], stackOffsets[id + 1] - stackOffsets[id]);
  }
};

// Reads a snapshot file (plain or gzip). Throws Error(BadInput) when it cannot be read or is not
// a plain-data pickle, Error(Cancelled) when progress asks to stop.
[[nodiscard]] MemorySnapshot loadMemorySnapshot(const std::filesystem::path& path, const Progress& progress = {});

// The same from the bytes of a (not compressed) pickle; sourceName is used in messages.
[[nodiscard]] MemorySnapshot decodeMemorySnapshot(std::string bytes, std::string sourceName,
                                                  const Progress& progress = {});

}  // namespace lathe::io
