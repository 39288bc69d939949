// Structural equality of two graphs, each with its own string pool (ids are compared through
// their text).
#include <cmath>
#include <string>

#include "io/fx/fx_text.h"

namespace lathe::io {
namespace {

using ir::Arg;
using ir::Graph;
using ir::Node;
using ir::StrId;
using ir::SymDim;
using ir::TensorMeta;

class Comparer {
 public:
  Comparer(const Graph& a, const Graph& b, std::string* why, std::string where, const GraphCompareOptions& options)
      : a_(a), b_(b), why_(why), where_(std::move(where)), options_(options) {}

  bool graphs() {
    if (a_.className() != b_.className())
      return differ("class name '" + std::string(a_.className()) + "' vs '" + std::string(b_.className()) + "'");
    const auto& pa = a_.forwardParams();
    const auto& pb = b_.forwardParams();
    if (pa.size() != pb.size()) return differ("forward parameter count " + count(pa.size(), pb.size()));
    for (size_t k = 0; k < pa.size(); ++k)
      if (!same(pa[k], pb[k], "forward parameter " + std::to_string(k))) return false;
    if (a_.size() != b_.size()) return differ("node count " + count(a_.size(), b_.size()));
    for (ir::NodeId id = 0; id < a_.size(); ++id)
      if (!node(id)) return false;
    const auto& sa = a_.subgraphs();
    const auto& sb = b_.subgraphs();
    if (sa.size() != sb.size()) return differ("subgraph count " + count(sa.size(), sb.size()));
    for (size_t k = 0; k < sa.size(); ++k) {
      if (sa[k].first != sb[k].first) return differ("subgraph '" + sa[k].first + "' vs '" + sb[k].first + "'");
      if (!Comparer(*sa[k].second, *sb[k].second, why_, where_ + "subgraph " + sa[k].first + ": ", options_).graphs())
        return false;
    }
    return true;
  }

 private:
  static std::string count(size_t x, size_t y) { return std::to_string(x) + " vs " + std::to_string(y); }

  bool differ(const std::string& what) {
    if (why_) *why_ = where_ + what;
    return false;
  }

  bool same(StrId x, StrId y, const std::string& what) {
    if (a_.str(x) == b_.str(y)) return true;
    return differ(what + " '" + std::string(a_.str(x)) + "' vs '" + std::string(b_.str(y)) + "'");
  }

  bool node(ir::NodeId id) {
    const Node& x = a_.node(id);
    const Node& y = b_.node(id);
    const std::string at = "node " + std::to_string(id) + " (" + std::string(a_.str(x.name)) + "): ";
    if (x.kind != y.kind)
      return differ(at + "kind " + std::string(ir::nodeKindName(x.kind)) + " vs " + std::string(ir::nodeKindName(y.kind)));
    if (options_.compareContext) {
      if (x.role != y.role)
        return differ(at + "role " + std::string(ir::roleName(x.role)) + " vs " + std::string(ir::roleName(y.role)));
      if (x.synthetic != y.synthetic) return differ(at + "synthetic flag differs");
    }
    if (!same(x.name, y.name, at + "name") || !same(x.target, y.target, at + "target") ||
        !same(x.comment, y.comment, at + "comment"))
      return false;
    if (x.args.size() != y.args.size()) return differ(at + "argument count " + count(x.args.size(), y.args.size()));
    for (size_t k = 0; k < x.args.size(); ++k)
      if (!arg(x.args[k], y.args[k], at + "args[" + std::to_string(k) + "]")) return false;
    if (x.kwargs.size() != y.kwargs.size())
      return differ(at + "keyword argument count " + count(x.kwargs.size(), y.kwargs.size()));
    for (size_t k = 0; k < x.kwargs.size(); ++k) {
      const std::string where = at + "kwargs[" + std::to_string(k) + "]";
      if (!same(x.kwargs[k].first, y.kwargs[k].first, where + " key") ||
          !arg(x.kwargs[k].second, y.kwargs[k].second, where))
        return false;
    }
    if (!meta(x.meta, y.meta, at + "meta ")) return false;
    const ir::Provenance &p = x.provenance, &q = y.provenance;
    if (p.line != q.line) return differ(at + "source line " + count(p.line, q.line));
    if (!same(p.file, q.file, at + "source file") || !same(p.function, q.function, at + "source function") ||
        !same(p.code, q.code, at + "source code") ||
        (options_.compareContext && !same(p.modulePath, q.modulePath, at + "module path")) ||
        !same(p.annotation, q.annotation, at + "annotation"))
      return false;
    if (x.itemComments.size() != y.itemComments.size())
      return differ(at + "item comment count " + count(x.itemComments.size(), y.itemComments.size()));
    for (size_t k = 0; k < x.itemComments.size(); ++k)
      if (!same(x.itemComments[k], y.itemComments[k], at + "item comment " + std::to_string(k))) return false;
    return true;
  }

  bool meta(const TensorMeta& x, const TensorMeta& y, const std::string& at) {
    if (x.kind != y.kind) return differ(at + "kind " + count(static_cast<size_t>(x.kind), static_cast<size_t>(y.kind)));
    if (x.dtype != y.dtype)
      return differ(at + "dtype " + std::string(ir::dtypeAbbr(x.dtype)) + " vs " + std::string(ir::dtypeAbbr(y.dtype)));
    if (x.hasStrides != y.hasStrides) return differ(at + "strides given in one only");
    if (!dims(x.sizes, y.sizes, at + "sizes") || !dims(x.strides, y.strides, at + "strides")) return false;
    return same(x.device, y.device, at + "device") && same(x.wrapper, y.wrapper, at + "wrapper") &&
           same(x.extra, y.extra, at + "wrapper text") && same(x.symExpr, y.symExpr, at + "expression");
  }

  bool dims(const std::vector<SymDim>& x, const std::vector<SymDim>& y, const std::string& at) {
    if (x.size() != y.size()) return differ(at + " rank " + count(x.size(), y.size()));
    for (size_t k = 0; k < x.size(); ++k) {
      const std::string where = at + "[" + std::to_string(k) + "]";
      if (!same(x[k].expr, y[k].expr, where)) return false;
      if (x[k].value != y[k].value || x[k].hasHint != y[k].hasHint)
        return differ(where + " value " + std::to_string(x[k].value) + (x[k].hasHint ? "" : " (no hint)") + " vs " +
                      std::to_string(y[k].value) + (y[k].hasHint ? "" : " (no hint)"));
    }
    return true;
  }

  bool arg(const Arg& x, const Arg& y, const std::string& at) {
    if (x.kind != y.kind)
      return differ(at + " kind " + count(static_cast<size_t>(x.kind), static_cast<size_t>(y.kind)));
    switch (x.kind) {
      case Arg::Kind::None: break;
      case Arg::Kind::Node:
        if (x.node != y.node) return differ(at + " refers to node " + count(x.node, y.node));
        break;
      case Arg::Kind::Int:
        if (x.i != y.i) return differ(at + " " + std::to_string(x.i) + " vs " + std::to_string(y.i));
        break;
      case Arg::Kind::Float:
        if (std::isnan(x.f) || std::isnan(y.f) ? std::isnan(x.f) != std::isnan(y.f)
                                               : x.f != y.f || std::signbit(x.f) != std::signbit(y.f))
          return differ(at + " " + std::to_string(x.f) + " vs " + std::to_string(y.f));
        break;
      case Arg::Kind::Bool:
        if (x.b != y.b) return differ(at + " bool differs");
        break;
      case Arg::Kind::DType:
        if (x.dtype != y.dtype) return differ(at + " dtype differs");
        break;
      default:
        if (!same(x.s, y.s, at)) return false;
    }
    if (x.items.size() != y.items.size() || x.keys.size() != y.keys.size())
      return differ(at + " item count " + count(x.items.size(), y.items.size()));
    for (size_t k = 0; k < x.items.size(); ++k)
      if (!arg(x.items[k], y.items[k], at + "[" + std::to_string(k) + "]")) return false;
    for (size_t k = 0; k < x.keys.size(); ++k)
      if (!arg(x.keys[k], y.keys[k], at + " key " + std::to_string(k))) return false;
    return true;
  }

  const Graph& a_;
  const Graph& b_;
  std::string* why_;
  std::string where_;
  const GraphCompareOptions& options_;
};

}  // namespace

bool graphsEqual(const ir::Graph& a, const ir::Graph& b, std::string* why, const GraphCompareOptions& options) {
  return Comparer(a, b, why, "", options).graphs();
}

}  // namespace lathe::io
