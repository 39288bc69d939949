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

// Parses one printed GraphModule (with its nested subgraph classes; for an `exported_program`
// payload, the graph after "ExportedProgram:", the signature and ranges after it left out). Lines
// that cannot be parsed become warnings (file:line) and are skipped; returns nullptr only when the
// text holds no readable `def forward`. The returned graph and its subgraphs are finalized.
// Placeholder roles are set where the text tells (Dynamo `L_..._parameters_...` names, AOT
// `tangents_N` and input descriptors, `Sym(...)` inputs); symbolic sizes get hints from
// options.symbols when it knows their symbols.
[[nodiscard]] std::shared_ptr<ir::Graph> parseFxText(std::string_view text, const FxParseOptions& options,
                                                     Diagnostics& diagnostics);

// Prints a graph in the same readable form (torch 2.5+ layout: liveness tails regenerated, source
// comments where provenance changes); parseFxText(printFxText(g)) gives a graph equal to g (see
// graphsEqual) for every graph parseFxText returns. A graph built elsewhere round-trips when its
// names are identifiers, its Raw/SymExpr texts read back as themselves and its subgraphs are
// named by identifiers.
struct FxPrintOptions {
  // `# File:` comments: where each statement came from in the user's source. A graph's identity
  // (plan fingerprints) leaves them out, so that a checkout elsewhere logs the same graph.
  bool provenance = true;
};
[[nodiscard]] std::string printFxText(const ir::Graph& graph, const FxPrintOptions& options = {});

struct GraphCompareOptions {
  // Roles, module paths and the synthetic flag can come from the artifact around a graph (a .pt2's
  // graph signature, nn_module_stack, its serialized multi-output nodes) rather than its text. Set false to
  // compare a graph with one read back from FX text that has no such context.
  bool compareContext = true;
};

// Structural equality: same nodes (kind, name, target, args, kwargs, meta, comment, provenance, and
// with compareContext role, module path and synthetic flag), same subgraphs. On difference, *why (if given)
// names the first one.
[[nodiscard]] bool graphsEqual(const ir::Graph& a, const ir::Graph& b, std::string* why = nullptr,
                               const GraphCompareOptions& options = {});

}  // namespace lathe::io
