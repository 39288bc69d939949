// Python lexical helpers shared by the FX text parser and printer: identifiers, string literals and
// float reprs exactly as FX codegen writes them (`repr()` of the argument values).
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace lathe::io::fx {

[[nodiscard]] constexpr bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
[[nodiscard]] constexpr bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

namespace detail {
inline constexpr std::array<bool, 256> kIdentChar = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) table[c] = isIdentStart(static_cast<char>(c)) || isDigit(static_cast<char>(c));
  return table;
}();
}  // namespace detail

[[nodiscard]] inline bool isIdentChar(char c) {
  return detail::kIdentChar[static_cast<unsigned char>(c)];
}

// Length of the identifier starting at s[pos] (0 when none starts there).
[[nodiscard]] inline size_t identLength(std::string_view s, size_t pos) {
  if (pos >= s.size() || !isIdentStart(s[pos])) return 0;
  size_t end = pos + 1;
  while (end < s.size() && isIdentChar(s[end])) ++end;
  return end - pos;
}

// Index just after the string literal whose opening quote is at s[pos], or npos when it is not
// closed on this text.
[[nodiscard]] size_t skipStringLiteral(std::string_view s, size_t pos);

// Decodes a complete quoted literal ('..' or "..", escapes as Python reads them, code points
// written as UTF-8). Returns false when it is malformed.
[[nodiscard]] bool decodeStringLiteral(std::string_view quoted, std::string& out);

// Python repr() of a str: single quotes unless the text holds ' and no ", escapes for backslash,
// the quote, \n \r \t and other control bytes. Bytes >= 0x80 are written as they are.
void appendStringRepr(std::string& out, std::string_view s);

// Python repr() of a float: shortest round-trip digits, "2.0", "1e-05", "1e+16", "inf", "nan".
void appendFloatRepr(std::string& out, double v);

// How FX codegen spells calls of Python operators (torch/fx/graph.py magic_methods and
// inplace_methods), and the canonical targets they load as.
struct OperatorSpelling {
  std::string_view symbol;
  std::string_view target;
};
// `a + b`. Longer symbols first, so that the first prefix match is the right one.
inline constexpr std::array<OperatorSpelling, 19> kBinaryOperators{{
    {"**", "operator.pow"},   {"//", "operator.floordiv"}, {"<<", "operator.lshift"}, {">>", "operator.rshift"},
    {"<=", "operator.le"},    {">=", "operator.ge"},       {"==", "operator.eq"},     {"!=", "operator.ne"},
    {"+", "operator.add"},    {"-", "operator.sub"},       {"*", "operator.mul"},     {"/", "operator.truediv"},
    {"%", "operator.mod"},    {"&", "operator.and_"},      {"|", "operator.or_"},     {"^", "operator.xor"},
    {"@", "operator.matmul"}, {"<", "operator.lt"},        {">", "operator.gt"},
}};
// `-a`.
inline constexpr std::array<OperatorSpelling, 3> kUnaryOperators{
    {{"-", "operator.neg"}, {"+", "operator.pos"}, {"~", "operator.invert"}}};
// `a += b;  name = a` (the node is the rebinding after the statement).
inline constexpr std::array<OperatorSpelling, 13> kInplaceOperators{{
    {"**=", "operator.ipow"},
    {"//=", "operator.ifloordiv"},
    {"<<=", "operator.ilshift"},
    {">>=", "operator.irshift"},
    {"+=", "operator.iadd"},
    {"-=", "operator.isub"},
    {"*=", "operator.imul"},
    {"/=", "operator.itruediv"},
    {"%=", "operator.imod"},
    {"&=", "operator.iand"},
    {"|=", "operator.ior"},
    {"^=", "operator.ixor"},
    {"@=", "operator.imatmul"},
}};
inline constexpr std::string_view kGetItemTarget = "operator.getitem";
inline constexpr std::string_view kSetItemTarget = "operator.setitem";  // `a[i] = v;  name = a`
inline constexpr std::string_view kGetAttrTarget = "getattr";           // `name = a.attr`

}  // namespace lathe::io::fx
