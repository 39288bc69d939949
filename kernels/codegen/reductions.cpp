// GroupGenerator: what a reduction or normalization group reduces (its operation, rows and row
// size), which members may follow it, and which kernel shape it gets: inside each element,
// a row kernel or a column kernel.
#include <algorithm>
#include <bit>
#include <utility>

#include "kernels/codegen/group_generator.h"

namespace lathe::kernels::codegen {

namespace {

// Reductions small enough to run inside each element that reads them: the members after the
// reduction may then index it any way (a transpose, a slice), as each element reduces its own.
constexpr int64_t kInlineRowLimit = 64;

// Reductions over at most this many elements: where a row's elements are consecutive, a group
// of lanes per row (the next power of two), each lane on one element, combined by shuffles, so
// that a warp's loads and stores are consecutive; else a thread per row (its loop over the few
// reduced elements inside), consecutive threads on consecutive rows. A block per row would
// leave most of its threads idle. Where only row-sized values leave a group whose rows are not
// consecutive, as a pointwise kernel over them.
constexpr int64_t kShortRowLimit = 16;

// Broadcasting `from` to `to` repeats each element of `from` over `rowSize` consecutive elements.
bool rowBroadcast(const Shape& to, const Shape& from, int64_t rowSize) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t split = 0; split <= to.size(); ++split) {
    if (product(to, split) != rowSize) continue;
    bool ok = true;
    for (size_t d = 0; d < to.size() && ok; ++d) {
      const int64_t fromSize = d < lead ? 1 : from[d - lead];
      ok = d >= split ? fromSize == 1 : (fromSize == to[d] || to[d] == 1);
    }
    if (ok) return true;
  }
  return false;
}

}  // namespace

GroupGenerator::ReductionOp GroupGenerator::reductionOp(NodeId node, std::string_view name) {
  ReductionOp op;
  const ir::TensorMeta& meta = graph_.node(node).meta;
  const ir::DType dtype = meta.isTensor() ? meta.dtype : tensorMeta(tensorOperand(node)).dtype;
  op.accumulator = computeType(dtype) == CType::Float ? CType::Float : CType::Int;
  if (name == "sum" || name == "mean") {
    op.combine = "lathe::Sum";
    op.identity = op.accumulator == CType::Float ? "0.0f" : "0LL";
    op.mean = name == "mean";
    if (op.mean) op.accumulator = CType::Float;
  } else if (name == "amax" || name == "amin") {
    op.combine = name == "amax" ? "lathe::Max" : "lathe::Min";
    op.identity = std::string("lathe::Identity<") + std::string(cTypeName(op.accumulator)) +
                  ">::" + (name == "amax" ? "lowest()" : "highest()");
  } else if (name == "var_mean") {
    op.combine = "lathe::Sum";
    op.identity = "0.0f";
    op.accumulator = CType::Float;
    op.variance = true;
    const Arg* correction = kwarg(graph_, node, "correction");
    if (correction == nullptr) correction = argument(graph_, node, 2, "");
    op.correction =
        correction == nullptr || correction->kind == Arg::Kind::None ? 1 : intArg(correction, "var_mean correction");
  } else if (name == "softmax" || name == "_softmax" || name == "log_softmax" || name == "_log_softmax") {
    op.online = true;
    op.accumulator = CType::Float;
  } else if (name == "layer_norm") {
    op.combine = "lathe::Sum";
    op.identity = "0.0f";
    op.accumulator = CType::Float;
    op.layerNorm = true;
    const Arg* epsilon = argument(graph_, node, 4, "eps");
    if (epsilon != nullptr && epsilon->kind == Arg::Kind::Float)
      op.epsilon = epsilon->f;
    else if (epsilon != nullptr && epsilon->kind != Arg::Kind::None)
      unsupported("layer_norm eps that is not a constant");
  } else {
    unsupported("reduction " + std::string(name));
  }
  return op;
}

std::optional<std::string> GroupGenerator::acrossRows(int64_t rows, int64_t total) {
  std::set<NodeId> after{reduction_};
  for (NodeId node : nodes_) {
    if (node == reduction_) continue;
    const auto inputs = graph_.inputs(node);
    const bool reads = std::any_of(inputs.begin(), inputs.end(), [&](NodeId in) { return after.contains(in); });
    if (!reads) continue;
    after.insert(node);
    const OpSpec op = opOf(graph_, node);
    const int64_t count = numel(node);
    if (count != rows && count != total)
      return std::string(graph_.name(node)) + " after the reduction has another size";
    for (NodeId in : inputs) {
      if (!after.contains(in)) continue;
      const int64_t from = in == reduction_ && !graph_.node(in).meta.isTensor() ? rows : numel(in);
      if (op.shaping == Shaping::Getitem ||
          ((op.shaping == Shaping::Reshape || op.shaping == Shaping::Elementwise || op.shaping == Shaping::Expand) &&
           from == count)) {
        continue;
      }
      if ((op.shaping == Shaping::Elementwise || op.shaping == Shaping::Expand) && from == rows && count == total &&
          rowBroadcast(shape(node), shape(in), total / rows)) {
        continue;
      }
      return std::string(op.name) + " reads the reduced value across rows (" + std::string(graph_.name(node)) + ")";
    }
  }
  return std::nullopt;
}

void GroupGenerator::declareReduced(const std::string& accumulator) {
  const ReductionOp& reduce = rows_.reduce;
  const ir::TensorMeta& meta = tensorMeta(reduction_);
  const CType type = computeType(meta.dtype);
  const std::string expr = reduce.mean ? accumulator + " / " + std::to_string(rows_.rowSize) + ".0f" : accumulator;
  line("const " + std::string(cTypeName(type)) +
       " red = " + rounded(cast({expr, reduce.accumulator}, type).expr, meta.dtype) + ";");
  reduced_ = {{"red", type}};
}

GroupGenerator::RowPlan GroupGenerator::planRows() {
  RowPlan plan;
  const OpSpec op = opOf(graph_, reduction_);
  plan.op = op;
  if (op.shaping != Shaping::Reduction && op.shaping != Shaping::Normalization) {
    unsupported(std::string(op.name) + ": not a reduction the generator knows");
  }
  const bool normalization = op.shaping == Shaping::Normalization;
  const ReductionOp reduce = reductionOp(reduction_, op.name);
  const ir::Node& info = graph_.node(reduction_);
  if (info.args.empty() || info.args[0].kind != Arg::Kind::Node) unsupported("a reduction without a tensor operand");
  const NodeId source = info.args[0].node;
  const Shape& sourceShape = shape(source);
  std::vector<bool> reducedDim(sourceShape.size(), false);
  const Arg* dims = argument(graph_, reduction_, 1, "dim");
  if (normalization) {
    // Rows are the innermost elements: the normalized shape, or the softmax dimension with only
    // size-1 dimensions after it, so that an element's row is its element number / row size.
    if (shape(reduction_) != sourceShape) unsupported(std::string(op.name) + " of another shape than its input");
    if (op.name == "layer_norm") {
      const size_t n =
          intList(argument(graph_, reduction_, 1, "normalized_shape"), "layer_norm normalized_shape").size();
      if (n == 0 || n > sourceShape.size()) unsupported("layer_norm normalized_shape of another rank");
      for (size_t d = sourceShape.size() - n; d < sourceShape.size(); ++d) reducedDim[d] = true;
    } else {
      const auto dim =
          static_cast<size_t>(normalizeDim(intArg(dims, std::string(op.name) + " dim"), sourceShape.size()));
      for (size_t d = dim + 1; d < sourceShape.size(); ++d) {
        if (sourceShape[d] != 1) unsupported(std::string(op.name) + " over a dimension that is not the innermost");
      }
      reducedDim[dim] = true;
    }
  } else if (dims == nullptr || dims->kind == Arg::Kind::None ||
             (dims->kind == Arg::Kind::List && dims->items.empty())) {
    reducedDim.assign(sourceShape.size(), true);
  } else {
    for (int64_t d : intList(dims, "reduction dims"))
      reducedDim[static_cast<size_t>(normalizeDim(d, sourceShape.size()))] = true;
  }
  if (const Arg* dtype = kwarg(graph_, reduction_, "dtype");
      !normalization && dtype != nullptr && dtype->kind != Arg::Kind::None) {
    if (dtype->kind != Arg::Kind::DType || computeType(dtype->dtype) != reduce.accumulator)
      unsupported("reduction with a dtype argument");
  }
  for (size_t d = 0; d < sourceShape.size(); ++d)
    (reducedDim[d] ? plan.reducedSizes : plan.kept).push_back(sourceShape[d]);
  plan.rows = product(plan.kept);
  plan.rowSize = product(plan.reducedSizes);
  plan.total = product(sourceShape);
  if (plan.rows * plan.rowSize != plan.total || plan.rows == 0 || plan.rowSize == 0) unsupported("an empty reduction");
  plan.reduce = reduce;
  plan.source = source;
  plan.reducedDim = std::move(reducedDim);
  return plan;
}

Val GroupGenerator::inlineReduction(const Index& index) {
  const RowPlan& p = rows_;
  const Shape& sourceShape = shape(p.source);
  const bool keepdim = shape(reduction_).size() == sourceShape.size();
  if (!keepdim && shape(reduction_).size() != p.kept.size())
    unsupported(std::string(graph_.name(reduction_)) + " has neither its operand's rank nor its kept dimensions'");
  const std::string acc = temp(), k = temp();
  line(std::string(cTypeName(p.reduce.accumulator)) + " " + acc + " = " + p.reduce.identity + ";");
  line("for (long long " + k + " = 0; " + k + " < " + std::to_string(p.rowSize) + "LL; ++" + k + ") {");
  const auto saved = memo_;
  indent_ += 2;
  const Index within = split(k, p.reducedSizes);
  Index at{std::vector<std::string>(sourceShape.size()), ""};
  size_t reducedAt = 0, ownAt = 0;
  for (size_t d = 0; d < sourceShape.size(); ++d) {
    if (p.reducedDim[d]) {
      at.dims[d] = within.dims[reducedAt++];
      if (keepdim) ++ownAt;
    } else {
      at.dims[d] = index.dims[ownAt++];
    }
  }
  const Val x = cast(evaluate(p.source, at), p.reduce.accumulator);
  line(acc + " = " + p.reduce.combine + "()(" + acc + ", " + x.expr + ");");
  indent_ -= 2;
  memo_ = saved;
  line("}");
  if (p.reduce.mean) return {"(" + acc + " / " + std::to_string(p.rowSize) + ".0f)", CType::Float};
  return {acc, p.reduce.accumulator};
}

std::string GroupGenerator::reductionKernels() {
  rows_ = planRows();
  const bool simple = rows_.op.shaping == Shaping::Reduction && !rows_.reduce.variance;
  const bool rowSizedOutputs = std::all_of(kernel_.outputs.begin(), kernel_.outputs.end(),
                                           [&](const TensorSpec& out) { return product(out.sizes) == rows_.rows; });
  const bool shortConsecutive = rows_.rowSize <= kShortRowLimit && rows_.rows > 1 && trailingRows();
  if (simple && rowSizedOutputs && rows_.rowSize <= kShortRowLimit && !shortConsecutive) {
    inlineReduction_ = true;
    return pointwiseKernels();
  }
  const std::optional<std::string> across = acrossRows(rows_.rows, rows_.total);
  if (!across) {
    if (simple && rows_.rows > 1 && leadingReduced() && columnOutputs()) return columnKernel();
    laneRows_ = shortConsecutive ? static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(rows_.rowSize))) : 0;
    threadRows_ = !shortConsecutive && rows_.rowSize <= kShortRowLimit;
    return reductionKernel();
  }
  if (!simple || rows_.rowSize > kInlineRowLimit) unsupported(*across);
  inlineReduction_ = true;
  return pointwiseKernels();
}

bool GroupGenerator::leadingReduced() {
  const Shape& sizes = shape(rows_.source);
  bool kept = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (kept && rows_.reducedDim[d]) return false;
    kept = kept || !rows_.reducedDim[d];
  }
  return true;
}

bool GroupGenerator::columnOutputs() {
  std::set<NodeId> after{reduction_};
  for (NodeId node : nodes_) {
    const auto inputs = graph_.inputs(node);
    if (std::any_of(inputs.begin(), inputs.end(), [&](NodeId in) { return after.contains(in); })) after.insert(node);
  }
  for (size_t k = 0; k < outputNodes_.size(); ++k) {
    const int64_t count = product(kernel_.outputs[k].sizes);
    if (count != rows_.rows && (count != rows_.total || after.contains(outputNodes_[k]))) return false;
  }
  return true;
}

bool GroupGenerator::trailingRows() {
  const Shape& sizes = shape(rows_.source);
  bool reduced = false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (reduced && !rows_.reducedDim[d]) return false;
    reduced = reduced || rows_.reducedDim[d];
  }
  return true;
}

}  // namespace lathe::kernels::codegen
