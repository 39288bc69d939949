// Symbolic size expressions as torch prints them (sympy `str`: "s77", "2*s0", "(s77//2)",
// "Max(1, s0)", "Mod(s0, 8)", "((-u1)//3) + 5"), and their evaluation against known symbol values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace lathe::ir {

using SymbolLookup = std::function<std::optional<int64_t>(std::string_view symbol)>;

// Value of expr with symbols resolved by lookup; nullopt when a symbol is unknown or the text is
// not an expression this evaluator understands. Never throws; bounded recursion depth.
[[nodiscard]] std::optional<int64_t> evalSymExpr(std::string_view expr, const SymbolLookup& lookup);

// Symbol names appearing in expr (identifiers that are not function names), in order of appearance.
void forEachSymbol(std::string_view expr, const std::function<void(std::string_view)>& f);

}  // namespace lathe::ir
