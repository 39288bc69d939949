#include "io/snapshot/memory_snapshot.h"

#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "io/snapshot/detail/pickle.h"
#include "util/input.h"

namespace lathe::io {

const char* blockStateName(BlockState state) {
  switch (state) {
    case BlockState::ActiveAllocated: return "active_allocated";
    case BlockState::ActivePendingFree: return "active_pending_free";
    case BlockState::Inactive: return "inactive";
    case BlockState::Unknown: return "unknown";
  }
  return "?";
}

const char* traceActionName(TraceAction action) {
  switch (action) {
    case TraceAction::Alloc: return "alloc";
    case TraceAction::FreeRequested: return "free_requested";
    case TraceAction::FreeCompleted: return "free_completed";
    case TraceAction::Free: return "free";
    case TraceAction::SegmentAlloc: return "segment_alloc";
    case TraceAction::SegmentFree: return "segment_free";
    case TraceAction::SegmentMap: return "segment_map";
    case TraceAction::SegmentUnmap: return "segment_unmap";
    case TraceAction::Snapshot: return "snapshot";
    case TraceAction::Oom: return "oom";
    case TraceAction::Unknown: return "unknown";
  }
  return "?";
}

namespace {

// Dictionary keys the decoder understands. Keys are interned once and mapped through a table
// indexed by StrId, so matching a key costs no string comparison.
enum class Field : uint8_t {
  Unknown,
  // top level
  Segments,
  DeviceTraces,
  AllocatorSettings,
  ExternalAnnotations,
  // segments
  Device,
  Address,
  TotalSize,
  AllocatedSize,
  ActiveSize,
  RequestedSize,
  Stream,
  SegmentType,
  SegmentPoolId,
  IsExpandable,
  Frames,
  Blocks,
  // blocks
  Size,
  State,
  History,
  Addr,
  RealSize,
  // trace events
  Action,
  TimeUs,
  DeviceFree,
  CompileContext,
  UserMetadata,
  // frames
  Filename,
  Name,
  Line,
  FxNodeOp,
  FxNodeName,
  FxNodeTarget,
  FxOriginalTrace,
  // external annotations
  Stage,
};

constexpr std::pair<Field, std::string_view> kFieldNames[] = {
    {Field::Segments, "segments"},
    {Field::DeviceTraces, "device_traces"},
    {Field::AllocatorSettings, "allocator_settings"},
    {Field::ExternalAnnotations, "external_annotations"},
    {Field::Device, "device"},
    {Field::Address, "address"},
    {Field::TotalSize, "total_size"},
    {Field::AllocatedSize, "allocated_size"},
    {Field::ActiveSize, "active_size"},
    {Field::RequestedSize, "requested_size"},
    {Field::Stream, "stream"},
    {Field::SegmentType, "segment_type"},
    {Field::SegmentPoolId, "segment_pool_id"},
    {Field::IsExpandable, "is_expandable"},
    {Field::Frames, "frames"},
    {Field::Blocks, "blocks"},
    {Field::Size, "size"},
    {Field::State, "state"},
    {Field::History, "history"},
    {Field::Addr, "addr"},
    {Field::RealSize, "real_size"},
    {Field::Action, "action"},
    {Field::TimeUs, "time_us"},
    {Field::DeviceFree, "device_free"},
    {Field::CompileContext, "compile_context"},
    {Field::UserMetadata, "user_metadata"},
    {Field::Filename, "filename"},
    {Field::Name, "name"},
    {Field::Line, "line"},
    {Field::FxNodeOp, "fx_node_op"},
    {Field::FxNodeName, "fx_node_name"},
    {Field::FxNodeTarget, "fx_node_target"},
    {Field::FxOriginalTrace, "fx_original_trace"},
    {Field::Stage, "stage"},
};

constexpr std::pair<TraceAction, std::string_view> kActionNames[] = {
    {TraceAction::Alloc, "alloc"},
    {TraceAction::FreeRequested, "free_requested"},
    {TraceAction::FreeCompleted, "free_completed"},
    {TraceAction::Free, "free"},
    {TraceAction::SegmentAlloc, "segment_alloc"},
    {TraceAction::SegmentFree, "segment_free"},
    {TraceAction::SegmentMap, "segment_map"},
    {TraceAction::SegmentUnmap, "segment_unmap"},
    {TraceAction::Snapshot, "snapshot"},
    {TraceAction::Oom, "oom"},
};

// Where a value sits in the snapshot, formatted only when a diagnostic needs it.
enum class Section : uint8_t { Top, Segment, Block, Trace, Annotation, Settings };
struct Where {
  Section section = Section::Top;
  size_t i = 0;
  size_t j = 0;

  [[nodiscard]] std::string str() const {
    switch (section) {
      case Section::Top: return "snapshot";
      case Section::Segment: return "segments[" + std::to_string(i) + "]";
      case Section::Block: return "segments[" + std::to_string(i) + "].blocks[" + std::to_string(j) + "]";
      case Section::Trace: return "device_traces[" + std::to_string(i) + "][" + std::to_string(j) + "]";
      case Section::Annotation: return "external_annotations[" + std::to_string(i) + "]";
      case Section::Settings: return "allocator_settings";
    }
    return {};
  }
  [[nodiscard]] const char* sectionName() const {
    switch (section) {
      case Section::Top: return "the snapshot";
      case Section::Segment: return "segments";
      case Section::Block: return "blocks";
      case Section::Trace: return "trace events";
      case Section::Annotation: return "external annotations";
      case Section::Settings: return "allocator settings";
    }
    return "";
  }
};

// Replaces bytes that are not valid UTF-8 with U+FFFD; returns whether anything was replaced.
bool makeValidUtf8(std::string_view in, std::string& out) {
  out.clear();
  bool replaced = false;
  for (size_t i = 0; i < in.size();) {
    if (const size_t n = utf8SequenceLength(in, i)) {
      out.append(in.substr(i, n));
      i += n;
    } else {
      out += "\xef\xbf\xbd";
      replaced = true;
      ++i;
    }
  }
  return replaced;
}

bool isAsciiOnly(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

struct FrameHash {
  size_t operator()(const SnapshotFrame& f) const {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t v : {uint64_t{f.filename}, uint64_t{f.name}, static_cast<uint64_t>(f.line), uint64_t{f.fxNodeOp},
                       uint64_t{f.fxNodeName}, uint64_t{f.fxNodeTarget}, uint64_t{f.fxOriginalTrace}})
      h = (h ^ v) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

class SnapshotDecoder {
 public:
  SnapshotDecoder(const PickleDocument& doc, MemorySnapshot& out, const Progress& progress)
      : doc_(doc),
        out_(out),
        progress_(progress),
        cache_(doc.nodeCount(), 0),
        expanded_(doc.nodeCount(), false),
        decodedBytes_(budget("take", "bytes", doc.inputBytes(), kDecodedBytesPerPickleByte, kDecodedBytesFloor,
                             kMaxDecodedBytes)),
        dictEntries_(budget("read", "dict entries", doc.inputBytes(), kDictEntriesPerPickleByte, kDictEntriesFloor,
                            UINT64_MAX)) {
    for (const auto& [field, name] : kFieldNames) setTable(fieldByStr_, out_.strings.intern(name), field);
    for (const auto& [action, name] : kActionNames) setTable(actionByStr_, out_.strings.intern(name), action);
  }

  void decode() {
    const PyRef root = doc_.root();
    const Where top{};
    if (root.is(PyKind::List)) {
      // Before device traces existed, a snapshot was the bare list of segments.
      out_.diagnostics.note("snapshot_legacy_layout", "the snapshot is a bare list of segments (no device traces)",
                            {out_.source, 0});
      readSegments(root);
    } else if (root.is(PyKind::Dict)) {
      bool hasSegments = false, hasTraces = false;
      for (size_t i = 0; i < root.size(); ++i) {
        const PyRef value = root.value(i);
        switch (fieldOf(root.key(i))) {
          case Field::Segments:
            hasSegments = true;
            readSegments(value);
            break;
          case Field::DeviceTraces:
            hasTraces = true;
            readDeviceTraces(value);
            break;
          case Field::AllocatorSettings: readAllocatorSettings(value); break;
          case Field::ExternalAnnotations: readAnnotations(value); break;
          default: unknownField(root.key(i), top);
        }
      }
      if (!hasSegments && !hasTraces)
        throw Error(ErrorCode::BadInput, "not a CUDA memory snapshot: no 'segments' or 'device_traces'",
                    {out_.source, 0});
      if (!hasSegments) missing("segments", top);
      if (!hasTraces) missing("device_traces", top);
    } else {
      throw Error(ErrorCode::BadInput,
                  std::string("not a CUDA memory snapshot: the pickle holds a ") + pyKindName(root.kind()),
                  {out_.source, 0});
    }
    flushIssues();
  }

 private:
  // ---- diagnostics: one per kind of problem (code, section, field), with its first place and a count
  struct Issue {
    Severity severity = Severity::Warning;
    const char* code = "";
    std::string message;  // names the first place
    uint64_t count = 0;
  };
  template <typename MessageFn>
  void issue(Severity severity, const char* code, Section section, ir::StrId subject, MessageFn&& message) {
    auto [it, inserted] =
        issueIndex_.try_emplace(std::make_tuple(std::string_view(code), section, subject), issues_.size());
    if (inserted) issues_.push_back({severity, code, message(), 0});
    ++issues_[it->second].count;
  }
  void missing(std::string_view field, const Where& where) {
    issue(Severity::Warning, "snapshot_missing_field", where.section, out_.strings.intern(field),
          [&] { return where.str() + ": '" + std::string(field) + "' is missing"; });
  }
  void badField(std::string_view field, PyRef value, const Where& where, std::string_view expected) {
    issue(Severity::Warning, "snapshot_bad_field", where.section, out_.strings.intern(field), [&] {
      return where.str() + ": '" + std::string(field) + "' is " + pyRepr(value, 80) + ", expected " +
             std::string(expected);
    });
  }
  void unknownField(PyRef key, const Where& where) {
    const ir::StrId subject = key.is(PyKind::String) ? intern(key) : 0;
    issue(Severity::Note, "snapshot_unknown_field", where.section, subject, [&] {
      return where.str() + ": field " + pyRepr(key, 80) + " of " + where.sectionName() +
             " is not known to this reader (ignored)";
    });
  }
  void flushIssues() {
    for (auto& entry : issues_) {
      std::string message = std::move(entry.message);
      if (entry.count > 1) message += " (and " + std::to_string(entry.count - 1) + " more like it)";
      out_.diagnostics.add(entry.severity, entry.code, std::move(message), {out_.source, 0});
    }
  }

  // ---- the decoding budgets (see memory_snapshot.h)
  struct Budget {
    const char* verb;  // what decoding would do past the limit: "take more than N bytes"
    const char* unit;
    uint64_t limit;
    uint64_t left;
  };
  static Budget budget(const char* verb, const char* unit, uint64_t pickleBytes, uint64_t perByte, uint64_t floor,
                       uint64_t cap) {
    uint64_t scaled = 0;
    if (__builtin_mul_overflow(pickleBytes, perByte, &scaled)) scaled = UINT64_MAX;
    const uint64_t limit = std::min(cap, std::max(floor, scaled));
    return {verb, unit, limit, limit};
  }
  [[noreturn]] void refuse(const std::string& message) const {
    throw Error(ErrorCode::BadInput, "not a usable CUDA memory snapshot: " + message, {out_.source, 0});
  }
  static bool fits(const Budget& budget, uint64_t count, uint64_t unitSize) {
    uint64_t amount = 0;
    return !__builtin_mul_overflow(count, unitSize, &amount) && amount <= budget.left;
  }
  void take(Budget& budget, uint64_t count, uint64_t unitSize) {
    if (fits(budget, count, unitSize)) {
      budget.left -= count * unitSize;
      return;
    }
    std::string message = std::string("decoding it would ") + budget.verb + " more than " +
                          std::to_string(budget.limit) + " " + budget.unit + ", the limit for a pickle of " +
                          std::to_string(doc_.inputBytes()) + " bytes";
    if (!firstRepeat_.empty())
      message += ": the pickle refers to the same objects again and again through its memo (" +
                 std::to_string(repeats_) + " references so far, the first at " + firstRepeat_ +
                 ") and each reference is decoded anew";
    refuse(message + "; refused");
  }
  // Takes `count` items of `itemBytes` each out of the decoded bytes, before they are allocated.
  void charge(uint64_t count, uint64_t itemBytes) { take(decodedBytes_, count, itemBytes); }
  // The same for the items of a list about to be decoded. When they do not fit, the items the
  // list repeats are noted first, so that the refusal names them. `itemWhere(i)` formats item i.
  template <typename WhereFn>
  void chargeItems(PyRef list, uint64_t itemBytes, WhereFn&& itemWhere) {
    if (!fits(decodedBytes_, list.size(), itemBytes)) {
      for (size_t i = 0; i < list.size(); ++i)
        if (pyIsContainer(list.item(i).kind())) noteExpanded(list.item(i), [&] { return itemWhere(i); });
    }
    charge(list.size(), itemBytes);
  }
  // Counts the entries of a dict about to be read (a shared dict is read once per reference).
  void chargeEntries(PyRef dict) { take(dictEntries_, dict.size(), 1); }

  // Marks a container that decoding expands into materialized items; the first one the pickle
  // references a second time is named if the budget runs out. `where` formats its place.
  template <typename WhereFn>
  void noteExpanded(PyRef container, WhereFn&& where) {
    if (!expanded_[container.id()]) {
      expanded_[container.id()] = true;
      return;
    }
    if (repeats_++ == 0) firstRepeat_ = where();
  }

  // ---- strings and keys
  template <typename T>
  static void setTable(std::vector<T>& table, ir::StrId id, T value) {
    if (table.size() <= id) table.resize(id + 1, T{});
    table[id] = value;
  }
  ir::StrId intern(PyRef s) {
    uint32_t& cached = cache_[s.id()];
    if (cached) return cached - 1;
    const std::string_view text = s.text();
    ir::StrId id = 0;
    if (isAsciiOnly(text) || !makeValidUtf8(text, scratch_)) {
      id = out_.strings.intern(text);
    } else {
      id = out_.strings.intern(scratch_);
      issue(Severity::Warning, "snapshot_bad_utf8", Section::Top, 0,
            [&] { return "a string is not valid UTF-8; invalid bytes were replaced: " + pyRepr(s, 80); });
    }
    cached = id + 1;
    return id;
  }
  Field fieldOf(PyRef key) {
    if (!key.is(PyKind::String)) return Field::Unknown;
    const ir::StrId id = intern(key);
    return id < fieldByStr_.size() ? fieldByStr_[id] : Field::Unknown;
  }
  std::string_view fieldName(Field field) const {
    for (const auto& [f, name] : kFieldNames)
      if (f == field) return name;
    return "?";
  }

  // ---- typed field readers: on a wrong type they report and leave `out` unchanged
  void readU64(PyRef v, Field field, const Where& where, uint64_t& out) {
    if (auto x = v.asUint64()) {
      out = *x;
      return;
    }
    badField(fieldName(field), v, where, "a non-negative int");
  }
  void readI64(PyRef v, Field field, const Where& where, int64_t& out) {
    if (v.is(PyKind::Int) || v.is(PyKind::Bool)) {
      out = *v.asInt();
      return;
    }
    if (auto x = v.asUint64()) {  // a stream handle above 2^63 keeps its bits
      out = static_cast<int64_t>(*x);
      return;
    }
    badField(fieldName(field), v, where, "an int");
  }
  void readBool(PyRef v, Field field, const Where& where, bool& out) {
    if (auto b = v.asBool()) {
      out = *b;
      return;
    }
    if (auto i = v.asInt()) {
      out = *i != 0;
      return;
    }
    badField(fieldName(field), v, where, "a bool");
  }
  void readStr(PyRef v, Field field, const Where& where, ir::StrId& out) {
    if (v.is(PyKind::String)) {
      out = intern(v);
      return;
    }
    badField(fieldName(field), v, where, "a str");
  }
  // Whether v is a list (or a tuple); reports it when not.
  bool expectSequence(PyRef v, Field field, const Where& where) {
    if (v.is(PyKind::List) || v.is(PyKind::Tuple)) return true;
    badField(fieldName(field), v, where, "a list");
    return false;
  }
  bool expectDict(PyRef v, std::string_view what, const Where& where) {
    if (v.is(PyKind::Dict)) return true;
    issue(Severity::Warning, "snapshot_bad_field", where.section, 0,
          [&] { return where.str() + ": " + std::string(what) + " is " + pyRepr(v, 80) + ", expected a dict"; });
    return false;
  }

  // ---- frames and stacks
  uint32_t frameOf(PyRef f, const Where& where) {
    if (!f.is(PyKind::Dict)) {
      issue(Severity::Warning, "snapshot_bad_field", where.section, 0,
            [&] { return where.str() + ": a frame is " + pyRepr(f, 80) + ", expected a dict"; });
      return kNoFrame;
    }
    uint32_t& cached = cache_[f.id()];
    if (cached) return cached - 1;
    charge(1, sizeof(SnapshotFrame));
    chargeEntries(f);
    SnapshotFrame frame;
    for (size_t i = 0; i < f.size(); ++i) {
      const PyRef v = f.value(i);
      const Field field = fieldOf(f.key(i));
      switch (field) {
        case Field::Filename: readStr(v, field, where, frame.filename); break;
        case Field::Name: readStr(v, field, where, frame.name); break;
        case Field::Line: readI64(v, field, where, frame.line); break;
        case Field::FxNodeOp: readStr(v, field, where, frame.fxNodeOp); break;
        case Field::FxNodeName: readStr(v, field, where, frame.fxNodeName); break;
        case Field::FxNodeTarget: readStr(v, field, where, frame.fxNodeTarget); break;
        case Field::FxOriginalTrace: readStr(v, field, where, frame.fxOriginalTrace); break;
        default: unknownField(f.key(i), where);
      }
    }
    auto [it, inserted] = frameIds_.try_emplace(frame, static_cast<uint32_t>(out_.frames.size()));
    if (inserted) out_.frames.push_back(frame);
    cached = it->second + 1;
    return it->second;
  }

  SnapshotStackId stackOf(PyRef list, Field field, const Where& where) {
    if (!expectSequence(list, field, where) || list.size() == 0) return 0;
    uint32_t& cached = cache_[list.id()];  // cache_ never grows, so the reference stays valid
    if (cached) return cached - 1;
    charge(list.size(), sizeof(uint32_t));
    frameScratch_.clear();
    for (size_t i = 0; i < list.size(); ++i) {
      const uint32_t frame = frameOf(list.item(i), where);
      if (frame != kNoFrame) frameScratch_.push_back(frame);
    }
    const SnapshotStackId id = internStack();
    cached = id + 1;
    return id;
  }

  SnapshotStackId internStack() {
    if (frameScratch_.empty()) return 0;
    uint64_t h = 1469598103934665603ull;
    for (uint32_t f : frameScratch_) h = (h ^ f) * 1099511628211ull;
    auto range = stackIds_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      const auto existing = out_.stack(it->second);
      if (std::equal(existing.begin(), existing.end(), frameScratch_.begin(), frameScratch_.end())) return it->second;
    }
    const auto id = static_cast<SnapshotStackId>(out_.stackCount());
    out_.stackFrames.insert(out_.stackFrames.end(), frameScratch_.begin(), frameScratch_.end());
    out_.stackOffsets.push_back(static_cast<uint32_t>(out_.stackFrames.size()));
    stackIds_.emplace(h, id);
    return id;
  }

  // ---- segments and blocks
  void readSegments(PyRef list) {
    if (!expectSequence(list, Field::Segments, Where{})) return;
    noteExpanded(list, [] { return std::string("segments"); });
    chargeItems(list, sizeof(SnapshotSegment), [](size_t i) { return Where{Section::Segment, i}.str(); });
    if (out_.segments.empty()) out_.segments.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      const Where where{Section::Segment, i};
      const PyRef s = list.item(i);
      if (!expectDict(s, "the segment", where)) continue;
      noteExpanded(s, [&] { return where.str(); });
      chargeEntries(s);
      SnapshotSegment seg;
      PyRef blocks;
      bool seen[4] = {};  // device, address, total_size, blocks
      for (size_t k = 0; k < s.size(); ++k) {
        const PyRef v = s.value(k);
        const Field field = fieldOf(s.key(k));
        switch (field) {
          case Field::Device:
            seen[0] = true;
            readI64(v, field, where, seg.device);
            break;
          case Field::Address:
            seen[1] = true;
            readU64(v, field, where, seg.address);
            break;
          case Field::TotalSize:
            seen[2] = true;
            readU64(v, field, where, seg.totalSize);
            break;
          case Field::AllocatedSize: readU64(v, field, where, seg.allocatedSize); break;
          case Field::ActiveSize: readU64(v, field, where, seg.activeSize); break;
          case Field::RequestedSize: readU64(v, field, where, seg.requestedSize); break;
          case Field::Stream: readI64(v, field, where, seg.stream); break;
          case Field::SegmentType: {
            ir::StrId type = 0;
            readStr(v, field, where, type);
            const std::string_view t = out_.str(type);
            seg.type = t == "large" ? SegmentType::Large : t == "small" ? SegmentType::Small : SegmentType::Unknown;
            if (seg.type == SegmentType::Unknown && type != 0) badField("segment_type", v, where, "'large' or 'small'");
            break;
          }
          case Field::SegmentPoolId:
            if ((v.is(PyKind::Tuple) || v.is(PyKind::List)) && v.size() == 2 && v.item(0).asInt() && v.item(1).asInt())
              seg.poolId = {*v.item(0).asInt(), *v.item(1).asInt()};
            else
              badField("segment_pool_id", v, where, "a pair of ints");
            break;
          case Field::IsExpandable: readBool(v, field, where, seg.isExpandable); break;
          case Field::Frames: seg.frames = stackOf(v, field, where); break;
          case Field::Blocks:
            seen[3] = true;
            blocks = v;
            break;
          default: unknownField(s.key(k), where);
        }
      }
      if (!seen[0]) missing("device", where);
      if (!seen[1]) missing("address", where);
      if (!seen[2]) missing("total_size", where);
      if (!seen[3]) missing("blocks", where);
      if (blocks) readBlocks(blocks, seg, i);
      if (segmentDevices_.insert(seg.device).second && segmentDevices_.size() > kMaxSnapshotDevices)
        refuse("its segments name more than " + std::to_string(kMaxSnapshotDevices) + " devices");
      out_.segments.push_back(std::move(seg));
    }
  }

  void readBlocks(PyRef list, SnapshotSegment& seg, size_t segIndex) {
    if (!expectSequence(list, Field::Blocks, Where{Section::Segment, segIndex})) return;
    noteExpanded(list, [&] { return Where{Section::Segment, segIndex}.str() + ".blocks"; });
    chargeItems(list, sizeof(SnapshotBlock), [&](size_t j) { return Where{Section::Block, segIndex, j}.str(); });
    seg.blocks.reserve(list.size());
    uint64_t running = seg.address;
    for (size_t j = 0; j < list.size(); ++j) {
      const Where where{Section::Block, segIndex, j};
      const PyRef b = list.item(j);
      if (!expectDict(b, "the block", where)) continue;
      noteExpanded(b, [&] { return where.str(); });
      chargeEntries(b);
      SnapshotBlock block;
      block.address = running;
      bool hasAddress = false, hasSize = false, hasState = false, hasRequested = false, hasFrames = false;
      PyRef history;
      for (size_t k = 0; k < b.size(); ++k) {
        const PyRef v = b.value(k);
        const Field field = fieldOf(b.key(k));
        switch (field) {
          case Field::Address:
            hasAddress = true;
            readU64(v, field, where, block.address);
            break;
          case Field::Size:
            hasSize = true;
            readU64(v, field, where, block.size);
            break;
          case Field::RequestedSize:
            hasRequested = true;
            readU64(v, field, where, block.requestedSize);
            break;
          case Field::State: {
            hasState = true;
            ir::StrId state = 0;
            readStr(v, field, where, state);
            const std::string_view s = out_.str(state);
            block.state = s == "active_allocated"      ? BlockState::ActiveAllocated
                          : s == "active_pending_free" ? BlockState::ActivePendingFree
                          : s == "inactive"            ? BlockState::Inactive
                                                       : BlockState::Unknown;
            if (block.state == BlockState::Unknown && state != 0)
              badField("state", v, where, "'active_allocated', 'active_pending_free' or 'inactive'");
            break;
          }
          case Field::Frames:
            hasFrames = true;
            block.frames = stackOf(v, field, where);
            break;
          case Field::History: history = v; break;
          default: unknownField(b.key(k), where);
        }
      }
      if (!hasSize) missing("size", where);
      if (!hasState) missing("state", where);
      if (hasAddress && block.address != running) {
        issue(Severity::Warning, "snapshot_block_address", Section::Block, 0, [&] {
          return where.str() + ": block address " + std::to_string(block.address) +
                 " is not where the blocks before it end (" + std::to_string(running) + ")";
        });
      }
      if (history) readHistory(history, block, where);
      // Legacy blocks carry their frames and requested size in history[0] (as MemoryViz reads them).
      if (block.historyCount > 0) {
        const SnapshotBlockHistory& first = out_.blockHistory[block.historyBegin];
        if (!hasFrames) block.frames = first.frames;
        if (!hasRequested) block.requestedSize = first.realSize;
      } else if (!hasRequested) {
        block.requestedSize = block.size;
      }
      running = block.address + block.size;
      seg.blocks.push_back(block);
    }
    if (!seg.blocks.empty() && running - seg.address != seg.totalSize) {
      issue(Severity::Warning, "snapshot_blocks_do_not_tile", Section::Segment, 0, [&] {
        return Where{Section::Segment, segIndex}.str() + ": blocks cover " + std::to_string(running - seg.address) +
               " bytes of a " + std::to_string(seg.totalSize) + "-byte segment";
      });
    }
  }

  void readHistory(PyRef list, SnapshotBlock& block, const Where& where) {
    if (!expectSequence(list, Field::History, where)) return;
    noteExpanded(list, [&] { return where.str() + ".history"; });
    chargeItems(list, sizeof(SnapshotBlockHistory),
                [&](size_t h) { return where.str() + ".history[" + std::to_string(h) + "]"; });
    block.historyBegin = static_cast<uint32_t>(out_.blockHistory.size());
    for (size_t h = 0; h < list.size(); ++h) {
      const PyRef e = list.item(h);
      if (!expectDict(e, "a history entry", where)) continue;
      chargeEntries(e);
      SnapshotBlockHistory entry;
      for (size_t k = 0; k < e.size(); ++k) {
        const PyRef v = e.value(k);
        const Field field = fieldOf(e.key(k));
        switch (field) {
          case Field::Addr: readU64(v, field, where, entry.addr); break;
          case Field::RealSize: readU64(v, field, where, entry.realSize); break;
          case Field::Frames: entry.frames = stackOf(v, field, where); break;
          default: unknownField(e.key(k), where);
        }
      }
      out_.blockHistory.push_back(entry);
      ++block.historyCount;
    }
  }

  // ---- device traces
  TraceAction actionOf(PyRef v, const Where& where, ir::StrId& name) {
    if (!v.is(PyKind::String)) {
      badField("action", v, where, "a str");
      return TraceAction::Unknown;
    }
    name = intern(v);
    const TraceAction action = name < actionByStr_.size() ? actionByStr_[name] : TraceAction::Unknown;
    if (action == TraceAction::Unknown) {
      issue(Severity::Warning, "snapshot_unknown_action", Section::Trace, name,
            [&] { return where.str() + ": unknown action '" + std::string(out_.str(name)) + "' (kept as unknown)"; });
    }
    return action;
  }

  void readDeviceTraces(PyRef devices) {
    if (!expectSequence(devices, Field::DeviceTraces, Where{})) return;
    if (devices.size() > kMaxSnapshotDevices)
      refuse("device_traces lists " + std::to_string(devices.size()) + " devices, more than the " +
             std::to_string(kMaxSnapshotDevices) + " a snapshot can have" +
             (devices.item(0).is(PyKind::List) && devices.item(0).id() == devices.item(1).id()
                  ? " (its pickle refers to one trace again and again through its memo)"
                  : ""));
    noteExpanded(devices, [] { return std::string("device_traces"); });
    out_.deviceTraces.resize(devices.size());
    size_t done = 0;
    for (size_t d = 0; d < devices.size(); ++d) {
      const PyRef trace = devices.item(d);
      if (!expectSequence(trace, Field::DeviceTraces, Where{Section::Trace, d})) continue;
      noteExpanded(trace, [&] { return "device_traces[" + std::to_string(d) + "]"; });
      chargeItems(trace, sizeof(AllocatorEvent), [&](size_t j) { return Where{Section::Trace, d, j}.str(); });
      auto& events = out_.deviceTraces[d];
      if (events.empty()) events.reserve(trace.size());
      for (size_t j = 0; j < trace.size(); ++j, ++done) {
        if (done % 65536 == 0) progress_.checkCancelled();
        const Where where{Section::Trace, d, j};
        const PyRef e = trace.item(j);
        if (!expectDict(e, "the event", where)) continue;
        noteExpanded(e, [&] { return where.str(); });
        chargeEntries(e);
        AllocatorEvent ev;
        bool hasAction = false, hasAddr = false, hasSize = false;
        ir::StrId actionName = 0;
        for (size_t k = 0; k < e.size(); ++k) {
          const PyRef v = e.value(k);
          const Field field = fieldOf(e.key(k));
          switch (field) {
            case Field::Action:
              hasAction = true;
              ev.action = actionOf(v, where, actionName);
              break;
            case Field::Addr:
              hasAddr = true;
              readU64(v, field, where, ev.addr);
              break;
            case Field::Size:
              hasSize = true;
              readU64(v, field, where, ev.size);
              break;
            case Field::Stream: readI64(v, field, where, ev.stream); break;
            case Field::TimeUs:
              readI64(v, field, where, ev.timeUs);
              out_.hasTimes = true;
              break;
            case Field::DeviceFree: readU64(v, field, where, ev.deviceFree); break;
            case Field::Frames: ev.frames = stackOf(v, field, where); break;
            case Field::CompileContext: readStr(v, field, where, ev.compileContext); break;
            case Field::UserMetadata: readStr(v, field, where, ev.userMetadata); break;
            default: unknownField(e.key(k), where);
          }
        }
        if (ev.action == TraceAction::Unknown) ev.actionName = actionName;
        if (!hasAction) missing("action", where);
        const bool needsAddr = ev.action != TraceAction::Oom && ev.action != TraceAction::Snapshot;
        if (!hasAddr && needsAddr) missing("addr", where);
        if (!hasSize && ev.action != TraceAction::Snapshot) missing("size", where);
        events.push_back(ev);
      }
    }
  }

  // ---- allocator settings and external annotations
  void readAllocatorSettings(PyRef settings) {
    const Where where{Section::Settings};
    if (!expectDict(settings, "allocator_settings", where)) return;
    out_.hasAllocatorSettings = true;
    noteExpanded(settings, [] { return std::string("allocator_settings"); });
    for (size_t i = 0; i < settings.size(); ++i) {
      const PyRef k = settings.key(i);
      // Each repr is bounded, so charging after making it overshoots the budget by little.
      auto& [name, value] = out_.allocatorSettings.emplace_back(
          k.is(PyKind::String) ? std::string(k.text()) : pyRepr(k, 200), pyRepr(settings.value(i), 4096));
      charge(1, sizeof(out_.allocatorSettings[0]) + name.size() + value.size());
    }
  }

  void readAnnotations(PyRef list) {
    if (!expectSequence(list, Field::ExternalAnnotations, Where{})) return;
    noteExpanded(list, [] { return std::string("external_annotations"); });
    chargeItems(list, sizeof(ExternalAnnotation), [](size_t i) { return Where{Section::Annotation, i}.str(); });
    if (out_.externalAnnotations.empty()) out_.externalAnnotations.reserve(list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      const Where where{Section::Annotation, i};
      const PyRef a = list.item(i);
      if (!expectDict(a, "the annotation", where)) continue;
      chargeEntries(a);
      ExternalAnnotation ann;
      for (size_t k = 0; k < a.size(); ++k) {
        const PyRef v = a.value(k);
        const Field field = fieldOf(a.key(k));
        switch (field) {
          case Field::Stage: readStr(v, field, where, ann.stage); break;
          case Field::Name: readStr(v, field, where, ann.name); break;
          case Field::Device: readI64(v, field, where, ann.device); break;
          case Field::TimeUs: readI64(v, field, where, ann.timeUs); break;
          default: unknownField(a.key(k), where);
        }
      }
      out_.externalAnnotations.push_back(ann);
    }
  }

  const PickleDocument& doc_;
  MemorySnapshot& out_;
  const Progress& progress_;
  // Per pickle node: what it decoded to, plus one (0 = not yet): a StrId for a str, a frame index
  // for a frame dict, a stack id for a frames list. Shared pickle objects are decoded once.
  std::vector<uint32_t> cache_;
  std::vector<bool> expanded_;  // per pickle node: a container already expanded (noteExpanded)
  uint64_t repeats_ = 0;
  std::string firstRepeat_;
  Budget decodedBytes_;
  Budget dictEntries_;
  std::unordered_set<int64_t> segmentDevices_;
  std::vector<Field> fieldByStr_;
  std::vector<TraceAction> actionByStr_;
  std::unordered_map<SnapshotFrame, uint32_t, FrameHash> frameIds_;
  std::unordered_multimap<uint64_t, SnapshotStackId> stackIds_;
  std::vector<uint32_t> frameScratch_;
  std::string scratch_;
  std::vector<Issue> issues_;
  std::map<std::tuple<std::string_view, Section, ir::StrId>, size_t> issueIndex_;
};

}  // namespace

MemorySnapshot decodeMemorySnapshot(std::string bytes, std::string sourceName, const Progress& progress) {
  MemorySnapshot snapshot;
  snapshot.source = std::move(sourceName);
  const PickleDocument doc = unpickle(std::move(bytes), snapshot.source, progress);
  SnapshotDecoder(doc, snapshot, progress).decode();
  return snapshot;
}

MemorySnapshot loadMemorySnapshot(const std::filesystem::path& path, const Progress& progress) {
  // Progress runs over twice the file size: reading it, then decoding it.
  Progress reading;
  reading.cancel = progress.cancel;
  if (progress.report)
    reading.report = [&progress](uint64_t done, uint64_t total) {
      progress.report(done, 2 * std::max<uint64_t>(total, 1));
    };
  std::string bytes = readFile(path, kMaxSnapshotBytes, reading);
  std::error_code ec;
  const uint64_t onDisk = std::filesystem::file_size(path, ec);
  const uint64_t fileSize = ec ? 1 : std::max<uint64_t>(onDisk, 1);
  Progress decoding;
  decoding.cancel = progress.cancel;
  if (progress.report) {
    const double scale = static_cast<double>(fileSize) / static_cast<double>(std::max<size_t>(bytes.size(), 1));
    decoding.report = [&progress, fileSize, scale](uint64_t done, uint64_t) {
      progress.report(fileSize + static_cast<uint64_t>(static_cast<double>(done) * scale), 2 * fileSize);
    };
  }
  return decodeMemorySnapshot(std::move(bytes), path.string(), decoding);
}

}  // namespace lathe::io
