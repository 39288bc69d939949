#include "io/snapshot/detail/pickle.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "util/diagnostics.h"

namespace lathe::io {

namespace {

// Opcodes, as named in CPython's Lib/pickle.py.
enum Op : uint8_t {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kPopMark = '1',
  kDup = '2',
  kFloat = 'F',
  kInt = 'I',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kLong = 'L',
  kBinInt2 = 'M',
  kNone = 'N',
  kPersId = 'P',
  kBinPersId = 'Q',
  kReduce = 'R',
  kString = 'S',
  kBinString = 'T',
  kShortBinString = 'U',
  kUnicode = 'V',
  kBinUnicode = 'X',
  kAppend = 'a',
  kBuild = 'b',
  kGlobal = 'c',
  kDict = 'd',
  kEmptyDict = '}',
  kAppends = 'e',
  kGet = 'g',
  kBinGet = 'h',
  kInst = 'i',
  kLongBinGet = 'j',
  kList = 'l',
  kEmptyList = ']',
  kObj = 'o',
  kPut = 'p',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kEmptyTuple = ')',
  kSetItems = 'u',
  kBinFloat = 'G',
  kBinBytes = 'B',
  kShortBinBytes = 'C',
  kProto = 0x80,
  kNewObj = 0x81,
  kExt1 = 0x82,
  kExt2 = 0x83,
  kExt4 = 0x84,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kLong4 = 0x8b,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kBinBytes8 = 0x8e,
  kEmptySet = 0x8f,
  kAddItems = 0x90,
  kFrozenSet = 0x91,
  kNewObjEx = 0x92,
  kStackGlobal = 0x93,
  kMemoize = 0x94,
  kFrame = 0x95,
  kByteArray8 = 0x96,
  kNextBuffer = 0x97,
  kReadonlyBuffer = 0x98,
};

constexpr int kHighestProtocol = 5;
constexpr uint32_t kNone32 = UINT32_MAX;
// Keeps every child count (dict: 2 per pair) within uint32.
constexpr uint32_t kMaxContainerItems = uint32_t{1} << 30;
constexpr size_t kProgressStride = size_t{4} << 20;
// Every document starts with the None, False and True singletons and the ints 0..255 (BININT1's
// range: line numbers, streams, small sizes), which are shared as Python shares them.
constexpr uint32_t kNoneNode = 0, kFalseNode = 1, kTrueNode = 2, kSmallIntNodes = 3;
// Node::flags while decoding: the container has been put inside another container; its children
// are in several runs.
constexpr uint8_t kPlaced = 1, kMultiRun = 2;

// Printable excerpt of a name taken from the input, for error messages.
std::string printable(std::string_view s) {
  constexpr size_t kMax = 200;
  std::string out;
  for (char c : s.substr(0, kMax)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > kMax) out += "...";
  return out;
}

// Sign-extends a little-endian two's complement integer of n bytes; false when it does not fit.
bool decodeLongToInt64(const uint8_t* bytes, size_t n, int64_t& out) {
  if (n == 0) {
    out = 0;
    return true;
  }
  const bool negative = (bytes[n - 1] & 0x80) != 0;
  if (n > 8) {
    const uint8_t fill = negative ? 0xff : 0x00;
    for (size_t i = 8; i < n; ++i)
      if (bytes[i] != fill) return false;
    if (((bytes[7] & 0x80) != 0) != negative) return false;
  }
  uint64_t v = 0;
  const size_t used = std::min<size_t>(n, 8);
  for (size_t i = 0; i < used; ++i) v |= uint64_t{bytes[i]} << (8 * i);
  if (used < 8 && negative) v |= ~uint64_t{0} << (8 * used);
  out = std::bit_cast<int64_t>(v);
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Unpickler

class Unpickler {
 public:
  Unpickler(std::string data, std::string_view sourceName, const Progress& progress, const UnpickleLimits& limits)
      : source_(sourceName), progress_(progress), limits_(limits) {
    limits_.maxDepth = std::min<uint32_t>(limits_.maxDepth, UINT16_MAX);  // heights are 16-bit
    doc_.data_ = std::move(data);
    begin_ = reinterpret_cast<const uint8_t*>(doc_.data_.data());
    p_ = begin_;
    end_ = begin_ + doc_.data_.size();
    // Snapshots hold a value per 13-45 bytes and a child slot per 3-5: reserving for the dense
    // end keeps big files from regrowing (copying) these arrays; untouched pages cost nothing.
    doc_.nodes_.reserve(doc_.data_.size() / 12 + 16);
    staging_.reserve(doc_.data_.size() / 3 + 16);
    newNode(PyKind::None, 0, 0);
    newNode(PyKind::Bool, 0, 0);
    newNode(PyKind::Bool, 0, 1);
    for (uint64_t v = 0; v < 256; ++v) newNode(PyKind::Int, 0, v);
  }

  PickleDocument run() {
    doc_.root_ = decode();
    layOutChildren();
    if (needFullCheck_) checkDepth();
    progress_.update(doc_.data_.size(), doc_.data_.size());
    return std::move(doc_);
  }

 private:
  // A run of children of one container in staging_; a kMultiRun container's runs form a linked list.
  struct Run {
    uint64_t start = 0;
    uint32_t count = 0;
    uint32_t next = kNone32;
  };

  [[noreturn, gnu::cold, gnu::noinline]] void fail(const std::string& message) const {
    throw Error(ErrorCode::BadInput,
                "unreadable pickle: " + message + " (opcode at byte " + std::to_string(opStart_) + ")", {source_, 0});
  }
  [[noreturn]] void truncated() const { fail("data ends in the middle of an opcode (truncated file?)"); }

  void need(uint64_t n) const {
    if (static_cast<uint64_t>(end_ - p_) < n) truncated();
  }
  uint8_t u8() {
    need(1);
    return *p_++;
  }
  uint64_t uintLE(size_t n) {
    need(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{p_[i]} << (8 * i);
    p_ += n;
    return v;
  }
  int32_t i32() { return std::bit_cast<int32_t>(static_cast<uint32_t>(uintLE(4))); }
  // Offset of the next n bytes in data_, after checking that they exist.
  uint64_t take(uint64_t n) {
    need(n);
    const auto offset = static_cast<uint64_t>(p_ - begin_);
    p_ += n;
    return offset;
  }
  // A line for GLOBAL/INST (only read to name the class in the refusal).
  std::string_view line() {
    const void* nl = std::memchr(p_, '\n', static_cast<size_t>(end_ - p_));
    if (!nl) truncated();
    std::string_view s(reinterpret_cast<const char*>(p_), static_cast<size_t>(static_cast<const uint8_t*>(nl) - p_));
    p_ = static_cast<const uint8_t*>(nl) + 1;
    return s;
  }

  uint32_t newNode(PyKind kind, uint32_t size, uint64_t payload) {
    if (doc_.nodes_.size() >= kNone32 - 1) fail("more values than this reader supports");
    doc_.nodes_.push_back({kind, 0, 0, size, payload});
    return static_cast<uint32_t>(doc_.nodes_.size() - 1);
  }
  uint32_t newContainer(PyKind kind) {
    const uint32_t id = newNode(kind, 0, 0);
    doc_.nodes_[id].height = 1;
    return id;
  }
  uint32_t newBlob(PyKind kind, uint64_t length) {
    need(length);
    if (length > UINT32_MAX) fail("a str or bytes value of " + std::to_string(length) + " bytes is too long");
    const uint64_t offset = take(length);
    return newNode(kind, static_cast<uint32_t>(length), offset);
  }

  // Appends n child slots (items, or key/value pairs for a dict) to a container; `added` is the
  // number of items or pairs they make.
  void appendChildren(uint32_t container, const uint32_t* children, size_t n, size_t added) {
    auto& nodes = doc_.nodes_;
    if (nodes[container].size + added > kMaxContainerItems)
      fail("a container holds more items than this reader supports");
    if (n == 0) return;
    // Nesting: a container's height is 1 + its deepest child's. Heights stay exact while nothing
    // is added to a container after it was placed in another (pickle.dump never does that); a
    // pickle that does gets the full check after decoding. Heights never overestimate, so
    // exceeding the limit here is always real.
    if (nodes[container].flags & kPlaced) needFullCheck_ = true;
    uint32_t height = nodes[container].height;
    for (size_t i = 0; i < n; ++i) {
      PickleDocument::Node& child = nodes[children[i]];
      if (!pyIsContainer(child.kind)) continue;
      if (children[i] == container) fail("a container contains itself (reference cycle)");
      child.flags |= kPlaced;
      height = std::max<uint32_t>(height, child.height + 1u);
    }
    if (height > limits_.maxDepth) failTooDeep();
    PickleDocument::Node& node = nodes[container];
    node.height = static_cast<uint16_t>(height);
    // Children go to the end of staging_. A container whose children are all contiguous there
    // (the usual case) keeps just their start in payload; one whose appends were interleaved with
    // others' switches to a linked list of runs (kMultiRun, payload = first << 32 | last).
    const uint64_t end = staging_.size();
    if (!(node.flags & kMultiRun)) {
      const uint64_t held = slots(node);
      if (held == 0) {
        node.payload = end;
      } else if (node.payload + held != end) {
        const uint32_t first = newRun(node.payload, held);
        const uint32_t second = newRun(end, n);
        runs_[first].next = second;
        node.flags |= kMultiRun;
        node.payload = (uint64_t{first} << 32) | second;
      }
    } else {
      const auto last = static_cast<uint32_t>(node.payload);
      if (runs_[last].start + runs_[last].count == end) {
        runs_[last].count += static_cast<uint32_t>(n);
      } else {
        const uint32_t run = newRun(end, n);
        runs_[last].next = run;
        node.payload = (node.payload & ~uint64_t{UINT32_MAX}) | run;
      }
    }
    staging_.insert(staging_.end(), children, children + n);
    node.size += static_cast<uint32_t>(added);
  }
  uint32_t newRun(uint64_t start, uint64_t count) {
    if (runs_.size() >= kNone32) fail("more container updates than this reader supports");
    runs_.push_back({start, static_cast<uint32_t>(count), kNone32});
    return static_cast<uint32_t>(runs_.size() - 1);
  }
  static uint64_t slots(const PickleDocument::Node& node) {
    return node.kind == PyKind::Dict ? uint64_t{node.size} * 2 : uint64_t{node.size};
  }

  // Stack access respects the current mark: items below it belong to an enclosing construct.
  size_t fence() const { return marks_.empty() ? 0 : marks_.back(); }
  void requireItems(size_t n) const {
    if (stack_.size() < fence() + n) fail("stack underflow");
  }
  uint32_t pop() {
    requireItems(1);
    const uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  uint32_t top() const {
    requireItems(1);
    return stack_.back();
  }
  size_t popMark() {
    if (marks_.empty()) fail("no MARK before a mark-terminated opcode");
    const size_t mark = marks_.back();
    marks_.pop_back();
    return mark;
  }
  // The object below the items of a just-popped mark (the target of APPENDS, SETITEMS, ADDITEMS).
  uint32_t targetBelowMark(size_t mark, PyKind expected, const char* opName) const {
    if (mark == 0 || mark - 1 < fence()) fail("stack underflow");
    const uint32_t target = stack_[mark - 1];
    const PyKind kind = doc_.nodes_[target].kind;
    if (kind != expected) fail(std::string(opName) + " applied to a " + pyKindName(kind));
    return target;
  }
  void buildFromMark(PyKind kind) {
    const size_t mark = popMark();
    const size_t n = stack_.size() - mark;
    if (kind == PyKind::Dict && n % 2 != 0) fail("odd number of items for a dict");
    const uint32_t node = newContainer(kind);
    appendChildren(node, stack_.data() + mark, n, kind == PyKind::Dict ? n / 2 : n);
    stack_.resize(mark);
    stack_.push_back(node);
  }
  void buildTuple(size_t n) {
    requireItems(n);
    const uint32_t node = newContainer(PyKind::Tuple);
    appendChildren(node, stack_.data() + stack_.size() - n, n, n);
    stack_.resize(stack_.size() - n);
    stack_.push_back(node);
  }

  void memoPut(uint64_t index, uint32_t value) {
    if (index < memo_.size()) {
      if (memo_[index] == kNone32) ++memoCount_;
      memo_[index] = value;
    } else if (index <= 2 * memoCount_ + 1024) {
      // Dense while the table stays proportional to the entries actually stored.
      memo_.resize(index + 1, kNone32);
      memo_[index] = value;
      ++memoCount_;
    } else {
      auto [it, inserted] = sparseMemo_.try_emplace(index, value);
      if (inserted)
        ++memoCount_;
      else
        it->second = value;
    }
    if (memoCount_ > limits_.maxMemoEntries) fail("more memo entries than the limit");
  }
  uint32_t memoGet(uint64_t index) const {
    if (index < memo_.size() && memo_[index] != kNone32) return memo_[index];
    return sparseMemoGet(index);
  }
  uint32_t sparseMemoGet(uint64_t index) const {
    if (auto it = sparseMemo_.find(index); it != sparseMemo_.end()) return it->second;
    fail("memo entry " + std::to_string(index) + " was never stored");
  }
  [[noreturn]] void failTooDeep() const {
    fail("containers nested deeper than " + std::to_string(limits_.maxDepth) + " levels");
  }

  uint32_t decodeLong(uint64_t n) {
    if (n > limits_.maxBigIntBytes) fail("an integer of " + std::to_string(n) + " bytes is larger than the limit");
    const uint64_t offset = take(n);
    int64_t value = 0;
    if (decodeLongToInt64(begin_ + offset, n, value)) return newNode(PyKind::Int, 0, std::bit_cast<uint64_t>(value));
    return newNode(PyKind::BigInt, static_cast<uint32_t>(n), offset);
  }

  [[noreturn]] void refuseClass(std::string_view module, std::string_view name, const char* opName) const {
    fail("pickle names a class: " + printable(module) + "." + printable(name) + " (" + opName +
         "); only plain data is accepted, nothing is imported or executed");
  }
  [[noreturn]] void refuseCode(const char* opName) const {
    fail(std::string("pickle calls code (") + opName + "); only plain data is accepted, nothing is executed");
  }

  void reportProgress() {
    progress_.update(static_cast<uint64_t>(p_ - begin_), doc_.data_.size());
    progress_.checkCancelled();
    nextReport_ = p_ + std::min<size_t>(kProgressStride, static_cast<size_t>(end_ - p_));
  }

  uint32_t decode() {
    nextReport_ = begin_;
    for (;;) {
      if (p_ >= nextReport_) reportProgress();
      opStart_ = static_cast<uint64_t>(p_ - begin_);
      if (p_ == end_) fail("data ends before the STOP opcode (truncated file?)");
      const uint8_t op = *p_++;
      switch (op) {
        case kProto: {
          const uint8_t version = u8();
          if (version > kHighestProtocol) fail("unsupported protocol " + std::to_string(version));
          doc_.protocol_ = version;
          break;
        }
        case kFrame: {
          // Frames only tell the writer's buffering; the opcodes inside are read as usual.
          const uint64_t length = uintLE(8);
          need(length);
          break;
        }
        case kStop: return pop();
        case kMark: marks_.push_back(stack_.size()); break;
        case kPop:
          if (stack_.size() > fence())
            stack_.pop_back();
          else if (!marks_.empty())
            marks_.pop_back();  // as CPython: POP at a mark discards the mark
          else
            fail("stack underflow");
          break;
        case kPopMark: stack_.resize(popMark()); break;
        case kDup: stack_.push_back(top()); break;

        case kNone: stack_.push_back(kNoneNode); break;
        case kNewTrue: stack_.push_back(kTrueNode); break;
        case kNewFalse: stack_.push_back(kFalseNode); break;
        case kBinInt: stack_.push_back(newNode(PyKind::Int, 0, std::bit_cast<uint64_t>(int64_t{i32()}))); break;
        case kBinInt1: stack_.push_back(kSmallIntNodes + u8()); break;
        case kBinInt2: stack_.push_back(newNode(PyKind::Int, 0, uintLE(2))); break;
        case kLong1: stack_.push_back(decodeLong(u8())); break;
        case kLong4: {
          const int32_t n = i32();
          if (n < 0) fail("negative LONG4 length");
          stack_.push_back(decodeLong(static_cast<uint64_t>(n)));
          break;
        }
        case kBinFloat: {
          need(8);
          uint64_t bits = 0;
          for (int i = 0; i < 8; ++i) bits = (bits << 8) | p_[i];  // big-endian
          p_ += 8;
          stack_.push_back(newNode(PyKind::Float, 0, bits));
          break;
        }

        case kShortBinUnicode: stack_.push_back(newBlob(PyKind::String, u8())); break;
        case kBinUnicode: stack_.push_back(newBlob(PyKind::String, uintLE(4))); break;
        case kBinUnicode8: stack_.push_back(newBlob(PyKind::String, uintLE(8))); break;
        case kShortBinString: stack_.push_back(newBlob(PyKind::String, u8())); break;
        case kBinString: {
          const int32_t n = i32();
          if (n < 0) fail("negative BINSTRING length");
          stack_.push_back(newBlob(PyKind::String, static_cast<uint64_t>(n)));
          break;
        }
        case kShortBinBytes: stack_.push_back(newBlob(PyKind::Bytes, u8())); break;
        case kBinBytes: stack_.push_back(newBlob(PyKind::Bytes, uintLE(4))); break;
        case kBinBytes8:
        case kByteArray8: stack_.push_back(newBlob(PyKind::Bytes, uintLE(8))); break;

        case kEmptyTuple: stack_.push_back(newContainer(PyKind::Tuple)); break;
        case kTuple1: buildTuple(1); break;
        case kTuple2: buildTuple(2); break;
        case kTuple3: buildTuple(3); break;
        case kTuple: buildFromMark(PyKind::Tuple); break;
        case kEmptyList: stack_.push_back(newContainer(PyKind::List)); break;
        case kList: buildFromMark(PyKind::List); break;
        case kEmptyDict: stack_.push_back(newContainer(PyKind::Dict)); break;
        case kDict: buildFromMark(PyKind::Dict); break;
        case kEmptySet: stack_.push_back(newContainer(PyKind::Set)); break;
        case kFrozenSet: buildFromMark(PyKind::FrozenSet); break;

        case kAppend: {
          const uint32_t value = pop();
          const uint32_t list = top();
          if (doc_.nodes_[list].kind != PyKind::List)
            fail(std::string("APPEND applied to a ") + pyKindName(doc_.nodes_[list].kind));
          appendChildren(list, &value, 1, 1);
          break;
        }
        case kAppends: {
          const size_t mark = popMark();
          const uint32_t list = targetBelowMark(mark, PyKind::List, "APPENDS");
          appendChildren(list, stack_.data() + mark, stack_.size() - mark, stack_.size() - mark);
          stack_.resize(mark);
          break;
        }
        case kSetItem: {
          requireItems(3);
          const uint32_t dict = stack_[stack_.size() - 3];
          if (doc_.nodes_[dict].kind != PyKind::Dict)
            fail(std::string("SETITEM applied to a ") + pyKindName(doc_.nodes_[dict].kind));
          appendChildren(dict, stack_.data() + stack_.size() - 2, 2, 1);
          stack_.resize(stack_.size() - 2);
          break;
        }
        case kSetItems: {
          const size_t mark = popMark();
          const uint32_t dict = targetBelowMark(mark, PyKind::Dict, "SETITEMS");
          const size_t n = stack_.size() - mark;
          if (n % 2 != 0) fail("odd number of items for SETITEMS");
          appendChildren(dict, stack_.data() + mark, n, n / 2);
          stack_.resize(mark);
          break;
        }
        case kAddItems: {
          const size_t mark = popMark();
          const uint32_t set = targetBelowMark(mark, PyKind::Set, "ADDITEMS");
          appendChildren(set, stack_.data() + mark, stack_.size() - mark, stack_.size() - mark);
          stack_.resize(mark);
          break;
        }

        case kBinPut: memoPut(u8(), top()); break;
        case kLongBinPut: memoPut(uintLE(4), top()); break;
        case kMemoize: memoPut(memoCount_, top()); break;
        case kBinGet: stack_.push_back(memoGet(u8())); break;
        case kLongBinGet: stack_.push_back(memoGet(uintLE(4))); break;

        case kGlobal: {
          const std::string_view module = line();
          refuseClass(module, line(), "GLOBAL");
        }
        case kInst: {
          const std::string_view module = line();
          refuseClass(module, line(), "INST");
        }
        case kStackGlobal: {
          requireItems(2);
          const PyRef module(&doc_, stack_[stack_.size() - 2]);
          const PyRef name(&doc_, stack_.back());
          if (module.is(PyKind::String) && name.is(PyKind::String))
            refuseClass(module.text(), name.text(), "STACK_GLOBAL");
          refuseCode("STACK_GLOBAL");
        }
        case kReduce: refuseCode("REDUCE");
        case kBuild: refuseCode("BUILD");
        case kObj: refuseCode("OBJ");
        case kNewObj: refuseCode("NEWOBJ");
        case kNewObjEx: refuseCode("NEWOBJ_EX");
        case kExt1:
        case kExt2:
        case kExt4: fail("pickle names a class through the extension registry (EXT opcode); nothing is imported");
        case kPersId:
        case kBinPersId: fail("pickle refers to persistent objects (PERSID), which only its writer can resolve");
        case kNextBuffer:
        case kReadonlyBuffer: fail("pickle uses out-of-band buffers (protocol 5), which are not part of the file");
        case kInt:
        case kLong:
        case kFloat:
        case kString:
        case kUnicode:
        case kGet:
        case kPut:
          fail(std::string("protocol 0 text opcode '") + static_cast<char>(op) +
               "' is not supported (write the file with protocol 2 or later)");
        default: {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02x", op);
          fail(std::string("unknown opcode ") + hex);
        }
      }
    }
  }

  // Gives every container one contiguous slice of children_: staging_ becomes children_, and
  // the few containers built from several runs (long lists written in batches) get their runs
  // copied, in order, to its end.
  void layOutChildren() {
    auto& nodes = doc_.nodes_;
    uint64_t copied = 0;
    for (const auto& node : nodes)
      if (node.flags & kMultiRun) copied += slots(node);
    staging_.reserve(staging_.size() + copied);
    for (auto& node : nodes) {
      if (!pyIsContainer(node.kind)) continue;
      if (node.size == 0) node.payload = 0;
      if (node.flags & kMultiRun) {
        const uint64_t offset = staging_.size();
        for (uint32_t r = static_cast<uint32_t>(node.payload >> 32); r != kNone32; r = runs_[r].next)
          for (uint64_t k = 0; k < runs_[r].count; ++k) staging_.push_back(staging_[runs_[r].start + k]);
        node.payload = offset;
      }
      node.flags = 0;
    }
    doc_.children_ = std::move(staging_);
    std::vector<Run>().swap(runs_);
    std::vector<uint32_t>().swap(stack_);
    std::vector<uint32_t>().swap(memo_);
    sparseMemo_.clear();
  }

  // The exact check, for pickles that add to containers after placing them: refuses cycles (a
  // list that contains itself) and nesting deeper than the limit, over what is reachable from the
  // root, with heights memoized so shared subtrees are visited once.
  void checkDepth() {
    opStart_ = doc_.data_.size();
    const auto& nodes = doc_.nodes_;
    const auto& children = doc_.children_;
    if (!pyIsContainer(nodes[doc_.root_].kind)) return;
    enum : uint8_t { kUnvisited, kOnPath, kDone };
    std::vector<uint8_t> state(nodes.size(), kUnvisited);
    std::vector<uint32_t> height(nodes.size(), 0);
    struct Step {
      uint32_t node;
      uint32_t next;    // next child slot to look at
      uint32_t height;  // 1 + deepest child so far
    };
    std::vector<Step> path;
    const auto enter = [&](uint32_t id) {
      if (path.size() >= limits_.maxDepth) failTooDeep();
      state[id] = kOnPath;
      path.push_back({id, 0, 1});
    };
    enter(doc_.root_);
    while (!path.empty()) {
      Step& step = path.back();
      const auto& node = nodes[step.node];
      if (step.next < slots(node)) {
        const uint32_t child = children[node.payload + step.next++];
        if (!pyIsContainer(nodes[child].kind)) continue;
        if (state[child] == kOnPath) fail("a container contains itself (reference cycle)");
        if (state[child] == kDone) {
          step.height = std::max(step.height, height[child] + 1);
          if (step.height > limits_.maxDepth) failTooDeep();
        } else {
          enter(child);
        }
        continue;
      }
      const Step done = step;
      path.pop_back();
      state[done.node] = kDone;
      height[done.node] = done.height;
      if (!path.empty()) {
        path.back().height = std::max(path.back().height, done.height + 1);
        if (path.back().height > limits_.maxDepth) failTooDeep();
      }
    }
  }

  PickleDocument doc_;
  std::string source_;
  const Progress& progress_;
  UnpickleLimits limits_;
  const uint8_t* begin_ = nullptr;
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  const uint8_t* nextReport_ = nullptr;
  uint64_t opStart_ = 0;

  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::vector<uint32_t> memo_;  // dense part; kNone32 = unset
  std::unordered_map<uint64_t, uint32_t> sparseMemo_;
  uint64_t memoCount_ = 0;
  std::vector<uint32_t> staging_;
  std::vector<Run> runs_;
  bool needFullCheck_ = false;
};

PickleDocument unpickle(std::string data, std::string_view sourceName, const Progress& progress,
                        const UnpickleLimits& limits) {
  return Unpickler(std::move(data), sourceName, progress, limits).run();
}

// ---------------------------------------------------------------------------------------------
// PyRef

const char* pyKindName(PyKind kind) {
  switch (kind) {
    case PyKind::None: return "None";
    case PyKind::Bool: return "bool";
    case PyKind::Int:
    case PyKind::BigInt: return "int";
    case PyKind::Float: return "float";
    case PyKind::String: return "str";
    case PyKind::Bytes: return "bytes";
    case PyKind::List: return "list";
    case PyKind::Tuple: return "tuple";
    case PyKind::Dict: return "dict";
    case PyKind::Set: return "set";
    case PyKind::FrozenSet: return "frozenset";
  }
  return "?";
}

std::optional<int64_t> PyRef::asInt() const {
  if (!doc_) return std::nullopt;
  const auto& node = doc_->nodes_[id_];
  if (node.kind == PyKind::Int || node.kind == PyKind::Bool) return std::bit_cast<int64_t>(node.payload);
  return std::nullopt;
}

std::optional<uint64_t> PyRef::asUint64() const {
  if (!doc_) return std::nullopt;
  const auto& node = doc_->nodes_[id_];
  if (node.kind == PyKind::Int) {
    const auto v = std::bit_cast<int64_t>(node.payload);
    if (v < 0) return std::nullopt;
    return static_cast<uint64_t>(v);
  }
  if (node.kind == PyKind::BigInt) {
    // Outside int64, so within uint64 only as 8 magnitude bytes followed by zero bytes.
    const auto* bytes = reinterpret_cast<const uint8_t*>(doc_->data_.data() + node.payload);
    for (size_t i = 8; i < node.size; ++i)
      if (bytes[i] != 0) return std::nullopt;
    uint64_t v = 0;
    for (size_t i = 0; i < 8 && i < node.size; ++i) v |= uint64_t{bytes[i]} << (8 * i);
    return v;
  }
  return std::nullopt;
}

std::optional<double> PyRef::asFloat() const {
  if (!doc_) return std::nullopt;
  const auto& node = doc_->nodes_[id_];
  if (node.kind == PyKind::Float) return std::bit_cast<double>(node.payload);
  if (node.kind == PyKind::Int || node.kind == PyKind::Bool)
    return static_cast<double>(std::bit_cast<int64_t>(node.payload));
  return std::nullopt;
}

std::optional<bool> PyRef::asBool() const {
  if (!doc_ || doc_->nodes_[id_].kind != PyKind::Bool) return std::nullopt;
  return doc_->nodes_[id_].payload != 0;
}

std::string PyRef::intDecimal() const {
  if (!doc_) return {};
  const auto& node = doc_->nodes_[id_];
  if (node.kind == PyKind::Int) return std::to_string(std::bit_cast<int64_t>(node.payload));
  if (node.kind != PyKind::BigInt) return {};
  // Magnitude of the two's complement bytes in 32-bit limbs, then repeated division by 1e9.
  const auto* bytes = reinterpret_cast<const uint8_t*>(doc_->data_.data() + node.payload);
  const size_t n = node.size;
  const bool negative = (bytes[n - 1] & 0x80) != 0;
  std::vector<uint32_t> limbs((n + 3) / 4, 0);
  for (size_t i = 0; i < n; ++i)
    limbs[i / 4] |= uint32_t{static_cast<uint8_t>(negative ? ~bytes[i] : bytes[i])} << (8 * (i % 4));
  if (negative) {
    for (auto& limb : limbs) {  // ~x + 1
      if (++limb != 0) break;
    }
  }
  std::string digits;
  while (!limbs.empty()) {
    uint64_t rem = 0;
    for (size_t i = limbs.size(); i-- > 0;) {
      const uint64_t cur = (rem << 32) | limbs[i];
      limbs[i] = static_cast<uint32_t>(cur / 1000000000u);
      rem = cur % 1000000000u;
    }
    while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
    for (int k = 0; k < 9 && (rem != 0 || !limbs.empty()); ++k) {
      digits += static_cast<char>('0' + rem % 10);
      rem /= 10;
    }
  }
  if (digits.empty()) digits = "0";
  if (negative) digits += '-';
  std::reverse(digits.begin(), digits.end());
  return digits;
}

PyRef PyRef::get(std::string_view wanted) const {
  if (!is(PyKind::Dict)) return {};
  for (size_t i = size(); i-- > 0;) {
    const PyRef k = key(i);
    if (k.is(PyKind::String) && k.text() == wanted) return value(i);
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// pyRepr

size_t utf8SequenceLength(std::string_view s, size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const unsigned char c = p[i];
  if (c < 0x80) return 1;
  size_t length = 0;
  uint32_t minCode = 0;
  if ((c & 0xe0) == 0xc0) {
    length = 2, minCode = 0x80;
  } else if ((c & 0xf0) == 0xe0) {
    length = 3, minCode = 0x800;
  } else if ((c & 0xf8) == 0xf0) {
    length = 4, minCode = 0x10000;
  } else {
    return 0;
  }
  if (i + length > s.size()) return 0;
  uint32_t code = c & (0x7fu >> length);
  for (size_t k = 1; k < length; ++k) {
    if ((p[i + k] & 0xc0) != 0x80) return 0;
    code = (code << 6) | (p[i + k] & 0x3fu);
  }
  // Overlong forms, code points past Unicode and surrogates (which Python's surrogatepass
  // writes) are not valid UTF-8.
  if (code < minCode || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return 0;
  return length;
}

namespace {

class ReprWriter {
 public:
  explicit ReprWriter(size_t limit) : limit_(limit) {}

  [[nodiscard]] bool full() const { return cut_ || out_.size() >= limit_; }
  void put(std::string_view s) {
    if (full()) return;
    size_t take = std::min(s.size(), limit_ - out_.size());
    while (take < s.size() && take > 0 && (static_cast<unsigned char>(s[take]) & 0xc0) == 0x80)
      --take;  // never cut a UTF-8 sequence
    out_.append(s.substr(0, take));
    if (take < s.size()) cut_ = true;
  }

  void quoted(std::string_view s, bool bytes) {
    // Python's choice: double quotes when the text has a single quote and no double quote.
    const char quote = s.find('\'') != std::string_view::npos && s.find('"') == std::string_view::npos ? '"' : '\'';
    if (bytes) put("b");
    put(std::string_view(&quote, 1));
    for (size_t i = 0; i < s.size(); ++i) {
      if (full()) return;
      const char c = s[i];
      const auto u = static_cast<unsigned char>(c);
      if (c == quote) {  // only ever a single quote: double quotes are chosen when there is none
        put("\\'");
        continue;
      }
      if (!bytes && u >= 0x80) {
        // Valid UTF-8 is printed as is; other bytes escaped, so the repr is always valid UTF-8.
        if (const size_t n = utf8SequenceLength(s, i)) {
          put(s.substr(i, n));
          i += n - 1;
          continue;
        }
      }
      switch (c) {
        case '\\': put("\\\\"); break;
        case '\n': put("\\n"); break;
        case '\r': put("\\r"); break;
        case '\t': put("\\t"); break;
        default:
          if (u < 0x20 || u == 0x7f || u >= 0x80) {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", u);
            put(hex);
          } else {
            out_ += c;
          }
      }
    }
    put(std::string_view(&quote, 1));
  }

  void value(PyRef v) {
    if (full()) return;
    switch (v.kind()) {
      case PyKind::None: put("None"); break;
      case PyKind::Bool: put(*v.asBool() ? "True" : "False"); break;
      case PyKind::Int:
      case PyKind::BigInt: put(v.intDecimal()); break;
      case PyKind::Float: putFloat(*v.asFloat()); break;
      case PyKind::String: quoted(v.text(), false); break;
      case PyKind::Bytes: quoted(v.text(), true); break;
      case PyKind::List: sequence(v, "[", "]"); break;
      case PyKind::Tuple:
        put("(");
        items(v);
        put(v.size() == 1 ? ",)" : ")");
        break;
      case PyKind::Set:
        if (v.size() == 0)
          put("set()");
        else
          sequence(v, "{", "}");
        break;
      case PyKind::FrozenSet: sequence(v, "frozenset({", "})"); break;
      case PyKind::Dict:
        put("{");
        for (size_t i = 0; i < v.size() && !full(); ++i) {
          if (i) put(", ");
          value(v.key(i));
          put(": ");
          value(v.value(i));
        }
        put("}");
        break;
    }
  }

  std::string finish() {
    if (full()) out_ += "...";
    return std::move(out_);
  }

 private:
  void items(PyRef v) {
    for (size_t i = 0; i < v.size() && !full(); ++i) {
      if (i) put(", ");
      value(v.item(i));
    }
  }
  void sequence(PyRef v, std::string_view open, std::string_view close) {
    put(open);
    items(v);
    put(close);
  }
  void putFloat(double d) {
    if (std::isnan(d)) return put("nan");
    if (std::isinf(d)) return put(d < 0 ? "-inf" : "inf");
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d);
    std::string_view s(buf, static_cast<size_t>(end - buf));
    put(s);
    if (s.find_first_of(".e") == std::string_view::npos) put(".0");
  }

  size_t limit_;
  std::string out_;
  bool cut_ = false;
};

}  // namespace

std::string pyRepr(PyRef value, size_t maxChars) {
  ReprWriter writer(maxChars);
  writer.value(value);
  return writer.finish();
}

}  // namespace lathe::io
