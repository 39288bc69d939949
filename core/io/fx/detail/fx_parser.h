// Internal to the FX text parser, three parsers over string_views (no regex, no copy of the text):
// fx_text.cpp reads the text's structure (classes, forward signatures, bodies, statements over
// several lines), fx_statement.cpp makes the nodes of each statement (GraphBuilder) and
// fx_value.cpp reads the Python values of their arguments (ValueParser). What they share: the
// lexing below and the graph's names and strings.
#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "io/fx/fx_python.h"
#include "io/fx/fx_text.h"
#include "ir/graph.h"
#include "ir/sym_expr.h"
#include "util/diagnostics.h"

namespace lathe::io::fx::detail {

using ir::Arg;
using ir::DType;
using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::NodeKind;
using ir::Role;
using ir::StrId;
using ir::SymDim;
using ir::TensorMeta;
using ir::ValueKind;

inline constexpr size_t kMaxExcerpt = 160;  // characters of a bad line quoted in a warning

// A warning at line `line` (0-based) of the text being parsed, located in the file it came from.
inline void warnAt(const FxParseOptions& options, Diagnostics& diagnostics, size_t line, std::string code,
                   std::string message) {
  diagnostics.warn(std::move(code), std::move(message), {options.file, options.firstLine + line});
}

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

inline std::string excerpt(std::string_view s) {
  return s.size() <= kMaxExcerpt ? std::string(s) : std::string(s.substr(0, kMaxExcerpt)) + "...";
}

// Characters that matter when scanning code; everything else is skipped in one tight loop.
enum CharClass : uint8_t { kPlain, kQuote, kHash, kOpen, kClose, kSemicolon, kComma };
inline constexpr std::array<uint8_t, 256> kCharClass = [] {
  std::array<uint8_t, 256> t{};
  t['\''] = t['"'] = kQuote;
  t['#'] = kHash;
  t['('] = t['['] = t['{'] = kOpen;
  t[')'] = t[']'] = t['}'] = kClose;
  t[';'] = kSemicolon;
  t[','] = kComma;
  return t;
}();

// Index of the bracket closing the one at s[open], or npos.
inline size_t matchingClose(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    switch (kCharClass[static_cast<unsigned char>(s[i])]) {
      case kQuote: {
        const size_t end = fx::skipStringLiteral(s, i);
        if (end == std::string_view::npos) return std::string_view::npos;
        i = end - 1;
        break;
      }
      case kOpen: ++depth; break;
      case kClose:
        if (--depth == 0) return i;
        break;
      default: break;
    }
  }
  return std::string_view::npos;
}

// Splits s at `sep` (';' or ',') outside brackets and string literals.
inline void splitTopLevel(std::string_view s, char sep, std::vector<std::string_view>& out) {
  out.clear();
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    switch (kCharClass[static_cast<unsigned char>(s[i])]) {
      case kQuote: {
        const size_t end = fx::skipStringLiteral(s, i);
        if (end == std::string_view::npos)
          i = s.size();
        else
          i = end - 1;
        break;
      }
      case kOpen: ++depth; break;
      case kClose: --depth; break;
      case kSemicolon:
      case kComma:
        if (s[i] == sep && depth == 0) {
          out.push_back(s.substr(start, i - start));
          start = i + 1;
        }
        break;
      default: break;
    }
  }
  out.push_back(s.substr(std::min(start, s.size())));
}

// A value annotation as FX writes it: a quoted meta string (no escapes inside) or a Python type
// (`torch.Tensor`, `List[int]`). Anything else would not print back to the same statement.
inline bool isAnnotation(std::string_view a) {
  if (a.size() >= 2 && a.front() == '"' && a.back() == '"') {
    const std::string_view inner = a.substr(1, a.size() - 2);
    return !std::memchr(inner.data(), '\\', inner.size()) && !std::memchr(inner.data(), '"', inner.size());
  }
  if (a.empty() || !isIdentStart(a.front())) return false;
  int depth = 0;  // commas and spaces only between brackets: `Dict[str, int]`
  for (const char c : a) {
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (--depth < 0) return false;
    } else if (!isIdentChar(c) && c != '.' && !((c == ',' || c == ' ') && depth > 0)) {
      return false;
    }
  }
  return depth == 0;
}

// Python keywords: never a node name (FX renames such values), and `return = x` would not read
// back as an assignment.
inline bool isKeyword(std::string_view name) {
  static constexpr std::array<std::string_view, 35> kKeywords{
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return std::find(kKeywords.begin(), kKeywords.end(), name) != kKeywords.end();
}

// Length of `ident(.ident)*` at s[pos]; *segments gets how many identifiers it has.
inline size_t dottedLength(std::string_view s, size_t pos, int* segments) {
  size_t len = identLength(s, pos);
  int count = len ? 1 : 0;
  while (len && pos + len + 1 < s.size() && s[pos + len] == '.' && isIdentStart(s[pos + len + 1])) {
    len += 1 + identLength(s, pos + len + 1);
    ++count;
  }
  if (segments) *segments = count;
  return len;
}

inline bool parseInt64(std::string_view s, int64_t& v) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Node names of the graph being built, looked up through the graph's string pool: a name's
// StrId indexes the node it names, so a lookup costs the one hash the pool does anyway.
class NameTable {
 public:
  explicit NameTable(const Graph& graph) : graph_(graph) {}
  [[nodiscard]] NodeId find(std::string_view name) const { return at(graph_.strings().find(name)); }
  [[nodiscard]] NodeId at(StrId name) const {
    return name != 0 && name < byString_.size() ? byString_[name] : ir::kNoNode;
  }
  [[nodiscard]] bool contains(std::string_view name) const { return find(name) != ir::kNoNode; }
  void bind(StrId name, NodeId node) {
    if (name >= byString_.size()) byString_.resize(std::max<size_t>(name + 1, byString_.size() * 2), ir::kNoNode);
    byString_[name] = node;
  }

 private:
  const Graph& graph_;
  std::vector<NodeId> byString_;
};

// A small direct-mapped cache in front of the graph's string pool: targets, devices, keyword names
// and source files repeat on most lines, and a hit costs a short compare instead of a hash lookup.
class Interner {
 public:
  explicit Interner(Graph& graph) : graph_(graph) {}
  StrId operator()(std::string_view s) {
    if (s.empty()) return 0;
    const size_t slot =
        (s.size() * 131 + static_cast<unsigned char>(s.back()) * 31 + static_cast<unsigned char>(s[s.size() / 2])) %
        kSlots;
    StrId& id = slots_[slot];
    if (id == 0 || graph_.str(id) != s) id = graph_.intern(s);
    return id;
  }

 private:
  static constexpr size_t kSlots = 256;
  Graph& graph_;
  std::array<StrId, kSlots> slots_{};
};

// Hints of symbolic sizes, evaluated once per distinct expression.
class HintCache {
 public:
  explicit HintCache(const ir::SymbolLookup& lookup) : lookup_(lookup) {}
  SymDim dim(StrId expr, std::string_view text) {
    auto [it, inserted] = cache_.try_emplace(expr);
    if (inserted) {
      const std::optional<int64_t> v = lookup_ ? ir::evalSymExpr(text, lookup_) : std::nullopt;
      it->second = SymDim{v.value_or(0), expr, v.has_value()};
    }
    return it->second;
  }

 private:
  const ir::SymbolLookup& lookup_;
  std::unordered_map<StrId, SymDim> cache_;
};

// Reused buffers for the items of the lists being read, one per nesting depth (a deque: growing it
// keeps the outer buffers in place).
using ItemBuffers = std::deque<std::vector<Arg>>;

// Python values as FX codegen prints call arguments (repr of ints, floats, strings, lists,
// tuples, dicts, dtypes, devices, node names), with node names resolved against the graph.
class ValueParser {
 public:
  ValueParser(std::string_view text, Interner& intern, const NameTable& names, ItemBuffers& buffers)
      : s_(text), intern_(intern), names_(names), buffers_(buffers) {}

  size_t pos = 0;

  void skipSpaces() {
    while (pos < s_.size() && s_[pos] == ' ') ++pos;
  }
  bool atEnd() {
    skipSpaces();
    return pos == s_.size();
  }

  // One value. allowExpression: a value followed by an operator makes the whole span up to the
  // next separator a symbolic expression (SymExpr).
  bool value(Arg& out, bool allowExpression);

  // Items up to `closer` (the opener already consumed). kwargs: where `k = v` items go (nullptr:
  // not allowed). trailingComma: whether the last item was followed by a comma.
  bool sequence(char closer, std::vector<Arg>& items, std::vector<std::pair<StrId, Arg>>* kwargs, bool* trailingComma);

 private:
  bool separator(char closer, bool& trailing);
  bool valueInner(Arg& out, bool allowExpression);
  bool dict(Arg& out);
  bool string(Arg& out);
  bool number(Arg& out, bool allowExpression);
  bool name(Arg& out);
  void addRefIfNode(Arg& out, std::string_view word);
  bool expression(size_t start, Arg& out);

  std::string_view s_;
  Interner& intern_;
  const NameTable& names_;
  ItemBuffers& buffers_;
  std::string scratch_;
  int depth_ = 0;
};

// One forward parameter as written in the signature (views into the text).
struct ParamDecl {
  std::string_view name;        // as written, "*args" included
  std::string_view annotation;  // `"f32[4]"` with its quotes, or a Python type (`torch.Tensor`)
  std::string_view defaultValue;
  std::string_view comment;
  size_t line = 0;
};

// Builds one graph (one class) from its statements.
class GraphBuilder {
 public:
  GraphBuilder(const FxParseOptions& options, Diagnostics& diagnostics, std::string_view className);

  std::shared_ptr<Graph> graph() { return graph_; }
  void addParam(const ParamDecl& decl) { pending_.push_back(decl); }
  void comment(std::string_view text);
  // One logical statement (several physical lines when brackets span them) split at its top-level
  // ';' (a node, then maybe a rebinding and the liveness tail). comment: the trailing comment of
  // its line; itemComments: those of the continuation lines, one per item line.
  void statement(const std::vector<std::string_view>& segments, std::string_view comment,
                 const std::vector<std::string_view>& itemComments, size_t line);
  void finish();

 private:
  struct CallSpec {
    NodeKind kind = NodeKind::CallFunction;
    std::string_view target;
    std::vector<Arg> args;
    std::vector<std::pair<StrId, Arg>> kwargs;
  };

  size_t simpleStatement(std::string_view seg, std::string_view next, const std::vector<std::string_view>& itemComments,
                         size_t line);
  void ensureParams();
  void enterDeclarations();
  void declaration(std::string_view name, std::string_view annotation, size_t line);
  void unpack(std::string_view seg, size_t line);
  void output(std::string_view expr, const std::vector<std::string_view>& itemComments, size_t line);
  void assignment(std::string_view name, std::string_view annotation, std::string_view rhs, size_t line);
  size_t inplace(std::string_view seg, size_t opPos, std::string_view op, std::string_view target,
                 std::string_view next, size_t line);
  size_t setItem(std::string_view seg, std::string_view next, size_t line);
  bool parseRhs(std::string_view rhs, CallSpec& spec);
  bool parseRebinding(std::string_view seg, std::string_view expectedValue, std::string_view& name,
                      std::string_view& annotation);
  NodeId addPlaceholder(const ParamDecl& decl);
  StrId claimName(std::string_view name, size_t line);
  NodeId addNode(StrId name, Node node);
  Arg nameRef(std::string_view name);
  TensorMeta meta(std::string_view annotation, size_t line);
  bool tensorMeta(std::string_view text, TensorMeta& m);
  bool dims(std::string_view text, size_t& pos, std::vector<SymDim>& out);
  std::string uniqueName(std::string_view base);
  // The trailing comment of the line being read goes to the first node made from it.
  std::string_view takeLineComment() { return std::exchange(lineComment_, std::string_view{}); }
  StrId takeLineCommentId() {
    const std::string_view c = takeLineComment();
    return c.empty() ? 0 : intern_(c);
  }
  void unparsed(std::string_view text, size_t line);
  void warn(size_t line, std::string code, std::string message) {
    warnAt(options_, diagnostics_, line, std::move(code), std::move(message));
  }

  const FxParseOptions& options_;
  Diagnostics& diagnostics_;
  std::shared_ptr<Graph> graph_;
  NameTable names_;
  NameTable noNames_;  // resolves nothing
  Interner intern_;
  HintCache hints_;
  ItemBuffers buffers_;
  std::unordered_map<std::string, int> nextSuffix_;
  std::string lastDtypeAbbr_;
  DType lastDtype_ = DType::Unknown;
  std::vector<ParamDecl> pending_;
  bool paramsDone_ = false;    // the placeholders are all made; declarations are no longer expected
  bool declarations_ = false;  // pytree style: signature takes containers, placeholders are declared in the body
  bool haveOutput_ = false;
  bool bodyStarted_ = false;  // a node other than a placeholder was made
  ir::Provenance current_;
  std::string_view lineComment_;  // trailing comment of the line being read, for the first node it makes
};

}  // namespace lathe::io::fx::detail
