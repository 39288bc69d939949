// GroupGenerator: the group it generates (its nodes in order, the tensors it reads and writes, their
// shapes and the symbols they use) and the .cu file around its kernels: comment, launch function.
#include "kernels/codegen/group_generator.h"

#include <algorithm>
#include <utility>

#include "io/fx/fx_python.h"
#include "ir/op_info.h"

namespace lathe::kernels::codegen {

namespace {

// Elements of a tensor the generator takes (256 Ti, more than any device holds).
constexpr int64_t kMaxElements = int64_t{1} << 48;

uint64_t tensorBytes(const TensorSpec& spec) {
  if (product(spec.sizes) == 0) return 0;
  int64_t extent = 1;
  for (size_t d = 0; d < spec.sizes.size(); ++d) extent += (spec.sizes[d] - 1) * spec.strides[d];
  return static_cast<uint64_t>(extent) * ir::dtypeSize(spec.dtype);
}

std::string identifier(std::string_view text) {
  std::string out;
  for (char c : text) out += io::fx::isIdentChar(c) ? c : '_';
  return out;
}

}  // namespace

GroupGenerator::GroupGenerator(const ir::Graph& graph, const plan::FusionGroup& group, const SymbolHints& hints)
    : graph_(graph), group_(group), hints_(hints) {
  for (NodeId node : group.nodes) members_.insert(node);
}

GeneratedKernel GroupGenerator::generate() {
  orderNodes();
  collectInterface();
  kernel_.group = group_.id;
  kernel_.kind = group_.kind;
  const std::string anchor = identifier(graph_.name(group_.anchor));
  kernel_.name = "lathe_g" + std::to_string(group_.id) + "_" + anchor;
  kernel_.launch = "lathe_launch_g" + std::to_string(group_.id);
  for (NodeId node : nodes_) kernel_.fx.push_back(fxLine(graph_, node));
  reduction_ = group_.kind == "pointwise" ? ir::kNoNode : group_.anchor;
  std::string kernels = reduction_ == ir::kNoNode ? pointwiseKernels() : reductionKernels();
  kernel_.bytes = trafficBytes();
  kernel_.symbols.assign(usedSymbols_.begin(), usedSymbols_.end());
  kernel_.source = sourceFile(kernels);
  return std::move(kernel_);
}

void GroupGenerator::orderNodes() {
  if (group_.nodes.empty()) unsupported("the group has no nodes");
  nodes_ = group_.nodes;
  std::sort(nodes_.begin(), nodes_.end());
  if (const auto twice = std::adjacent_find(nodes_.begin(), nodes_.end()); twice != nodes_.end())
    unsupported(std::string(graph_.name(*twice)) + " is listed twice");
  if (group_.anchor == ir::kNoNode) unsupported("the group has no anchor");
  if (!member(group_.anchor))
    unsupported("its anchor " + std::string(graph_.name(group_.anchor)) + " is not one of its nodes");
}

uint64_t GroupGenerator::trafficBytes() {
  std::map<NodeId, uint64_t> gathered;  // table input -> bytes its gathers pick
  std::set<NodeId> readWhole;
  for (NodeId node : nodes_) {
    const auto inputs = graph_.inputs(node);
    const Shaping shaping = opOf(graph_, node).shaping;
    const ir::Node& info = graph_.node(node);
    for (NodeId in : inputs) {
      if (member(in)) continue;
      const bool table = (shaping == Shaping::Embedding || shaping == Shaping::Gather) && !info.args.empty() &&
                         info.args[0].kind == Arg::Kind::Node && info.args[0].node == in;
      if (table) {
        gathered[in] += static_cast<uint64_t>(numel(node)) * ir::dtypeSize(tensorMeta(in).dtype);
      } else {
        readWhole.insert(in);
      }
    }
  }
  uint64_t bytes = 0;
  for (const auto& [in, slot] : inputSlot_) {
    const uint64_t whole = tensorBytes(kernel_.inputs[slot]);
    const auto it = gathered.find(in);
    bytes += it == gathered.end() || readWhole.contains(in) ? whole : std::min(whole, it->second);
  }
  for (const TensorSpec& spec : kernel_.outputs) bytes += tensorBytes(spec);
  return bytes;
}

int64_t GroupGenerator::dimValue(const ir::SymDim& dim) {
  if (!dim.symbolic()) return dim.value;
  if (!dim.hasHint) unsupported("symbolic size " + std::string(graph_.str(dim.expr)) + " without a hint");
  const std::string_view expr = graph_.str(dim.expr);
  for (size_t at = 0; at < expr.size();) {
    const size_t length = io::fx::identLength(expr, at);
    if (length == 0) {
      ++at;
      continue;
    }
    const std::string symbol(expr.substr(at, length));
    if (!hints_.contains(symbol)) unsupported("symbol " + symbol + " has no hint of its own");
    usedSymbols_.insert(symbol);
    at += length;
  }
  return dim.value;
}

const ir::TensorMeta& GroupGenerator::tensorMeta(NodeId node) {
  const ir::TensorMeta& meta = graph_.node(node).meta;
  if (!meta.isTensor()) unsupported(std::string(graph_.name(node)) + " is not a tensor");
  return meta;
}

const Shape& GroupGenerator::shape(NodeId node) {
  if (auto it = shapes_.find(node); it != shapes_.end()) return it->second;
  Shape sizes;
  int64_t elements = 1;  // of the non-empty dimensions
  for (const ir::SymDim& d : tensorMeta(node).sizes) {
    const int64_t size = dimValue(d);
    if (size < 0) unsupported(std::string(graph_.name(node)) + " has a negative size");
    if (size > 0 && (__builtin_mul_overflow(elements, size, &elements) || elements > kMaxElements))
      unsupported(std::string(graph_.name(node)) + " has more than 2^48 elements");
    sizes.push_back(size);
  }
  return shapes_.emplace(node, std::move(sizes)).first->second;
}

TensorSpec GroupGenerator::spec(NodeId node) {
  const ir::TensorMeta& meta = tensorMeta(node);
  const ir::Node& info = graph_.node(node);
  TensorSpec out{std::string(graph_.name(node)),
                 meta.dtype,
                 shape(node),
                 {},
                 info.kind == ir::NodeKind::CallFunction ? ir::canonicalOpName(graph_.target(node))
                                                         : std::string(ir::nodeKindName(info.kind))};
  if (meta.hasStrides && meta.strides.size() == meta.sizes.size()) {
    for (const ir::SymDim& d : meta.strides) out.strides.push_back(dimValue(d));
  } else {
    out.strides = contiguousStrides(out.sizes);
  }
  int64_t extent = 1;  // elements from the first to the last, as tensorBytes counts them
  for (size_t d = 0; d < out.sizes.size(); ++d) {
    if (out.strides[d] < 0) unsupported(out.name + " has a negative stride");
    int64_t span = 0;
    if (out.sizes[d] > 1 && (__builtin_mul_overflow(out.sizes[d] - 1, out.strides[d], &span) ||
                             __builtin_add_overflow(extent, span, &extent) || extent > kMaxElements))
      unsupported(out.name + " spans more than 2^48 elements");
  }
  storageType(meta.dtype);  // refuses dtypes without a storage type
  return out;
}

bool GroupGenerator::readsOnlyMetadata(NodeId user) const {
  static const std::set<std::string, std::less<>> kMetadataOps = {
      "aten._assert_tensor_metadata", "aten.sym_size", "aten.sym_numel", "aten.sym_stride", "aten.sym_storage_offset"};
  if (graph_.node(user).kind != ir::NodeKind::CallFunction) return false;
  return kMetadataOps.contains(splitOverload(ir::canonicalOpName(graph_.target(user))).first);
}

void GroupGenerator::collectInterface() {
  for (NodeId node : nodes_) {
    for (NodeId in : graph_.inputs(node)) {
      if (member(in) || inputSlot_.contains(in)) continue;
      if (graph_.node(in).meta.kind != ir::ValueKind::Tensor) {
        unsupported("reads " + std::string(graph_.name(in)) + ", which is not a tensor");
      }
      inputSlot_.emplace(in, kernel_.inputs.size());
      kernel_.inputs.push_back(spec(in));
    }
  }
  for (NodeId node : nodes_) {
    const bool outside = std::any_of(graph_.users(node).begin(), graph_.users(node).end(),
                                     [&](NodeId user) { return !member(user) && !readsOnlyMetadata(user); });
    if (!outside) continue;
    outputNodes_.push_back(node);
    TensorSpec out = spec(node);
    for (size_t d = 0; d < out.sizes.size(); ++d) {
      if (out.sizes[d] > 1 && out.strides[d] == 0) unsupported("output " + out.name + " overlaps itself (stride 0)");
    }
    kernel_.outputs.push_back(std::move(out));
  }
  if (outputNodes_.empty()) unsupported("nothing outside the group reads it");
}

std::string GroupGenerator::params() const {
  std::string out;
  for (size_t k = 0; k < kernel_.inputs.size(); ++k) {
    out += (out.empty() ? "const " : ", const ") + std::string(storageType(kernel_.inputs[k].dtype)) +
           "* __restrict__ in" + std::to_string(k);
  }
  for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
    out += (out.empty() ? "" : ", ") + std::string(storageType(kernel_.outputs[k].dtype)) + "* __restrict__ out" +
           std::to_string(k);
  }
  return out;
}

std::string GroupGenerator::arguments() const {
  std::string out;
  for (size_t k = 0; k < kernel_.inputs.size(); ++k) out += (out.empty() ? "in" : ", in") + std::to_string(k);
  for (size_t k = 0; k < kernel_.outputs.size(); ++k) out += (out.empty() ? "out" : ", out") + std::to_string(k);
  return out;
}

std::string GroupGenerator::sourceFile(const std::string& kernels) const {
  std::string text = "// Generated by lathe export: fusion group " + std::to_string(group_.id) + " (" + group_.kind +
                     "), " + std::to_string(nodes_.size()) + " nodes.\n";
  for (const std::string& fx : kernel_.fx) text += "//   " + fx + "\n";
  text += "#include \"" + std::string(kCommonHeaderName) + "\"\n\n";
  // nvcc reads all of it; on the NVRTC path, NVRTC the kernels and the host compiler the rest.
  text += "#ifdef __CUDACC__  // the kernels: nvcc, NVRTC\n" + kernels +
          "#endif\n\n#ifndef __CUDACC_RTC__  // the launch function: nvcc, or the host compiler after NVRTC\n";
  text += "extern \"C\" int " + kernel_.launch +
          "(void* const* outputs, const void* const* inputs, const int64_t* symbols, void* stream) {\n";
  if (!kernel_.symbols.empty()) {
    text += "  if (symbols == nullptr) return lathe::kInvalidValue;\n";
    for (const std::string& symbol : kernel_.symbols) {
      text += "  if (symbols[LATHE_SYMBOL_" + symbol + "] != " + std::to_string(hints_.at(symbol)) +
              "LL) return lathe::kInvalidValue;  // generated for " + symbol + " = " +
              std::to_string(hints_.at(symbol)) + "\n";
    }
  } else {
    text += "  (void)symbols;\n";
  }
  for (size_t k = 0; k < kernel_.inputs.size(); ++k) {
    const std::string type(storageType(kernel_.inputs[k].dtype));
    text += "  const auto* in" + std::to_string(k) + " = static_cast<const " + type + "*>(inputs[" + std::to_string(k) +
            "]);\n";
  }
  for (size_t k = 0; k < kernel_.outputs.size(); ++k) {
    const std::string type(storageType(kernel_.outputs[k].dtype));
    text += "  auto* out" + std::to_string(k) + " = static_cast<" + type + "*>(outputs[" + std::to_string(k) + "]);\n";
  }
  text += "  const lathe::Stream s = static_cast<lathe::Stream>(stream);\n";
  text += launchBody_;
  text += "  return 0;\n}\n#endif\n";
  return text;
}

}  // namespace lathe::kernels::codegen
