// Symbolic size expressions in torch.export JSON (`SymExpr.expr_str`). Current torch writes sympy
// `srepr` ("Add(Symbol('s0', integer=True, positive=True), Integer(1))"), older files the plain
// sympy `str` ("s0 + 1"). The IR keeps the `str` form (what FX annotations print), so srepr text is
// printed back the way sympy's StrPrinter and torch's sympy functions print it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lathe::io {

// True when text looks like sympy srepr (a Symbol('..'), Integer(..), Rational(..), Float('..')
// constructor) rather than plain str text.
[[nodiscard]] bool looksLikeSrepr(std::string_view text);

// sympy str text of an srepr expression: "Mul(Integer(2), FloorDiv(Symbol('s0'), Integer(2)))" ->
// "2*((s0//2))". nullopt when the text is not well-formed srepr (or nests deeper than the parser
// allows). Never throws.
[[nodiscard]] std::optional<std::string> sympyStrFromSrepr(std::string_view srepr);

}  // namespace lathe::io
