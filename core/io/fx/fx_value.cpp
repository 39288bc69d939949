// The FX text parser's argument values: Python values as FX codegen prints them (ValueParser,
// detail/fx_parser.h).
#include <limits>

#include "io/fx/detail/fx_parser.h"

namespace lathe::io::fx::detail {
namespace {

constexpr int kMaxValueDepth = 200;  // nesting of lists/tuples/calls inside one statement

// The Arg being read is fresh (default): its fields are set in place, without temporaries (an
// Arg carries two vectors).
void setStr(Arg& out, Arg::Kind kind, StrId s) {
  out.kind = kind;
  out.s = s;
}
void setInt(Arg& out, int64_t v) {
  out.kind = Arg::Kind::Int;
  out.i = v;
}
void setFloat(Arg& out, double v) {
  out.kind = Arg::Kind::Float;
  out.f = v;
}
void setBool(Arg& out, bool v) {
  out.kind = Arg::Kind::Bool;
  out.b = v;
}
void setNode(Arg& out, NodeId n) {
  out.kind = Arg::Kind::Node;
  out.node = n;
}
void setDType(Arg& out, DType t) {
  out.kind = Arg::Kind::DType;
  out.dtype = t;
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

}  // namespace

bool ValueParser::value(Arg& out, bool allowExpression) {
  if (++depth_ > kMaxValueDepth) return false;
  const bool ok = valueInner(out, allowExpression);
  --depth_;
  return ok;
}

bool ValueParser::sequence(char closer, std::vector<Arg>& items, std::vector<std::pair<StrId, Arg>>* kwargs,
                           bool* trailingComma) {
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

// After an item: a comma (trailing = true, more may follow) or the closer (consumed).
bool ValueParser::separator(char closer, bool& trailing) {
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

bool ValueParser::valueInner(Arg& out, bool allowExpression) {
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

bool ValueParser::dict(Arg& out) {
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

bool ValueParser::string(Arg& out) {
  const size_t end = fx::skipStringLiteral(s_, pos);
  if (end == std::string_view::npos || !fx::decodeStringLiteral(s_.substr(pos, end - pos), scratch_)) return false;
  pos = end;
  setStr(out, Arg::Kind::String, intern_(scratch_));
  return true;
}

bool ValueParser::number(Arg& out, bool allowExpression) {
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

bool ValueParser::name(Arg& out) {
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

void ValueParser::addRefIfNode(Arg& out, std::string_view word) {
  if (const NodeId node = names_.find(word); node != ir::kNoNode) out.items.push_back(Arg::ofNode(node));
}

// From `start` to the next separator at this depth: a symbolic expression ("s0 + 1").
bool ValueParser::expression(size_t start, Arg& out) {
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
    } else if (c == '=' && !(i + 1 < s_.size() && s_[i + 1] == '=') && !(i > start && std::strchr("=!<>", s_[i - 1]))) {
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

}  // namespace lathe::io::fx::detail
