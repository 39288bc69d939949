// GroupGenerator: a member's element as an expression over its operands' elements, memoized and
// with bounded recursion; the ops that move or pick elements (views, slices, gathers, scatters,
// cat, slice_scatter, creation) and the branches some of them take.
#include <algorithm>
#include <utility>

#include "kernels/codegen/group_generator.h"

namespace lathe::kernels::codegen {

namespace {

// Bounds on the native recursion of emission (see evaluate), in members being computed: a level
// takes 30 KiB of stack in a sanitizer build.
constexpr int kDeferDepth = 16;
constexpr int kMaxStackDepth = 48;

// Bounds on what a kernel may grow to where operands are read in ever more ways (the values to
// emit double per node where each node reads the one before in two branches): values emitted
// per node of the group (the samples' kernels emit at most 13), and the length of an index
// (slices of slices nest their offsets).
constexpr size_t kMaxValuesPerNode = 256;
constexpr size_t kMaxIndexText = 1 << 14;

std::string key(NodeId node, const Index& index) {
  std::string k = std::to_string(node) + "@";
  for (const std::string& d : index.dims) k += d + ",";
  return k;
}

}  // namespace

Val GroupGenerator::operand(NodeId node, size_t position, std::string_view keyword, const Index& index) {
  const Arg* arg = argument(graph_, node, position, keyword);
  if (arg == nullptr) unsupported(std::string(graph_.name(node)) + ": missing argument");
  if (arg->kind != Arg::Kind::Node) return literal(*arg);
  return value(arg->node, broadcast(index, shape(node), shape(arg->node)));
}

Val GroupGenerator::evaluate(NodeId node, const Index& index) {
  const int outerBase = depthBase_;
  depthBase_ = depth_;
  std::vector<Deferred> pending{{node, index}};
  Val result;
  while (!pending.empty()) {
    try {
      result = value(pending.back().node, pending.back().index);
      pending.pop_back();
    } catch (Deferred& deeper) {
      depth_ = depthBase_;
      pending.push_back(std::move(deeper));
    }
  }
  depthBase_ = outerBase;
  return result;
}

Val GroupGenerator::value(NodeId node, const Index& index) {
  const std::string k = key(node, index);
  if (auto it = memo_.find(k); it != memo_.end()) return it->second;
  if (index.dims.size() != shape(node).size()) {
    unsupported(std::string(graph_.name(node)) + " is read with " + std::to_string(index.dims.size()) +
                " indices for its " + std::to_string(shape(node).size()) + " dimensions");
  }
  if (k.size() > kMaxIndexText)
    unsupported("index expressions of more than " + std::to_string(kMaxIndexText) + " characters");
  if (static_cast<size_t>(temps_) > kMaxValuesPerNode * nodes_.size()) {
    unsupported("more than " + std::to_string(kMaxValuesPerNode) +
                " values per node (operands read in ever more ways)");
  }
  Val result;
  if (!member(node)) {
    result = load(node, index);
  } else {
    if (depth_ - depthBase_ == kDeferDepth || depth_ == kMaxStackDepth) {
      if (depth_ == depthBase_)
        unsupported("values nested more than " + std::to_string(kMaxStackDepth) + " deep through branches and loops");
      throw Deferred{node, index};
    }
    ++depth_;
    const ir::DType dtype = tensorMeta(node).dtype;
    result = cast(compute(node, index), computeType(dtype));
    --depth_;
    // Values inside the group stay fp32, as in Inductor's kernels (its default, which does not
    // emulate eager's rounding after every op): a conversion the program asks for rounds, the
    // stores round, the rest does not, which spares a conversion per op and per element and
    // lands nearer the exact result than eager does.
    const std::string_view name = opOf(graph_, node).name;
    const bool conversion = name == "convert_element_type" || name == "_to_copy" || name == "to";
    if (conversion) result.expr = rounded(result.expr, dtype);
  }
  const std::string name = temp();
  line("const " + std::string(cTypeName(result.type)) + " " + name + " = " + result.expr + ";");
  result.expr = name;
  memo_.emplace(k, result);
  return result;
}

NodeId GroupGenerator::tensorOperand(NodeId node) const {
  const auto& args = graph_.node(node).args;
  if (args.empty() || args[0].kind != Arg::Kind::Node)
    unsupported(std::string(graph_.name(node)) + " without a tensor operand");
  return args[0].node;
}

Val GroupGenerator::compute(NodeId node, const Index& index) {
  const OpSpec op = opOf(graph_, node);
  const std::string_view name = op.name;
  const CType out = computeType(tensorMeta(node).dtype);
  const Shape& own = shape(node);
  auto input0 = [&]() { return tensorOperand(node); };
  switch (op.shaping) {
    case Shaping::Reshape: {
      const NodeId base = input0();
      return value(base, reshape(index, own, shape(base)));
    }
    case Shaping::Expand: {
      const NodeId base = input0();
      return value(base, broadcast(index, own, shape(base)));
    }
    case Shaping::Permute: {
      const NodeId base = input0();
      const std::vector<int64_t> order = intList(argument(graph_, node, 1, "dims"), "permute dims");
      if (order.size() != own.size()) unsupported("permute of another rank");
      Index from{std::vector<std::string>(own.size()), ""};
      for (size_t d = 0; d < order.size(); ++d)
        from.dims[static_cast<size_t>(normalizeDim(order[d], own.size()))] = index.dims[d];
      if (std::find(from.dims.begin(), from.dims.end(), "") != from.dims.end())
        unsupported("permute dims that are not a permutation");
      return value(base, from);
    }
    case Shaping::Slice: {
      const NodeId base = input0();
      const Shape& baseShape = shape(base);
      if (baseShape.size() != own.size()) unsupported("slice of another rank");
      const auto dim =
          static_cast<size_t>(normalizeDim(intArg(argument(graph_, node, 1, "dim"), "slice dim"), own.size()));
      const Arg* startArg = argument(graph_, node, 2, "start");
      int64_t start = startArg == nullptr || startArg->kind == Arg::Kind::None ? 0 : intArg(startArg, "slice start");
      const Arg* stepArg = argument(graph_, node, 4, "step");
      const int64_t step = stepArg == nullptr ? 1 : intArg(stepArg, "slice step");
      if (step < 1) unsupported("slice step below 1");
      if (start < 0) start += baseShape[dim];
      start = std::clamp<int64_t>(start, 0, baseShape[dim]);
      int64_t last = 0;  // the base's element the slice ends at
      if (own[dim] > 0 && (__builtin_mul_overflow(own[dim] - 1, step, &last) ||
                           __builtin_add_overflow(last, start, &last) || last >= baseShape[dim]))
        unsupported("slice beyond its base");
      Index from{index.dims, ""};
      std::string d = index.dims[dim];
      if (step != 1) d = "(" + d + " * " + std::to_string(step) + "LL)";
      if (start != 0) d = "(" + d + " + " + std::to_string(start) + "LL)";
      from.dims[dim] = d;
      return value(base, from);
    }
    case Shaping::Select: {
      const NodeId base = input0();
      const Shape& baseShape = shape(base);
      if (baseShape.size() != own.size() + 1) unsupported("select of another rank");
      const auto dim =
          static_cast<size_t>(normalizeDim(intArg(argument(graph_, node, 1, "dim"), "select dim"), baseShape.size()));
      int64_t at = intArg(argument(graph_, node, 2, "index"), "select index");
      if (at < 0) at += baseShape[dim];
      if (at < 0 || at >= baseShape[dim]) unsupported("select index out of range");
      Index from{index.dims, ""};
      from.dims.insert(from.dims.begin() + static_cast<std::ptrdiff_t>(dim), std::to_string(at) + "LL");
      return value(base, from);
    }
    case Shaping::Embedding: {
      const NodeId weight = input0();
      const Arg* indicesArg = argument(graph_, node, 1, "indices");
      if (indicesArg == nullptr || indicesArg->kind != Arg::Kind::Node) unsupported("embedding without indices");
      if (member(weight)) unsupported("embedding of a table computed in the group");
      const TensorSpec& table = kernel_.inputs[inputSlot(weight)];
      if (table.sizes.size() != 2 || index.dims.empty()) unsupported("embedding of a table that is not 2-D");
      if (shape(indicesArg->node).size() + 1 != own.size()) unsupported("embedding indices of another rank");
      Index rows{std::vector<std::string>(index.dims.begin(), index.dims.end() - 1), ""};
      const Val row = cast(value(indicesArg->node, rows), CType::Int);
      std::string off = row.expr + " * " + std::to_string(table.strides[0]) + "LL";
      if (table.sizes[1] != 1) off += " + " + index.dims.back() + " * " + std::to_string(table.strides[1]) + "LL";
      return {"lathe::ld(in" + std::to_string(inputSlot(weight)) + ", " + off + ")", computeType(table.dtype)};
    }
    case Shaping::Gather: return name == "gather" ? gatherDim(node, index) : gather(node, index);
    case Shaping::Scatter: return scatter(node, index, out);
    case Shaping::Concat: return concat(node, index, out);
    case Shaping::SliceScatter: return sliceScatter(node, index, out);
    case Shaping::Creation: return creation(node, name, index, out);
    case Shaping::Getitem: {
      const NodeId base = input0();
      if (base != reduction_) unsupported("getitem of a value other than the group's reduction");
      const int64_t item = intArg(argument(graph_, node, 1, ""), "getitem index");
      if (reduced_.empty()) unsupported("the reduced value is read before it is reduced");
      if (item < 0 || static_cast<size_t>(item) >= reduced_.size()) unsupported("getitem index out of range");
      return reduced_[static_cast<size_t>(item)];
    }
    case Shaping::Reduction: {
      if (node == reduction_ && inlineReduction_) return inlineReduction(index);
      if (node != reduction_ || reduced_.empty()) unsupported("a reduction read before it is reduced");
      return reduced_.front();
    }
    case Shaping::Normalization: {
      if (node != reduction_ || reduced_.size() != 2) unsupported("a normalization read before its row is reduced");
      const Val x = cast(value(input0(), index), CType::Float);
      if (name == "softmax" || name == "_softmax")
        return {"(lathe::fast_exp(" + x.expr + " - red_max) * red_inverse)", CType::Float};
      if (name == "log_softmax" || name == "_log_softmax")
        return {"(" + x.expr + " - red_max - red_log_sum)", CType::Float};
      Val y{"((" + x.expr + " - red_mean) * red_rstd)", CType::Float};
      const Arg* weight = argument(graph_, node, 2, "weight");
      const Arg* bias = argument(graph_, node, 3, "bias");
      if (weight != nullptr && weight->kind == Arg::Kind::Node)
        y.expr = "(" + y.expr + " * " + cast(operand(node, 2, "weight", index), CType::Float).expr + ")";
      if (bias != nullptr && bias->kind == Arg::Kind::Node)
        y.expr = "(" + y.expr + " + " + cast(operand(node, 3, "bias", index), CType::Float).expr + ")";
      return y;
    }
    case Shaping::Elementwise: return elementwise(node, name, index, out);
  }
  unsupported("op " + std::string(name));
}

Val GroupGenerator::choose(CType out, const std::vector<Branch>& branches) {
  const std::string name = temp();
  line(std::string(cTypeName(out)) + " " + name + ";");
  const bool uniform = std::all_of(branches.begin(), branches.end(),
                                   [](const Branch& b) { return b.condition.empty() || b.chunkCondition.has_value(); });
  std::string earlier;  // no earlier branch taken, on the chunk
  for (size_t k = 0; k < branches.size(); ++k) {
    const std::string condition =
        uniform && !branches[k].condition.empty() ? *branches[k].chunkCondition : branches[k].condition;
    line(std::string(k == 0 ? "" : "} else ") + (condition.empty() ? "{" : "if (" + condition + ") {"));
    const auto saved = memo_;
    indent_ += 2;
    std::optional<std::string> guard;
    if (uniform) {
      guard = earlier.empty() ? condition : condition.empty() ? earlier : earlier + " && (" + condition + ")";
      if (!condition.empty()) earlier += (earlier.empty() ? "!(" : " && !(") + condition + ")";
    }
    chunkGuards_.push_back(guard);
    const Val v = branches[k].value();
    chunkGuards_.pop_back();
    line(name + " = " + cast(v, out).expr + ";");
    indent_ -= 2;
    memo_ = saved;
  }
  line("}");
  return {name, out};
}

Val GroupGenerator::gather(NodeId node, const Index& index) {
  const NodeId self = tensorOperand(node);
  const Shape& selfShape = shape(self);
  const Arg* indices = argument(graph_, node, 1, "indices");
  if (indices == nullptr || indices->kind != Arg::Kind::List || indices->items.size() > selfShape.size()) {
    unsupported("index without a list of indices");
  }
  std::vector<NodeId> by(selfShape.size(), ir::kNoNode);
  size_t first = SIZE_MAX, last = 0;
  for (size_t d = 0; d < indices->items.size(); ++d) {
    const Arg& item = indices->items[d];
    if (item.kind == Arg::Kind::None) continue;
    if (item.kind != Arg::Kind::Node) unsupported("index with an index that is not a tensor");
    const ir::TensorMeta& meta = tensorMeta(item.node);
    if (meta.dtype == ir::DType::Bool || meta.dtype == ir::DType::U8) unsupported("index with a boolean mask");
    by[d] = item.node;
    first = std::min(first, d);
    last = d;
  }
  if (first == SIZE_MAX) unsupported("index without index tensors");
  for (size_t d = first; d <= last; ++d) {
    if (by[d] == ir::kNoNode) unsupported("index with index tensors apart");
  }
  Shape broadcastShape;
  for (size_t d = first; d <= last; ++d) {
    const Shape& s = shape(by[d]);
    if (s.size() > broadcastShape.size())
      broadcastShape.insert(broadcastShape.begin(), s.size() - broadcastShape.size(), 1);
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& into = broadcastShape[broadcastShape.size() - s.size() + k];
      if (into == 1)
        into = s[k];
      else if (s[k] != 1 && s[k] != into)
        unsupported("index tensors that do not broadcast");
    }
  }
  const size_t after = selfShape.size() - last - 1;
  if (index.dims.size() != first + broadcastShape.size() + after) unsupported("index of another rank than its result");
  Index within{
      std::vector<std::string>(index.dims.begin() + static_cast<std::ptrdiff_t>(first),
                               index.dims.begin() + static_cast<std::ptrdiff_t>(first + broadcastShape.size())),
      ""};
  Index from{std::vector<std::string>(selfShape.size()), ""};
  for (size_t d = 0; d < first; ++d) from.dims[d] = index.dims[d];
  for (size_t d = first; d <= last; ++d) {
    from.dims[d] = wrapped(value(by[d], broadcast(within, broadcastShape, shape(by[d]))), selfShape[d]);
  }
  for (size_t d = 0; d < after; ++d) from.dims[last + 1 + d] = index.dims[first + broadcastShape.size() + d];
  return value(self, from);
}

std::string GroupGenerator::wrapped(const Val& at, int64_t size) {
  const Val i = cast(at, CType::Int);
  return indexConstant(i.expr + " < 0 ? " + i.expr + " + " + std::to_string(size) + "LL : " + i.expr);
}

Val GroupGenerator::gatherDim(NodeId node, const Index& index) {
  const NodeId self = tensorOperand(node);
  const Shape& selfShape = shape(self);
  const auto dim =
      static_cast<size_t>(normalizeDim(intArg(argument(graph_, node, 1, "dim"), "gather dim"), selfShape.size()));
  const Arg* by = argument(graph_, node, 2, "index");
  if (by == nullptr || by->kind != Arg::Kind::Node) unsupported("gather without an index tensor");
  if (shape(by->node) != shape(node) || selfShape.size() != shape(node).size())
    unsupported("gather index of another shape");
  Index from{index.dims, ""};
  from.dims[dim] = wrapped(value(by->node, index), selfShape[dim]);
  return value(self, from);
}

Val GroupGenerator::scatter(NodeId node, const Index& index, CType out) {
  const NodeId self = tensorOperand(node);
  const Shape& own = shape(node);
  const auto dim =
      static_cast<size_t>(normalizeDim(intArg(argument(graph_, node, 1, "dim"), "scatter dim"), own.size()));
  const Arg* by = argument(graph_, node, 2, "index");
  const Arg* source = argument(graph_, node, 3, overloadOf(graph_, node) == "src" ? "src" : "value");
  if (by == nullptr || by->kind != Arg::Kind::Node || source == nullptr)
    unsupported("scatter without an index and a source");
  if (kwarg(graph_, node, "reduce") != nullptr) unsupported("scatter with a reduction");
  const Shape& byShape = shape(by->node);
  if (shape(self) != own || byShape.size() != own.size()) unsupported("scatter of other shapes");
  for (size_t d = 0; d < own.size(); ++d) {
    if (d != dim && byShape[d] != own[d]) unsupported("scatter index smaller than its base");
  }
  if (source->kind == Arg::Kind::Node && shape(source->node) != byShape)
    unsupported("scatter source of another shape than its index");
  const std::string result = temp(), k = temp();
  line(std::string(cTypeName(out)) + " " + result + " = " + cast(value(self, index), out).expr + ";");
  line("for (long long " + k + " = 0; " + k + " < " + std::to_string(byShape[dim]) + "LL; ++" + k + ") {");
  const auto saved = memo_;
  indent_ += 2;
  Index at{index.dims, ""};
  at.dims[dim] = k;
  const std::string target = wrapped(evaluate(by->node, at), own[dim]);
  line("if (" + target + " == " + index.dims[dim] + ") {");
  indent_ += 2;
  const Val v = source->kind == Arg::Kind::Node ? evaluate(source->node, at) : literal(*source);
  line(result + " = " + cast(v, out).expr + ";");
  indent_ -= 2;
  line("}");
  indent_ -= 2;
  memo_ = saved;
  line("}");
  return {result, out};
}

Val GroupGenerator::concat(NodeId node, const Index& index, CType out) {
  const Arg* tensors = argument(graph_, node, 0, "tensors");
  if (tensors == nullptr || tensors->kind != Arg::Kind::List) unsupported("cat without a list of tensors");
  const Shape& own = shape(node);
  const Arg* dimArg = argument(graph_, node, 1, "dim");
  const auto dim = static_cast<size_t>(normalizeDim(dimArg == nullptr ? 0 : intArg(dimArg, "cat dim"), own.size()));
  std::vector<Branch> branches;
  int64_t start = 0;
  const std::optional<std::string> chunkFirst = chunk_ ? chunkRunStart(index.dims[dim]) : std::nullopt;
  for (const Arg& item : tensors->items) {
    if (item.kind != Arg::Kind::Node) unsupported("cat of something that is not a tensor");
    const NodeId part = item.node;
    const Shape& partShape = shape(part);
    if (partShape.size() != own.size()) unsupported("cat of tensors of another rank");
    if (partShape[dim] == 0) continue;
    Index from{index.dims, ""};
    if (start != 0) from.dims[dim] = "(" + index.dims[dim] + " - " + std::to_string(start) + "LL)";
    start += partShape[dim];
    branches.push_back(
        {index.dims[dim] + " < " + std::to_string(start) + "LL", [this, part, from] { return evaluate(part, from); }});
    if (chunkFirst && start % chunk_->width == 0)
      branches.back().chunkCondition = *chunkFirst + " < " + std::to_string(start) + "LL";
  }
  if (branches.empty() || start != own[dim]) unsupported("cat sizes that do not add up");
  branches.back().condition.clear();
  return choose(out, branches);
}

Val GroupGenerator::sliceScatter(NodeId node, const Index& index, CType out) {
  const Shape& own = shape(node);
  const Arg* base = argument(graph_, node, 0, "self");
  const Arg* source = argument(graph_, node, 1, "src");
  if (base == nullptr || source == nullptr || base->kind != Arg::Kind::Node || source->kind != Arg::Kind::Node) {
    unsupported("slice_scatter without tensor operands");
  }
  if (shape(base->node) != own || shape(source->node).size() != own.size())
    unsupported("slice_scatter of other shapes");
  const Arg* dimArg = argument(graph_, node, 2, "dim");
  const auto dim =
      static_cast<size_t>(normalizeDim(dimArg == nullptr ? 0 : intArg(dimArg, "slice_scatter dim"), own.size()));
  const Arg* startArg = argument(graph_, node, 3, "start");
  const Arg* endArg = argument(graph_, node, 4, "end");
  const Arg* stepArg = argument(graph_, node, 5, "step");
  auto bound = [&](const Arg* arg, int64_t otherwise) {
    int64_t v = arg == nullptr || arg->kind == Arg::Kind::None ? otherwise : intArg(arg, "slice_scatter bound");
    if (v < 0) v += own[dim];
    return std::clamp<int64_t>(v, 0, own[dim]);
  };
  const int64_t start = bound(startArg, 0), end = bound(endArg, own[dim]);
  const int64_t step = stepArg == nullptr ? 1 : intArg(stepArg, "slice_scatter step");
  if (step < 1) unsupported("slice_scatter step below 1");
  const Shape& sourceShape = shape(source->node);
  for (size_t d = 0; d < own.size(); ++d) {
    const int64_t want = d == dim ? (end > start ? (end - start - 1) / step + 1 : 0) : own[d];
    if (sourceShape[d] != want) unsupported("slice_scatter source of another shape than its slice");
  }
  const std::string& at = index.dims[dim];
  std::string condition = at + " >= " + std::to_string(start) + "LL && " + at + " < " + std::to_string(end) + "LL";
  std::string within = "(" + at + " - " + std::to_string(start) + "LL)";
  if (step != 1) {
    condition += " && " + within + " % " + std::to_string(step) + "LL == 0";
    within = "(" + within + " / " + std::to_string(step) + "LL)";
  }
  Index fromSource{index.dims, ""};
  fromSource.dims[dim] = within;
  const NodeId src = source->node, self = base->node;
  std::vector<Branch> branches{{condition, [this, src, fromSource] { return evaluate(src, fromSource); }},
                               {"", [this, self, index] { return evaluate(self, index); }}};
  const std::optional<std::string> chunkFirst = chunk_ ? chunkRunStart(at) : std::nullopt;
  if (chunkFirst && step == 1 && start % chunk_->width == 0 && end % chunk_->width == 0) {
    branches.front().chunkCondition =
        *chunkFirst + " >= " + std::to_string(start) + "LL && " + *chunkFirst + " < " + std::to_string(end) + "LL";
  }
  return choose(out, branches);
}

Val GroupGenerator::creation(NodeId node, std::string_view name, const Index& index, CType out) {
  if ((name == "iota" || name == "arange") && index.dims.size() != 1)
    unsupported(std::string(name) + " that is not 1-D");
  if (name == "iota") {
    const Arg* start = kwarg(graph_, node, "start");
    const Arg* step = kwarg(graph_, node, "step");
    const Val first = start == nullptr ? Val{"0LL", CType::Int} : literal(*start);
    const Val by = step == nullptr ? Val{"1LL", CType::Int} : literal(*step);
    return {"(" + cast(first, out).expr + " + " + cast({index.dims[0], CType::Int}, out).expr + " * " +
                cast(by, out).expr + ")",
            out};
  }
  if (name == "arange") {  // arange(end), arange.start(start, end), arange.start_step(start, end, step)
    const std::string overload = overloadOf(graph_, node);
    const Arg* first = argument(graph_, node, 0, "start");
    const Arg* step = overload == "start_step" ? argument(graph_, node, 2, "step") : kwarg(graph_, node, "step");
    const Val from = overload == "default" || first == nullptr ? Val{"0LL", CType::Int} : literal(*first);
    const Val by = step == nullptr ? Val{"1LL", CType::Int} : literal(*step);
    return {"(" + cast(from, out).expr + " + " + cast({index.dims[0], CType::Int}, out).expr + " * " +
                cast(by, out).expr + ")",
            out};
  }
  const Arg* fill = argument(graph_, node, name == "full" ? 1 : 0, name == "full" ? "fill_value" : "");
  if (fill == nullptr) unsupported(std::string(name) + " without a value");
  return literal(*fill);
}

}  // namespace lathe::kernels::codegen
