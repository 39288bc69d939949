#include "ir/sym_expr.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

namespace lathe::ir {
namespace {

constexpr int kMaxDepth = 64;

constexpr bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool isIdentChar(char c) {
  return isIdentStart(c) || (c >= '0' && c <= '9');
}
constexpr bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// Names sympy prints that are constants, not symbols.
bool isConstantName(std::string_view s) {
  static constexpr std::array<std::string_view, 7> kNames{"True", "False", "oo", "int_oo", "zoo", "nan", "pi"};
  for (auto n : kNames)
    if (n == s) return true;
  return false;
}

int64_t floorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t pythonMod(int64_t a, int64_t b) {
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// Recursive-descent evaluator over sympy's `str` syntax with Python precedence:
// comparison < | < & < (+ -) < (* / // %) < unary < ** < primary. Integer arithmetic, checked for
// overflow and division by zero; any failure makes the whole result unknown.
class Evaluator {
 public:
  Evaluator(std::string_view text, const SymbolLookup& lookup) : s_(text), lookup_(lookup) {}

  std::optional<int64_t> run() {
    const int64_t v = comparison();
    skipSpaces();
    if (failed_ || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  int64_t fail() {
    failed_ = true;
    return 0;
  }
  void skipSpaces() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool accept(std::string_view token) {
    skipSpaces();
    if (s_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  [[nodiscard]] char peek() {
    skipSpaces();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  [[nodiscard]] char peekAt(size_t offset) const { return pos_ + offset < s_.size() ? s_[pos_ + offset] : '\0'; }

  int64_t comparison() {
    int64_t a = bitOr();
    while (!failed_) {
      const char c = peek(), d = peekAt(1);
      if (c == '=' && d == '=') {
        pos_ += 2;
        a = a == bitOr();
      } else if (c == '!' && d == '=') {
        pos_ += 2;
        a = a != bitOr();
      } else if (c == '<' && d == '=') {
        pos_ += 2;
        a = a <= bitOr();
      } else if (c == '>' && d == '=') {
        pos_ += 2;
        a = a >= bitOr();
      } else if (c == '<' && d != '<') {
        ++pos_;
        a = a < bitOr();
      } else if (c == '>' && d != '>') {
        ++pos_;
        a = a > bitOr();
      } else {
        break;
      }
    }
    return a;
  }

  int64_t bitOr() {
    int64_t a = bitAnd();
    while (!failed_ && peek() == '|') {
      ++pos_;
      a = (bitAnd() != 0) | (a != 0);
    }
    return a;
  }

  int64_t bitAnd() {
    int64_t a = additive();
    while (!failed_ && peek() == '&') {
      ++pos_;
      a = (additive() != 0) & (a != 0);
    }
    return a;
  }

  int64_t additive() {
    int64_t a = multiplicative();
    while (!failed_) {
      const char c = peek();
      if (c != '+' && c != '-') break;
      ++pos_;
      const int64_t b = multiplicative();
      if (c == '+' ? __builtin_add_overflow(a, b, &a) : __builtin_sub_overflow(a, b, &a)) return fail();
    }
    return a;
  }

  int64_t multiplicative() {
    int64_t a = unary();
    while (!failed_) {
      const char c = peek();
      if (c == '*' && peekAt(1) != '*') {
        ++pos_;
        if (__builtin_mul_overflow(a, unary(), &a)) return fail();
      } else if (c == '/' || c == '%') {
        pos_ += (c == '/' && peekAt(1) == '/') ? 2 : 1;  // "/" is floor division for integer sizes
        const int64_t b = unary();
        a = c == '%' ? mod(a, b) : divide(a, b);
      } else {
        break;
      }
    }
    return a;
  }

  int64_t divide(int64_t a, int64_t b) {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return fail();
    return floorDiv(a, b);
  }
  int64_t mod(int64_t a, int64_t b) {
    if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1)) return fail();
    return pythonMod(a, b);
  }

  int64_t unary() {
    const char c = peek();
    if (c != '-' && c != '+') return power();
    if (++depth_ > kMaxDepth) return fail();
    ++pos_;
    const int64_t v = unary();
    --depth_;
    if (c == '+') return v;
    if (v == std::numeric_limits<int64_t>::min()) return fail();
    return -v;
  }

  int64_t power() {
    const int64_t base = primary();
    if (failed_ || !accept("**")) return base;
    if (++depth_ > kMaxDepth) return fail();
    const int64_t exponent = unary();  // right-associative, binds tighter than unary on its left only
    --depth_;
    return pow(base, exponent);
  }

  int64_t pow(int64_t base, int64_t exponent) {
    if (exponent < 0) return fail();  // a rational, not a size
    int64_t result = 1;
    while (exponent > 0 && !failed_) {
      if (exponent & 1)
        if (__builtin_mul_overflow(result, base, &result)) return fail();
      exponent >>= 1;
      if (exponent > 0 && __builtin_mul_overflow(base, base, &base)) return fail();
    }
    return result;
  }

  int64_t primary() {
    const char c = peek();
    if (c == '(') {
      if (++depth_ > kMaxDepth) return fail();
      ++pos_;
      const int64_t v = comparison();
      --depth_;
      if (!accept(")")) return fail();
      return v;
    }
    if (isDigit(c)) return number();
    const size_t start = pos_;
    while (pos_ < s_.size() && isIdentChar(s_[pos_])) ++pos_;
    if (pos_ == start || isDigit(s_[start])) return fail();
    const std::string_view name = s_.substr(start, pos_ - start);
    if (peek() == '(') return call(name);
    if (name == "True") return 1;
    if (name == "False") return 0;
    if (isConstantName(name) || !lookup_) return fail();
    const std::optional<int64_t> value = lookup_(name);
    return value ? *value : fail();
  }

  int64_t number() {
    int64_t v = 0;
    while (pos_ < s_.size() && isDigit(s_[pos_])) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[pos_] - '0', &v)) return fail();
      ++pos_;
    }
    if (pos_ < s_.size() && s_[pos_] == '.') {  // sympy Float: usable only when it is integral
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
      if (pos_ < s_.size() && isDigit(s_[pos_])) return fail();
    }
    if (pos_ < s_.size() && isIdentChar(s_[pos_])) return fail();  // 1e5, 0x10: not sympy integer syntax
    return v;
  }

  int64_t call(std::string_view name) {
    if (++depth_ > kMaxDepth) return fail();
    ++pos_;  // '('
    std::array<int64_t, 8> args{};
    size_t n = 0;
    if (!accept(")")) {
      for (;;) {
        const int64_t v = comparison();
        if (failed_) return 0;
        if (n == args.size()) return fail();
        args[n++] = v;
        if (accept(")")) break;
        if (!accept(",")) return fail();
      }
    }
    --depth_;
    return apply(name, args.data(), n);
  }

  int64_t apply(std::string_view f, const int64_t* a, size_t n) {
    auto is = [&](std::string_view name, size_t arity) { return f == name && n == arity; };
    if (is("Mod", 2) || is("PythonMod", 2)) return mod(a[0], a[1]);
    if (is("FloorDiv", 2) || is("CleanDiv", 2) || is("IntFloorDiv", 2)) return divide(a[0], a[1]);
    if (is("CeilDiv", 2)) {
      if (a[0] == std::numeric_limits<int64_t>::min()) return fail();
      const int64_t q = divide(-a[0], a[1]);
      return failed_ ? 0 : -q;
    }
    if (is("ModularIndexing", 3)) {
      const int64_t q = divide(a[0], a[1]);
      return failed_ ? 0 : mod(q, a[2]);
    }
    if (is("Where", 3)) return a[0] ? a[1] : a[2];
    if ((f == "Max" || f == "Min") && n >= 1) {
      int64_t v = a[0];
      for (size_t i = 1; i < n; ++i) v = f == "Max" ? std::max(v, a[i]) : std::min(v, a[i]);
      return v;
    }
    if (is("Abs", 1)) return a[0] == std::numeric_limits<int64_t>::min() ? fail() : (a[0] < 0 ? -a[0] : a[0]);
    if (is("Eq", 2)) return a[0] == a[1];
    if (is("Ne", 2)) return a[0] != a[1];
    if (is("Lt", 2) || is("StrictLessThan", 2)) return a[0] < a[1];
    if (is("Le", 2) || is("LessThan", 2)) return a[0] <= a[1];
    if (is("Gt", 2) || is("StrictGreaterThan", 2)) return a[0] > a[1];
    if (is("Ge", 2) || is("GreaterThan", 2)) return a[0] >= a[1];
    if (is("Not", 1)) return a[0] == 0;
    if ((f == "And" || f == "Or") && n >= 1) {
      bool v = f == "And";
      for (size_t i = 0; i < n; ++i) v = f == "And" ? (v && a[i] != 0) : (v || a[i] != 0);
      return v;
    }
    // Integer-valued already: rounding functions are the identity on integers.
    if (is("floor", 1) || is("ceiling", 1) || is("FloorToInt", 1) || is("CeilToInt", 1) || is("TruncToInt", 1) ||
        is("Identity", 1) || is("RoundToInt", 1))
      return a[0];
    if (is("PowByNatural", 2)) return pow(a[0], a[1]);
    if (is("LShift", 2)) {
      int64_t shifted = 0;
      if (a[1] < 0 || a[1] > 62 || __builtin_mul_overflow(a[0], int64_t{1} << a[1], &shifted)) return fail();
      return shifted;
    }
    if (is("RShift", 2)) return a[1] < 0 ? fail() : (a[1] > 62 ? (a[0] < 0 ? -1 : 0) : a[0] >> a[1]);
    return fail();  // IntTrueDiv, ToFloat, Piecewise, ...: not an integer size
  }

  std::string_view s_;
  const SymbolLookup& lookup_;
  size_t pos_ = 0;
  int depth_ = 0;
  bool failed_ = false;
};

}  // namespace

std::optional<int64_t> evalSymExpr(std::string_view expr, const SymbolLookup& lookup) {
  return Evaluator(expr, lookup).run();
}

void forEachSymbol(std::string_view expr, const std::function<void(std::string_view)>& f) {
  size_t i = 0;
  while (i < expr.size()) {
    const char c = expr[i];
    if (isDigit(c)) {  // a number, with whatever letters follow it ("1e5")
      while (i < expr.size() && (isIdentChar(expr[i]) || expr[i] == '.')) ++i;
      continue;
    }
    if (!isIdentStart(c)) {
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < expr.size() && isIdentChar(expr[i])) ++i;
    const std::string_view name = expr.substr(start, i - start);
    size_t next = i;
    while (next < expr.size() && expr[next] == ' ') ++next;
    const bool isFunction = next < expr.size() && expr[next] == '(';
    if (!isFunction && !isConstantName(name)) f(name);
  }
}

}  // namespace lathe::ir
