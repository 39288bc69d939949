// The kernel set of a plan (kernels/cuda_codegen.h): every fusion group through GroupGenerator, the
// groups that would clash refused, the symbols the kernels use; the common and symbols headers a
// bundle ships beside them, and a node as an FX line.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "io/fx/fx_python.h"
#include "kernels/codegen/device_files.h"
#include "kernels/codegen/group_generator.h"
#include "kernels/cuda_codegen.h"
#include "util/diagnostics.h"

namespace lathe::kernels {

using codegen::Arg;
using codegen::NodeId;
using codegen::SymbolHints;
using codegen::unsupported;

std::string commonHeader() {
  const std::string_view stem = kCommonHeaderName.substr(0, kCommonHeaderName.rfind('.'));
  const auto files = codegen::embeddedDeviceFiles();
  const auto header = std::ranges::find(files, stem, &codegen::EmbeddedDeviceFile::stem);
  if (header == files.end())
    throw Error(ErrorCode::Internal, "lathe_kernels holds no " + std::string(kCommonHeaderName));
  return std::string(header->text);
}

std::string fxLine(const ir::Graph& graph, NodeId node) {
  std::string out(graph.name(node));
  out += " = ";
  const ir::Node& info = graph.node(node);
  std::function<void(const Arg&)> arg = [&](const Arg& a) {
    switch (a.kind) {
      case Arg::Kind::None: out += "None"; return;
      case Arg::Kind::Node: out += graph.name(a.node); return;
      case Arg::Kind::Int: out += std::to_string(a.i); return;
      case Arg::Kind::Float:
        if (std::isinf(a.f) || std::isnan(a.f)) {
          out += std::isnan(a.f) ? "float('nan')" : a.f > 0 ? "float('inf')" : "float('-inf')";
        } else {
          io::fx::appendFloatRepr(out, a.f);
        }
        return;
      case Arg::Kind::Bool: out += a.b ? "True" : "False"; return;
      case Arg::Kind::String: io::fx::appendStringRepr(out, graph.str(a.s)); return;
      case Arg::Kind::DType: out += "torch." + std::string(ir::dtypeTorchName(a.dtype)); return;
      case Arg::Kind::Device: out += "torch." + std::string(graph.str(a.s)); return;
      case Arg::Kind::Layout:
      case Arg::Kind::MemoryFormat:
      case Arg::Kind::SymExpr:
      case Arg::Kind::Raw: out += graph.str(a.s); return;
      case Arg::Kind::List:
      case Arg::Kind::Tuple:
        out += a.kind == Arg::Kind::List ? '[' : '(';
        for (size_t k = 0; k < a.items.size(); ++k) {
          if (k) out += ", ";
          arg(a.items[k]);
        }
        if (a.kind == Arg::Kind::Tuple && a.items.size() == 1) out += ',';
        out += a.kind == Arg::Kind::List ? ']' : ')';
        return;
      case Arg::Kind::Dict:
        out += '{';
        for (size_t k = 0; k < a.items.size() && k < a.keys.size(); ++k) {
          if (k) out += ", ";
          arg(a.keys[k]);
          out += ": ";
          arg(a.items[k]);
        }
        out += '}';
        return;
    }
  };
  if (graph.target(node) == io::fx::kGetItemTarget && info.args.size() == 2) {
    arg(info.args[0]);
    out += '[';
    arg(info.args[1]);
    out += ']';
    return out;
  }
  out += graph.target(node);
  out += '(';
  bool first = true;
  for (const Arg& a : info.args) {
    if (!first) out += ", ";
    first = false;
    arg(a);
  }
  for (const auto& [key, value] : info.kwargs) {
    if (!first) out += ", ";
    first = false;
    out += graph.str(key);
    out += " = ";
    arg(value);
  }
  out += ')';
  return out;
}

std::string symbolsHeader(const std::vector<Symbol>& symbols) {
  std::string text =
      "// Positions of the symbols in the `symbols` array every launch takes (manifest.json \"symbols\").\n#pragma "
      "once\n";
  for (size_t k = 0; k < symbols.size(); ++k) {
    text += "#define LATHE_SYMBOL_" + symbols[k].name + " " + std::to_string(k) + "  // hint " +
            std::to_string(symbols[k].hint) + "\n";
  }
  return text;
}

namespace {

SymbolHints symbolHints(const ir::Graph& graph) {
  SymbolHints hints;
  auto visit = [&](const ir::SymDim& dim) {
    if (!dim.symbolic() || !dim.hasHint) return;
    const std::string_view expr = graph.str(dim.expr);
    if (io::fx::identLength(expr, 0) == expr.size()) hints.emplace(std::string(expr), dim.value);
  };
  for (const ir::Node& node : graph.nodes()) {
    for (const ir::SymDim& d : node.meta.sizes) visit(d);
    for (const ir::SymDim& d : node.meta.strides) visit(d);
  }
  return hints;
}

// A group whose kernel would clash with an earlier group's: the same id (kernel names are made of
// it), or a node that group computes already.
void requireDistinct(const ir::Graph& graph, const plan::FusionGroup& group, std::map<NodeId, int32_t>& groupOf,
                     std::set<int32_t>& ids) {
  if (group.id < 0) unsupported("group id " + std::to_string(group.id) + " is negative");
  if (ids.contains(group.id)) unsupported("an earlier group has id " + std::to_string(group.id));
  for (NodeId node : group.nodes) {
    const auto earlier = groupOf.find(node);
    if (earlier != groupOf.end() && earlier->second != group.id) {
      unsupported(std::string(graph.name(node)) + " is in fusion group " + std::to_string(earlier->second) + " too");
    }
  }
  ids.insert(group.id);
  for (NodeId node : group.nodes) groupOf.emplace(node, group.id);
}

}  // namespace

KernelSet generateKernels(const ir::Graph& graph, const plan::PlanState& state) {
  const SymbolHints hints = symbolHints(graph);
  KernelSet set;
  std::set<std::string> symbols;
  std::map<NodeId, int32_t> groupOf;
  std::set<int32_t> ids;
  for (const plan::FusionGroup& group : state.groups) {
    const bool outside = group.anchor != ir::kNoNode && group.anchor >= graph.size();
    if (outside ||
        std::any_of(group.nodes.begin(), group.nodes.end(), [&](NodeId node) { return node >= graph.size(); }))
      throw Error(ErrorCode::Internal, "fusion group " + std::to_string(group.id) + " names a node outside the graph");
    try {
      requireDistinct(graph, group, groupOf, ids);
      GeneratedKernel kernel = codegen::GroupGenerator(graph, group, hints).generate();
      symbols.insert(kernel.symbols.begin(), kernel.symbols.end());
      set.kernels.push_back(std::move(kernel));
    } catch (const codegen::Unsupported& why) {
      set.notGenerated.push_back({group.id, why.reason});
    }
  }
  for (const std::string& symbol : symbols) set.symbols.push_back({symbol, hints.at(symbol)});
  return set;
}

}  // namespace lathe::kernels
