// A restricted unpickler for plain-data pickles (protocols 2-5; the binary opcodes of protocol 1
// too). It builds None, bool, int, float, str, bytes, list, tuple, dict, set and frozenset values
// and refuses every opcode that names or calls code (GLOBAL, STACK_GLOBAL, INST, OBJ, REDUCE,
// BUILD, NEWOBJ, NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID) and out-of-band buffers: nothing in the
// input is ever executed or imported.
//
// The result is a PickleDocument: an immutable graph of values in flat arrays. Values that the
// pickle shares through its memo (BINGET, LONG_BINGET) are shared here too, never copied, so the
// size of the document is linear in the size of the input even when a pickle references the same
// container many times. str and bytes values are views into the input, which the document owns.
// A consumer that decodes a value once per reference to it is not linear: PyRef::id tells shared
// objects apart, and such a consumer bounds its copies itself (io/memory_snapshot.h does).
//
// Limits (all input errors throw lathe::Error(ErrorCode::BadInput) with the byte offset):
// - memory: at most one value node (16 bytes) per opcode, at most two child slots (4 bytes) per
//   opcode, at most one memo entry per memo opcode: proportional to the input, whatever lengths
//   or memo indices the input claims;
// - nesting: the finished value is checked to be acyclic and at most UnpickleLimits::maxDepth
//   containers deep, so recursive consumers (pyRepr, loaders) are safe;
// - lengths are checked against the bytes left before anything is allocated; truncated input,
//   stack underflow, unknown opcodes and missing memo entries are errors.
// Runtime is linear in the input: every opcode is O(1) amortized, mark-based opcodes are linear in
// the items they consume.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/progress.h"

namespace lathe::io {

enum class PyKind : uint8_t {
  None,
  Bool,
  Int,     // fits in int64
  BigInt,  // LONG1/LONG4 values outside int64: little-endian two's complement bytes, see PyRef::text
  Float,
  String,  // str (UTF-8 as stored, not validated); also protocol 1 BINSTRING, as Python 3 decodes it
  Bytes,   // bytes and bytearray
  List,
  Tuple,
  Dict,  // ordered (key, value) pairs as written; a key written twice appears twice
  Set,
  FrozenSet,
};

[[nodiscard]] const char* pyKindName(PyKind kind);

class PickleDocument;

// A handle to one value of a PickleDocument (which must outlive it). A default-constructed handle
// is "absent" (operator bool is false): what get() returns for a missing key.
class PyRef {
 public:
  PyRef() = default;

  explicit operator bool() const { return doc_ != nullptr; }
  // PyKind::None for an absent handle too; use operator bool to tell them apart.
  [[nodiscard]] inline PyKind kind() const;
  [[nodiscard]] bool is(PyKind k) const { return doc_ != nullptr && kind() == k; }
  // Identity of the underlying object: equal for two handles to the same memo-shared object.
  [[nodiscard]] uint32_t id() const { return id_; }

  // Int or Bool (bool is an int in Python); nullopt otherwise.
  [[nodiscard]] std::optional<int64_t> asInt() const;
  // Int >= 0, or a BigInt in [2^63, 2^64); nullopt otherwise.
  [[nodiscard]] std::optional<uint64_t> asUint64() const;
  // Float, Int or Bool as a double; nullopt otherwise.
  [[nodiscard]] std::optional<double> asFloat() const;
  // Bool; nullopt otherwise.
  [[nodiscard]] std::optional<bool> asBool() const;
  // String or Bytes contents; the raw little-endian two's complement bytes of a BigInt; empty
  // otherwise. The view lives as long as the document.
  [[nodiscard]] inline std::string_view text() const;
  // Int or BigInt in decimal; empty otherwise.
  [[nodiscard]] std::string intDecimal() const;

  // Number of items (List, Tuple, Set, FrozenSet) or of pairs (Dict); 0 for scalars.
  [[nodiscard]] inline size_t size() const;
  // Item i of a List, Tuple, Set or FrozenSet (i < size()).
  [[nodiscard]] inline PyRef item(size_t i) const;
  // Key and value of pair i of a Dict (i < size()).
  [[nodiscard]] inline PyRef key(size_t i) const;
  [[nodiscard]] inline PyRef value(size_t i) const;
  // Dict: the value for a str key (the last one written, which is the one Python keeps); absent
  // when there is none or this is not a Dict. Linear in the size of the dict: to read many keys,
  // iterate key(i)/value(i) once instead.
  [[nodiscard]] PyRef get(std::string_view key) const;

 private:
  friend class PickleDocument;
  friend class Unpickler;
  PyRef(const PickleDocument* doc, uint32_t id) : doc_(doc), id_(id) {}
  const PickleDocument* doc_ = nullptr;
  uint32_t id_ = 0;
};

struct UnpickleLimits {
  // Containers nested deeper than this are refused (snapshots nest 6 deep). At most 65535.
  uint32_t maxDepth = 1000;
  // LONG1/LONG4 integers longer than this many bytes are refused (keeps intDecimal cheap).
  uint32_t maxBigIntBytes = 1024;
  // Distinct memo entries; the memo also never holds more entries than memo opcodes seen.
  uint32_t maxMemoEntries = uint32_t{1} << 30;
};

class PickleDocument {
 public:
  PickleDocument() = default;
  PickleDocument(PickleDocument&&) = default;
  PickleDocument& operator=(PickleDocument&&) = default;
  PickleDocument(const PickleDocument&) = delete;
  PickleDocument& operator=(const PickleDocument&) = delete;

  // The value the pickle returns (the object on the stack at STOP).
  [[nodiscard]] PyRef root() const { return {this, root_}; }
  // The protocol from the PROTO opcode; 1 when there is none.
  [[nodiscard]] int protocol() const { return protocol_; }
  // Number of value nodes; node ids (PyRef::id) are below it.
  [[nodiscard]] size_t nodeCount() const { return nodes_.size(); }
  // Bytes of the input, held because str/bytes values are views into it.
  [[nodiscard]] size_t inputBytes() const { return data_.size(); }

 private:
  friend class PyRef;
  friend class Unpickler;

  // 16 bytes. Scalars keep their value in payload (int64, double bits, bool); String, Bytes and
  // BigInt keep an offset into data_ in payload and their length in size; containers keep the
  // offset of their children in children_ in payload and the number of children in size (for a
  // Dict: key, value, key, value, ...; size counts pairs). flags and height serve the unpickler's
  // nesting check.
  struct Node {
    PyKind kind = PyKind::None;
    uint8_t flags = 0;
    uint16_t height = 0;
    uint32_t size = 0;
    uint64_t payload = 0;
  };
  static_assert(sizeof(Node) == 16);

  std::string data_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> children_;
  uint32_t root_ = 0;
  int protocol_ = 1;
};

// The accessors that loaders call once per value, inline.
inline bool pyIsContainer(PyKind kind) {
  return kind == PyKind::List || kind == PyKind::Tuple || kind == PyKind::Dict || kind == PyKind::Set ||
         kind == PyKind::FrozenSet;
}
inline PyKind PyRef::kind() const {
  return doc_ ? doc_->nodes_[id_].kind : PyKind::None;
}
inline std::string_view PyRef::text() const {
  if (!doc_) return {};
  const auto& node = doc_->nodes_[id_];
  if (node.kind != PyKind::String && node.kind != PyKind::Bytes && node.kind != PyKind::BigInt) return {};
  return std::string_view(doc_->data_).substr(node.payload, node.size);
}
inline size_t PyRef::size() const {
  if (!doc_) return 0;
  const auto& node = doc_->nodes_[id_];
  return pyIsContainer(node.kind) ? node.size : 0;
}
inline PyRef PyRef::item(size_t i) const {
  return {doc_, doc_->children_[doc_->nodes_[id_].payload + i]};
}
inline PyRef PyRef::key(size_t i) const {
  return {doc_, doc_->children_[doc_->nodes_[id_].payload + 2 * i]};
}
inline PyRef PyRef::value(size_t i) const {
  return {doc_, doc_->children_[doc_->nodes_[id_].payload + 2 * i + 1]};
}

// Decodes a pickle held in memory. sourceName appears in error locations. Progress reports bytes
// decoded out of data.size() and is checked for cancellation every few MB.
[[nodiscard]] PickleDocument unpickle(std::string data, std::string_view sourceName = {}, const Progress& progress = {},
                                      const UnpickleLimits& limits = {});

// Length of the valid UTF-8 sequence that starts at s[i] (i < s.size()); 0 when the bytes there
// are not valid UTF-8 (overlong, truncated, a surrogate, past U+10FFFF).
[[nodiscard]] size_t utf8SequenceLength(std::string_view s, size_t i);

// Python-style repr of a value ("{'a': [1, 2.5, None]}"), cut to about maxChars characters (an
// ellipsis marks the cut), so shared subtrees cannot blow the output up. Always valid UTF-8:
// bytes of a str that are not valid UTF-8 print as \xNN.
[[nodiscard]] std::string pyRepr(PyRef value, size_t maxChars = 4096);

}  // namespace lathe::io
