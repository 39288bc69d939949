// Printer of FX readable graph text, in the style of torch's GraphModule.print_readable: class
// header, forward signature, `# File:` comments where provenance changes, annotations, the
// `;  x = None` liveness tail, return, nested subgraph classes.
#include <charconv>
#include <span>
#include <vector>

#include "io/fx/fx_python.h"
#include "io/fx/fx_text.h"

namespace lathe::io {
namespace {

using ir::Arg;
using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::NodeKind;
using ir::SymDim;
using ir::TensorMeta;
using ir::ValueKind;

constexpr int kIndent = 4;

bool isIdentifier(std::string_view s) {
  return !s.empty() && fx::identLength(s, 0) == s.size();
}

std::string_view symbolOf(std::string_view target, std::span<const fx::OperatorSpelling> table) {
  for (const auto& op : table)
    if (op.target == target) return op.symbol;
  return {};
}

class Printer {
 public:
  Printer(std::string& out, const FxPrintOptions& options) : out_(out), options_(options) {}

  // className: the graph's own for the root, the attribute name for a subgraph (torch names the
  // nested class after it). Without one, `def forward` starts the text.
  void graph(const Graph& g, std::string_view className, int indent) {
    g_ = &g;
    if (!className.empty()) {
      line(indent);
      out_ += "class ";
      out_ += className;
      out_ += "(torch.nn.Module):\n";
    }
    const int defIndent = className.empty() ? indent : indent + kIndent;
    const bool aliases = signature(defIndent, defIndent + kIndent);
    body(defIndent + kIndent, aliases);
    for (const auto& [name, sub] : g.subgraphs()) {
      out_ += '\n';
      Printer(out_, options_).graph(*sub, name, defIndent);
    }
  }

 private:
  void line(int indent) { out_.append(static_cast<size_t>(indent), ' '); }
  std::string_view str(ir::StrId id) const { return g_->str(id); }

  // Returns whether it wrote `l_x_ = L_x_` lines (they open the body; the pytree declarations
  // and unpack line belong to the function header).
  bool signature(int defIndent, int bodyIndent) {
    const Graph& g = *g_;
    std::vector<NodeId> placeholders;
    bool anyComment = false;
    for (NodeId id = 0; id < g.size(); ++id) {
      if (g.node(id).kind != NodeKind::Placeholder) continue;
      placeholders.push_back(id);
      anyComment |= g.node(id).comment != 0;
    }
    const bool pytree = !g.forwardParams().empty();
    std::vector<std::string> params;
    if (pytree) {
      for (auto p : g.forwardParams()) params.emplace_back(str(p));
    } else {
      for (NodeId id : placeholders) params.push_back(paramText(g.node(id)));
    }
    line(defIndent);
    if (anyComment) {  // one parameter per line (AOT, 2025)
      out_ += "def forward(\n";
      line(defIndent + kIndent);
      out_ += "self,\n";
      for (size_t k = 0; k < params.size(); ++k) {
        line(defIndent + kIndent);
        out_ += params[k];
        out_ += ',';
        if (!pytree && g.node(placeholders[k]).comment) {
          out_ += "  # ";
          out_ += str(g.node(placeholders[k]).comment);
        }
        out_ += '\n';
      }
      line(defIndent);
      out_ += "):\n";
    } else {
      out_ += "def forward(self";
      for (const auto& p : params) {
        out_ += ", ";
        out_ += p;
      }
      out_ += "):\n";
    }
    if (pytree) {
      // Placeholders are declared in the body, then unpacked from the containers. Declared all or
      // none, so that the unpack line does not reorder them.
      bool declare = false;
      for (NodeId id : placeholders) declare |= g.node(id).meta.kind != ValueKind::None || g.node(id).comment;
      for (NodeId id : placeholders) {
        const Node& n = g.node(id);
        if (!declare) break;
        line(bodyIndent);
        out_ += rawParam(n);
        annotation(n.meta);
        if (n.comment) {
          out_ += "  # ";
          out_ += str(n.comment);
        }
        out_ += '\n';
      }
      line(bodyIndent);
      for (NodeId id : placeholders) {
        out_ += rawParam(g.node(id));
        out_ += ", ";
      }
      out_ += "= fx_pytree.tree_flatten_spec([";
      for (size_t k = 0; k < params.size(); ++k) {
        if (k) out_ += ", ";
        out_ += params[k];
      }
      out_ += "], self._in_spec)\n";
    }
    // Placeholders read under another name than the parameter: `l_x_ = L_x_`.
    bool wroteAlias = false;
    for (NodeId id : placeholders) {
      const Node& n = g.node(id);
      const std::string_view param = rawParam(n);
      if (param == str(n.name)) continue;
      line(bodyIndent);
      out_ += str(n.name);
      out_ += " = ";
      out_ += param;
      out_ += '\n';
      wroteAlias = true;
    }
    return wroteAlias;
  }

  // The parameter a placeholder comes from, without the stars of `*args`.
  std::string_view rawParam(const Node& n) const {
    std::string_view param = str(n.target ? n.target : n.name);
    while (param.starts_with('*')) param.remove_prefix(1);
    return param;
  }

  std::string paramText(const Node& n) {
    std::string saved;
    saved.swap(out_);
    out_ += str(n.target ? n.target : n.name);
    annotation(n.meta);
    if (!n.args.empty()) {
      out_ += " = ";
      arg(n.args[0]);
    }
    saved.swap(out_);
    return saved;
  }

  // bodyStarted: lines were already written in the body; torch strips the blank line that
  // precedes the first source comment otherwise.
  void body(int indent, bool bodyStarted) {
    const Graph& g = *g_;
    // Liveness tail: a value is dead after its last user; a value nobody reads is dead at once.
    std::vector<NodeId> lastUse(g.size(), ir::kNoNode);
    for (NodeId id = 0; id < g.size(); ++id) forEachInput(g.node(id), [&](NodeId ref) { lastUse[ref] = id; });
    bool wroteStatement = false;
    bool havePrevious = false;
    ir::Provenance previous;
    std::vector<NodeId> dead;
    for (NodeId id = 0; id < g.size(); ++id) {
      const Node& n = g.node(id);
      if (n.kind == NodeKind::Placeholder) continue;
      wroteStatement = true;
      if (n.kind == NodeKind::Output) {
        output(n, indent);
        continue;
      }
      if (options_.provenance && (!havePrevious || !sameSource(previous, n.provenance))) {
        if (bodyStarted) out_ += '\n';
        line(indent);
        provenance(n.provenance);
        previous = n.provenance;
        havePrevious = true;
      }
      line(indent);
      statement(n);
      bodyStarted = true;
      dead.clear();
      forEachInput(n, [&](NodeId ref) {
        if (lastUse[ref] == id) dead.push_back(ref);
      });
      if (lastUse[id] == ir::kNoNode) dead.push_back(id);
      if (!dead.empty()) {
        out_ += ";  ";
        for (NodeId d : dead) {
          out_ += str(g.node(d).name);
          out_ += " = ";
        }
        out_ += "None";
      }
      if (n.comment) {
        out_ += "  # ";
        out_ += str(n.comment);
      }
      out_ += '\n';
    }
    if (!wroteStatement) {
      line(indent);
      out_ += "pass\n";
    }
  }

  // Distinct node references of a node in first-use order (args, then kwargs), as FX's
  // _input_nodes.
  template <typename F>
  void forEachInput(const Node& n, F&& f) {
    seen_.clear();
    auto visit = [&](NodeId ref) {
      if (ref >= g_->size()) return;
      for (NodeId s : seen_)
        if (s == ref) return;
      seen_.push_back(ref);
      f(ref);
    };
    for (const auto& a : n.args) ir::forEachNodeRef(a, visit);
    for (const auto& [k, a] : n.kwargs) ir::forEachNodeRef(a, visit);
  }

  static bool sameSource(const ir::Provenance& a, const ir::Provenance& b) {
    return a.file == b.file && a.line == b.line && a.function == b.function && a.code == b.code &&
           a.annotation == b.annotation;
  }

  void provenance(const ir::Provenance& p) {
    out_ += "# ";
    if (p.annotation) {
      out_ += "Annotation: ";
      out_ += str(p.annotation);
      out_ += ' ';
    }
    if (!p.file && !p.line && !p.function && !p.code) {
      out_ += "No stacktrace found for following nodes\n";
      return;
    }
    out_ += "File: ";
    out_ += str(p.file);
    if (p.line) {
      out_ += ':';
      out_ += std::to_string(p.line);
      if (p.function) {
        out_ += " in ";
        out_ += str(p.function);
      }
    }
    if (p.function || p.code) {
      out_ += ", code: ";
      out_ += str(p.code);
    }
    out_ += '\n';
  }

  void statement(const Node& n) {
    const std::string_view target = str(n.target);
    const bool plain = n.kwargs.empty();
    const bool firstIsNode = !n.args.empty() && n.args[0].kind == Arg::Kind::Node;
    switch (n.kind) {
      case NodeKind::GetAttr:
        assign(n);
        out_ += "self.";
        out_ += target;
        return;
      case NodeKind::CallModule:
        assign(n);
        out_ += "self.";
        out_ += target;
        call(n.args, 0, n.kwargs);
        return;
      case NodeKind::CallMethod:
        if (firstIsNode) {
          assign(n);
          arg(n.args[0]);
          out_ += '.';
          out_ += target;
          call(n.args, 1, n.kwargs);
          return;
        }
        break;
      default: break;
    }
    if (n.kind == NodeKind::CallFunction && plain) {
      if (n.args.size() == 2) {
        if (auto op = symbolOf(target, fx::kBinaryOperators); !op.empty() && operand(n.args[0]) && operand(n.args[1])) {
          assign(n);
          arg(n.args[0]);
          out_ += ' ';
          out_ += op;
          out_ += ' ';
          arg(n.args[1]);
          return;
        }
        if (target == fx::kGetItemTarget && firstIsNode) {
          assign(n);
          arg(n.args[0]);
          out_ += '[';
          arg(n.args[1]);
          out_ += ']';
          return;
        }
        if (target == fx::kGetAttrTarget && firstIsNode && n.args[1].kind == Arg::Kind::String &&
            isIdentifier(str(n.args[1].s))) {
          assign(n);
          arg(n.args[0]);
          out_ += '.';
          out_ += str(n.args[1].s);
          return;
        }
        if (auto op = symbolOf(target, fx::kInplaceOperators); !op.empty() && firstIsNode) {
          arg(n.args[0]);
          out_ += ' ';
          out_ += op;
          out_ += ' ';
          arg(n.args[1]);
          out_ += ";  ";
          assign(n);
          arg(n.args[0]);
          return;
        }
      }
      if (n.args.size() == 1 && firstIsNode) {
        if (auto op = symbolOf(target, fx::kUnaryOperators); !op.empty()) {
          assign(n);
          out_ += op;
          arg(n.args[0]);
          return;
        }
      }
      if (n.args.size() == 3 && target == fx::kSetItemTarget && firstIsNode) {
        arg(n.args[0]);
        out_ += '[';
        arg(n.args[1]);
        out_ += "] = ";
        arg(n.args[2]);
        out_ += ";  ";
        assign(n);
        arg(n.args[0]);
        return;
      }
    }
    assign(n);
    out_ += target;
    call(n.args, 0, n.kwargs);
  }

  // Operands of `a + b` must read back as one value.
  static bool operand(const Arg& a) { return a.kind != Arg::Kind::SymExpr; }

  void assign(const Node& n) {
    out_ += str(n.name);
    annotation(n.meta);
    out_ += " = ";
  }

  void call(const std::vector<Arg>& args, size_t from, const std::vector<std::pair<ir::StrId, Arg>>& kwargs) {
    out_ += '(';
    bool first = true;
    for (size_t k = from; k < args.size(); ++k) {
      if (!first) out_ += ", ";
      first = false;
      arg(args[k]);
    }
    for (const auto& [key, value] : kwargs) {
      if (!first) out_ += ", ";
      first = false;
      out_ += str(key);
      out_ += " = ";
      arg(value);
    }
    out_ += ')';
  }

  void output(const Node& n, int indent) {
    const Graph& g = *g_;
    const Arg value = n.args.empty() ? Arg::none() : n.args[0];
    const bool pytree = !g.forwardParams().empty();
    const bool container = value.kind == Arg::Kind::List || value.kind == Arg::Kind::Tuple;
    line(indent);
    out_ += pytree ? "return pytree.tree_unflatten(" : "return ";
    if (container && !n.itemComments.empty() && n.itemComments.size() == value.items.size()) {
      // One item per line with its descriptor (AOT, 2025).
      out_ += value.kind == Arg::Kind::List ? "[\n" : "(\n";
      for (size_t k = 0; k < value.items.size(); ++k) {
        line(indent + kIndent);
        arg(value.items[k]);
        out_ += ',';
        if (n.itemComments[k]) {
          out_ += "  # ";
          out_ += str(n.itemComments[k]);
        }
        out_ += '\n';
      }
      line(indent);
      out_ += value.kind == Arg::Kind::List ? "]" : ")";
    } else {
      arg(value);
    }
    out_ += pytree ? ", self._out_spec)\n" : "\n";
  }

  void annotation(const TensorMeta& m) {
    switch (m.kind) {
      case ValueKind::None: return;
      case ValueKind::Opaque: {
        const std::string_view text = str(m.symExpr);
        out_ += text.starts_with('"') ? ": " : " : ";
        out_ += text;
        return;
      }
      case ValueKind::SymInt:
      case ValueKind::SymFloat:
      case ValueKind::SymBool:
        out_ += ": \"Sym(";
        out_ += str(m.symExpr);
        out_ += ")\"";
        return;
      case ValueKind::Tensor: break;
    }
    if (m.dtype == ir::DType::Unknown) {  // known to be a tensor, nothing more (older FX)
      out_ += " : torch.Tensor";
      return;
    }
    out_ += ": \"";
    if (m.wrapper) {
      out_ += str(m.wrapper);
      out_ += '(';
    }
    out_ += ir::dtypeAbbr(m.dtype);
    dims(m.sizes);
    if (m.hasStrides) dims(m.strides);
    out_ += str(m.device);
    if (m.wrapper) {
      if (m.extra) {
        out_ += ", ";
        out_ += str(m.extra);
      }
      out_ += ')';
    }
    out_ += '"';
  }

  void dims(const std::vector<SymDim>& ds) {
    out_ += '[';
    for (size_t k = 0; k < ds.size(); ++k) {
      if (k) out_ += ", ";
      if (ds[k].symbolic()) {
        out_ += str(ds[k].expr);
      } else {
        integer(ds[k].value);
      }
    }
    out_ += ']';
  }

  void integer(int64_t v) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
  }

  void arg(const Arg& a) {
    switch (a.kind) {
      case Arg::Kind::None: out_ += "None"; return;
      case Arg::Kind::Node: out_ += a.node < g_->size() ? g_->name(a.node) : "None"; return;
      case Arg::Kind::Int: integer(a.i); return;
      case Arg::Kind::Float: fx::appendFloatRepr(out_, a.f); return;
      case Arg::Kind::Bool: out_ += a.b ? "True" : "False"; return;
      case Arg::Kind::String: fx::appendStringRepr(out_, str(a.s)); return;
      case Arg::Kind::DType:
        out_ += "torch.";
        out_ += ir::dtypeTorchName(a.dtype);
        return;
      case Arg::Kind::Device:
      case Arg::Kind::Layout:
      case Arg::Kind::MemoryFormat:
      case Arg::Kind::SymExpr:
      case Arg::Kind::Raw: out_ += str(a.s); return;
      case Arg::Kind::List:
      case Arg::Kind::Tuple: {
        const bool list = a.kind == Arg::Kind::List;
        out_ += list ? '[' : '(';
        for (size_t k = 0; k < a.items.size(); ++k) {
          if (k) out_ += ", ";
          arg(a.items[k]);
        }
        if (!list && a.items.size() == 1) out_ += ',';
        out_ += list ? ']' : ')';
        return;
      }
      case Arg::Kind::Dict:
        out_ += '{';
        for (size_t k = 0; k < a.items.size() && k < a.keys.size(); ++k) {
          if (k) out_ += ", ";
          arg(a.keys[k]);
          out_ += ": ";
          arg(a.items[k]);
        }
        out_ += '}';
        return;
    }
  }

  std::string& out_;
  FxPrintOptions options_;
  const Graph* g_ = nullptr;
  std::vector<NodeId> seen_;
};

}  // namespace

std::string printFxText(const ir::Graph& graph, const FxPrintOptions& options) {
  std::string out;
  out.reserve(graph.size() * 160);
  Printer(out, options).graph(graph, graph.className(), 0);
  return out;
}

}  // namespace lathe::io
