// Graph renderings for other tools: JSON (stable field names, for scripts and CI diffs) and
// Graphviz dot (for a quick picture; the studio does its own layout).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "ir/graph.h"

namespace lathe::io {

// {"class": ..., "nodes": [{"name", "op", "target", "args", "kwargs", "meta", "role", "provenance",
// "users"}], "subgraphs": {attr: {...}}}. Node references in args are {"node": name}.
[[nodiscard]] nlohmann::json graphToJson(const ir::Graph& graph);

// One dot node per graph node (labelled with name, target and shape), one edge per input.
[[nodiscard]] std::string graphToDot(const ir::Graph& graph, std::string_view title);

// "bf16[1, s27, 4096]" style text of a value's metadata (sizes only), "" when none.
[[nodiscard]] std::string metaSummary(const ir::Graph& graph, const ir::TensorMeta& meta);

}  // namespace lathe::io
