// GroupGenerator: the emitted text (lines, temporaries) and where each element is: index
// expressions over shapes, broadcasts and views, loads (chunked vector loads among them) and
// stores of the outputs.
#include <algorithm>
#include <cctype>
#include <sstream>

#include "io/fx/fx_python.h"
#include "kernels/codegen/group_generator.h"

namespace lathe::kernels::codegen {

namespace {

// The index along a dimension of `size` elements, `stride` apart, of the row-major element number
// `linear` of a shape of `total` elements. Below 2^31 elements the division and remainder by
// constants run in 32 bits: a few instructions instead of a 64-bit sequence, per element of a
// memory-bound kernel.
std::string dimensionOf(const std::string& linear, int64_t stride, int64_t size, int64_t total) {
  if (stride == 1 && size == total) return linear;
  const bool narrow = total <= INT32_MAX;
  const std::string suffix = narrow ? "u" : "LL";
  std::string expr = narrow ? "static_cast<unsigned>(" + linear + ")" : linear;
  if (stride != 1) expr = "(" + expr + " / " + std::to_string(stride) + suffix + ")";
  if (stride * size != total) expr += " % " + std::to_string(size) + suffix;
  return expr;
}

}  // namespace

void GroupGenerator::line(const std::string& text) {
  body_->append(static_cast<size_t>(indent_), ' ');
  *body_ += text;
  *body_ += '\n';
}

void GroupGenerator::lines(const std::string& text, int extra) {
  std::istringstream in(text);
  for (std::string one; std::getline(in, one);) line(std::string(static_cast<size_t>(extra), ' ') + one);
}

void GroupGenerator::resetBody(std::string* body, int indent) {
  body_ = body;
  indent_ = indent;
  memo_.clear();
}

Index GroupGenerator::split(const std::string& linear, const Shape& sizes) {
  if (chunk_ && linear == "j") return splitChunk(sizes);
  Index out{std::vector<std::string>(sizes.size(), "0"), linear};
  const int64_t total = product(sizes);
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] != 1) {
      const std::string name = linear + "_" + std::to_string(stride) + "_" + std::to_string(sizes[d]);
      if (!memo_.contains(name)) {
        line("const long long " + name + " = " + dimensionOf(linear, stride, sizes[d], total) + ";");
        memo_.emplace(name, Val{name, CType::Int});
      }
      out.dims[d] = name;
    }
    stride *= sizes[d];
  }
  return out;
}

Index GroupGenerator::splitChunk(const Shape& sizes) {
  Index out{std::vector<std::string>(sizes.size(), "0"), "j"};
  const int64_t total = product(sizes);
  int64_t stride = 1;
  bool innermost = true;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    const std::string name = "jb_" + std::to_string(stride) + "_" + std::to_string(sizes[d]);
    if (!chunk_->names.contains(name)) {
      chunk_->prologue += "  const long long " + name + " = " + dimensionOf("base", stride, sizes[d], total) + ";\n";
      chunk_->names.insert(name);
    }
    if (innermost) {
      if (sizes[d] % chunk_->width != 0) chunk_->usable = false;
      out.dims[d] = "(" + name + " + e)";
      innermost = false;
    } else {
      out.dims[d] = name;
    }
    stride *= sizes[d];
  }
  return out;
}

bool GroupGenerator::chunkInvariant(std::string_view expr) const {
  for (size_t at = 0; at < expr.size();) {
    const char c = expr[at];
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      while (at < expr.size() && std::isalnum(static_cast<unsigned char>(expr[at])) != 0) ++at;
    } else if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
      const size_t length = io::fx::identLength(expr, at);
      const std::string_view name = expr.substr(at, length);
      if (name != "static_cast" && name != "unsigned" && !chunk_->names.contains(std::string(name))) return false;
      at += length;
    } else {
      ++at;
    }
  }
  return true;
}

std::optional<std::string> GroupGenerator::chunkRunStart(const std::string& dim) const {
  std::vector<std::string> shifts;  // " + 64LL)", from the outermost in
  std::string_view inner = dim;
  while (!(inner.starts_with("(jb_") && inner.ends_with(" + e)"))) {
    if (inner.size() < 8 || inner.front() != '(' || !inner.ends_with("LL)")) return std::nullopt;
    const size_t digits = inner.find_last_not_of("0123456789", inner.size() - 4);
    if (digits == std::string_view::npos || digits < 3 || digits == inner.size() - 4) return std::nullopt;
    const std::string_view sign = inner.substr(digits - 2, 3);
    if (sign != " + " && sign != " - ") return std::nullopt;
    const int64_t shift = std::stoll(std::string(inner.substr(digits + 1, inner.size() - 4 - digits)));
    if (shift % chunk_->width != 0) return std::nullopt;
    shifts.push_back(std::string(sign) + std::to_string(shift) + "LL)");
    inner = inner.substr(1, digits - 3);
  }
  std::string start(inner.substr(1, inner.size() - 6));
  for (auto shift = shifts.rbegin(); shift != shifts.rend(); ++shift) start = "(" + start + *shift;
  return start;
}

std::optional<Val> GroupGenerator::chunkLoad(size_t slot, const TensorSpec& tensor, const Index& index,
                                             const std::string& off) {
  const CType type = computeType(tensor.dtype);
  const std::string in = "in" + std::to_string(slot);
  std::string guard;  // the branches the load sits in, on the chunk
  for (const std::optional<std::string>& g : chunkGuards_) guard += (guard.empty() ? "" : " && ") + ("(" + *g + ")");
  // Declared before the element loop; loaded there too, when the chunk takes the load's branches.
  auto hoist = [&](const std::string& declared, const std::string& name, const std::string& load) {
    if (guard.empty()) {
      chunk_->prologue += "  const " + declared + " " + name + " = " + load + ";\n";
    } else {
      chunk_->prologue += "  " + declared + " " + name + "{};\n  if (" + guard + ") " + name + " = " + load + ";\n";
    }
  };
  if (chunkInvariant(off)) {
    std::string& name = chunk_->loads[guard + "|" + in + "[" + off + "]"];
    if (name.empty()) {
      name = temp();
      hoist(std::string(cTypeName(type)), name, "lathe::ld(" + in + ", " + off + ")");
      chunk_->names.insert(name);
    }
    return Val{name, type};
  }
  std::string start;
  bool run = false;
  for (size_t d = 0; d < tensor.sizes.size(); ++d) {
    if (tensor.sizes[d] == 1 || index.dims[d] == "0" || tensor.strides[d] == 0) continue;
    std::string term;
    if (!chunkInvariant(index.dims[d])) {
      const std::optional<std::string> first = chunkRunStart(index.dims[d]);
      if (run || tensor.strides[d] != 1 || !first) return std::nullopt;
      run = true;
      term = *first;
    } else {
      if (tensor.strides[d] % chunk_->width != 0) return std::nullopt;
      term = index.dims[d] + " * " + std::to_string(tensor.strides[d]) + "LL";
    }
    start += (start.empty() ? "" : " + ") + term;
  }
  if (!run) return std::nullopt;
  const std::string pack =
      "lathe::Pack<" + std::string(storageType(tensor.dtype)) + ", " + std::to_string(chunk_->width) + ">";
  std::string& name = chunk_->loads[guard + "|" + in + "@" + start];
  if (name.empty()) {
    name = temp();
    hoist(pack, name, "*reinterpret_cast<const " + pack + "*>(" + in + " + " + start + ")");
    chunk_->packedInputs.insert(slot);
  }
  return Val{"lathe::up(" + name + ".v[e])", type};
}

std::string GroupGenerator::linearOf(const Index& index, const Shape& sizes) {
  if (!index.linear.empty()) return index.linear;
  std::string expr;
  const Shape strides = contiguousStrides(sizes);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1 || index.dims[d] == "0") continue;
    if (!expr.empty()) expr += " + ";
    expr += strides[d] == 1 ? index.dims[d] : index.dims[d] + " * " + std::to_string(strides[d]) + "LL";
  }
  if (expr.empty()) return "0LL";
  return indexConstant(expr);
}

std::string GroupGenerator::indexConstant(const std::string& expr) {
  Val& known = memo_["= " + expr];
  if (known.expr.empty()) {
    known = {temp(), CType::Int};
    line("const long long " + known.expr + " = " + expr + ";");
  }
  return known.expr;
}

Index GroupGenerator::broadcast(const Index& index, const Shape& to, const Shape& from) {
  if (from.size() > to.size()) unsupported("an operand of higher rank than its result");
  const size_t lead = to.size() - from.size();
  Index out;
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] == 1) {
      out.dims.push_back("0");
    } else if (from[d] == to[d + lead]) {
      out.dims.push_back(index.dims[d + lead]);
    } else {
      unsupported("sizes that do not broadcast");
    }
  }
  if (product(from) == product(to)) {
    out.linear = index.linear;
    if (!index.memory.empty()) {
      out.memory = index.memory;
      out.memorySizes = from;
      out.memoryStrides.assign(index.memoryStrides.begin() + static_cast<std::ptrdiff_t>(lead),
                               index.memoryStrides.end());
    }
  }
  return out;
}

Index GroupGenerator::reshape(const Index& index, const Shape& to, const Shape& from) {
  if (product(to) != product(from)) unsupported("a view that changes the element count");
  if (squeezed(to) == squeezed(from)) {
    Index out{{}, index.linear};
    size_t at = 0;
    for (int64_t size : from) {
      if (size == 1) {
        out.dims.push_back("0");
        continue;
      }
      while (to[at] == 1) ++at;
      out.dims.push_back(index.dims[at++]);
    }
    return out;
  }
  return split(linearOf(index, to), from);
}

std::string GroupGenerator::offset(const Index& index, const TensorSpec& tensor) {
  if (!index.linear.empty() && isContiguous(tensor)) return index.linear;
  if (!index.memory.empty() && sameLayout(index.memorySizes, index.memoryStrides, tensor)) return index.memory;
  std::string expr;
  for (size_t d = 0; d < tensor.sizes.size(); ++d) {
    if (tensor.sizes[d] == 1 || index.dims[d] == "0" || tensor.strides[d] == 0) continue;
    if (!expr.empty()) expr += " + ";
    expr += tensor.strides[d] == 1 ? index.dims[d] : index.dims[d] + " * " + std::to_string(tensor.strides[d]) + "LL";
  }
  return expr.empty() ? "0LL" : expr;
}

size_t GroupGenerator::inputSlot(NodeId node) const {
  const auto it = inputSlot_.find(node);
  if (it == inputSlot_.end()) unsupported("reads " + std::string(graph_.name(node)) + ", which it does not take in");
  return it->second;
}

Val GroupGenerator::load(NodeId node, const Index& index) {
  const size_t slot = inputSlot(node);
  const TensorSpec& tensor = kernel_.inputs[slot];
  const std::string off = offset(index, tensor);
  const CType type = computeType(tensor.dtype);
  if (vectorMode_ && off == "j") {
    directInputs_.insert(slot);
    return {"lathe::up(vin" + std::to_string(slot) + ".v[e])", type};
  }
  if (chunk_ && std::all_of(chunkGuards_.begin(), chunkGuards_.end(), [](const auto& g) { return g.has_value(); })) {
    if (std::optional<Val> shared = chunkLoad(slot, tensor, index, off)) return *shared;
  }
  return {"lathe::ld(in" + std::to_string(slot) + ", " + off + ")", type};
}

Index GroupGenerator::outputIndex(const std::string& linear, const TensorSpec& out) {
  const bool free = reduction_ == ir::kNoNode || inlineReduction_;
  const std::optional<std::vector<size_t>> order = free && !isContiguous(out) ? memoryOrder(out) : std::nullopt;
  if (!order) return split(linear, out.sizes);
  Shape sizes;
  for (size_t d : *order) sizes.push_back(out.sizes[d]);
  const Index walked = split(linear, sizes);
  Index index{std::vector<std::string>(out.sizes.size(), "0"), "", linear, out.sizes, out.strides};
  for (size_t k = 0; k < order->size(); ++k) index.dims[(*order)[k]] = walked.dims[k];
  return index;
}

void GroupGenerator::storeOutputs(const std::string& linear, int64_t count) {
  for (size_t k = 0; k < outputNodes_.size(); ++k) {
    const TensorSpec& out = kernel_.outputs[k];
    if (product(out.sizes) != count) continue;
    const Index index = outputIndex(linear, out);
    const Val v = evaluate(outputNodes_[k], index);
    const std::string off = offset(index, out);
    if (vectorMode_ && off == "j") {
      directOutputs_.insert(k);
      line("vout" + std::to_string(k) + ".v[e] = lathe::down<" + std::string(storageType(out.dtype)) + ">(" + v.expr +
           ");");
    } else {
      line("out" + std::to_string(k) + "[" + off + "] = lathe::down<" + std::string(storageType(out.dtype)) + ">(" +
           v.expr + ");");
    }
  }
}

std::string GroupGenerator::packDeclarations(const std::string& width) const {
  std::string text;
  for (size_t k : directInputs_) {
    const std::string type = "lathe::Pack<" + std::string(storageType(kernel_.inputs[k].dtype)) + ", " + width + ">";
    text += "  const " + type + " vin" + std::to_string(k) + " = *reinterpret_cast<const " + type + "*>(in" +
            std::to_string(k) + " + base);\n";
  }
  for (size_t k : directOutputs_) {
    text += "  lathe::Pack<" + std::string(storageType(kernel_.outputs[k].dtype)) + ", " + width + "> vout" +
            std::to_string(k) + ";\n";
  }
  return text;
}

std::string GroupGenerator::packStores() const {
  std::string text;
  for (size_t k : directOutputs_) {
    const std::string n = std::to_string(k);
    text += "  *reinterpret_cast<decltype(vout" + n + ")*>(out" + n + " + base) = vout" + n + ";\n";
  }
  return text;
}

}  // namespace lathe::kernels::codegen
