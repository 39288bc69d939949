// Guards Dynamo installs on a compiled frame (formats.md §4): the C++ guard tree text
// (`dynamo_cpp_guards_str`, also what TORCH_LOGS=guards prints), the older `dynamo_guards` JSON
// list, and the `recompile_reasons` artifact (§1). Plus what users do with them: counts by guard
// type, the fields of a TENSOR_MATCH, which guard of the failed compile a recompile reason points
// at, and the diff of two compiles' guards.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"
#include "util/diagnostics.h"
#include "util/progress.h"

namespace lathe::io {

struct GuardParseOptions {
  // For diagnostics and GuardNode::line: the file and the line of the payload's first line in it.
  std::string file;
  uint64_t firstLine = 1;
  // Resolves the interned file-name ids of `dynamo_guards` stack frames (the trace's `str` table).
  // Optional; without it those leaves keep the line and function but no file.
  std::function<std::optional<std::string>(int64_t id)> internedString;
  // Optional progress (bytes of the payload) and cancellation.
  const Progress* progress = nullptr;
};

inline constexpr uint32_t kNoGuardNode = UINT32_MAX;

enum class GuardNodeKind : uint8_t { Manager, Leaf };

// Managers printed as `KeyManager: GuardManager: ...` / `ValueManager: GuardManager: ...` under a
// `KeyValueManager pair at index=N` of a DictGuardManager.
enum class DictEntryRole : uint8_t { None, Key, Value };

// A piece of text owned by the GuardTree; read it with GuardTree::text.
struct GuardText {
  uint32_t offset = 0;
  uint32_t size = 0;
  [[nodiscard]] bool empty() const { return size == 0; }
};

struct GuardNode {
  GuardNodeKind kind = GuardNodeKind::Leaf;
  DictEntryRole dictRole = DictEntryRole::None;
  uint32_t depth = 0;              // number of "| " before "+- "
  uint32_t parent = kNoGuardNode;  // kNoGuardNode for top-level nodes
  uint32_t subtreeEnd = 0;         // descendants are the nodes [index + 1, subtreeEnd)
  uint32_t childCount = 0;
  int64_t pairIndex = -1;  // N of `KeyValueManager pair at index=N`
  uint64_t line = 0;       // file line (options.firstLine-based); the first one of a multi-line leaf
  // Leaf: the guard type (TENSOR_MATCH, TYPE_MATCH, ...; unknown types kept as printed). Manager: its
  // class (RootGuardManager, GuardManager, DictGuardManager, KeyValueManager, ...).
  GuardText type;
  // Manager fields `source=L['x'], accessed_by=DictGetItemGuardAccessor('x'), type=<class 'dict'>,
  // tag_safe=(True, False)`; empty when not printed.
  GuardText source, accessor, pythonType, tagSafe;
  // Leaf: the guard code, and the comment torch appends to it, `  # <userSource>  # <userFile>:<userLine>
  // in <userFunction> (<note>)`. note holds hints such as "HINT: type dict"; a comment that names no
  // location is kept whole in note.
  GuardText code, userSource, userFile, userFunction, note;
  uint32_t userLine = 0;

  [[nodiscard]] bool isLeaf() const { return kind == GuardNodeKind::Leaf; }
};

// The nodes of one guard tree in printed (pre-order) order, so that each subtree is a contiguous
// range. Built by the parsers below; read-only afterwards.
class GuardTree {
 public:
  [[nodiscard]] const std::vector<GuardNode>& nodes() const { return nodes_; }
  [[nodiscard]] size_t size() const { return nodes_.size(); }
  [[nodiscard]] const GuardNode& node(uint32_t index) const { return nodes_[index]; }
  [[nodiscard]] std::string_view text(GuardText t) const {
    return t.offset <= text_.size() ? std::string_view(text_).substr(t.offset, t.size) : std::string_view();
  }
  // Children of a node in order; kNoGuardNode gives the top-level nodes.
  [[nodiscard]] std::vector<uint32_t> children(uint32_t index) const;
  [[nodiscard]] size_t leafCount() const;
  // The `Guard latency = N us` line torch prints after the tree, when present.
  [[nodiscard]] std::optional<double> latencyMicros() const { return latencyMicros_; }

 private:
  friend class GuardTreeBuilder;
  std::string text_;
  std::vector<GuardNode> nodes_;
  std::optional<double> latencyMicros_;
};

// Parses a `dynamo_cpp_guards_str` payload (TREE_GUARD_MANAGER text). Lines that fit no form become
// warnings with file:line and are skipped.
[[nodiscard]] GuardTree parseCppGuards(std::string_view payload, const GuardParseOptions& options,
                                       Diagnostics& diagnostics);

// Parses a `dynamo_guards` payload (JSON list of {code, stack, user_stack}) into a RootGuardManager
// with one leaf per guard. The JSON form has no guard types, so they are inferred from the code
// (check_tensor -> TENSOR_MATCH, ___check_type_id -> TYPE_MATCH, ...); code of no known shape is a
// LAMBDA_GUARD, as torch names plain code guards. The innermost frame of user_stack (else stack)
// gives the user location. A damaged list is read item by item (one per line, as torch writes it).
[[nodiscard]] GuardTree parseJsonGuards(std::string_view payload, const GuardParseOptions& options,
                                        Diagnostics& diagnostics);

// Parses a MagiCompiler `guards.txt` (magi_depyf's compiled_functions/<fn>/entry_<k>/): managers
// `[RootGuardManager] (n leaf guards, m children)` indented 4 spaces per level, leaves `LEAF: code  #
// comment` and `child[i]:` lines 2 more, then `closure_vars:` (not read). It prints no guard types (inferred from the code, as for
// the JSON form) and no manager sources; guards cut at its 120-character limit get one note.
[[nodiscard]] GuardTree parseMagiGuards(std::string_view payload, const GuardParseOptions& options,
                                        Diagnostics& diagnostics);

struct GuardTypeCount {
  std::string type;
  size_t count = 0;
};
// Leaves per guard type, most frequent first (ties by name).
[[nodiscard]] std::vector<GuardTypeCount> countGuardsByType(const GuardTree& tree);

// What a leaf guards: the source of its nearest manager that has one, else the first argument when the
// code is a call (`check_tensor(L['x'], ...)` -> L['x']), else empty.
[[nodiscard]] std::string_view guardPath(const GuardTree& tree, uint32_t leaf);

// The fields of a TENSOR_MATCH code `check_tensor(L['x'], Tensor, DispatchKeySet(CUDA, ...),
// torch.float32, device=0, requires_grad=False, size=[2, None], stride=[None, 1])`.
struct TensorMatch {
  std::string source;                     // L['x']
  std::string tensorType;                 // Tensor, Parameter, ...
  std::vector<std::string> dispatchKeys;  // CUDA, BackendSelect, ...
  std::string dtypeName;                  // torch.float32
  ir::DType dtype = ir::DType::Unknown;
  std::optional<int64_t> deviceIndex;  // device=0; nullopt for device=None (CPU tensors)
  bool requiresGrad = false;
  std::vector<std::optional<int64_t>> sizes;    // nullopt: None, a dynamic dimension
  std::vector<std::optional<int64_t>> strides;  // nullopt: None, a dynamic stride
};
// nullopt when code is not a check_tensor call of that shape.
[[nodiscard]] std::optional<TensorMatch> parseTensorMatch(std::string_view code);

// torch's strip_local_scope, applied to recompile reasons: `L['x']` -> `x`.
[[nodiscard]] std::string stripLocalScope(std::string_view text);

struct RecompileReason {
  std::string compileId;  // the earlier compile whose guards failed, "0/0"
  std::string reason;     // "tensor 'x' size mismatch at index 0. expected 2, actual 3"
  std::string userStack;  // the text after "User stack trace:" when torch added one
};
// Parses a `recompile_reasons` artifact payload: "<compile id>: <reason>" as plain text when torch
// logged one reason (it may span lines), a JSON list of such strings when it logged several.
[[nodiscard]] std::vector<RecompileReason> parseRecompileReasons(std::string_view payload,
                                                                 const GuardParseOptions& options,
                                                                 Diagnostics& diagnostics);

// Best effort: the leaves of the failed compile's guards that a reason refers to. Tensor reasons
// (`tensor 'x' ... mismatch`) match TENSOR_MATCH leaves by guardPath (with or without the `L[...]`
// torch strips); other reasons are the failed guard's code and match leaves with that code. A reason
// that matches nothing whole is matched part by part when it joins several with "; " (verbose
// recompile logging). Empty when nothing matches.
[[nodiscard]] std::vector<uint32_t> matchRecompileReason(const RecompileReason& reason, const GuardTree& failed);

enum class GuardChange : uint8_t { Added, Removed, Changed };

// path and type view the trees given to diffGuards; they are valid while those trees live.
struct GuardDiffEntry {
  GuardChange change = GuardChange::Changed;
  std::string_view path;  // guardPath
  std::string_view type;
  uint32_t before = kNoGuardNode;  // leaf in the first tree (Removed, Changed)
  uint32_t after = kNoGuardNode;   // leaf in the second tree (Added, Changed)
};

struct GuardDiff {
  std::vector<GuardDiffEntry> entries;
  size_t unchanged = 0;
};

// Leaves are keyed by guardPath + type; leaves of a key with the same code on both sides are
// unchanged, the others pair up in order as Changed, the rest are Added / Removed. Entries follow the
// second tree's order (Changed, Added), then Removed in the first tree's order.
[[nodiscard]] GuardDiff diffGuards(const GuardTree& before, const GuardTree& after);

[[nodiscard]] std::string_view guardChangeName(GuardChange change);

}  // namespace lathe::io
