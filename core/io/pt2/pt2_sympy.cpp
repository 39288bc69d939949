#include "io/pt2/detail/pt2_sympy.h"

#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

namespace lathe::io {
namespace {

// sympy.printing.precedence.PRECEDENCE, plus the values StrPrinter uses between them.
constexpr double kAtom = 1000, kNot = 100, kFunc = 70, kPow = 60, kMul = 50, kAdd = 40, kRelational = 35, kAnd = 30,
                 kOr = 20, kXor = 10, kBitwiseAnd = 38, kBitwiseOr = 36, kBitwiseXor = 37;
// torch/utils/_sympy/functions.py gives these `precedence = 35` ("lower precedence than add"), which
// is why torch prints "(Mod(s0, 8)) + 1" and "2*((s0//2))".
constexpr double kTorchFunction = 35;
constexpr int kMaxDepth = 256;

struct Expr {
  enum class Kind : uint8_t { Symbol, Integer, Rational, Float, Atom, Call };
  Kind kind = Kind::Atom;
  std::string_view text;   // symbol name, integer digits, float digits, atom, or function name
  std::string_view denom;  // Rational: denominator digits (text holds the numerator)
  std::vector<uint32_t> args;
};

bool isIdentStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || (c >= '0' && c <= '9');
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// Recursive descent over srepr text: Name(args, key=value), 'quoted', integers, bare atoms (oo, true).
class SreprParser {
 public:
  explicit SreprParser(std::string_view text) : s_(text) {}

  std::optional<uint32_t> parse() {
    auto root = expr(0);
    skipSpace();
    if (!root || pos_ != s_.size()) return std::nullopt;
    return root;
  }
  std::vector<Expr>& nodes() { return nodes_; }

 private:
  // A parsed argument before it is known what the enclosing call makes of it.
  struct Token {
    enum class Kind : uint8_t { Node, String, Number } kind = Kind::Node;
    uint32_t node = 0;
    std::string_view text;
  };

  void skipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t')) ++pos_;
  }
  bool eat(char c) {
    skipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  uint32_t add(Expr e) {
    nodes_.push_back(std::move(e));
    return static_cast<uint32_t>(nodes_.size() - 1);
  }

  std::optional<Token> token(int depth) {
    if (depth > kMaxDepth) return std::nullopt;
    skipSpace();
    if (pos_ >= s_.size()) return std::nullopt;
    const size_t start = pos_;
    const char c = s_[pos_];
    if (c == '\'' || c == '"') {
      ++pos_;
      while (pos_ < s_.size() && s_[pos_] != c) pos_ += s_[pos_] == '\\' ? 2 : 1;
      if (pos_ >= s_.size()) return std::nullopt;
      ++pos_;
      return Token{Token::Kind::String, 0, s_.substr(start + 1, pos_ - start - 2)};
    }
    if (c == '-' || isDigit(c)) {
      ++pos_;
      while (pos_ < s_.size() && (isDigit(s_[pos_]) || s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == '+' ||
                                  (s_[pos_] == '-' && (s_[pos_ - 1] == 'e'))))
        ++pos_;
      if (c == '-' && pos_ < s_.size() && isIdentStart(s_[pos_])) {  // "-oo", "-int_oo"
        while (pos_ < s_.size() && isIdentChar(s_[pos_])) ++pos_;
        return Token{Token::Kind::Node, add({Expr::Kind::Atom, s_.substr(start, pos_ - start), {}, {}}), {}};
      }
      if (pos_ == start + 1 && c == '-') return std::nullopt;
      return Token{Token::Kind::Number, 0, s_.substr(start, pos_ - start)};
    }
    if (!isIdentStart(c)) return std::nullopt;
    while (pos_ < s_.size() && isIdentChar(s_[pos_])) ++pos_;
    const std::string_view name = s_.substr(start, pos_ - start);
    if (!eat('(')) return Token{Token::Kind::Node, add({Expr::Kind::Atom, name, {}, {}}), {}};
    std::vector<Token> args;
    if (!eat(')')) {
      while (true) {
        skipSpace();
        // key=value pairs (integer=True, precision=53) only qualify the value; skip them.
        size_t look = pos_;
        while (look < s_.size() && isIdentChar(s_[look])) ++look;
        const bool keyword =
            look > pos_ && look < s_.size() && s_[look] == '=' && (look + 1 >= s_.size() || s_[look + 1] != '=');
        if (keyword) pos_ = look + 1;
        auto arg = token(depth + 1);
        if (!arg) return std::nullopt;
        if (!keyword) args.push_back(*arg);
        if (eat(')')) break;
        if (!eat(',')) return std::nullopt;
      }
    }
    return call(name, args);
  }

  std::optional<Token> call(std::string_view name, const std::vector<Token>& args) {
    auto textArg = [&](size_t i, Token::Kind kind) -> std::optional<std::string_view> {
      if (i >= args.size() || args[i].kind != kind) return std::nullopt;
      return args[i].text;
    };
    if (name == "Symbol" || name == "Dummy") {
      auto n = textArg(0, Token::Kind::String);
      if (!n || n->empty()) return std::nullopt;
      return Token{Token::Kind::Node, add({Expr::Kind::Symbol, *n, {}, {}}), {}};
    }
    if (name == "Integer") {
      auto v = textArg(0, Token::Kind::Number);
      if (!v || args.size() != 1) return std::nullopt;
      return Token{Token::Kind::Node, add({Expr::Kind::Integer, *v, {}, {}}), {}};
    }
    if (name == "Rational") {
      auto p = textArg(0, Token::Kind::Number);
      auto q = textArg(1, Token::Kind::Number);
      if (!p || !q || args.size() != 2) return std::nullopt;
      return Token{Token::Kind::Node, add({Expr::Kind::Rational, *p, *q, {}}), {}};
    }
    if (name == "Float") {
      auto v = textArg(0, Token::Kind::String);
      if (!v) v = textArg(0, Token::Kind::Number);
      if (!v) return std::nullopt;
      return Token{Token::Kind::Node, add({Expr::Kind::Float, *v, {}, {}}), {}};
    }
    Expr e{Expr::Kind::Call, name, {}, {}};
    for (const auto& a : args) {
      // Stray literals inside an unknown function are kept as atoms, printed as written.
      e.args.push_back(a.kind == Token::Kind::Node ? a.node : add({Expr::Kind::Atom, a.text, {}, {}}));
    }
    return Token{Token::Kind::Node, add(std::move(e)), {}};
  }

  std::optional<uint32_t> expr(int depth) {
    auto t = token(depth);
    if (!t) return std::nullopt;
    if (t->kind == Token::Kind::Number) return add({Expr::Kind::Integer, t->text, {}, {}});
    if (t->kind == Token::Kind::String) return std::nullopt;
    return t->node;
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::vector<Expr> nodes_;
};

bool isTorchFunction(std::string_view head) {
  return head == "FloorDiv" || head == "CleanDiv" || head == "Mod" || head == "PythonMod" ||
         head == "ModularIndexing" || head == "Where" || head == "IntTrueDiv" || head == "FloatTrueDiv" ||
         head == "FloatPow";
}

std::string_view relationalOperator(std::string_view head) {
  if (head == "StrictLessThan") return "<";
  if (head == "LessThan") return "<=";
  if (head == "StrictGreaterThan") return ">";
  if (head == "GreaterThan") return ">=";
  return {};
}

std::optional<int64_t> parseInt(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  const bool negative = digits[0] == '-';
  if (negative) digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 18) return std::nullopt;
  int64_t v = 0;
  for (char c : digits) {
    if (!isDigit(c)) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return negative ? -v : v;
}

// Prints the tree the way sympy's StrPrinter does (sympy/printing/str.py), with torch's overrides.
class StrPrinter {
 public:
  explicit StrPrinter(const std::vector<Expr>& nodes) : n_(nodes) {}

  std::string print(uint32_t i) const {
    const Expr& e = n_[i];
    switch (e.kind) {
      case Expr::Kind::Symbol:
      case Expr::Kind::Integer:
      case Expr::Kind::Float: return std::string(e.text);
      case Expr::Kind::Rational: return std::string(e.text) + "/" + std::string(e.denom);
      case Expr::Kind::Atom:
        if (e.text == "true") return "True";
        if (e.text == "false") return "False";
        return std::string(e.text);
      case Expr::Kind::Call: return printCall(e);
    }
    return {};
  }

  double precedence(uint32_t i) const {
    const Expr& e = n_[i];
    switch (e.kind) {
      case Expr::Kind::Symbol: return kAtom;
      case Expr::Kind::Integer:
      case Expr::Kind::Float:
      case Expr::Kind::Atom: return negative(e) ? kAdd : kAtom;
      case Expr::Kind::Rational: return negative(e) ? kAdd : kMul;
      case Expr::Kind::Call: break;
    }
    const std::string_view h = e.text;
    if (h == "Add") return kAdd;
    if (h == "Mul") return mulPrecedence(e);
    if (h == "Pow") return kPow;
    if (h == "Equality" || h == "Unequality") return kMul;
    if (!relationalOperator(h).empty()) return kRelational;
    if (h == "And") return kAnd;
    if (h == "Or") return kOr;
    if (h == "Xor") return kXor;
    if (h == "Not") return kNot;
    if (isTorchFunction(h)) return kTorchFunction;
    if (h == "PowByNatural") return kMul;
    // Max/Min derive from Application, not Function, so precedence() falls through to Atom.
    if (h == "Max" || h == "Min" || h == "Identity") return kAtom;
    return kFunc;
  }

 private:
  static bool negative(const Expr& e) { return !e.text.empty() && e.text[0] == '-'; }
  bool isNumber(uint32_t i) const { return n_[i].kind == Expr::Kind::Integer || n_[i].kind == Expr::Kind::Rational; }
  bool isCall(uint32_t i, std::string_view head) const { return n_[i].kind == Expr::Kind::Call && n_[i].text == head; }

  std::string parenthesize(uint32_t i, double level) const {
    std::string s = print(i);
    return precedence(i) <= level ? "(" + s + ")" : s;
  }

  std::string join(const Expr& e, std::string_view sep, double level) const {
    std::string out;
    for (size_t k = 0; k < e.args.size(); ++k) {
      if (k) out += sep;
      out += level > 0 ? parenthesize(e.args[k], level) : print(e.args[k]);
    }
    return out;
  }

  double mulPrecedence(const Expr& e) const {
    for (uint32_t a : e.args)
      if (n_[a].kind == Expr::Kind::Call && precedence(a) < kMul) return kMul;
    return !e.args.empty() && isNumber(e.args[0]) && negative(n_[e.args[0]]) ? kAdd : kMul;
  }

  std::string printCall(const Expr& e) const {
    const std::string_view h = e.text;
    const size_t argc = e.args.size();
    if (h == "Add" && argc) return printAdd(e);
    if (h == "Mul" && argc) return printMul(e);
    if (h == "Pow" && argc == 2) return printPow(e);
    if ((h == "FloorDiv" || h == "CleanDiv") && argc == 2)
      return "(" + parenthesize(e.args[0], kAtom - 0.5) + "//" + parenthesize(e.args[1], kAtom - 0.5) + ")";
    if (h == "Identity" && argc == 1) return "(" + print(e.args[0]) + ")";
    if ((h == "Equality" || h == "Unequality") && argc == 2)
      return std::string(h == "Equality" ? "Eq(" : "Ne(") + print(e.args[0]) + ", " + print(e.args[1]) + ")";
    if (auto op = relationalOperator(h); !op.empty() && argc == 2)
      return parenthesize(e.args[0], kRelational) + " " + std::string(op) + " " + parenthesize(e.args[1], kRelational);
    if (h == "And" && argc) return join(e, " & ", kBitwiseAnd);
    if (h == "Or" && argc) return join(e, " | ", kBitwiseOr);
    if (h == "Xor" && argc) return join(e, " ^ ", kBitwiseXor);
    if (h == "Not" && argc == 1) return "~" + parenthesize(e.args[0], kNot);
    return std::string(h) + "(" + join(e, ", ", 0) + ")";
  }

  std::string printAdd(const Expr& e) const {
    std::string out;
    for (size_t k = 0; k < e.args.size(); ++k) {
      const uint32_t term = e.args[k];
      std::string t = print(term);
      char sign = '+';
      if (!t.empty() && t[0] == '-' && !isCall(term, "Add")) {
        sign = '-';
        t.erase(0, 1);
      }
      if (precedence(term) < kAdd || isCall(term, "Add")) t = "(" + t + ")";
      if (k == 0) {
        out = sign == '-' ? "-" + t : t;
      } else {
        out += ' ';
        out += sign;
        out += ' ';
        out += t;
      }
    }
    return out;
  }

  // Factors of a product as StrPrinter._print_Mul gathers them: numeric coefficient first, powers
  // with negative exponents moved below the fraction bar.
  std::string printMul(const Expr& e) const {
    const double prec = mulPrecedence(e);
    struct Factor {
      std::string text;
      double prec;
    };
    std::vector<Factor> num, den;
    int64_t p = 1, q = 1;
    size_t k = 0;
    for (; k < e.args.size() && isNumber(e.args[k]); ++k) {
      const Expr& c = n_[e.args[k]];
      auto cp = parseInt(c.text);
      auto cq = c.kind == Expr::Kind::Rational ? parseInt(c.denom) : std::optional<int64_t>(1);
      int64_t np = 0, nq = 0;
      if (!cp || !cq || *cq <= 0 || __builtin_mul_overflow(p, *cp, &np) || __builtin_mul_overflow(q, *cq, &nq)) break;
      const int64_t g = std::gcd(np, nq);
      p = g ? np / g : np;
      q = g ? nq / g : nq;
    }
    std::string sign;
    if (p < 0) {
      sign = "-";
      p = -p;
    }
    if (p != 1) num.push_back({std::to_string(p), kAtom});
    if (q != 1) den.push_back({std::to_string(q), kAtom});
    for (; k < e.args.size(); ++k) {
      const uint32_t f = e.args[k];
      if (isCall(f, "Pow") && n_[f].args.size() == 2 && isNumber(n_[f].args[1]) && negative(n_[n_[f].args[1]])) {
        const uint32_t base = n_[f].args[0];
        const Expr& exponent = n_[n_[f].args[1]];
        const std::string_view magnitude = exponent.text.substr(1);
        if (exponent.kind == Expr::Kind::Integer && magnitude == "1") {
          std::string b = print(base);
          const bool compound = (isCall(base, "Mul") || isCall(base, "Pow")) && n_[base].args.size() != 1;
          if (precedence(base) <= prec) b = "(" + b + ")";
          if (compound) b = "(" + b + ")";
          den.push_back({std::move(b), kAtom});
        } else {
          den.push_back({powerText(base, magnitude, exponent), kPow});
        }
        continue;
      }
      num.push_back({print(f), precedence(f)});
    }
    if (num.empty()) num.push_back({"1", kAtom});
    auto wrap = [](const Factor& f, double level) { return f.prec <= level ? "(" + f.text + ")" : f.text; };
    std::string out = sign;
    const double numLevel = num.size() == 1 && !sign.empty() ? 0.5 * (kPow + kMul) : prec;
    for (size_t i = 0; i < num.size(); ++i) out += (i ? "*" : "") + wrap(num[i], numLevel);
    if (den.size() == 1) {
      out += "/" + wrap(den[0], prec);
    } else if (den.size() > 1) {
      out += "/(";
      for (size_t i = 0; i < den.size(); ++i) out += (i ? "*" : "") + wrap(den[i], prec);
      out += ")";
    }
    return out;
  }

  // base**exponent where the exponent is given by its magnitude (the sign already taken out).
  std::string powerText(uint32_t base, std::string_view magnitude, const Expr& exponent) const {
    if (exponent.kind == Expr::Kind::Rational && magnitude == "1" && exponent.denom == "2")
      return "sqrt(" + print(base) + ")";
    const std::string e = exponent.kind == Expr::Kind::Rational
                              ? "(" + std::string(magnitude) + "/" + std::string(exponent.denom) + ")"
                              : std::string(magnitude);
    return parenthesize(base, kPow) + "**" + e;
  }

  std::string printPow(const Expr& e) const {
    const uint32_t base = e.args[0], exp = e.args[1];
    const Expr& x = n_[exp];
    if (x.kind == Expr::Kind::Rational && x.text == "1" && x.denom == "2") return "sqrt(" + print(base) + ")";
    if (x.kind == Expr::Kind::Rational && x.text == "-1" && x.denom == "2") return "1/sqrt(" + print(base) + ")";
    if (x.kind == Expr::Kind::Integer && x.text == "-1") return "1/" + parenthesize(base, kPow);
    return parenthesize(base, kPow) + "**" + parenthesize(exp, kPow);
  }

  const std::vector<Expr>& n_;
};

}  // namespace

bool looksLikeSrepr(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  return text.find("Symbol('") != std::string_view::npos || text.starts_with("Integer(") ||
         text.starts_with("Rational(") || text.starts_with("Float(") || text == "true" || text == "false";
}

std::optional<std::string> sympyStrFromSrepr(std::string_view srepr) {
  SreprParser parser(srepr);
  const auto root = parser.parse();
  if (!root) return std::nullopt;
  return StrPrinter(parser.nodes()).print(*root);
}

}  // namespace lathe::io
