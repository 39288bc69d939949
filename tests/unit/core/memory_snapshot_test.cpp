#include "io/snapshot/memory_snapshot.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/snapshot_timeline.h"
#include "temp_dir.h"
#include "util/diagnostics.h"
#include "resident_size.h"

using namespace lathe;
using namespace lathe::io;
using lathe::analysis::buildSnapshotTimeline;
using lathe::analysis::DeviceMemoryTimeline;
using lathe::analysis::kBeforeTrace;
using lathe::analysis::liveAllocationsAt;
using lathe::analysis::LiveAllocations;
using lathe::analysis::MemoryPoint;
using lathe::analysis::SnapshotIteration;
using lathe::analysis::snapshotIterations;

namespace {

// Writes protocol-4 pickle opcodes, the way pickle.dump does for dicts, lists, str and int.
class PickleWriter {
 public:
  PickleWriter() { out_ = "\x80\x04"; }

  PickleWriter& dict() { return raw("}("); }  // EMPTY_DICT MARK ... SETITEMS
  PickleWriter& endDict() { return raw("u"); }
  PickleWriter& list() { return raw("]("); }  // EMPTY_LIST MARK ... APPENDS
  // A list stored as the next memo entry (MEMOIZE must come before the MARK, as pickle writes it).
  PickleWriter& memoizedList() { return raw("]\x94("); }
  PickleWriter& endList() { return raw("e"); }
  PickleWriter& str(std::string_view s) {
    out_ += '\x8c';  // SHORT_BINUNICODE
    out_ += static_cast<char>(s.size());
    out_ += s;
    return *this;
  }
  PickleWriter& integer(int64_t v) {
    out_ += '\x8a';  // LONG1, 8 bytes
    out_ += '\x08';
    for (int i = 0; i < 8; ++i) out_ += static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
    return *this;
  }
  PickleWriter& boolean(bool b) { return raw(b ? "\x88" : "\x89"); }
  PickleWriter& pair(int64_t a, int64_t b) {
    integer(a).integer(b);
    return raw("\x86");  // TUPLE2
  }
  PickleWriter& get(uint32_t index) {
    out_ += 'j';  // LONG_BINGET
    for (int i = 0; i < 4; ++i) out_ += static_cast<char>((index >> (8 * i)) & 0xff);
    return *this;
  }
  PickleWriter& key(std::string_view k) { return str(k); }
  PickleWriter& raw(std::string_view bytes) {
    out_ += bytes;
    return *this;
  }
  std::string finish() { return out_ + "."; }

 private:
  std::string out_;
};

// A trace event dict: action, addr, size, stream, time_us.
void event(PickleWriter& w, std::string_view action, int64_t addr, int64_t size, int64_t timeUs) {
  w.dict().key("action").str(action).key("addr").integer(addr).key("size").integer(size);
  w.key("stream").integer(0).key("time_us").integer(timeUs).endDict();
}

// The hand-checked snapshot. One segment at 1000000 of 1000 bytes: a block of 300 (250
// requested) active_allocated and never allocated in the trace, then 700 inactive.
//   i  action          addr     size  allocated after
//   -  (initial)                      250 (block) + 50 (freed at 6, never allocated) = 300
//   0  segment_alloc   1000000  1000  300
//   1  alloc           1000300   500  800
//   2  alloc           1000800   100  900
//   3  free_requested  1000300   500  900
//   4  free_completed  1000300   500  400
//   5  alloc           2000000   400  800   frames: ??, torch module.py, /home/u/model.py:42
//   6  free_completed  3000000    50  750   (allocated before recording)
//   7  free_requested  1000800   100  750
//   8  alloc           1000300   200  950   <- peak: block 250, Y@2 100, Z@5 400, W@8 200
//   9  free_completed  1000800   100  850
//  10  oom                      9999  850   device_free 10
//  11  free_requested  2000000   400  850   frames: memo reference to event 5's list
//  12  free_completed  2000000   400  450
//  13  free_completed  1000300   200  250   = the final block, as it must
// Reserved: 1000 at the end, the trace allocated it at event 0, so 0 before.
std::string handCheckedSnapshot() {
  PickleWriter w;
  w.dict();
  w.key("segments").list();
  w.dict().key("device").integer(0).key("address").integer(1000000).key("total_size").integer(1000);
  w.key("allocated_size").integer(300).key("active_size").integer(300).key("requested_size").integer(250);
  w.key("stream").integer(0).key("segment_type").str("small").key("segment_pool_id").pair(0, 0);
  w.key("is_expandable").boolean(false).key("frames").list().endList();
  w.key("blocks").list();
  w.dict().key("address").integer(1000000).key("size").integer(300).key("requested_size").integer(250);
  w.key("state").str("active_allocated").key("frames").list();
  w.dict().key("name").str("init").key("filename").str("/home/u/train.py").key("line").integer(7).endDict();
  w.endList().endDict();
  w.dict().key("address").integer(1000300).key("size").integer(700).key("requested_size").integer(700);
  w.key("state").str("inactive").key("frames").list().endList().endDict();
  w.endList().endDict();  // blocks, segment
  w.endList();            // segments

  w.key("device_traces").list().list();
  event(w, "segment_alloc", 1000000, 1000, 100);
  event(w, "alloc", 1000300, 500, 101);
  event(w, "alloc", 1000800, 100, 102);
  event(w, "free_requested", 1000300, 500, 103);
  event(w, "free_completed", 1000300, 500, 104);
  // Event 5 with frames; its frames list is memoized as the next memo entry.
  w.dict().key("action").str("alloc").key("addr").integer(2000000).key("size").integer(400);
  w.key("stream").integer(0).key("time_us").integer(105).key("frames").memoizedList();
  w.dict().key("name").str("malloc").key("filename").str("??").key("line").integer(0).endDict();
  w.dict().key("name").str("_call_impl").key("filename").str("/venv/site-packages/torch/nn/modules/module.py");
  w.key("line").integer(1750).endDict();
  w.dict().key("name").str("layer").key("filename").str("/home/u/model.py").key("line").integer(42).endDict();
  w.endList().endDict();
  event(w, "free_completed", 3000000, 50, 106);
  event(w, "free_requested", 1000800, 100, 107);
  event(w, "alloc", 1000300, 200, 108);
  event(w, "free_completed", 1000800, 100, 109);
  w.dict().key("action").str("oom").key("size").integer(9999).key("device_free").integer(10);
  w.key("stream").integer(0).key("time_us").integer(110).endDict();
  // Event 11 refers to event 5's frames list through the memo (memo index 0: the only MEMOIZE).
  w.dict().key("action").str("free_requested").key("addr").integer(2000000).key("size").integer(400);
  w.key("stream").integer(0).key("time_us").integer(111).key("frames").get(0).endDict();
  event(w, "free_completed", 2000000, 400, 112);
  event(w, "free_completed", 1000300, 200, 113);
  w.endList().endList();  // trace of device 0, device_traces

  w.key("allocator_settings").dict();
  w.key("expandable_segments").boolean(false).key("max_split_size").integer(-1).endDict();
  w.key("external_annotations").list();
  w.dict().key("stage").str("START").key("name").str("compile (dynamo_timed)").key("device").integer(0);
  w.key("time_us").integer(99).endDict();
  w.endList();
  w.endDict();
  return w.finish();
}

std::string samplePath(const std::string& rel) {
  return std::string(LATHE_SAMPLES_DIR) + "/" + rel;
}

using lathe::testing::kResidentSizeMeaningful;
using lathe::testing::peakResidentKb;


// Decodes a crafted snapshot that must be refused: BadInput, naming the file and every fragment,
// quickly and without the memory the copies would take.
void expectRefused(const std::string& pickle, const std::vector<std::string>& fragments) {
  const long rssBefore = peakResidentKb();
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)decodeMemorySnapshot(pickle, "crafted.pickle");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    EXPECT_EQ(e.where().file, "crafted.pickle");
    for (const std::string& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  const long grownKb = peakResidentKb() - rssBefore;
  EXPECT_TRUE(grownKb < 256 * 1024 || !kResidentSizeMeaningful) << grownKb << " KiB of peak memory grew while refusing";
}

// {'segments': [], 'device_traces': [trace, trace, ...]}: one memoized trace of `events` events
// that the device list refers to `devices` times.
std::string sharedTraceSnapshot(size_t devices, size_t events) {
  PickleWriter w;
  w.dict().key("segments").list().endList();
  w.key("device_traces").list().memoizedList();
  for (size_t i = 0; i < events; ++i) event(w, i % 2 ? "free_completed" : "alloc", 4096 * (i / 2), 512, 0);
  w.endList();
  for (size_t d = 1; d < devices; ++d) w.get(0);
  w.endList().endDict();
  return w.finish();
}

uint64_t count(const DeviceMemoryTimeline& t, TraceAction action) {
  return t.actionCounts[static_cast<size_t>(action)];
}

std::string frameText(const MemorySnapshot& s, uint32_t frame) {
  if (frame == kNoFrame) return "none";
  const SnapshotFrame& f = s.frames[frame];
  return std::string(s.str(f.filename)) + ":" + std::to_string(f.line) + ":" + std::string(s.str(f.name));
}

}  // namespace

TEST(MemorySnapshot, DecodesTheHandWrittenSnapshot) {
  const MemorySnapshot s = decodeMemorySnapshot(handCheckedSnapshot(), "hand.pickle");
  EXPECT_TRUE(s.diagnostics.empty()) << s.diagnostics.items()[0].message;
  ASSERT_EQ(s.segments.size(), 1u);
  const SnapshotSegment& seg = s.segments[0];
  EXPECT_EQ(seg.address, 1000000u);
  EXPECT_EQ(seg.totalSize, 1000u);
  EXPECT_EQ(seg.requestedSize, 250u);
  EXPECT_EQ(seg.type, SegmentType::Small);
  EXPECT_EQ(seg.frames, 0u);
  ASSERT_EQ(seg.blocks.size(), 2u);
  EXPECT_EQ(seg.blocks[0].state, BlockState::ActiveAllocated);
  EXPECT_EQ(seg.blocks[0].requestedSize, 250u);
  EXPECT_EQ(seg.blocks[1].address, 1000300u);
  EXPECT_EQ(seg.blocks[1].state, BlockState::Inactive);

  ASSERT_EQ(s.deviceTraces.size(), 1u);
  const auto& trace = s.deviceTraces[0];
  ASSERT_EQ(trace.size(), 14u);
  EXPECT_EQ(trace[0].action, TraceAction::SegmentAlloc);
  EXPECT_EQ(trace[3].action, TraceAction::FreeRequested);
  EXPECT_EQ(trace[10].action, TraceAction::Oom);
  EXPECT_EQ(trace[10].deviceFree, 10u);
  EXPECT_EQ(trace[5].timeUs, 105);
  EXPECT_TRUE(s.hasTimes);
  // The memo-shared frames list is one stack; frames are stored once.
  EXPECT_NE(trace[5].frames, 0u);
  EXPECT_EQ(trace[11].frames, trace[5].frames);
  EXPECT_EQ(s.stackCount(), 3u);  // empty, the block's, event 5's
  ASSERT_EQ(s.stack(trace[5].frames).size(), 3u);
  EXPECT_EQ(frameText(s, s.stack(trace[5].frames)[2]), "/home/u/model.py:42:layer");

  ASSERT_TRUE(s.hasAllocatorSettings);
  ASSERT_EQ(s.allocatorSettings.size(), 2u);
  EXPECT_EQ(s.allocatorSettings[0], (std::pair<std::string, std::string>{"expandable_segments", "False"}));
  EXPECT_EQ(s.allocatorSettings[1].second, "-1");
  ASSERT_EQ(s.externalAnnotations.size(), 1u);
  EXPECT_EQ(s.str(s.externalAnnotations[0].name), "compile (dynamo_timed)");
  EXPECT_EQ(s.externalAnnotations[0].timeUs, 99);
}

TEST(MemorySnapshot, TimelineOfTheHandWrittenSnapshot) {
  const MemorySnapshot s = decodeMemorySnapshot(handCheckedSnapshot(), "hand.pickle");
  const auto timeline = buildSnapshotTimeline(s);
  ASSERT_EQ(timeline.devices.size(), 1u);
  const DeviceMemoryTimeline& t = timeline.devices[0];
  EXPECT_EQ(t.eventCount, 14u);
  EXPECT_EQ(count(t, TraceAction::Alloc), 4u);
  EXPECT_EQ(count(t, TraceAction::FreeRequested), 3u);
  EXPECT_EQ(count(t, TraceAction::FreeCompleted), 5u);
  EXPECT_EQ(count(t, TraceAction::SegmentAlloc), 1u);
  EXPECT_EQ(count(t, TraceAction::Oom), 1u);
  ASSERT_EQ(t.ooms.size(), 1u);
  EXPECT_EQ(t.ooms[0].eventIndex, 10u);
  EXPECT_EQ(t.ooms[0].requestedBytes, 9999u);

  EXPECT_EQ(t.initialAllocatedBytes, 300u);
  EXPECT_EQ(t.initialAllocationCount, 2u);
  EXPECT_EQ(t.unmatchedFrees, 1u);
  EXPECT_EQ(t.allocsOverLive, 0u);
  EXPECT_EQ(t.peakAllocatedBytes, 950u);
  EXPECT_EQ(t.peakEventIndex, 8u);
  EXPECT_EQ(t.peakTimeUs, 108);
  EXPECT_EQ(t.firstTimeUs, 100);
  EXPECT_EQ(t.finalAllocatedBytes, 250u);
  // One point before the trace, then one per alloc and completed free.
  std::vector<std::pair<uint32_t, uint64_t>> points;
  for (const auto& p : t.allocated) points.emplace_back(p.eventIndex, p.bytes);
  const std::vector<std::pair<uint32_t, uint64_t>> expected = {
      {kBeforeTrace, 300}, {1, 800}, {2, 900}, {4, 400}, {5, 800}, {6, 750}, {8, 950}, {9, 850}, {12, 450}, {13, 250}};
  EXPECT_EQ(points, expected);

  EXPECT_EQ(t.liveAtPeakCount, 4u);
  ASSERT_EQ(t.largestAtPeak.size(), 4u);
  EXPECT_EQ(t.largestAtPeak[0].size, 400u);
  EXPECT_EQ(t.largestAtPeak[0].allocEvent, 5u);
  EXPECT_EQ(frameText(s, t.largestAtPeak[0].userFrame), "/home/u/model.py:42:layer");
  EXPECT_EQ(t.largestAtPeak[1].size, 250u);
  EXPECT_EQ(t.largestAtPeak[1].allocEvent, kBeforeTrace);
  EXPECT_EQ(frameText(s, t.largestAtPeak[1].userFrame), "/home/u/train.py:7:init");
  EXPECT_EQ(t.largestAtPeak[2].size, 200u);
  EXPECT_EQ(t.largestAtPeak[3].size, 100u);

  EXPECT_EQ(t.initialReservedBytes, 0u);
  EXPECT_EQ(t.finalReservedBytes, 1000u);
  EXPECT_EQ(t.peakReservedBytes, 1000u);
  EXPECT_EQ(t.peakReservedEventIndex, 0u);
  EXPECT_FALSE(t.reservedInconsistent);
}

TEST(MemorySnapshot, AllocOverALiveAddressAndSeveralDevices) {
  // Device 0: alloc X 100, alloc X 50 (X never freed in between), free X. Device 1: only a segment.
  PickleWriter w;
  w.dict().key("segments").list();
  w.dict().key("device").integer(1).key("address").integer(1 << 20).key("total_size").integer(4096);
  w.key("allocated_size").integer(0).key("active_size").integer(0).key("stream").integer(0);
  w.key("segment_type").str("small").key("blocks").list();
  w.dict().key("size").integer(4096).key("state").str("inactive").endDict();
  w.endList().endDict().endList();
  w.key("device_traces").list().list();
  event(w, "alloc", 7000, 100, 1);
  event(w, "alloc", 7000, 50, 2);
  event(w, "free_completed", 7000, 50, 3);
  w.endList().list().endList().endList().endDict();
  const MemorySnapshot s = decodeMemorySnapshot(w.finish(), "two.pickle");
  const auto timeline = buildSnapshotTimeline(s);
  ASSERT_EQ(timeline.devices.size(), 2u);
  const DeviceMemoryTimeline& d0 = timeline.devices[0];
  EXPECT_EQ(d0.allocsOverLive, 1u);
  EXPECT_EQ(d0.peakAllocatedBytes, 150u);
  EXPECT_EQ(d0.peakEventIndex, 1u);
  EXPECT_EQ(d0.finalAllocatedBytes, 100u);  // the replaced allocation is never freed
  ASSERT_EQ(d0.largestAtPeak.size(), 2u);
  EXPECT_EQ(d0.largestAtPeak[0].allocEvent, 0u);
  EXPECT_EQ(d0.largestAtPeak[1].allocEvent, 1u);
  EXPECT_EQ(d0.finalReservedBytes, 0u);
  const DeviceMemoryTimeline& d1 = timeline.devices[1];
  EXPECT_EQ(d1.device, 1);
  EXPECT_EQ(d1.eventCount, 0u);
  EXPECT_EQ(d1.peakReservedBytes, 4096u);
  EXPECT_EQ(d1.peakAllocatedBytes, 0u);
}

TEST(MemorySnapshot, LegacyBlockHistory) {
  // A 2022 block: no requested_size / frames, a `history` list instead.
  PickleWriter w;
  w.dict().key("segments").list();
  w.dict().key("device").integer(0).key("address").integer(4096).key("total_size").integer(512);
  w.key("allocated_size").integer(512).key("active_size").integer(512);
  w.key("stream").integer(0).key("segment_type").str("small").key("blocks").list();
  w.dict().key("size").integer(512).key("state").str("active_allocated").key("history").list();
  w.dict().key("addr").integer(4096).key("real_size").integer(123).key("frames").list();
  w.dict().key("name").str("f").key("filename").str("/a/b.py").key("line").integer(3).endDict();
  w.endList().endDict();
  w.endList().endDict();            // history, block
  w.endList().endDict().endList();  // blocks, segment, segments
  w.key("device_traces").list().endList().endDict();
  const MemorySnapshot s = decodeMemorySnapshot(w.finish(), "legacy.pickle");
  EXPECT_TRUE(s.diagnostics.empty()) << s.diagnostics.items()[0].message;
  ASSERT_EQ(s.segments.size(), 1u);
  const SnapshotBlock& b = s.segments[0].blocks.at(0);
  EXPECT_EQ(b.address, 4096u);  // computed from the segment
  EXPECT_EQ(b.requestedSize, 123u);
  ASSERT_EQ(b.historyCount, 1u);
  EXPECT_EQ(s.blockHistory[b.historyBegin].realSize, 123u);
  EXPECT_EQ(frameText(s, s.stack(b.frames)[0]), "/a/b.py:3:f");
  const auto t = buildSnapshotTimeline(s).devices.at(0);
  EXPECT_EQ(t.initialAllocatedBytes, 123u);
  EXPECT_EQ(t.peakAllocatedBytes, 123u);
  EXPECT_EQ(t.peakEventIndex, kBeforeTrace);
  EXPECT_EQ(t.largestAtPeak.size(), 1u);
}

TEST(MemorySnapshot, DamagedFieldsAreDiagnosticsNotErrors) {
  PickleWriter w;
  w.dict().key("segments").list().integer(5).endList();  // a segment that is not a dict
  w.key("device_traces").list().list();
  w.dict().key("action").str("alloc").key("size").integer(10).endDict();                        // no addr
  w.dict().key("action").str("alloc").key("addr").integer(1).key("size").str("big").endDict();  // bad size
  w.dict().key("action").str("teleport").key("addr").integer(2).key("size").integer(1).endDict();
  w.dict().key("action").str("alloc").key("addr").integer(3).key("size").integer(1).key("colour").str("red");
  w.endDict();
  w.dict().key("action").str("alloc").key("addr").integer(4).key("size").integer(1).key("frames").integer(7);
  w.endDict();
  w.dict().key("action").str("free_completed").key("addr").integer(3).key("size").integer(1);
  w.key("frames").list().str("not a frame").endList().endDict();
  w.dict().key("action").str("alloc").key("addr").integer(5).key("size").integer(1).key("frames").list();
  w.dict().key("name").str("bad\xff").key("filename").str("x.py").key("line").integer(1).endDict();
  w.endList().endDict();
  w.endList().endList().endDict();
  const MemorySnapshot s = decodeMemorySnapshot(w.finish(), "damaged.pickle");
  const Diagnostics& d = s.diagnostics;
  EXPECT_EQ(d.countCode("snapshot_bad_field"), 4u);  // segment entry, size, frames, frame entry
  EXPECT_EQ(d.countCode("snapshot_missing_field"), 1u);
  EXPECT_EQ(d.countCode("snapshot_unknown_action"), 1u);
  EXPECT_EQ(d.countCode("snapshot_unknown_field"), 1u);
  EXPECT_EQ(d.countCode("snapshot_bad_utf8"), 1u);
  for (const Diagnostic& diag : d.items()) EXPECT_EQ(diag.where.file, "damaged.pickle");
  EXPECT_TRUE(s.segments.empty());
  ASSERT_EQ(s.deviceTraces.at(0).size(), 7u);
  EXPECT_EQ(s.deviceTraces[0][2].action, TraceAction::Unknown);
  EXPECT_EQ(s.str(s.deviceTraces[0][2].actionName), "teleport");
  const SnapshotFrame& replaced = s.frames.at(s.stack(s.deviceTraces[0][6].frames)[0]);
  EXPECT_EQ(s.str(replaced.name), "bad\xef\xbf\xbd");
  // The timeline still runs: five allocs (sizes 10, 0, 1, 1, 1: the bad size stays 0), one free.
  const auto t = buildSnapshotTimeline(s).devices.at(0);
  EXPECT_EQ(t.finalAllocatedBytes, 12u);
}

TEST(MemorySnapshot, RepeatedDamageIsOneDiagnosticWithACount) {
  PickleWriter w;
  w.dict().key("segments").list().endList().key("device_traces").list().list();
  for (int i = 0; i < 500; ++i) w.dict().key("action").str("alloc").key("addr").integer(i).endDict();
  w.endList().endList().endDict();
  const MemorySnapshot s = decodeMemorySnapshot(w.finish(), "x.pickle");
  ASSERT_EQ(s.diagnostics.size(), 1u);
  EXPECT_NE(s.diagnostics.items()[0].message.find("device_traces[0][0]: 'size' is missing (and 499 more"),
            std::string::npos)
      << s.diagnostics.items()[0].message;
}

TEST(MemorySnapshot, WhatIsNotASnapshotIsBadInput) {
  for (const std::string& data :
       {PickleWriter().integer(3).finish(), PickleWriter().dict().key("weights").integer(1).endDict().finish(),
        std::string("\x80\x02"
                    "ctorch._utils\n_rebuild_tensor_v2\n.")}) {
    try {
      (void)decodeMemorySnapshot(data, "x.pickle");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::BadInput);
      EXPECT_NE(std::string(e.what()).find("x.pickle"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW((void)loadMemorySnapshot(samplePath("no/such/file.pickle")), Error);
}

// Expected numbers below come from Python (pickle.load of the same file, then the replay defined in
// snapshot_timeline.h written in a few lines of Python), not from this code.
TEST(MemorySnapshot, OurLlamaTrainingSnapshot) {
  const MemorySnapshot s = loadMemorySnapshot(samplePath("snapshots/llama3_8b_2l_train_snapshot.pickle"));
  EXPECT_EQ(s.diagnostics.count(Severity::Warning), 0u);
  EXPECT_EQ(s.segments.size(), 50u);
  ASSERT_EQ(s.deviceTraces.size(), 1u);
  EXPECT_EQ(s.deviceTraces[0].size(), 1728u);
  EXPECT_EQ(s.frames.size(), 583u);
  EXPECT_EQ(s.stackCount() - 1, 155u);  // distinct non-empty stacks
  EXPECT_EQ(s.allocatorSettings.size(), 9u);
  EXPECT_TRUE(s.externalAnnotations.empty());
  EXPECT_EQ(s.str(s.deviceTraces[0][0].compileContext), "N/A");

  const auto timeline = buildSnapshotTimeline(s);
  ASSERT_EQ(timeline.devices.size(), 1u);
  const DeviceMemoryTimeline& t = timeline.devices[0];
  EXPECT_EQ(count(t, TraceAction::Alloc), 567u);
  EXPECT_EQ(count(t, TraceAction::FreeRequested), 563u);
  EXPECT_EQ(count(t, TraceAction::FreeCompleted), 563u);
  EXPECT_EQ(count(t, TraceAction::SegmentAlloc), 35u);
  EXPECT_EQ(t.initialAllocatedBytes, 2973802752u);
  EXPECT_EQ(t.peakAllocatedBytes, 7083753768u);
  EXPECT_EQ(t.peakEventIndex, 1154u);
  EXPECT_EQ(t.finalAllocatedBytes, 3040928004u);
  EXPECT_EQ(t.liveAtPeakCount, 75u);
  ASSERT_GE(t.largestAtPeak.size(), 2u);
  EXPECT_EQ(t.largestAtPeak[0].size, 1050673152u);  // the fp32 logits, 2048 x 128256 x 4
  EXPECT_EQ(t.largestAtPeak[0].allocEvent, 1139u);
  EXPECT_EQ(frameText(s, t.largestAtPeak[0].userFrame), "/home/user/capture/capture_one.py:50:loss_of");
  EXPECT_EQ(t.largestAtPeak[1].allocEvent, 1149u);
  EXPECT_EQ(t.largestAtPeak[1].userFrame, kNoFrame);  // allocated by the autograd engine thread
  EXPECT_EQ(t.initialReservedBytes, 2984247296u);
  EXPECT_EQ(t.finalReservedBytes, 7677673472u);
  EXPECT_EQ(t.peakReservedBytes, 7677673472u);
  EXPECT_EQ(t.peakReservedEventIndex, 306u);
  EXPECT_FALSE(t.reservedInconsistent);
}

// One step of an activation-offloaded training run on an H100, and the same step without offload
// (bench/device/runtime/offload_snapshot.py). Offloaded values are freed with record_stream: their
// free_requested comes at the free, their free_completed only once the allocator has seen the copy
// end, so the trace has frees whose allocation came before recording (28, from the step before) and
// blocks live between the two events. Expected numbers come from Python (pickle.load and the replay
// of snapshot_timeline.h), not from this code.
TEST(MemorySnapshot, OurOffloadedStepCountsStreamFreedBlocksUntilCompleted) {
  const std::string results = LATHE_SOURCE_DIR "/bench/device/runtime/results/h100-2026-12-06-offload-snapshot-budget-4.5GiB-";
  const MemorySnapshot offloaded = loadMemorySnapshot(results + "offload.pickle");
  EXPECT_EQ(offloaded.diagnostics.count(Severity::Warning), 0u);
  const DeviceMemoryTimeline o = buildSnapshotTimeline(offloaded).devices.at(0);
  EXPECT_EQ(count(o, TraceAction::Alloc), 158u);
  EXPECT_EQ(count(o, TraceAction::FreeRequested), 121u);
  EXPECT_EQ(count(o, TraceAction::FreeCompleted), 136u);
  EXPECT_EQ(o.unmatchedFrees, 28u);
  EXPECT_EQ(o.initialAllocatedBytes, 3064004608u);
  EXPECT_EQ(o.peakAllocatedBytes, 5768396824u);
  EXPECT_EQ(o.peakEventIndex, 328u);
  EXPECT_EQ(o.finalAllocatedBytes, 4283564032u);

  const MemorySnapshot resident = loadMemorySnapshot(results + "resident.pickle");
  const DeviceMemoryTimeline r = buildSnapshotTimeline(resident).devices.at(0);
  EXPECT_EQ(count(r, TraceAction::FreeRequested), count(r, TraceAction::FreeCompleted));
  EXPECT_EQ(r.unmatchedFrees, 0u);
  EXPECT_EQ(r.initialAllocatedBytes, 1881210880u);  // weights and input: torch.cuda.memory_allocated()
  EXPECT_EQ(r.peakAllocatedBytes, 5232648504u);
  EXPECT_EQ(r.peakEventIndex, 199u);
  // What docs/benchmarks.md reports: counted until free_completed, offload holds more, not less.
  EXPECT_GT(o.peakAllocatedBytes, r.peakAllocatedBytes);
}

// Two training steps recorded back to back: the trace splits into two iterations at the low point
// between them (the first step's backward has freed its activations, the second's forward has not
// begun), and the second holds the trace's peak.
TEST(MemorySnapshot, OurLlamaSnapshotHasTwoIterations) {
  const MemorySnapshot s = loadMemorySnapshot(samplePath("snapshots/llama3_8b_2l_train_snapshot.pickle"));
  const DeviceMemoryTimeline t = buildSnapshotTimeline(s).devices.at(0);
  const std::vector<SnapshotIteration> iterations = snapshotIterations(t);
  ASSERT_EQ(iterations.size(), 2u);
  EXPECT_EQ(iterations[0].firstEvent, kBeforeTrace);
  EXPECT_EQ(iterations[1].firstEvent, iterations[0].lastEvent + 1);
  EXPECT_EQ(iterations[1].lastEvent, 1727u);
  // Between the humps of `lathe memory`'s series (5.62 GiB at event 835, 2.98 GiB at 964).
  EXPECT_GT(iterations[0].lastEvent, 851u);
  EXPECT_LT(iterations[0].lastEvent, 964u);
  EXPECT_EQ(iterations[1].peakEventIndex, t.peakEventIndex);
  EXPECT_EQ(iterations[1].peakBytes, t.peakAllocatedBytes);
  EXPECT_GT(iterations[0].peakBytes, t.initialAllocatedBytes + (t.peakAllocatedBytes - t.initialAllocatedBytes) / 2);
  EXPECT_LE(iterations[0].peakBytes, t.peakAllocatedBytes);
}

// On every snapshot we have: the iterations tile the trace in order, each holds its own peak, and
// the highest of their peaks is the trace's.
TEST(MemorySnapshot, IterationsTileTheTrace) {
  for (const char* sample : {"snapshots/llama3_8b_2l_train_snapshot.pickle", "memory_snapshot/ftcourse/memory_snapshot.pickle",
                             "memory_snapshot/cs336-a2-systems/memory_files/memory_ctx128_forward.pickle"}) {
    SCOPED_TRACE(sample);
    const MemorySnapshot s = loadMemorySnapshot(samplePath(sample));
    for (const DeviceMemoryTimeline& t : buildSnapshotTimeline(s).devices) {
      if (t.allocated.empty()) continue;
      const std::vector<SnapshotIteration> iterations = snapshotIterations(t);
      ASSERT_FALSE(iterations.empty());
      EXPECT_EQ(iterations.front().firstEvent, kBeforeTrace);
      EXPECT_EQ(iterations.back().lastEvent, t.eventCount - 1);
      uint64_t highest = 0;
      for (size_t i = 0; i < iterations.size(); ++i) {
        if (i > 0) {
          EXPECT_EQ(iterations[i].firstEvent, iterations[i - 1].lastEvent + 1);
        }
        EXPECT_LE(iterations[i].firstEvent == kBeforeTrace ? 0 : iterations[i].firstEvent, iterations[i].lastEvent);
        highest = std::max(highest, iterations[i].peakBytes);
      }
      EXPECT_EQ(highest, t.peakAllocatedBytes);
    }
  }
}

// The allocator's state at any moment adds up to the active-memory series there, on our snapshot and
// a third-party one without times: one replay, two views of it.
TEST(MemorySnapshot, LiveAllocationsAtEveryPointSumToTheSeries) {
  for (const char* sample : {"snapshots/llama3_8b_2l_train_snapshot.pickle", "memory_snapshot/ftcourse/memory_snapshot.pickle"}) {
    const MemorySnapshot s = loadMemorySnapshot(samplePath(sample));
    const DeviceMemoryTimeline t = buildSnapshotTimeline(s).devices.at(0);
    for (size_t i = 0; i < t.allocated.size(); i += std::max<size_t>(1, t.allocated.size() / 40)) {
      const MemoryPoint& point = t.allocated[i];
      const LiveAllocations live = liveAllocationsAt(s, t, point.eventIndex, 5);
      EXPECT_EQ(live.liveBytes, point.bytes) << sample << " at event " << point.eventIndex;
      ASSERT_LE(live.largest.size(), 5u);
      for (size_t k = 1; k < live.largest.size(); ++k) EXPECT_GE(live.largest[k - 1].size, live.largest[k].size);
    }
    const LiveAllocations atPeak = liveAllocationsAt(s, t, t.peakEventIndex, t.largestAtPeak.size());
    EXPECT_EQ(atPeak.liveCount, t.liveAtPeakCount) << sample;
    EXPECT_EQ(atPeak.liveBytes, t.peakAllocatedBytes) << sample;
    ASSERT_EQ(atPeak.largest.size(), t.largestAtPeak.size());
    for (size_t k = 0; k < atPeak.largest.size(); ++k) EXPECT_EQ(atPeak.largest[k].allocEvent, t.largestAtPeak[k].allocEvent);
  }
}

TEST(MemorySnapshot, ThirdPartyOlderSnapshotWithoutTimes) {
  const MemorySnapshot s = loadMemorySnapshot(samplePath("memory_snapshot/ftcourse/memory_snapshot.pickle"));
  EXPECT_EQ(s.diagnostics.count(Severity::Warning), 0u);
  EXPECT_FALSE(s.hasTimes);
  EXPECT_FALSE(s.hasAllocatorSettings);
  EXPECT_EQ(s.segments.size(), 215u);
  EXPECT_EQ(s.frames.size(), 551u);
  EXPECT_EQ(s.stackCount() - 1, 152u);
  const DeviceMemoryTimeline t = buildSnapshotTimeline(s).devices.at(0);
  EXPECT_EQ(t.eventCount, 10307u);
  EXPECT_EQ(count(t, TraceAction::Alloc), 3505u);
  EXPECT_EQ(count(t, TraceAction::FreeCompleted), 3325u);
  EXPECT_EQ(count(t, TraceAction::SegmentAlloc), 152u);
  EXPECT_EQ(t.initialAllocatedBytes, 1095725248u);
  EXPECT_EQ(t.peakAllocatedBytes, 5876132840u);
  EXPECT_EQ(t.peakEventIndex, 3697u);
  EXPECT_EQ(t.peakTimeUs, kNoTime);
  EXPECT_EQ(t.firstTimeUs, kNoTime);
  EXPECT_EQ(t.finalAllocatedBytes, 2285408452u);
  EXPECT_EQ(t.liveAtPeakCount, 1181u);
  ASSERT_GE(t.largestAtPeak.size(), 3u);
  EXPECT_EQ(t.largestAtPeak[0].size, 262144000u);
  EXPECT_EQ(t.largestAtPeak[0].allocEvent, kBeforeTrace);
  EXPECT_EQ(t.largestAtPeak[2].allocEvent, 3684u);
  EXPECT_EQ(frameText(s, t.largestAtPeak[2].userFrame),
            "/root/miniconda3/envs/py3.10/lib/python3.10/site-packages/accelerate/hooks.py:166:new_forward");
  EXPECT_EQ(t.initialReservedBytes, 1400897536u);
  EXPECT_EQ(t.peakReservedBytes, 6471811072u);
  EXPECT_EQ(t.peakReservedEventIndex, 3705u);
}

TEST(MemorySnapshot, ThirdPartyCompiledSnapshotWithAnnotations) {
  const MemorySnapshot s = loadMemorySnapshot(
      samplePath("memory_snapshot/cs336-a2-systems/cs336_systems/memory_logs/memory_ctx128_forward.pickle"));
  EXPECT_EQ(s.diagnostics.count(Severity::Warning), 0u);
  EXPECT_EQ(s.segments.size(), 405u);
  EXPECT_EQ(s.externalAnnotations.size(), 1794u);
  EXPECT_EQ(s.str(s.externalAnnotations[0].stage), "START");
  EXPECT_EQ(s.frames.size(), 960u);
  EXPECT_EQ(s.stackCount() - 1, 726u);
  const DeviceMemoryTimeline t = buildSnapshotTimeline(s).devices.at(0);
  EXPECT_EQ(t.eventCount, 8227u);
  EXPECT_EQ(count(t, TraceAction::Alloc), 3113u);
  EXPECT_EQ(count(t, TraceAction::FreeRequested), 2468u);
  EXPECT_EQ(t.initialAllocatedBytes, 13628553216u);
  EXPECT_EQ(t.peakAllocatedBytes, 17602723840u);
  EXPECT_EQ(t.peakEventIndex, 8226u);
  EXPECT_EQ(t.liveAtPeakCount, 969u);
  EXPECT_EQ(t.initialReservedBytes, 13763608576u);
  EXPECT_EQ(t.peakReservedBytes, 17878220800u);
  EXPECT_EQ(t.peakReservedEventIndex, 8217u);
  // Every sample's replay ends where its final segments say: the allocated total equals the
  // requested bytes of the active_allocated blocks.
  uint64_t active = 0;
  for (const auto& seg : s.segments)
    for (const auto& b : seg.blocks)
      if (b.state == BlockState::ActiveAllocated) active += b.requestedSize;
  EXPECT_EQ(t.finalAllocatedBytes, active);
}

TEST(MemorySnapshot, TraceReferencedAMillionTimesIsRefused) {
  const std::string pickle = sharedTraceSnapshot(1000000, 1);
  ASSERT_LT(pickle.size(), size_t{6} << 20);
  expectRefused(pickle, {"device_traces lists 1000000 devices", "memo"});
}

TEST(MemorySnapshot, TraceSharedByManyDevicesRunsOutOfBudget) {
  // 1000 devices (a count a snapshot may have) share one trace: a 200 KB pickle that would decode
  // to 1000 copies of 2000 events, 128 MB.
  const std::string pickle = sharedTraceSnapshot(1000, 2000);
  ASSERT_LT(pickle.size(), size_t{300} << 10);
  expectRefused(pickle, {"decoding it would take more than " + std::to_string(kDecodedBytesFloor) + " bytes",
                         "through its memo", "the first at device_traces[1])"});
}

TEST(MemorySnapshot, OneEventReferencedAMillionTimesIsRefused) {
  // A trace of one memoized event dict and a million references to it (5 MB): torch writes a
  // dict per event, so every copy is the crafted file's doing.
  PickleWriter w;
  w.dict().key("segments").list().endList().key("device_traces").list().list();
  w.raw("}\x94(").key("action").str("alloc").key("addr").integer(4096).key("size").integer(512).endDict();
  for (int i = 1; i < 1000000; ++i) w.get(0);
  w.endList().endList().endDict();
  expectRefused(w.finish(), {"decoding it would take more than", "the first at device_traces[0][1])"});
}

TEST(MemorySnapshot, SegmentsSharingOneBlockListAreRefused) {
  // 2000 segments refer to one memoized list of 1000 blocks: 2000 x 1000 blocks decoded.
  PickleWriter w;
  w.dict().key("device_traces").list().endList().key("segments").list();
  for (int i = 0; i < 2000; ++i) {
    w.dict().key("device").integer(0).key("address").integer(int64_t{i} << 30).key("total_size");
    w.integer(1000 * 512).key("blocks");
    if (i == 0) {
      w.memoizedList();
      for (int j = 0; j < 1000; ++j) w.dict().key("size").integer(512).key("state").str("inactive").endDict();
      w.endList();
    } else {
      w.get(0);
    }
    w.endDict();
  }
  w.endList().endDict();
  const std::string pickle = w.finish();
  ASSERT_LT(pickle.size(), size_t{200} << 10);
  expectRefused(pickle, {"through its memo", "the first at segments[1].blocks)"});
}

TEST(MemorySnapshot, AWideEventSharedByTheTraceRunsOutOfDictEntries) {
  // One event dict of 2000 entries (its 'size' written again and again, which a pickle may do)
  // that the trace refers to 10000 times: 20 million entries to read, few bytes to keep.
  PickleWriter w;
  w.dict().key("segments").list().endList().key("device_traces").list().list();
  w.raw("}\x94(").key("action").str("alloc").key("addr").integer(4096);
  for (int k = 0; k < 2000; ++k) w.key("size").integer(512);
  w.endDict();
  for (int i = 1; i < 10000; ++i) w.get(0);
  w.endList().endList().endDict();
  const std::string pickle = w.finish();
  ASSERT_LT(pickle.size(), size_t{100} << 10);
  expectRefused(pickle, {"decoding it would read more than 8388608 dict entries", "the first at device_traces[0][1])"});
}

TEST(MemorySnapshot, SegmentsNamingTooManyDevicesAreRefused) {
  PickleWriter w;
  w.dict().key("device_traces").list().endList().key("segments").list();
  for (int i = 0; i <= static_cast<int>(kMaxSnapshotDevices); ++i)
    w.dict().key("device").integer(i).key("address").integer(0).key("total_size").integer(0).endDict();
  w.endList().endDict();
  expectRefused(w.finish(), {"more than 1024 devices"});
}

TEST(MemorySnapshot, MemoHeavyLegitimateSnapshotLoads) {
  // 200000 events that all share one stack, its frames and their strings through the memo, as
  // torch writes repeated stacks: decoded once, and well within the budget.
  PickleWriter w;
  w.dict().key("segments").list().endList().key("device_traces").list().list();
  constexpr int kEvents = 200000;
  for (int i = 0; i < kEvents; ++i) {
    w.dict().key("action").str(i % 2 ? "free_completed" : "alloc").key("addr").integer(4096 * (i / 2));
    w.key("size").integer(512).key("frames");
    if (i == 0) {
      w.memoizedList();
      for (int f = 0; f < 50; ++f)
        w.dict().key("filename").str("/home/u/model.py").key("name").str("layer").key("line").integer(f).endDict();
      w.endList();
    } else {
      w.get(0);
    }
    w.endDict();
  }
  w.endList().endList().endDict();
  const MemorySnapshot s = decodeMemorySnapshot(w.finish(), "memo.pickle");
  EXPECT_EQ(s.diagnostics.count(Severity::Warning), 0u);
  ASSERT_EQ(s.deviceTraces.size(), 1u);
  ASSERT_EQ(s.deviceTraces[0].size(), size_t{kEvents});
  EXPECT_EQ(s.stackCount(), 2u);
  EXPECT_EQ(s.frames.size(), 50u);
  EXPECT_EQ(s.deviceTraces[0].back().frames, s.deviceTraces[0].front().frames);
  const DeviceMemoryTimeline t = buildSnapshotTimeline(s).devices.at(0);
  EXPECT_EQ(t.peakAllocatedBytes, 512u);
  EXPECT_EQ(t.finalAllocatedBytes, 0u);
}

TEST(MemorySnapshot, GzipBombIsRefusedWhileReading) {
  // 300 MiB of zeros gzip to ~300 KB: over 200 times the compressed size and past the floor.
  const lathe::testing::TempDir dir;
  const auto path = dir.path() / "bomb.pickle.gz";
  gzFile gz = gzopen(path.c_str(), "wb9");
  ASSERT_NE(gz, nullptr);
  const std::string zeros(size_t{1} << 20, '\0');
  for (int i = 0; i < 300; ++i) ASSERT_EQ(gzwrite(gz, zeros.data(), static_cast<unsigned>(zeros.size())), 1 << 20);
  ASSERT_EQ(gzclose(gz), Z_OK);
  const long rssBefore = peakResidentKb();
  try {
    (void)loadMemorySnapshot(path);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    EXPECT_EQ(e.where().file, path.string());
    EXPECT_NE(std::string(e.what()).find("gzip bomb"), std::string::npos) << e.what();
  }
  const long grownKb = peakResidentKb() - rssBefore;
  EXPECT_TRUE(grownKb < 320 * 1024 || !kResidentSizeMeaningful) << grownKb << " KiB of peak memory grew while refusing";
}
