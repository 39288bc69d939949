// Symbolic size expressions as torch prints them (sympy `str`), evaluated against known symbols.
#include "ir/sym_expr.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <vector>

using namespace lathe::ir;

namespace {

// s27 = 768 as create_symbol reports it in captures/llama3_8b_2l_dyntrain.log.gz.
const std::unordered_map<std::string, int64_t> kKnown{{"s27", 768}, {"s0", 10}, {"s77", 7}, {"u1", 7}, {"u0", -4}};

std::optional<int64_t> lookup(std::string_view s) {
  auto it = kKnown.find(std::string(s));
  return it == kKnown.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

std::optional<int64_t> eval(std::string_view e) {
  return evalSymExpr(e, lookup);
}

std::vector<std::string> symbols(std::string_view e) {
  std::vector<std::string> out;
  forEachSymbol(e, [&](std::string_view s) { out.emplace_back(s); });
  return out;
}

}  // namespace

TEST(SymExpr, SizesFromRealGraphs) {
  // Sizes and strides printed in the dyntrain graphs.
  EXPECT_EQ(eval("s27"), 768);
  EXPECT_EQ(eval("4096*s27"), 4096 * 768);
  EXPECT_EQ(eval("s27**2"), 768 * 768);
  EXPECT_EQ(eval("s27 + 1"), 769);
  EXPECT_EQ(eval("1 + s27"), 769);
  EXPECT_EQ(eval("2 * s27"), 1536);
  EXPECT_EQ(eval("128256*s27"), int64_t{128256} * 768);
  // From formats.md: floor division and unbacked symbols.
  EXPECT_EQ(eval("(s77//2)"), 3);
  EXPECT_EQ(eval("((-u1)//3) + 5"), 2);  // floor(-7 / 3) = -3
  EXPECT_EQ(eval("(((-u1)//3)) + 5"), 2);
  EXPECT_EQ(eval("-u1"), -7);
  EXPECT_EQ(eval("2*s0"), 20);
}

TEST(SymExpr, ArithmeticFollowsPython) {
  EXPECT_EQ(eval("7 // 2"), 3);
  EXPECT_EQ(eval("-7 // 2"), -4);
  EXPECT_EQ(eval("s0/4"), 2);  // integer sizes: '/' floors
  EXPECT_EQ(eval("-7 % 3"), 2);
  EXPECT_EQ(eval("7 % -3"), -2);
  EXPECT_EQ(eval("2 + 3*4 - 1"), 13);
  EXPECT_EQ(eval("(2 + 3)*4"), 20);
  EXPECT_EQ(eval("2**3**2"), 512);  // right-associative
  EXPECT_EQ(eval("-2**2"), -4);     // ** binds tighter than unary minus
  EXPECT_EQ(eval("--3"), 3);
  EXPECT_EQ(eval("+3"), 3);
}

TEST(SymExpr, SympyFunctions) {
  EXPECT_EQ(eval("Mod(s0, 8)"), 2);
  EXPECT_EQ(eval("Mod(-1, 8)"), 7);
  EXPECT_EQ(eval("PythonMod(s0, 3)"), 1);
  EXPECT_EQ(eval("FloorDiv(s0, 3)"), 3);
  EXPECT_EQ(eval("FloorDiv(-s0, 3)"), -4);
  EXPECT_EQ(eval("CeilDiv(s0, 3)"), 4);
  EXPECT_EQ(eval("CeilDiv(-s0, 3)"), -3);
  EXPECT_EQ(eval("CleanDiv(s0, 5)"), 2);
  EXPECT_EQ(eval("ModularIndexing(s0, 3, 2)"), 1);  // (10 // 3) % 2
  EXPECT_EQ(eval("Max(1, s0)"), 10);
  EXPECT_EQ(eval("Max(1, s0, 32)"), 32);
  EXPECT_EQ(eval("Min(s27, 512)"), 512);
  EXPECT_EQ(eval("Abs(u0)"), 4);
  EXPECT_EQ(eval("Where(Eq(s0, 10), 1, 2)"), 1);
  EXPECT_EQ(eval("floor(s0)"), 10);
  EXPECT_EQ(eval("PowByNatural(2, s0)"), 1024);
  EXPECT_EQ(eval("Max(1, 2*s0) + Mod(s77, 4)"), 23);
}

TEST(SymExpr, RelationsAreZeroOrOne) {
  EXPECT_EQ(eval("Eq(s0, 10)"), 1);
  EXPECT_EQ(eval("Ne(s0, 10)"), 0);
  EXPECT_EQ(eval("s0 < 3"), 0);
  EXPECT_EQ(eval("s0 >= 10"), 1);
  EXPECT_EQ(eval("Lt(s0, 11)"), 1);
  EXPECT_EQ(eval("(s0 > 1) & (s77 < 3)"), 0);
  EXPECT_EQ(eval("(s0 > 1) | (s77 < 3)"), 1);
  EXPECT_EQ(eval("And(True, Ne(s0, 1))"), 1);
  EXPECT_EQ(eval("Not(False)"), 1);
}

TEST(SymExpr, UnknownOrUnsupportedGivesNothing) {
  EXPECT_EQ(eval("s99"), std::nullopt);                  // symbol not known
  EXPECT_EQ(evalSymExpr("s27", nullptr), std::nullopt);  // no lookup at all
  EXPECT_EQ(eval("IntTrueDiv(s0, 3)"), std::nullopt);    // a float
  EXPECT_EQ(eval("s0 / 0"), std::nullopt);
  EXPECT_EQ(eval("Mod(s0, 0)"), std::nullopt);
  EXPECT_EQ(eval("9223372036854775807 + 1"), std::nullopt);  // overflow
  EXPECT_EQ(eval("99999999999999999999"), std::nullopt);
  EXPECT_EQ(eval("2**64"), std::nullopt);
  EXPECT_EQ(eval("2**-1"), std::nullopt);
  EXPECT_EQ(eval("int_oo"), std::nullopt);
  EXPECT_EQ(eval("1.5*s0"), std::nullopt);
  EXPECT_EQ(eval("2.0*s0"), 20);  // an integral sympy Float
  EXPECT_EQ(eval(""), std::nullopt);
  EXPECT_EQ(eval("s0 +"), std::nullopt);
  EXPECT_EQ(eval("(s0"), std::nullopt);
  EXPECT_EQ(eval("s0)"), std::nullopt);
  EXPECT_EQ(eval("Max()"), std::nullopt);
  EXPECT_EQ(eval("Max(1, 2, 3, 4, 5, 6, 7, 8, 9)"), std::nullopt);  // more arguments than it reads
  EXPECT_EQ(eval("1e5"), std::nullopt);
  // Bounded depth: deep nesting gives up instead of overflowing the stack.
  const std::string deep = std::string(100000, '(') + "1" + std::string(100000, ')');
  EXPECT_EQ(eval(deep), std::nullopt);
  EXPECT_EQ(eval(std::string(100000, '-') + "1"), std::nullopt);
  EXPECT_EQ(eval(std::string(50, '(') + "s0" + std::string(50, ')')), 10);
}

TEST(SymExpr, ForEachSymbolSkipsFunctionsAndConstants) {
  EXPECT_EQ(symbols("Max(1, s0) + u12*s3 - s0"), (std::vector<std::string>{"s0", "u12", "s3", "s0"}));
  EXPECT_EQ(symbols("4096*s27"), (std::vector<std::string>{"s27"}));
  EXPECT_EQ(symbols("((-u1)//3) + 5"), (std::vector<std::string>{"u1"}));
  EXPECT_EQ(symbols("Eq(s0, True) & (oo > int_oo)"), (std::vector<std::string>{"s0"}));
  EXPECT_EQ(symbols("1e5 + 2"), (std::vector<std::string>{}));
  EXPECT_EQ(symbols("FloorDiv (s0, 2)"), (std::vector<std::string>{"s0"}));
  EXPECT_EQ(symbols(""), (std::vector<std::string>{}));
}
