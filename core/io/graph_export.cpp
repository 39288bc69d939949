#include "io/graph_export.h"

#include <cmath>

namespace lathe::io {
namespace {

using ir::Arg;
using nlohmann::json;

json argToJson(const ir::Graph& g, const Arg& a) {
  switch (a.kind) {
    case Arg::Kind::None: return nullptr;
    case Arg::Kind::Node: return json{{"node", std::string(g.name(a.node))}};
    case Arg::Kind::Int: return a.i;
    case Arg::Kind::Float:
      if (std::isfinite(a.f)) return a.f;
      return json{{"float", std::isnan(a.f) ? "nan" : (a.f > 0 ? "inf" : "-inf")}};
    case Arg::Kind::Bool: return a.b;
    case Arg::Kind::String: return std::string(g.str(a.s));
    case Arg::Kind::DType: return json{{"dtype", std::string(ir::dtypeTorchName(a.dtype))}};
    case Arg::Kind::Device: return json{{"device", std::string(g.str(a.s))}};
    case Arg::Kind::Layout: return json{{"layout", std::string(g.str(a.s))}};
    case Arg::Kind::MemoryFormat: return json{{"memory_format", std::string(g.str(a.s))}};
    case Arg::Kind::SymExpr: return json{{"sym", std::string(g.str(a.s))}};
    case Arg::Kind::Raw: return json{{"raw", std::string(g.str(a.s))}};
    case Arg::Kind::List:
    case Arg::Kind::Tuple: {
      json items = json::array();
      for (const auto& item : a.items) items.push_back(argToJson(g, item));
      return a.kind == Arg::Kind::List ? items : json{{"tuple", items}};
    }
    case Arg::Kind::Dict: {
      json entries = json::array();
      for (size_t i = 0; i < a.items.size() && i < a.keys.size(); ++i)
        entries.push_back(json::array({argToJson(g, a.keys[i]), argToJson(g, a.items[i])}));
      return json{{"dict", entries}};
    }
  }
  return nullptr;
}

json dimsToJson(const ir::Graph& g, const std::vector<ir::SymDim>& dims) {
  json out = json::array();
  for (const auto& d : dims) {
    if (!d.symbolic()) {
      out.push_back(d.value);
      continue;
    }
    json sym{{"expr", std::string(g.str(d.expr))}};
    if (d.hasHint) sym["hint"] = d.value;
    out.push_back(sym);
  }
  return out;
}

std::string_view valueKindName(ir::ValueKind k) {
  switch (k) {
    case ir::ValueKind::None: return "none";
    case ir::ValueKind::Tensor: return "tensor";
    case ir::ValueKind::SymInt: return "sym_int";
    case ir::ValueKind::SymFloat: return "sym_float";
    case ir::ValueKind::SymBool: return "sym_bool";
    case ir::ValueKind::Opaque: return "opaque";
  }
  return "none";
}

json metaToJson(const ir::Graph& g, const ir::TensorMeta& m) {
  if (m.kind == ir::ValueKind::None) return nullptr;
  json out{{"kind", valueKindName(m.kind)}};
  if (m.kind == ir::ValueKind::Tensor) {
    out["dtype"] = std::string(ir::dtypeAbbr(m.dtype));
    out["sizes"] = dimsToJson(g, m.sizes);
    if (m.hasStrides) out["strides"] = dimsToJson(g, m.strides);
    if (m.device) out["device"] = std::string(g.str(m.device));
    if (m.wrapper) out["wrapper"] = std::string(g.str(m.wrapper));
    out["storage_bytes"] = m.storageBytes();
  } else if (m.symExpr) {
    out["expr"] = std::string(g.str(m.symExpr));
  }
  return out;
}

std::string dotEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string metaSummary(const ir::Graph& g, const ir::TensorMeta& m) {
  if (m.kind == ir::ValueKind::Tensor) {
    std::string s(ir::dtypeAbbr(m.dtype));
    s += '[';
    for (size_t i = 0; i < m.sizes.size(); ++i) {
      if (i) s += ", ";
      s += m.sizes[i].symbolic() ? std::string(g.str(m.sizes[i].expr)) : std::to_string(m.sizes[i].value);
    }
    return s + ']';
  }
  if (m.symExpr) return std::string(valueKindName(m.kind)) + "(" + std::string(g.str(m.symExpr)) + ")";
  return {};
}

json graphToJson(const ir::Graph& g) {
  json nodes = json::array();
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    json node{{"name", std::string(g.str(n.name))}, {"op", ir::nodeKindName(n.kind)}};
    if (n.target) node["target"] = std::string(g.str(n.target));
    json args = json::array();
    for (const auto& a : n.args) args.push_back(argToJson(g, a));
    node["args"] = std::move(args);
    json kwargs = json::object();
    for (const auto& [k, a] : n.kwargs) kwargs[std::string(g.str(k))] = argToJson(g, a);
    node["kwargs"] = std::move(kwargs);
    node["meta"] = metaToJson(g, n.meta);
    node["role"] = ir::roleName(n.role);
    if (n.synthetic) node["synthetic"] = true;
    if (n.comment) node["comment"] = std::string(g.str(n.comment));
    if (!n.itemComments.empty()) {  // the output node: what each returned item is (AOT descriptors)
      json items = json::array();
      for (ir::StrId c : n.itemComments) items.push_back(c ? json(std::string(g.str(c))) : json(nullptr));
      node["item_comments"] = std::move(items);
    }
    const auto& p = n.provenance;
    if (p.file || p.modulePath) {
      json prov = json::object();
      if (p.file) prov["file"] = std::string(g.str(p.file));
      if (p.line) prov["line"] = p.line;
      if (p.function) prov["function"] = std::string(g.str(p.function));
      if (p.code) prov["code"] = std::string(g.str(p.code));
      if (p.modulePath) prov["module"] = std::string(g.str(p.modulePath));
      node["provenance"] = std::move(prov);
    }
    json users = json::array();
    for (ir::NodeId u : g.users(id)) users.push_back(std::string(g.name(u)));
    node["users"] = std::move(users);
    nodes.push_back(std::move(node));
  }
  json out{{"class", std::string(g.className())}, {"nodes", std::move(nodes)}};
  if (!g.subgraphs().empty()) {
    json subs = json::object();
    for (const auto& [attr, sub] : g.subgraphs()) subs[attr] = graphToJson(*sub);
    out["subgraphs"] = std::move(subs);
  }
  return out;
}

std::string graphToDot(const ir::Graph& g, std::string_view title) {
  std::string out = "digraph \"" + dotEscape(title) +
                    "\" {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n";
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    std::string label(g.name(id));
    if (n.kind == ir::NodeKind::CallFunction || n.kind == ir::NodeKind::CallMethod) {
      std::string_view target = g.target(id);
      if (target.starts_with("torch.ops.")) target.remove_prefix(10);
      label += "\n" + std::string(target);
    }
    const std::string meta = metaSummary(g, n.meta);
    if (!meta.empty()) label += "\n" + meta;
    const char* style = n.kind == ir::NodeKind::Placeholder ? ", style=filled, fillcolor=\"#dbeafe\""
                        : n.kind == ir::NodeKind::Output    ? ", style=filled, fillcolor=\"#e5e7eb\""
                                                            : "";
    out += "  n" + std::to_string(id) + " [label=\"" + dotEscape(label) + "\"" + style + "];\n";
  }
  for (ir::NodeId id = 0; id < g.size(); ++id)
    for (ir::NodeId in : g.inputs(id)) out += "  n" + std::to_string(in) + " -> n" + std::to_string(id) + ";\n";
  out += "}\n";
  return out;
}

}  // namespace lathe::io
