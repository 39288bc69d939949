// FX readable graph text (GraphModule.print_readable with strides and devices) <-> ir::Graph.
// Every flavour torch writes: Dynamo, AOT joint/forward/backward/inference, post-grad, nested
// higher-order-op subgraphs (nested classes), symbolic sizes, `# File:` provenance.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "ir/sym_expr.h"
#include "util/diagnostics.h"
#include "util/progress.h"

namespace lathe::io {

struct FxParseOptions {
  // For diagnostics: file and the line at which the text starts within it (1-based).
  std::string file;
  uint64_t firstLine = 1;
  // Resolves hints of symbolic sizes (from create_symbol events of the same compile). Optional.
  ir::SymbolLookup symbols;
  // Checked for cancellation while parsing (a graph can be tens of MB). Optional.
  const Progress* progress = nullptr;
};

// Parses one printed GraphModule (with its nested subgraph classes). Lines that cannot be parsed
// become warnings and are skipped; returns nullptr only when no `def forward` is found at all.
// The returned graph and its subgraphs are finalized.
[[nodiscard]] std::shared_ptr<ir::Graph> parseFxText(std::string_view text, const FxParseOptions& options,
                                                     Diagnostics& diagnostics);

// Prints a graph in the same readable form; parseFxText(printFxText(g)) gives a graph equal to g
// (see graphsEqual).
[[nodiscard]] std::string printFxText(const ir::Graph& graph);

// Structural equality: same nodes (kind, name, target, args, kwargs, meta, comment, provenance),
// same subgraphs. On difference, *why (if given) names the first one.
[[nodiscard]] bool graphsEqual(const ir::Graph& a, const ir::Graph& b, std::string* why = nullptr);

}  // namespace lathe::io
