// Parser of FX readable graph text. One pass over the lines with hand-written scanning over
// string_views: no regex and no copy of the text (only statements that span several lines are
// joined into a scratch buffer).
#include "io/fx/fx_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <deque>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "io/fx/fx_python.h"

namespace lathe::io {
namespace {

using fx::identLength;
using fx::isDigit;
using fx::isIdentChar;
using fx::isIdentStart;
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

constexpr int kMaxValueDepth = 200;  // nesting of lists/tuples/calls inside one statement
constexpr int kMaxClassDepth = 32;   // nesting of subgraph classes
constexpr size_t kMaxExcerpt = 160;  // characters of a bad line quoted in a warning

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string excerpt(std::string_view s) {
  return s.size() <= kMaxExcerpt ? std::string(s) : std::string(s.substr(0, kMaxExcerpt)) + "...";
}

// Characters that matter when scanning code; everything else is skipped in one tight loop.
enum CharClass : uint8_t { kPlain, kQuote, kHash, kOpen, kClose, kSemicolon, kComma };
constexpr std::array<uint8_t, 256> kCharClass = [] {
  std::array<uint8_t, 256> t{};
  t['\''] = t['"'] = kQuote;
  t['#'] = kHash;
  t['('] = t['['] = t['{'] = kOpen;
  t[')'] = t[']'] = t['}'] = kClose;
  t[';'] = kSemicolon;
  t[','] = kComma;
  return t;
}();

// Index of the first character from i on that scanCode acts on (quotes, '#', brackets, ';'), or
// n. Sixteen bytes at a time where SSE2 is there: statement lines are long runs of plain text.
size_t nextSpecial(const char* s, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), apostrophe = _mm_set1_epi8('\''), hash = _mm_set1_epi8('#');
  const __m128i semicolon = _mm_set1_epi8(';'), paren = _mm_set1_epi8(')'), one = _mm_set1_epi8(1);
  const __m128i squareOpen = _mm_set1_epi8('['), squareClose = _mm_set1_epi8(']');
  const __m128i foldCase = _mm_set1_epi8(static_cast<char>(0xDF));  // '{' -> '[', '}' -> ']'
  for (; i + 16 <= n; i += 16) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i folded = _mm_and_si128(c, foldCase);
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(c, quote), _mm_cmpeq_epi8(c, apostrophe));
    hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(c, hash), _mm_cmpeq_epi8(c, semicolon)));
    hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_or_si128(c, one), paren));  // '(' or ')'
    hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(folded, squareOpen), _mm_cmpeq_epi8(folded, squareClose)));
    if (const int mask = _mm_movemask_epi8(hit))
      return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  while (i < n) {
    const uint8_t c = kCharClass[static_cast<unsigned char>(s[i])];
    if (c != kPlain && c != kComma) break;
    ++i;
  }
  return i;
}

// Where a line's code ends and its comment starts ('#' outside string literals), and the bracket
// depth after it, starting from `depth`. semicolons (optional): the code split at ';' outside
// brackets, when the line starts at depth 0.
struct CodeScan {
  size_t commentPos = std::string_view::npos;
  int depth = 0;
};

CodeScan scanCode(std::string_view s, int depth, std::vector<std::string_view>* semicolons = nullptr) {
  CodeScan r{std::string_view::npos, depth};
  if (semicolons) semicolons->clear();
  size_t start = 0;
  const size_t n = s.size();
  for (size_t i = 0; i < n; ++i) {
    i = nextSpecial(s.data(), i, n);
    if (i == n) break;
    switch (kCharClass[static_cast<unsigned char>(s[i])]) {
      case kQuote: {
        const size_t end = fx::skipStringLiteral(s, i);
        if (end == std::string_view::npos)
          i = n;  // unterminated: the rest is its text
        else
          i = end - 1;
        break;
      }
      case kHash:
        r.commentPos = i;
        i = n;
        break;
      case kOpen: ++r.depth; break;
      case kClose: --r.depth; break;
      case kSemicolon:
        if (semicolons && r.depth == 0) {
          semicolons->push_back(s.substr(start, i - start));
          start = i + 1;
        }
        break;
      default: break;
    }
  }
  if (semicolons) semicolons->push_back(s.substr(start, std::min(r.commentPos, n) - start));
  return r;
}

// Index of the bracket closing the one at s[open], or npos.
size_t matchingClose(std::string_view s, size_t open) {
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
void splitTopLevel(std::string_view s, char sep, std::vector<std::string_view>& out) {
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
bool isAnnotation(std::string_view a) {
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
bool isKeyword(std::string_view name) {
  static constexpr std::array<std::string_view, 35> kKeywords{
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield"};
  return std::find(kKeywords.begin(), kKeywords.end(), name) != kKeywords.end();
}

// `a = b = None`: the values dead after the statement (FX's liveness tail), dropped on reading.
bool isLivenessTail(std::string_view s) {
  size_t names = 0;
  for (size_t p = 0;;) {  // name ( = name )* with a single '=' between each
    const size_t len = identLength(s, p);
    if (len == 0) return false;
    const std::string_view name = s.substr(p, len);
    p += len;
    while (p < s.size() && s[p] == ' ') ++p;
    if (p == s.size()) return names > 0 && name == "None";
    if (s[p] != '=' || (p + 1 < s.size() && s[p + 1] == '=')) return false;
    ++p;
    while (p < s.size() && s[p] == ' ') ++p;
    ++names;
  }
}

// Length of `ident(.ident)*` at s[pos]; *segments gets how many identifiers it has.
size_t dottedLength(std::string_view s, size_t pos, int* segments) {
  size_t len = identLength(s, pos);
  int count = len ? 1 : 0;
  while (len && pos + len + 1 < s.size() && s[pos + len] == '.' && isIdentStart(s[pos + len + 1])) {
    len += 1 + identLength(s, pos + len + 1);
    ++count;
  }
  if (segments) *segments = count;
  return len;
}

bool parseInt64(std::string_view s, int64_t& v) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool isLayout(std::string_view name) {
  static constexpr std::array<std::string_view, 8> kLayouts{"strided",    "sparse_coo", "sparse_csr", "sparse_csc",
                                                            "sparse_bsr", "sparse_bsc", "_mkldnn",    "jagged"};
  return std::find(kLayouts.begin(), kLayouts.end(), name) != kLayouts.end();
}

bool isMemoryFormat(std::string_view name) {
  return name == "contiguous_format" || name == "channels_last" || name == "channels_last_3d" ||
         name == "preserve_format";
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
  bool value(Arg& out, bool allowExpression) {
    if (++depth_ > kMaxValueDepth) return false;
    const bool ok = valueInner(out, allowExpression);
    --depth_;
    return ok;
  }

  // Items up to `closer` (the opener already consumed). kwargs: where `k = v` items go (nullptr:
  // not allowed). trailingComma: whether the last item was followed by a comma.
  bool sequence(char closer, std::vector<Arg>& items, std::vector<std::pair<StrId, Arg>>* kwargs, bool* trailingComma) {
    // Items are gathered in the buffer of this depth and moved out once, at their final count.
    while (buffers_.size() <= static_cast<size_t>(depth_)) buffers_.emplace_back();
    std::vector<Arg>& buffer = buffers_[static_cast<size_t>(depth_)];
    buffer.clear();
    bool trailing = false;
    for (;;) {
      skipSpaces();
      if (pos >= s_.size()) return false;
      if (s_[pos] == closer) {
        ++pos;
        break;
      }
      if (kwargs && isIdentStart(s_[pos])) {
        const size_t len = identLength(s_, pos);
        size_t after = pos + len;
        while (after < s_.size() && s_[after] == ' ') ++after;
        if (after < s_.size() && s_[after] == '=' && (after + 1 >= s_.size() || s_[after + 1] != '=')) {
          const StrId key = intern_(s_.substr(pos, len));
          pos = after + 1;
          if (!value(kwargs->emplace_back(key, Arg{}).second, true)) return false;
          trailing = false;
          if (!separator(closer, trailing)) return false;
          if (!trailing) break;
          continue;
        }
      }
      if (!value(buffer.emplace_back(), true)) return false;
      trailing = false;
      if (!separator(closer, trailing)) return false;
      if (!trailing) break;
    }
    items.reserve(items.size() + buffer.size());
    for (auto& a : buffer) items.push_back(std::move(a));
    buffer.clear();
    if (trailingComma) *trailingComma = trailing;
    return true;
  }

 private:
  // The Arg being read is fresh (default): its fields are set in place, without temporaries (an
  // Arg carries two vectors).
  static void setStr(Arg& out, Arg::Kind kind, StrId s) {
    out.kind = kind;
    out.s = s;
  }
  static void setInt(Arg& out, int64_t v) {
    out.kind = Arg::Kind::Int;
    out.i = v;
  }
  static void setFloat(Arg& out, double v) {
    out.kind = Arg::Kind::Float;
    out.f = v;
  }
  static void setBool(Arg& out, bool v) {
    out.kind = Arg::Kind::Bool;
    out.b = v;
  }
  static void setNode(Arg& out, NodeId n) {
    out.kind = Arg::Kind::Node;
    out.node = n;
  }
  static void setDType(Arg& out, DType t) {
    out.kind = Arg::Kind::DType;
    out.dtype = t;
  }

  // After an item: a comma (trailing = true, more may follow) or the closer (consumed).
  bool separator(char closer, bool& trailing) {
    skipSpaces();
    if (pos >= s_.size()) return false;
    if (s_[pos] == ',') {
      ++pos;
      trailing = true;
      return true;
    }
    if (s_[pos] == closer) {
      ++pos;
      trailing = false;
      return true;
    }
    return false;
  }

  bool valueInner(Arg& out, bool allowExpression) {
    skipSpaces();
    if (pos >= s_.size()) return false;
    const size_t start = pos;
    const char c = s_[pos];
    bool ok = false;
    if (c == '(' || c == '[') {
      ++pos;
      std::vector<Arg> items;
      bool trailing = false;
      ok = sequence(c == '(' ? ')' : ']', items, nullptr, &trailing);
      if (ok && c == '(' && items.size() == 1 && !trailing) {
        out = std::move(items[0]);  // parenthesized value, not a tuple
      } else if (ok) {
        out.kind = c == '(' ? Arg::Kind::Tuple : Arg::Kind::List;
        out.items = std::move(items);
      }
    } else if (c == '{') {
      ok = dict(out);
    } else if (c == '\'' || c == '"') {
      ok = string(out);
    } else if (isDigit(c) || c == '.' || c == '-' || c == '+') {
      ok = number(out, allowExpression);
    } else if (isIdentStart(c)) {
      ok = name(out);
    }
    if (!ok) return false;
    if (allowExpression) {
      skipSpaces();
      if (pos < s_.size() && s_[pos] != '\0' && std::strchr("+-*/%<>=!&|^@", s_[pos])) return expression(start, out);
    }
    return true;
  }

  bool dict(Arg& out) {
    ++pos;  // '{'
    out.kind = Arg::Kind::Dict;
    for (;;) {
      skipSpaces();
      if (pos >= s_.size()) return false;
      if (s_[pos] == '}') {
        ++pos;
        return true;
      }
      Arg key, v;
      if (!value(key, true)) return false;
      skipSpaces();
      if (pos >= s_.size() || s_[pos] != ':') return false;
      ++pos;
      if (!value(v, true)) return false;
      out.keys.push_back(std::move(key));
      out.items.push_back(std::move(v));
      bool trailing = false;
      if (!separator('}', trailing)) return false;
      if (!trailing) return true;
    }
  }

  bool string(Arg& out) {
    const size_t end = fx::skipStringLiteral(s_, pos);
    if (end == std::string_view::npos || !fx::decodeStringLiteral(s_.substr(pos, end - pos), scratch_)) return false;
    pos = end;
    setStr(out, Arg::Kind::String, intern_(scratch_));
    return true;
  }

  bool number(Arg& out, bool allowExpression) {
    const size_t start = pos;
    if (s_[pos] == '-' || s_[pos] == '+') {
      ++pos;
      if (pos < s_.size() && isIdentStart(s_[pos])) {
        const size_t len = identLength(s_, pos);
        const std::string_view word = s_.substr(pos, len);
        if (word == "inf" || word == "nan") {
          pos += len;
          if (word == "nan") {  // Python prints every NaN as `nan`: no sign
            setFloat(out, std::numeric_limits<double>::quiet_NaN());
          } else {
            setFloat(out, s_[start] == '-' ? -std::numeric_limits<double>::infinity()
                                           : std::numeric_limits<double>::infinity());
          }
          return true;
        }
        // `-x`: a symbolic expression over a name
        return allowExpression && expression(start, out);
      }
    }
    const size_t digits = pos;
    bool isFloat = false;
    while (pos < s_.size() && isDigit(s_[pos])) ++pos;
    if (pos < s_.size() && s_[pos] == '.') {
      isFloat = true;
      ++pos;
      while (pos < s_.size() && isDigit(s_[pos])) ++pos;
    }
    if (pos < s_.size() && (s_[pos] == 'e' || s_[pos] == 'E')) {
      isFloat = true;
      ++pos;
      if (pos < s_.size() && (s_[pos] == '+' || s_[pos] == '-')) ++pos;
      while (pos < s_.size() && isDigit(s_[pos])) ++pos;
    }
    if (pos == digits || (pos < s_.size() && isIdentChar(s_[pos]))) return false;
    // from_chars takes a '-' but not a '+'
    const std::string_view text =
        s_.substr(s_[start] == '+' ? start + 1 : start, pos - (s_[start] == '+' ? start + 1 : start));
    if (isFloat) {
      double v = 0;
      const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
      if (r.ptr != text.data() + text.size()) return false;
      out = r.ec == std::errc() ? Arg::ofFloat(v) : Arg::ofStr(Arg::Kind::Raw, intern_(s_.substr(start, pos - start)));
      return true;
    }
    int64_t v = 0;
    if (parseInt64(text, v)) {
      setInt(out, v);
    } else {  // beyond int64: keep the digits
      setStr(out, Arg::Kind::Raw, intern_(s_.substr(start, pos - start)));
    }
    return true;
  }

  bool name(Arg& out) {
    const size_t start = pos;
    int segments = 0;
    const size_t len = dottedLength(s_, pos, &segments);
    const std::string_view dotted = s_.substr(pos, len);
    pos += len;
    if (pos < s_.size() && (s_[pos] == '(' || s_[pos] == '[')) {
      // A call (`slice(None, 1, None)`, `device(type='cuda', index=0)`) or a subscript: kept as
      // printed, with the node references inside it.
      const size_t close = matchingClose(s_, pos);
      if (close == std::string_view::npos) return false;
      const bool isDevice = dotted == "device" && s_[pos] == '(';  // device(type='cuda', index=0)
      std::vector<Arg> items;
      std::vector<std::pair<StrId, Arg>> kwargs;
      ++pos;
      if (!sequence(s_[pos - 1] == '(' ? ')' : ']', items, &kwargs, nullptr) || pos != close + 1) return false;
      setStr(out, isDevice ? Arg::Kind::Device : Arg::Kind::Raw, intern_(s_.substr(start, pos - start)));
      if (isDevice) return true;
      if (segments == 1) addRefIfNode(out, dotted);
      for (const auto& a : items) ir::forEachNodeRef(a, [&](NodeId n) { out.items.push_back(Arg::ofNode(n)); });
      for (const auto& [k, a] : kwargs) ir::forEachNodeRef(a, [&](NodeId n) { out.items.push_back(Arg::ofNode(n)); });
      return true;
    }
    if (segments == 1) {
      if (dotted == "None") {
        out.kind = Arg::Kind::None;
      } else if (dotted == "True" || dotted == "False") {
        setBool(out, dotted == "True");
      } else if (dotted == "inf") {
        setFloat(out, std::numeric_limits<double>::infinity());
      } else if (dotted == "nan") {
        setFloat(out, std::numeric_limits<double>::quiet_NaN());
      } else if (const NodeId node = names_.find(dotted); node != ir::kNoNode) {
        setNode(out, node);
      } else {  // a name that is not a node (damaged or foreign text): kept as written
        setStr(out, Arg::Kind::Raw, intern_(dotted));
      }
      return true;
    }
    if (dotted.starts_with("torch.") && segments == 2) {
      const std::string_view member = dotted.substr(6);
      if (auto dtype = ir::dtypeFromTorchName(member)) {
        setDType(out, *dtype);
        return true;
      }
      if (isLayout(member)) {
        setStr(out, Arg::Kind::Layout, intern_(dotted));
        return true;
      }
      if (isMemoryFormat(member)) {
        setStr(out, Arg::Kind::MemoryFormat, intern_(dotted));
        return true;
      }
    }
    setStr(out, Arg::Kind::Raw, intern_(dotted));  // torch.ops.aten.mm.default as a value, ...
    addRefIfNode(out, dotted.substr(0, identLength(dotted, 0)));
    return true;
  }

  void addRefIfNode(Arg& out, std::string_view word) {
    if (const NodeId node = names_.find(word); node != ir::kNoNode) out.items.push_back(Arg::ofNode(node));
  }

  // From `start` to the next separator at this depth: a symbolic expression ("s0 + 1").
  bool expression(size_t start, Arg& out) {
    int depth = 0;
    size_t i = start;
    for (; i < s_.size(); ++i) {
      const char c = s_[i];
      if (c == '\'' || c == '"') {
        const size_t end = fx::skipStringLiteral(s_, i);
        if (end == std::string_view::npos) return false;
        i = end - 1;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;
        --depth;
      } else if ((c == ',' || c == ':') && depth == 0) {
        break;
      } else if (c == ';' || c == '#') {  // a statement separator or a comment: not an expression
        return false;
      } else if (c == '=' && !(i + 1 < s_.size() && s_[i + 1] == '=') &&
                 !(i > start && std::strchr("=!<>", s_[i - 1]))) {
        return false;  // an assignment or keyword, not a comparison
      }
    }
    if (depth != 0) return false;
    const std::string_view text = trim(s_.substr(start, i - start));
    out = Arg{};  // it may hold the value the expression starts with
    setStr(out, Arg::Kind::SymExpr, intern_(text));
    for (size_t k = 0; k < text.size();) {
      const char c = text[k];
      if (c == '\'' || c == '"') {
        k = fx::skipStringLiteral(text, k);
        if (k == std::string_view::npos) break;
        continue;
      }
      if (isDigit(c)) {  // a number, letters included ("1e5")
        while (k < text.size() && (isIdentChar(text[k]) || text[k] == '.')) ++k;
        continue;
      }
      const size_t len = identLength(text, k);
      if (len == 0) {
        ++k;
        continue;
      }
      if (k == 0 || text[k - 1] != '.') addRefIfNode(out, text.substr(k, len));
      k += len;
    }
    pos = i;
    return true;
  }

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

class FxTextParser;

// Builds one graph (one class) from its statements.
class GraphBuilder {
 public:
  GraphBuilder(FxTextParser& parser, std::string_view className);

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

  FxTextParser& parser_;
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

class FxTextParser {
 public:
  FxTextParser(std::string_view text, const FxParseOptions& options, Diagnostics& diagnostics)
      : text_(text), options_(options), diagnostics_(diagnostics) {}

  std::shared_ptr<Graph> run();

  const FxParseOptions& options() const { return options_; }
  void warn(size_t line, std::string code, std::string message) {
    diagnostics_.warn(std::move(code), std::move(message), {options_.file, options_.firstLine + line});
  }

 private:
  struct Line {
    std::string_view code;  // without indentation and trailing blanks
    int indent = 0;
  };

  void splitLines();
  std::shared_ptr<Graph> parseClass(size_t& i, int classIndent, int depth);
  bool signature(size_t& i, int defIndent, GraphBuilder& builder);
  void body(size_t& i, int defIndent, GraphBuilder& builder);
  void skipBlock(size_t& i, int indent);
  void checkCancelled(size_t i) const {
    if (options_.progress && (i & 1023) == 0) options_.progress->checkCancelled();
  }

  std::string_view text_;
  const FxParseOptions& options_;
  Diagnostics& diagnostics_;
  std::vector<Line> lines_;
  size_t codeLines_ = 0;  // lines that are neither blank nor comments: a bound on the node count
  std::string joined_;    // a statement spanning several lines
  std::vector<std::string_view> itemComments_;
  std::vector<std::string_view> pieces_;
  std::vector<std::string_view> segments_;
};

// ---------------------------------------------------------------------------------------------
// GraphBuilder

GraphBuilder::GraphBuilder(FxTextParser& parser, std::string_view className)
    : parser_(parser),
      graph_(std::make_shared<Graph>()),
      names_(*graph_),
      noNames_(*graph_),
      intern_(*graph_),
      hints_(parser.options().symbols) {
  if (!className.empty()) graph_->setClassName(className);
}

void GraphBuilder::unparsed(std::string_view text, size_t line) {
  parser_.warn(line, "fx_syntax", "cannot read graph statement: " + excerpt(text));
}

// `base`, or `base_<k>` with the first free k (remembered per base: a name defined again and
// again in damaged text stays linear).
std::string GraphBuilder::uniqueName(std::string_view base) {
  std::string name(base);
  if (!names_.contains(name)) return name;
  int& next = nextSuffix_[name];
  do {
    name = std::string(base) + "_" + std::to_string(++next);
  } while (names_.contains(name));
  return name;
}

// The name a new node gets: as written, or made unique when it is taken. A name defined again
// keeps meaning its first definition, so that references written as text (inside Raw arguments)
// resolve the same way when the printed graph is read back.
StrId GraphBuilder::claimName(std::string_view name, size_t line) {
  const StrId written = graph_->intern(name);
  if (names_.at(written) == ir::kNoNode) return written;
  const std::string unique = uniqueName(name);
  parser_.warn(line, "fx_duplicate_name",
               "node name '" + std::string(name) + "' defined again; read as '" + unique + "'");
  return graph_->intern(unique);
}

NodeId GraphBuilder::addNode(StrId name, Node node) {
  node.name = name;
  bodyStarted_ |= node.kind != NodeKind::Placeholder;
  const NodeId id = graph_->addNode(std::move(node));
  names_.bind(name, id);
  return id;
}

// The operand of `-a`, `a[i]`, `a += b`, `a[i] = v`: a node, or a constant (`None`) or name read
// as in any argument.
Arg GraphBuilder::nameRef(std::string_view name) {
  ValueParser vp(name, intern_, names_, buffers_);
  Arg a;
  if (vp.value(a, false) && vp.atEnd()) return a;
  return Arg::ofStr(Arg::Kind::Raw, graph_->intern(name));
}

// Dynamo's placeholder names spell the source: `L_self_modules_model_modules_layers_modules_0_
// modules_q_proj_parameters_weight_` is L['self'].model.layers[0].q_proj.weight.
Role dynamoRole(std::string_view param, std::string& modulePath) {
  if (!param.starts_with("L_") && !param.starts_with("G_")) return Role::Unknown;
  Role role = Role::UserInput;
  size_t cut = param.rfind("_parameters_");
  if (cut != std::string_view::npos) {
    role = Role::Parameter;
  } else if ((cut = param.rfind("_buffers_")) != std::string_view::npos) {
    role = Role::Buffer;
  } else {
    return role;
  }
  std::string_view prefix = param.substr(0, cut);  // root, then "_modules_<name>" per level
  constexpr std::string_view kModules = "_modules_";
  size_t at = prefix.find(kModules);
  while (at != std::string_view::npos) {
    const size_t begin = at + kModules.size();
    const size_t next = prefix.find(kModules, begin);
    if (!modulePath.empty()) modulePath.push_back('.');
    modulePath.append(prefix.substr(begin, next == std::string_view::npos ? std::string_view::npos : next - begin));
    at = next;
  }
  return role;
}

// AOT input descriptors (`ParamAOTInput(target='fc1.weight')`) tell parameters and buffers apart.
Role aotRole(std::string_view name, std::string_view comment, std::string& modulePath) {
  auto moduleOf = [&](std::string_view c) {
    const size_t t = c.find("target='");
    if (t == std::string_view::npos) return;
    const std::string_view rest = c.substr(t + 8);
    const std::string_view target = rest.substr(0, rest.find('\''));
    const size_t dot = target.rfind('.');
    if (dot != std::string_view::npos) modulePath = target.substr(0, dot);
  };
  if (comment.starts_with("ParamAOTInput(")) {
    moduleOf(comment);
    return Role::Parameter;
  }
  if (comment.starts_with("BufferAOTInput(")) {
    moduleOf(comment);
    return Role::Buffer;
  }
  if (comment.starts_with("TangentAOTInput(") || name.starts_with("tangents_")) return Role::Tangent;
  if (name.starts_with("primals_")) return Role::UserInput;
  return Role::Unknown;
}

NodeId GraphBuilder::addPlaceholder(const ParamDecl& decl) {
  Node node;
  node.kind = NodeKind::Placeholder;
  std::string_view written = decl.name;
  while (written.starts_with('*')) written.remove_prefix(1);
  const StrId nameId = claimName(written, decl.line);
  const std::string_view name = graph_->str(nameId);
  if (written != decl.name) node.target = graph_->intern(decl.name);  // `*args`
  node.meta = meta(decl.annotation, decl.line);
  if (!decl.defaultValue.empty()) {
    // Defaults are constants; a name in one stays text (it could only name a later definition).
    ValueParser vp(decl.defaultValue, intern_, noNames_, buffers_);
    Arg v;
    if (vp.value(v, true) && vp.atEnd()) {
      node.args.push_back(std::move(v));
    } else {
      unparsed(decl.defaultValue, decl.line);
    }
  }
  std::string modulePath;
  if (node.meta.kind == ValueKind::SymInt) {
    node.role = Role::SymInput;
  } else {
    node.role = aotRole(name, decl.comment, modulePath);
    if (node.role == Role::Unknown) node.role = dynamoRole(name, modulePath);
  }
  if (!modulePath.empty()) node.provenance.modulePath = graph_->intern(modulePath);
  if (!decl.comment.empty()) node.comment = intern_(decl.comment);
  return addNode(nameId, std::move(node));
}

void GraphBuilder::ensureParams() {
  if (paramsDone_) return;
  paramsDone_ = true;
  for (const auto& p : pending_) addPlaceholder(p);
  pending_.clear();
}

// The first declaration or unpack line: the signature's parameters are pytree containers
// (`primals`, `tangents`) and the placeholders are declared in the body.
void GraphBuilder::enterDeclarations() {
  if (declarations_) return;
  declarations_ = true;
  std::vector<StrId> params;
  for (const auto& p : pending_) params.push_back(graph_->intern(p.name));
  graph_->setForwardParams(std::move(params));
  pending_.clear();
}

void GraphBuilder::declaration(std::string_view name, std::string_view annotation, size_t line) {
  if (name == "self") {  // the module, never an input: a signature drops it too
    unparsed(name, line);
    return;
  }
  if (paramsDone_) {
    parser_.warn(line, "fx_syntax", "placeholder declared after the body started: " + std::string(name));
    return;
  }
  enterDeclarations();
  addPlaceholder(ParamDecl{name, annotation, {}, takeLineComment(), line});
}

void GraphBuilder::unpack(std::string_view seg, size_t line) {
  if (paramsDone_) {
    unparsed(seg, line);
    return;
  }
  enterDeclarations();
  std::vector<std::string_view> names;
  splitTopLevel(seg.substr(0, seg.find('=')), ',', names);
  for (auto n : names) {
    n = trim(n);
    if (n.empty()) continue;
    if (identLength(n, 0) != n.size() || n == "self" || isKeyword(n)) {
      unparsed(seg, line);
      break;
    }
    if (!names_.contains(n)) addPlaceholder(ParamDecl{n, {}, {}, {}, line});
  }
  paramsDone_ = true;
}

void GraphBuilder::comment(std::string_view text) {
  std::string_view t = trim(text.substr(1));  // after '#'
  StrId annotation = 0;
  if (t.starts_with("Annotation: ")) {
    t.remove_prefix(12);
    size_t end = t.starts_with('{') ? matchingClose(t, 0) : std::string_view::npos;
    end = end == std::string_view::npos ? t.find(' ') : end + 1;
    annotation = graph_->intern(t.substr(0, end));
    t = end == std::string_view::npos ? std::string_view{} : trim(t.substr(end));
  }
  ir::Provenance p;
  p.annotation = annotation;
  if (t.starts_with("File: ")) {
    std::string_view rest = t.substr(6);
    size_t codeAt = rest.find(", code:");
    std::string_view head = rest;
    if (codeAt != std::string_view::npos) {
      std::string_view code = rest.substr(codeAt + 7);
      if (code.starts_with(' ')) code.remove_prefix(1);
      p.code = intern_(code);
      head = rest.substr(0, codeAt);
    }
    // "path:line in function": the first ":<line> in " (paths may hold ':' and " in "), or a
    // final ":<line>". Line numbers start at 1.
    for (size_t c = head.find(':'); c != std::string_view::npos; c = head.find(':', c + 1)) {
      size_t d = c + 1;
      uint64_t lineNo = 0;
      while (d < head.size() && isDigit(head[d]))
        lineNo = std::min<uint64_t>(lineNo * 10 + static_cast<uint64_t>(head[d++] - '0'), UINT32_MAX);
      if (lineNo == 0 || (d < head.size() && !head.substr(d).starts_with(" in "))) continue;
      p.file = intern_(head.substr(0, c));
      p.line = static_cast<uint32_t>(lineNo);
      if (d < head.size()) p.function = intern_(head.substr(d + 4));
      break;
    }
    if (p.line == 0) p.file = intern_(head);
    current_ = p;
  } else if (t.starts_with("No stacktrace found for following nodes") || annotation) {
    current_ = p;
  }
  // Other comments (`# graph id: ...`) carry nothing for the nodes.
}

void GraphBuilder::statement(const std::vector<std::string_view>& segments, std::string_view comment,
                             const std::vector<std::string_view>& itemComments, size_t line) {
  lineComment_ = comment;
  for (size_t k = 0; k < segments.size(); ++k) {
    const std::string_view seg = trim(segments[k]);
    if (seg.empty() || isLivenessTail(seg)) continue;
    const std::string_view next = k + 1 < segments.size() ? trim(segments[k + 1]) : std::string_view{};
    k += simpleStatement(seg, next, itemComments, line);
  }
  lineComment_ = {};
}

// Returns how many of the following segments it consumed.
size_t GraphBuilder::simpleStatement(std::string_view seg, std::string_view next,
                                     const std::vector<std::string_view>& itemComments, size_t line) {
  if (seg.starts_with("return") && (seg.size() == 6 || seg[6] == ' ' || seg[6] == '(' || seg[6] == '[')) {
    output(trim(seg.substr(6)), itemComments, line);
    return 0;
  }
  if (seg == "pass") return 0;
  // `a, b, = fx_pytree.tree_flatten_spec(...)` however it is spaced: the printer writes it one way,
  // so every spelling must read the same.
  if (const size_t eq = seg.find('=');
      eq != std::string_view::npos && trim(seg.substr(eq + 1)).starts_with("fx_pytree.tree_flatten_spec(")) {
    unpack(seg, line);
    return 0;
  }
  const size_t nameLen = identLength(seg, 0);
  if (nameLen == 0 || isKeyword(seg.substr(0, nameLen))) {
    unparsed(seg, line);
    return 0;
  }
  const std::string_view name = seg.substr(0, nameLen);
  size_t p = nameLen;
  while (p < seg.size() && seg[p] == ' ') ++p;
  if (p == seg.size()) {  // a bare name: a placeholder declared without metadata
    if (paramsDone_) {
      unparsed(seg, line);
    } else {
      declaration(name, {}, line);
    }
    return 0;
  }
  const char c = seg[p];
  if (c == ':') {
    ++p;
    while (p < seg.size() && seg[p] == ' ') ++p;
    std::string_view annotation;
    if (p < seg.size() && seg[p] == '"') {
      const size_t close = seg.find('"', p + 1);
      annotation = seg.substr(p, close == std::string_view::npos ? close : close + 1 - p);
      p = close == std::string_view::npos ? seg.size() : close + 1;
    } else {  // a Python type: up to " = "
      const size_t eq = seg.find(" = ", p);
      annotation = trim(seg.substr(p, eq == std::string_view::npos ? std::string_view::npos : eq - p));
      p = eq == std::string_view::npos ? seg.size() : eq;
    }
    if (!isAnnotation(annotation)) {
      unparsed(seg, line);
      return 0;
    }
    while (p < seg.size() && seg[p] == ' ') ++p;
    if (p == seg.size()) {
      declaration(name, annotation, line);
    } else if (seg[p] == '=' && (p + 1 == seg.size() || seg[p + 1] != '=')) {
      assignment(name, annotation, trim(seg.substr(p + 1)), line);
    } else {
      unparsed(seg, line);
    }
    return 0;
  }
  if (c == '=' && (p + 1 == seg.size() || seg[p + 1] != '=')) {
    assignment(name, {}, trim(seg.substr(p + 1)), line);
    return 0;
  }
  if (c == '[') return setItem(seg, next, line);
  for (const auto& op : fx::kInplaceOperators)
    if (seg.substr(p).starts_with(op.symbol)) return inplace(seg, p, op.symbol, op.target, next, line);
  unparsed(seg, line);
  return 0;
}

void GraphBuilder::output(std::string_view expr, const std::vector<std::string_view>& itemComments, size_t line) {
  ensureParams();
  if (haveOutput_) {
    parser_.warn(line, "fx_syntax", "second return statement ignored");
    return;
  }
  Arg value;
  if (!expr.empty()) {
    ValueParser vp(expr, intern_, names_, buffers_);
    constexpr std::string_view kUnflatten = "pytree.tree_unflatten(";
    bool ok = false;
    if (expr.starts_with(kUnflatten)) {  // pytree codegen: the flat outputs, then self._out_spec
      vp.pos = kUnflatten.size();
      std::vector<Arg> items;
      ok = vp.sequence(')', items, nullptr, nullptr) && vp.atEnd() && !items.empty();
      if (ok) value = std::move(items[0]);
    } else {
      ok = vp.value(value, true) && vp.atEnd();
    }
    if (!ok) {
      unparsed(expr, line);
      return;
    }
  }
  Node node;
  node.kind = NodeKind::Output;
  node.target = intern_("output");
  const size_t count = value.kind == Arg::Kind::List || value.kind == Arg::Kind::Tuple ? value.items.size() : 0;
  bool anyComment = false;
  for (auto c : itemComments) anyComment |= !c.empty();
  if (anyComment && count > 0) {
    node.itemComments.assign(count, 0);
    for (size_t k = 0; k < count && k < itemComments.size(); ++k)
      if (!itemComments[k].empty()) node.itemComments[k] = intern_(itemComments[k]);
  }
  node.args.push_back(std::move(value));
  haveOutput_ = true;
  addNode(graph_->intern(uniqueName("output")), std::move(node));
}

void GraphBuilder::assignment(std::string_view name, std::string_view annotation, std::string_view rhs, size_t line) {
  ensureParams();
  if (annotation.empty() && identLength(rhs, 0) == rhs.size()) {
    // `l_x_ = L_x_`: a placeholder read under another name, at the top of the body (where FX
    // writes it, and where printing puts it back).
    const NodeId placeholder = names_.find(rhs);
    if (!bodyStarted_ && placeholder != ir::kNoNode && graph_->node(placeholder).kind == NodeKind::Placeholder &&
        graph_->name(placeholder) == rhs && !names_.contains(name)) {
      Node& node = graph_->mutableNode(placeholder);
      if (node.target == 0) node.target = node.name;
      node.name = graph_->intern(name);
      names_.bind(node.name, placeholder);
      return;
    }
    unparsed(std::string(name) + " = " + std::string(rhs), line);
    return;
  }
  CallSpec spec;
  if (!parseRhs(rhs, spec)) {
    unparsed(rhs, line);
    return;
  }
  Node node;
  node.kind = spec.kind;
  node.target = intern_(spec.target);
  node.args = std::move(spec.args);
  node.kwargs = std::move(spec.kwargs);
  node.meta = meta(annotation, line);
  node.provenance = current_;
  node.comment = takeLineCommentId();
  addNode(claimName(name, line), std::move(node));
}

// `a /= b;  name: "annot" = a`
size_t GraphBuilder::inplace(std::string_view seg, size_t opPos, std::string_view op, std::string_view target,
                             std::string_view next, size_t line) {
  ensureParams();
  const std::string_view lhs = seg.substr(0, identLength(seg, 0));
  std::string_view name, annotation;
  if (!parseRebinding(next, lhs, name, annotation)) {
    unparsed(seg, line);
    return 0;
  }
  ValueParser vp(seg, intern_, names_, buffers_);
  vp.pos = opPos + op.size();
  Arg rhs;
  if (!vp.value(rhs, true) || !vp.atEnd()) {
    unparsed(seg, line);
    return 1;
  }
  Node node;
  node.target = intern_(target);
  node.args = {nameRef(lhs), std::move(rhs)};
  node.meta = meta(annotation, line);
  node.provenance = current_;
  node.comment = takeLineCommentId();
  addNode(claimName(name, line), std::move(node));
  return 1;
}

// `a[i] = v;  name = a`
size_t GraphBuilder::setItem(std::string_view seg, std::string_view next, size_t line) {
  ensureParams();
  const std::string_view container = seg.substr(0, identLength(seg, 0));
  std::string_view name, annotation;
  const size_t close = matchingClose(seg, container.size());
  if (close == std::string_view::npos || !parseRebinding(next, container, name, annotation)) {
    unparsed(seg, line);
    return 0;
  }
  ValueParser vp(seg, intern_, names_, buffers_);
  vp.pos = container.size() + 1;
  std::vector<Arg> index;
  bool trailing = false;
  Arg value;
  bool ok = vp.sequence(']', index, nullptr, &trailing) && vp.pos == close + 1 && !index.empty();
  vp.skipSpaces();
  ok = ok && vp.pos < seg.size() && seg[vp.pos] == '=';
  if (ok) {
    ++vp.pos;
    ok = vp.value(value, true) && vp.atEnd();
  }
  if (!ok) {
    unparsed(seg, line);
    return 1;
  }
  Node node;
  node.target = intern_(fx::kSetItemTarget);
  Arg idx;
  if (index.size() == 1 && !trailing) {
    idx = std::move(index[0]);
  } else {
    idx.kind = Arg::Kind::Tuple;
    idx.items = std::move(index);
  }
  node.args = {nameRef(container), std::move(idx), std::move(value)};
  node.meta = meta(annotation, line);
  node.provenance = current_;
  node.comment = takeLineCommentId();
  addNode(claimName(name, line), std::move(node));
  return 1;
}

// `name[: "annot"] = expectedValue`
bool GraphBuilder::parseRebinding(std::string_view seg, std::string_view expectedValue, std::string_view& name,
                                  std::string_view& annotation) {
  const size_t len = identLength(seg, 0);
  if (len == 0 || expectedValue.empty() || isKeyword(seg.substr(0, len))) return false;
  name = seg.substr(0, len);
  std::string_view rest = trim(seg.substr(len));
  annotation = {};
  if (rest.starts_with(':')) {
    rest = trim(rest.substr(1));
    if (!rest.starts_with('"')) return false;
    const size_t close = rest.find('"', 1);
    if (close == std::string_view::npos) return false;
    annotation = rest.substr(0, close + 1);
    if (!isAnnotation(annotation)) return false;
    rest = trim(rest.substr(close + 1));
  }
  return rest.starts_with('=') && trim(rest.substr(1)) == expectedValue;
}

bool GraphBuilder::parseRhs(std::string_view rhs, CallSpec& spec) {
  ValueParser vp(rhs, intern_, names_, buffers_);
  if (rhs.empty()) return false;
  if (rhs.starts_with("self.")) {  // get_attr / call_module
    int segments = 0;
    const size_t len = dottedLength(rhs, 5, &segments);
    if (len == 0) return false;
    spec.target = rhs.substr(5, len);
    vp.pos = 5 + len;
    if (vp.atEnd()) {
      spec.kind = NodeKind::GetAttr;
      return true;
    }
    if (rhs[vp.pos] != '(') return false;
    ++vp.pos;
    spec.kind = NodeKind::CallModule;
    return vp.sequence(')', spec.args, &spec.kwargs, nullptr) && vp.atEnd();
  }
  const char c = rhs[0];
  if (rhs.size() > 1 && isIdentStart(rhs[1]) && identLength(rhs, 1) == rhs.size() - 1) {
    for (const auto& op : fx::kUnaryOperators)
      if (op.symbol[0] == c) {  // `-a`
        spec.target = op.target;
        spec.args.push_back(nameRef(rhs.substr(1)));
        return true;
      }
  }
  if (isIdentStart(c)) {
    int segments = 0;
    const size_t len = dottedLength(rhs, 0, &segments);
    const size_t firstLen = identLength(rhs, 0);
    const NodeId first = names_.find(rhs.substr(0, firstLen));
    const bool firstIsNode = first != ir::kNoNode;
    if (len < rhs.size() && rhs[len] == '(') {
      vp.pos = len + 1;
      if (firstIsNode && segments == 2) {  // method call on a node
        spec.kind = NodeKind::CallMethod;
        spec.target = rhs.substr(firstLen + 1, len - firstLen - 1);
        spec.args.push_back(Arg::ofNode(first));
      } else {
        spec.target = rhs.substr(0, len);
      }
      return vp.sequence(')', spec.args, &spec.kwargs, nullptr) && vp.atEnd();
    }
    if (segments == 1 && len < rhs.size() && rhs[len] == '[') {  // getitem
      vp.pos = len + 1;
      std::vector<Arg> index;
      bool trailing = false;
      if (!vp.sequence(']', index, nullptr, &trailing) || !vp.atEnd() || index.empty()) return false;
      spec.target = fx::kGetItemTarget;
      spec.args.push_back(nameRef(rhs.substr(0, len)));
      if (index.size() == 1 && !trailing) {
        spec.args.push_back(std::move(index[0]));
      } else {
        Arg tuple;
        tuple.kind = Arg::Kind::Tuple;
        tuple.items = std::move(index);
        spec.args.push_back(std::move(tuple));
      }
      return true;
    }
    if (segments == 2 && len == rhs.size() && firstIsNode) {  // getattr: `a.attr`
      spec.target = fx::kGetAttrTarget;
      spec.args.push_back(Arg::ofNode(first));
      spec.args.push_back(Arg::ofStr(Arg::Kind::String, intern_(rhs.substr(firstLen + 1))));
      return true;
    }
  }
  // A binary operator between two values: `a * b`, `0.5 * x`, `x // 3`.
  Arg lhs, operand;
  if (!vp.value(lhs, false)) return false;
  vp.skipSpaces();
  const std::string_view rest = rhs.substr(vp.pos);
  for (const auto& op : fx::kBinaryOperators) {
    if (!rest.starts_with(op.symbol)) continue;
    vp.pos += op.symbol.size();
    if (!vp.value(operand, false) || !vp.atEnd()) return false;
    spec.target = op.target;
    spec.args.push_back(std::move(lhs));
    spec.args.push_back(std::move(operand));
    return true;
  }
  return false;
}

TensorMeta GraphBuilder::meta(std::string_view annotation, size_t line) {
  TensorMeta m;
  if (annotation.empty()) return m;
  if (annotation.front() != '"') {  // a Python type (older FX): `L_x_ : torch.Tensor`
    if (annotation == "torch.Tensor") {
      m.kind = ValueKind::Tensor;
    } else {
      m.kind = ValueKind::Opaque;
      m.symExpr = graph_->intern(annotation);
    }
    return m;
  }
  const std::string_view text = annotation.substr(1, annotation.size() - 2);
  if (text.starts_with("Sym(") && text.ends_with(')')) {
    m.kind = ValueKind::SymInt;
    m.symExpr = intern_(text.substr(4, text.size() - 5));
    return m;
  }
  if (tensorMeta(text, m)) return m;
  // A tensor subclass around the tensor: `FunctionalTensor(f32[4])`, `DTensor(<tensor>, <placements>)`.
  const size_t wrapperLen = identLength(text, 0);
  if (wrapperLen > 0 && wrapperLen < text.size() && text[wrapperLen] == '(' && text.ends_with(')')) {
    const std::string_view inner = text.substr(wrapperLen + 1, text.size() - wrapperLen - 2);
    std::vector<std::string_view> parts;
    splitTopLevel(inner, ',', parts);
    const std::string_view tensorPart = trim(parts[0]);
    m = TensorMeta{};
    if (tensorMeta(tensorPart, m)) {
      m.wrapper = graph_->intern(text.substr(0, wrapperLen));
      if (parts.size() > 1) m.extra = graph_->intern(trim(inner.substr(parts[0].size() + 1)));
      return m;
    }
  }
  parser_.warn(line, "fx_annotation", "unrecognized value annotation kept as text: " + excerpt(annotation));
  m = TensorMeta{};
  m.kind = ValueKind::Opaque;
  m.symExpr = graph_->intern(annotation);
  return m;
}

// `bf16[1, s27][4096*s27, 1]cuda:0`: dtype, sizes, optional strides, optional device.
bool GraphBuilder::tensorMeta(std::string_view text, TensorMeta& m) {
  const size_t open = text.find('[');
  if (open == std::string_view::npos) return false;
  const std::string_view abbr = text.substr(0, open);
  if (abbr.empty()) return false;
  if (abbr != lastDtypeAbbr_) {  // most annotations of a graph share a dtype or two
    const auto found = ir::dtypeFromAbbr(abbr);
    if (!found) return false;
    lastDtypeAbbr_.assign(abbr);
    lastDtype_ = *found;
  }
  const DType dtype = lastDtype_;
  size_t pos = open;
  if (!dims(text, pos, m.sizes)) return false;
  if (pos < text.size() && text[pos] == '[') {
    if (!dims(text, pos, m.strides)) return false;
    m.hasStrides = true;
  }
  const std::string_view device = text.substr(pos);
  for (const char c : device)
    if (!isIdentChar(c) && c != ':') return false;
  m.kind = ValueKind::Tensor;
  m.dtype = dtype;
  if (!device.empty()) m.device = intern_(device);
  return true;
}

bool GraphBuilder::dims(std::string_view text, size_t& pos, std::vector<SymDim>& out) {
  ++pos;                                     // '['
  const size_t close = text.find(']', pos);  // sympy expressions hold no brackets
  if (close == std::string_view::npos) return false;
  if (close == pos) {
    ++pos;
    return true;
  }
  size_t commas = 0;
  for (size_t k = pos; k < close; ++k) commas += text[k] == ',';
  out.reserve(commas + 1);
  for (;;) {
    // Fast path: a plain integer followed by ", " or "]" (nearly every dim).
    uint64_t digits = 0;
    size_t end = pos;
    while (end < close && isDigit(text[end]) && digits < (uint64_t{1} << 59))
      digits = digits * 10 + static_cast<uint64_t>(text[end++] - '0');
    if (end == pos || (end < close && text[end] != ',')) {
      // A symbolic size ("s27", "4096*s27", "Max(1, s0)"): up to the next ',' outside parentheses.
      int depth = 0;
      end = pos;
      while (end < close && (depth > 0 || text[end] != ',')) {
        if (text[end] == '(') ++depth;
        if (text[end] == ')' && --depth < 0) return false;
        ++end;
      }
      const std::string_view dim = trim(text.substr(pos, end - pos));
      if (dim.empty()) return false;
      int64_t v = 0;
      out.push_back(parseInt64(dim, v) ? SymDim{v, 0, true} : hints_.dim(intern_(dim), dim));
    } else {
      out.push_back(SymDim{static_cast<int64_t>(digits), 0, true});
    }
    pos = end + 1;
    if (end == close) return true;
    while (pos < close && text[pos] == ' ') ++pos;
  }
}

void GraphBuilder::finish() {
  ensureParams();
  graph_->finalize();
}

// ---------------------------------------------------------------------------------------------
// FxTextParser

void FxTextParser::splitLines() {
  const char* p = text_.data();
  const char* end = p + text_.size();
  lines_.reserve(text_.size() / 64 + 1);
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const char* lineEnd = nl ? nl : end;
    const char* b = p;
    while (b < lineEnd && *b == ' ') ++b;
    const char* e = lineEnd;
    while (e > b && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t')) --e;
    lines_.push_back(Line{std::string_view(b, static_cast<size_t>(e - b)), static_cast<int>(b - p)});
    if (e > b && *b != '#') ++codeLines_;
    p = nl ? nl + 1 : end;
  }
}

std::shared_ptr<Graph> FxTextParser::run() {
  splitLines();
  size_t i = 0;
  while (i < lines_.size() && lines_[i].code.empty()) ++i;
  const bool exported = i < lines_.size() && lines_[i].code == "ExportedProgram:";
  for (; i < lines_.size(); ++i) {
    const std::string_view code = lines_[i].code;
    if (code.starts_with("class ") || code.starts_with("def forward(")) break;
  }
  if (i == lines_.size()) return nullptr;
  const bool hasClass = lines_[i].code.starts_with("class ");
  std::shared_ptr<Graph> root = parseClass(i, hasClass ? lines_[i].indent : -1, 0);
  if (!root || exported) return root;  // an ExportedProgram's signature and ranges follow the graph
  for (; i < lines_.size(); ++i) {
    if (!lines_[i].code.empty() && lines_[i].code[0] != '#') {
      warn(i, "fx_syntax", "text after the graph ignored: " + excerpt(lines_[i].code));
      break;
    }
  }
  return root;
}

// `class inner_f(torch.nn.Module):` -> "inner_f"
std::string_view classNameOf(std::string_view header) {
  header.remove_prefix(6);  // "class "
  return trim(header.substr(0, header.find_first_of("(:")));
}

bool isClassName(std::string_view name) {
  return name == "<lambda>" || (!name.empty() && identLength(name, 0) == name.size());
}

void FxTextParser::skipBlock(size_t& i, int indent) {
  ++i;
  while (i < lines_.size() && (lines_[i].code.empty() || lines_[i].indent > indent)) ++i;
}

// Reads a class (or a bare `def forward` when classIndent < 0) starting at line i; leaves i at
// the first line after it. nullptr when there is no forward.
std::shared_ptr<Graph> FxTextParser::parseClass(size_t& i, int classIndent, int depth) {
  std::string_view className;
  if (classIndent >= 0) {
    className = classNameOf(lines_[i].code);
    if (!isClassName(className)) {
      if (depth > 0) {  // a subgraph is named by the attribute that holds it
        warn(i, "fx_syntax", "class without a usable name: " + excerpt(lines_[i].code));
        skipBlock(i, classIndent);
        return nullptr;
      }
      className = {};
    }
    ++i;
    while (i < lines_.size() && (lines_[i].code.empty() || lines_[i].code[0] == '#')) ++i;
    if (i == lines_.size() || lines_[i].indent <= classIndent || !lines_[i].code.starts_with("def forward(")) {
      warn(i == lines_.size() ? i - 1 : i, "fx_syntax", "class " + std::string(className) + " has no forward");
      while (i < lines_.size() && (lines_[i].code.empty() || lines_[i].indent > classIndent)) ++i;
      return nullptr;
    }
  }
  GraphBuilder builder(*this, className);
  if (depth == 0) builder.graph()->reserve(codeLines_);
  const int defIndent = lines_[i].indent;
  if (!signature(i, defIndent, builder)) return nullptr;
  body(i, defIndent, builder);
  // Subgraphs of higher-order ops: nested classes after the body.
  while (i < lines_.size()) {
    const Line& line = lines_[i];
    if (line.code.empty() || line.code[0] == '#') {
      if (!line.code.empty() && line.indent <= classIndent) break;
      ++i;
      continue;
    }
    if (line.indent <= classIndent) break;
    if (line.code.starts_with("class ") && depth + 1 < kMaxClassDepth) {
      const std::string name(classNameOf(line.code));
      if (auto sub = parseClass(i, line.indent, depth + 1)) builder.graph()->addSubgraph(name, std::move(sub));
      continue;
    }
    warn(i, "fx_syntax", "unexpected line in class body: " + excerpt(line.code));
    skipBlock(i, line.indent);
  }
  builder.finish();
  return builder.graph();
}

// `def forward(self, a: "f32[4]", b):` on one line, or one parameter per line up to `):` (AOT,
// 2025), possibly with a trailing `# descriptor` comment per parameter.
bool FxTextParser::signature(size_t& i, int defIndent, GraphBuilder& builder) {
  std::string_view rest = lines_[i].code.substr(std::strlen("def forward("));
  for (;;) {
    const CodeScan scan = scanCode(rest, 0);
    std::string_view code = rest.substr(0, scan.commentPos);
    const std::string_view comment =
        scan.commentPos == std::string_view::npos ? std::string_view{} : trim(rest.substr(scan.commentPos + 1));
    // The parameter list ends at the ')' that closes forward's '(' .
    size_t close = std::string_view::npos;
    int depth = 0;
    for (size_t k = 0; k < code.size(); ++k) {
      const char c = code[k];
      if (c == '\'' || c == '"') {
        const size_t end = fx::skipStringLiteral(code, k);
        if (end == std::string_view::npos) break;
        k = end - 1;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']' || c == '}') && --depth < 0) {
        close = k;
        break;
      }
    }
    splitTopLevel(trim(code.substr(0, close)), ',', pieces_);
    for (auto piece : pieces_) {
      piece = trim(piece);
      if (piece.empty() || piece == "self") continue;
      ParamDecl decl;
      decl.line = i;
      size_t p = 0;
      while (p < piece.size() && piece[p] == '*') ++p;
      const size_t len = identLength(piece, p);
      if (len == 0) {
        warn(i, "fx_syntax", "cannot read forward parameter: " + excerpt(piece));
        continue;
      }
      decl.name = piece.substr(0, p + len);
      if (decl.name == "self") continue;  // the module itself, never a graph input
      if (isKeyword(piece.substr(p, len))) {
        warn(i, "fx_syntax", "cannot read forward parameter: " + excerpt(piece));
        continue;
      }
      std::string_view after = trim(piece.substr(p + len));
      const bool annotated = after.starts_with(':');
      if (annotated) {
        after = trim(after.substr(1));
        size_t annEnd = after.starts_with('"') ? after.find('"', 1) : std::string_view::npos;
        if (after.starts_with('"')) {
          if (annEnd == std::string_view::npos) {
            warn(i, "fx_syntax", "cannot read forward parameter: " + excerpt(piece));
            continue;
          }
          decl.annotation = after.substr(0, annEnd + 1);
          after = trim(after.substr(annEnd + 1));
        } else {
          annEnd = after.find('=');
          decl.annotation = trim(after.substr(0, annEnd));
          after = annEnd == std::string_view::npos ? std::string_view{} : after.substr(annEnd);
        }
      }
      if (after.starts_with('=')) decl.defaultValue = trim(after.substr(1));
      if ((!after.empty() && decl.defaultValue.empty()) || (annotated && !isAnnotation(decl.annotation))) {
        warn(i, "fx_syntax", "cannot read forward parameter: " + excerpt(piece));
        continue;
      }
      decl.comment = comment;
      builder.addParam(decl);
    }
    ++i;
    if (close != std::string_view::npos) return true;
    while (i < lines_.size() && lines_[i].code.empty()) ++i;
    if (i == lines_.size() || lines_[i].indent < defIndent) {
      warn(i - 1, "fx_syntax", "unterminated forward signature");
      return false;
    }
    rest = lines_[i].code;
  }
}

void FxTextParser::body(size_t& i, int defIndent, GraphBuilder& builder) {
  static const std::vector<std::string_view> kNoItemComments;
  while (i < lines_.size()) {
    checkCancelled(i);
    const Line& line = lines_[i];
    if (line.code.empty()) {
      ++i;
      continue;
    }
    if (line.indent <= defIndent) return;
    if (line.code[0] == '#') {
      builder.comment(line.code);
      ++i;
      continue;
    }
    const CodeScan scan = scanCode(line.code, 0, &segments_);
    const std::string_view code = trim(line.code.substr(0, scan.commentPos));
    const std::string_view comment =
        scan.commentPos == std::string_view::npos ? std::string_view{} : trim(line.code.substr(scan.commentPos + 1));
    if (scan.depth <= 0) {
      builder.statement(segments_, comment, kNoItemComments, i);
      ++i;
      continue;
    }
    // Brackets left open: the statement goes on over the next lines, one item per line, each
    // possibly with a comment (`view_45,  # PlainAOTOutput(idx=1)`), indented deeper up to the
    // closing line. A line at the statement's indent that does not close it starts a new one.
    const size_t first = i;
    const int statementIndent = line.indent;
    int depth = scan.depth;
    joined_.assign(code);
    itemComments_.clear();
    for (++i; depth > 0 && i < lines_.size(); ++i) {
      const Line& next = lines_[i];
      if (next.code.empty()) continue;
      if (next.indent < statementIndent ||
          (next.indent == statementIndent && kCharClass[static_cast<unsigned char>(next.code[0])] != kClose))
        break;
      const CodeScan s = scanCode(next.code, depth);
      depth = s.depth;
      const std::string_view part = trim(next.code.substr(0, s.commentPos));
      joined_ += ' ';
      joined_ += part;
      if (part.ends_with(','))
        itemComments_.push_back(s.commentPos == std::string_view::npos ? std::string_view{}
                                                                       : trim(next.code.substr(s.commentPos + 1)));
    }
    if (depth > 0) {
      warn(first, "fx_syntax", "unterminated statement: " + excerpt(code));
      continue;
    }
    splitTopLevel(joined_, ';', segments_);
    builder.statement(segments_, comment, itemComments_, first);
  }
}

}  // namespace

std::shared_ptr<ir::Graph> parseFxText(std::string_view text, const FxParseOptions& options, Diagnostics& diagnostics) {
  return FxTextParser(text, options, diagnostics).run();
}

}  // namespace lathe::io
