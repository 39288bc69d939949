// Properties of the planning core over random joint graphs shaped like AOTAutograd's: primals
// (parameters, buffers, user inputs), a forward DAG of pointwise / mm / view / sum nodes ending in
// a scalar loss and a few more forward outputs, one tangent per forward output, a backward that
// reads tangents, forward values and earlier backward nodes, and an output node returning the
// forward outputs then one gradient slot per primal. A failing case logs its graph as FX text.
// More cases: RC_PARAMS="max_success=2000".
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "analysis/canonical.h"
#include "analysis/cost_model.h"
#include "analysis/graph_inputs.h"
#include "analysis/joint.h"
#include "analysis/memory_timeline.h"
#include "hw/hw_profile.h"
#include "io/fx/fx_text.h"
#include "ir/op_info.h"
#include "passes/plan_target.h"
#include "passes/recompute.h"

namespace lathe::passes {
namespace {

using analysis::JointInfo;
using analysis::MemoryCategory;
using analysis::StepPartition;
using ir::NodeId;

// Uniform in [low, high) whatever the test's size (inRange alone favours the low end on early tests).
template <typename T>
T uniform(T low, T high) {
  return *rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(low, high));
}

template <typename T>
const T& pick(const std::vector<T>& items) {
  return items[uniform<size_t>(0, items.size())];
}

bool chance(int percent) {
  return uniform<int>(0, 100) < percent;
}

// Half the time the newest value, so that graphs grow deep chains as models do, not only fans.
NodeId pickRecent(const std::vector<NodeId>& values) {
  return chance(50) ? values.back() : pick(values);
}

// 2-D sizes, or a 0-d scalar (the loss and its tangent).
struct Shape {
  int64_t rows = 0, cols = 0;
  bool scalar = false;
  friend bool operator==(const Shape&, const Shape&) = default;
};

// Weight dimensions, and token counts: activations are larger than weights, as in training, so
// that what the forward saves drives the peak.
constexpr std::array<int64_t, 3> kDims = {64, 256, 1024};
constexpr std::array<int64_t, 2> kTokens = {1024, 4096};

int64_t randomDim() {
  return kDims[uniform<size_t>(0, kDims.size())];
}

// Mostly the model's hidden size, so that matmuls chain as in a layer stack; sometimes any size.
Shape randomShape(bool activation, int64_t hidden) {
  const int64_t rows = activation ? kTokens[uniform<size_t>(0, kTokens.size())] : chance(70) ? hidden : randomDim();
  return {rows, chance(70) ? hidden : randomDim(), false};
}

ir::Arg intList(std::initializer_list<int64_t> values) {
  ir::Arg list;
  list.kind = ir::Arg::Kind::List;
  for (int64_t v : values) list.items.push_back(ir::Arg::ofInt(v));
  return list;
}

// Builds the graph node by node, naming nodes as FX does (mul, mul_1, ...) and remembering shapes.
class JointBuilder {
 public:
  JointBuilder() : graph_(std::make_shared<ir::Graph>()) {}

  NodeId placeholder(const std::string& name, ir::Role role, Shape shape, ir::DType dtype) {
    ir::Node node;
    node.kind = ir::NodeKind::Placeholder;
    node.role = role;
    node.name = graph_->intern(name);
    node.meta = meta(shape, dtype);
    return add(std::move(node), shape);
  }

  NodeId call(std::string_view target, std::vector<ir::Arg> args, Shape shape, ir::DType dtype) {
    ir::Node node;
    node.kind = ir::NodeKind::CallFunction;
    node.target = graph_->intern(target);
    node.name = graph_->intern(freshName(target));
    node.args = std::move(args);
    node.meta = meta(shape, dtype);
    return add(std::move(node), shape);
  }

  // The same computation again under a new name (what CSE merges).
  NodeId duplicate(NodeId of) {
    const ir::Node& original = graph_->node(of);
    const std::string target(graph_->str(original.target));
    return call(target, original.args, shapes_[of], original.meta.dtype);
  }

  void output(const std::vector<NodeId>& items) {
    ir::Node node;
    node.kind = ir::NodeKind::Output;
    node.name = graph_->intern("output");
    node.target = graph_->intern("output");
    ir::Arg list;
    list.kind = ir::Arg::Kind::List;
    for (NodeId id : items) list.items.push_back(id == ir::kNoNode ? ir::Arg::none() : ir::Arg::ofNode(id));
    node.args.push_back(std::move(list));
    add(std::move(node), {});
  }

  std::shared_ptr<ir::Graph> finish() {
    graph_->setForwardParams({graph_->intern("primals"), graph_->intern("tangents")});
    graph_->finalize();
    return graph_;
  }

  // Gives a placeholder the shape it turned out to need.
  void retype(NodeId id, Shape shape, ir::DType dtype) {
    graph_->mutableNode(id).meta = meta(shape, dtype);
    shapes_[id] = shape;
  }

  [[nodiscard]] const Shape& shape(NodeId id) const { return shapes_[id]; }
  // Distinct nodes a node reads, before the graph is finalized.
  [[nodiscard]] const std::vector<NodeId>& inputs(NodeId id) const { return inputs_[id]; }

 private:
  NodeId add(ir::Node node, Shape shape) {
    std::vector<NodeId> reads;
    for (const ir::Arg& arg : node.args) {
      ir::forEachNodeRef(arg, [&](NodeId id) {
        if (std::find(reads.begin(), reads.end(), id) == reads.end()) reads.push_back(id);
      });
    }
    inputs_.push_back(std::move(reads));
    shapes_.push_back(shape);
    return graph_->addNode(std::move(node));
  }

  // "torch.ops.aten.mul.Tensor" -> "mul", "mul_1", ...
  std::string freshName(std::string_view target) {
    std::string_view op = target.substr(std::string_view("torch.ops.aten.").size());
    op = op.substr(0, op.find('.'));
    int& count = nameCounts_[std::string(op)];
    return count++ == 0 ? std::string(op) : std::string(op) + "_" + std::to_string(count - 1);
  }

  ir::TensorMeta meta(Shape shape, ir::DType dtype) {
    ir::TensorMeta m;
    m.kind = ir::ValueKind::Tensor;
    m.dtype = dtype;
    m.hasStrides = true;
    m.device = graph_->intern("cuda:0");
    if (!shape.scalar) {
      m.sizes = {{shape.rows, 0, true}, {shape.cols, 0, true}};
      m.strides = {{shape.cols, 0, true}, {1, 0, true}};
    }
    return m;
  }

  std::shared_ptr<ir::Graph> graph_;
  std::vector<Shape> shapes_;
  std::vector<std::vector<NodeId>> inputs_;
  std::map<std::string, int> nameCounts_;
};

enum class Op { Mul, Add, Relu, Mm, View, Sum, Duplicate };

// One random node reading `a` (and, for binary ops, a value of `operands` of a fitting shape).
NodeId emitOp(JointBuilder& b, NodeId a, const std::vector<NodeId>& operands, const std::vector<NodeId>& earlierCalls) {
  const Shape sa = b.shape(a);
  auto fitting = [&](auto fits) {
    std::vector<NodeId> out;
    for (NodeId v : operands) {
      if (fits(b.shape(v))) out.push_back(v);
    }
    return out;
  };
  if (sa.scalar) {  // a scalar (the loss, its tangent) scales a tensor, as the loss's backward does
    const std::vector<NodeId> tensors = fitting([](const Shape& s) { return !s.scalar; });
    const NodeId other = pick(tensors);
    return b.call("torch.ops.aten.mul.Tensor", {ir::Arg::ofNode(a), ir::Arg::ofNode(other)}, b.shape(other),
                  ir::DType::BF16);
  }
  const Op op = *rc::gen::weightedElement<Op>(
      {{3, Op::Mul}, {2, Op::Add}, {1, Op::Relu}, {3, Op::Mm}, {1, Op::View}, {1, Op::Sum}, {1, Op::Duplicate}});
  switch (op) {
    case Op::Mul:
    case Op::Add: {
      // Same shape or a [rows, 1] column that broadcasts; `a` itself always fits.
      std::vector<NodeId> others =
          fitting([&](const Shape& s) { return !s.scalar && s.rows == sa.rows && (s.cols == sa.cols || s.cols == 1); });
      others.push_back(a);
      const NodeId other = pick(others);
      const char* target = op == Op::Mul ? "torch.ops.aten.mul.Tensor" : "torch.ops.aten.add.Tensor";
      return b.call(target, {ir::Arg::ofNode(a), ir::Arg::ofNode(other)}, sa, ir::DType::BF16);
    }
    case Op::Mm: {
      // Products stay within what the planner accepts (a row times a column of a flattened
      // matrix would be 2 TiB, passes::kMaxTensorBytes refuses it).
      const std::vector<NodeId> rights = fitting([&](const Shape& s) {
        return !s.scalar && s.rows == sa.cols && static_cast<uint64_t>(sa.rows) * s.cols * 2 <= kMaxTensorBytes;
      });
      if (rights.empty()) break;
      const NodeId right = pick(rights);
      return b.call("torch.ops.aten.mm.default", {ir::Arg::ofNode(a), ir::Arg::ofNode(right)},
                    {sa.rows, b.shape(right).cols, false}, ir::DType::BF16);
    }
    case Op::View: {
      // The same shape (a no-op Inductor removes), transposed sizes, or one row.
      const std::vector<Shape> shapes = {sa, {sa.cols, sa.rows, false}, {1, sa.rows * sa.cols, false}};
      const Shape to = pick(shapes);
      return b.call("torch.ops.aten.view.default", {ir::Arg::ofNode(a), intList({to.rows, to.cols})}, to,
                    ir::DType::BF16);
    }
    case Op::Sum:
      return b.call("torch.ops.aten.sum.dim_IntList", {ir::Arg::ofNode(a), intList({1}), ir::Arg::ofBool(true)},
                    {sa.rows, 1, false}, ir::DType::BF16);
    case Op::Duplicate:
      if (earlierCalls.empty()) break;
      return b.duplicate(pick(earlierCalls));
    case Op::Relu: break;
  }
  return b.call("torch.ops.aten.relu.default", {ir::Arg::ofNode(a)}, sa, ir::DType::BF16);
}

// A backward step as autograd writes one: the incoming gradient times, or matmul'ed with, a forward
// value of the node it flows through; else any random op.
NodeId emitGradientOp(JointBuilder& b, NodeId gradient, const std::vector<NodeId>& operands,
                      const std::vector<NodeId>& earlierCalls) {
  const Shape sg = b.shape(gradient);
  if (!sg.scalar && chance(80)) {
    std::vector<NodeId> scales, rights;
    for (NodeId v : operands) {
      const Shape sv = b.shape(v);
      if (sv.scalar) continue;
      if (sv.rows == sg.rows && (sv.cols == sg.cols || sv.cols == 1)) scales.push_back(v);
      if (sv.rows == sg.cols && static_cast<uint64_t>(sg.rows) * sv.cols * 2 <= kMaxTensorBytes) rights.push_back(v);
    }
    if (!scales.empty() && (rights.empty() || chance(50))) {
      return b.call("torch.ops.aten.mul.Tensor", {ir::Arg::ofNode(gradient), ir::Arg::ofNode(pick(scales))}, sg,
                    ir::DType::BF16);
    }
    if (!rights.empty()) {
      const NodeId right = pick(rights);
      return b.call("torch.ops.aten.mm.default", {ir::Arg::ofNode(gradient), ir::Arg::ofNode(right)},
                    {sg.rows, b.shape(right).cols, false}, ir::DType::BF16);
    }
  }
  return emitOp(b, gradient, operands, earlierCalls);
}

struct RandomJoint {
  std::shared_ptr<const ir::Graph> graph;
  analysis::GraphInputs inputs;
  std::vector<NodeId> primals, tangents, forwardOutputs;
  std::vector<NodeId> gradients;  // per primal; kNoNode for None
};

RandomJoint randomJoint() {
  JointBuilder b;
  RandomJoint joint;
  const size_t primalCount = *rc::gen::inRange<size_t>(1, 7);
  const int64_t hidden = randomDim();
  std::vector<ir::Role> roles;
  for (size_t i = 0; i < primalCount; ++i) {
    // The last primal is the batch, as AOT orders parameters and buffers before user inputs; the
    // forward starts from it.
    const ir::Role role = i + 1 == primalCount
                              ? ir::Role::UserInput
                              : *rc::gen::weightedElement<ir::Role>(
                                    {{3, ir::Role::Parameter}, {1, ir::Role::UserInput}, {1, ir::Role::Buffer}});
    roles.push_back(role);
    joint.primals.push_back(b.placeholder("primals_" + std::to_string(i + 1), role,
                                          randomShape(role == ir::Role::UserInput, hidden), ir::DType::BF16));
  }
  // One tangent per forward output. Placeholders come first, so the tangents of the extra outputs
  // get their shapes once the forward has chosen those outputs.
  const size_t forwardCount = *rc::gen::inRange<size_t>(1, 41);
  const size_t extraOutputs = std::min(forwardCount, *rc::gen::weightedElement<size_t>({{6, 0}, {3, 1}, {1, 2}}));
  for (size_t i = 0; i <= extraOutputs; ++i) {
    joint.tangents.push_back(
        b.placeholder("tangents_" + std::to_string(i + 1), ir::Role::Tangent, {0, 0, true}, ir::DType::F32));
  }

  std::vector<NodeId> forwardValues = joint.primals;
  std::vector<NodeId> forwardCalls;
  for (size_t i = 0; i < forwardCount; ++i) {
    const NodeId node = emitOp(b, pickRecent(forwardValues), forwardValues, forwardCalls);
    forwardValues.push_back(node);
    forwardCalls.push_back(node);
  }
  const NodeId lossInput = pickRecent(forwardCalls);
  joint.forwardOutputs.push_back(
      b.call("torch.ops.aten.sum.default", {ir::Arg::ofNode(lossInput)}, {0, 0, true}, ir::DType::F32));
  forwardValues.push_back(joint.forwardOutputs.back());
  std::vector<NodeId> extras = forwardCalls;
  for (size_t i = 0; i < extraOutputs; ++i) {
    const size_t at = uniform<size_t>(0, extras.size());
    joint.forwardOutputs.push_back(extras[at]);
    extras.erase(extras.begin() + static_cast<std::ptrdiff_t>(at));
    b.retype(joint.tangents[i + 1], b.shape(joint.forwardOutputs.back()), ir::DType::BF16);
  }

  // Backward, shaped like autograd's: from each forward output's tangent back through the forward
  // in reverse, each input of a node getting a gradient made from the node's gradient and its
  // forward values (so the backward reads activations), accumulated where several arrive.
  std::map<NodeId, NodeId> gradientOf;
  for (size_t i = 0; i < joint.forwardOutputs.size(); ++i) gradientOf[joint.forwardOutputs[i]] = joint.tangents[i];
  std::vector<NodeId> backwardValues = joint.tangents;
  std::vector<NodeId> backwardCalls;
  auto record = [&](NodeId node) {
    backwardValues.push_back(node);
    backwardCalls.push_back(node);
    return node;
  };
  std::vector<NodeId> reversed = forwardCalls;
  reversed.push_back(joint.forwardOutputs.front());
  std::reverse(reversed.begin(), reversed.end());
  for (NodeId v : reversed) {
    const auto flowing = gradientOf.find(v);
    if (flowing == gradientOf.end()) continue;
    for (NodeId u : b.inputs(v)) {
      if (u != b.inputs(v).front() && !chance(80)) continue;
      std::vector<NodeId> operands = b.inputs(v);
      operands.push_back(v);
      if (chance(30)) operands.push_back(pickRecent(backwardValues));
      NodeId grad = record(emitGradientOp(b, flowing->second, operands, backwardCalls));
      const auto earlier = gradientOf.find(u);
      if (earlier != gradientOf.end() && b.shape(earlier->second) == b.shape(grad) && chance(80)) {
        grad = record(b.call("torch.ops.aten.add.Tensor", {ir::Arg::ofNode(earlier->second), ir::Arg::ofNode(grad)},
                             b.shape(grad), ir::DType::BF16));  // accumulation
      }
      gradientOf[u] = grad;
    }
  }
  // A few more backward nodes anywhere: on tangents, earlier backward values or forward values only.
  const size_t looseCount = uniform<size_t>(0, 6);
  for (size_t i = 0; i < looseCount; ++i) {
    const NodeId a = chance(75) ? pickRecent(backwardValues) : pick(forwardValues);
    std::vector<NodeId> operands = forwardValues;
    operands.insert(operands.end(), backwardValues.begin(), backwardValues.end());
    record(emitOp(b, a, operands, backwardCalls));
  }
  // One gradient slot per primal: what flowed back to it, else a backward value of its shape, or None.
  for (size_t i = 0; i < primalCount; ++i) {
    const int percent = roles[i] == ir::Role::Parameter ? 90 : roles[i] == ir::Role::Buffer ? 10 : 40;
    const auto flowed = gradientOf.find(joint.primals[i]);
    if (!chance(percent) || backwardCalls.empty()) {
      joint.gradients.push_back(ir::kNoNode);
    } else if (flowed != gradientOf.end() && chance(90)) {
      joint.gradients.push_back(flowed->second);
    } else {
      std::vector<NodeId> candidates;
      for (NodeId v : backwardValues) {
        if (b.shape(v) == b.shape(joint.primals[i])) candidates.push_back(v);
      }
      joint.gradients.push_back(pick(candidates.empty() ? backwardCalls : candidates));
    }
  }
  std::vector<NodeId> items = joint.forwardOutputs;
  items.insert(items.end(), joint.gradients.begin(), joint.gradients.end());
  b.output(items);
  joint.graph = b.finish();
  joint.inputs = analysis::inferGraphInputs(*joint.graph, nullptr);
  RC_LOG() << io::printFxText(*joint.graph);
  return joint;
}

const hw::HwProfile& h200() {
  static const hw::HwProfile profile = hw::resolveHwProfile("h200");
  return profile;
}

PlanTarget targetOf(const RandomJoint& joint) { return PlanTarget(joint.graph, "random", joint.inputs, h200()); }

std::string nameOf(const ir::Graph& graph, NodeId id) {
  return std::string(graph.name(id));
}

// Everything the backward reads from the forward, saved: nothing is left to recompute.
std::vector<NodeId> saveEverythingTheBackwardReads(const ir::Graph& graph, const JointInfo& joint) {
  std::vector<uint8_t> saved(graph.size(), 0);
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (!joint.tangentClosure[id] || graph.node(id).kind == ir::NodeKind::Output) continue;
    for (NodeId in : graph.inputs(id)) saved[in] = saved[in] || !joint.tangentClosure[in];
  }
  for (NodeId id : joint.backwardOutputs) saved[id] = saved[id] || !joint.tangentClosure[id];
  std::vector<NodeId> out;
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (saved[id]) out.push_back(id);
  }
  return out;
}

// The forward runs from the primals and the backward from the saved values and the tangents, each
// node after its inputs; the forward yields its outputs and the saved values, the backward every
// gradient. Checked here on the schedule itself, independently of StepPartition::missing.
void requireRunnable(const ir::Graph& graph, const JointInfo& joint, const StepPartition& step,
                     const std::string& policy) {
  if (!step.valid()) {
    std::string missing;
    for (NodeId id : step.missing) missing += " " + nameOf(graph, id);
    RC_FAIL(policy + ": the step cannot compute" + missing);
  }
  std::vector<uint8_t> ready(graph.size(), 0);
  for (NodeId id : joint.primals) ready[id] = 1;
  for (NodeId id : step.forward) {
    for (NodeId in : graph.inputs(id)) {
      if (!ready[in]) {
        RC_FAIL(policy + ": forward node " + nameOf(graph, id) + " runs before its input " + nameOf(graph, in));
      }
    }
    ready[id] = 1;
  }
  for (NodeId id : joint.forwardOutputs) {
    if (!ready[id]) RC_FAIL(policy + ": the forward does not compute output " + nameOf(graph, id));
  }
  std::vector<uint8_t> available(graph.size(), 0);
  for (NodeId id : step.saved) {
    if (!ready[id]) RC_FAIL(policy + ": the forward does not compute saved " + nameOf(graph, id));
    available[id] = 1;
  }
  for (NodeId id : joint.tangents) available[id] = 1;
  for (NodeId id : step.backward) {
    for (NodeId in : graph.inputs(id)) {
      if (!available[in]) {
        RC_FAIL(policy + ": backward node " + nameOf(graph, id) + " reads " + nameOf(graph, in) +
                ", neither saved nor computed before");
      }
    }
    available[id] = 1;
  }
  for (NodeId id : joint.backwardOutputs) {
    if (!available[id]) RC_FAIL(policy + ": the backward does not produce gradient " + nameOf(graph, id));
  }
}

// A saved set's partition: runnable, recomputing only forward values, saving nothing the tangents
// reach, and a fixed point (partitioning with its own saved list changes nothing).
void requireValidSavedSet(const ir::Graph& graph, const JointInfo& joint, std::span<const NodeId> saved,
                          const std::string& policy) {
  const StepPartition step = analysis::partitionJoint(graph, joint, saved);
  requireRunnable(graph, joint, step, policy);
  for (NodeId id : step.recomputed) {
    if (!step.inForward[id] || !step.inBackward[id] || joint.tangentClosure[id]) {
      RC_FAIL(policy + ": recomputed " + nameOf(graph, id) + " is not a forward value the backward computes again");
    }
  }
  for (NodeId id : step.saved) {
    if (joint.tangentClosure[id]) RC_FAIL(policy + ": saved " + nameOf(graph, id) + " is in the tangent closure");
  }
  const StepPartition again = analysis::partitionJoint(graph, joint, step.saved);
  RC_ASSERT(again.saved == step.saved);
  RC_ASSERT(again.forward == step.forward);
  RC_ASSERT(again.backward == step.backward);
}

void requireValidDecision(const ir::Graph& graph, const JointInfo& joint, const plan::RecomputeDecision& decision) {
  requireValidSavedSet(graph, joint, decision.saved, decision.policy);
  const StepPartition step = analysis::partitionJoint(graph, joint, decision.saved);
  RC_ASSERT(decision.saved == step.saved);
  RC_ASSERT(decision.recomputed == step.recomputed);
  RC_ASSERT(decision.savedReasons.size() == decision.saved.size());
}

bool sameDecision(const plan::RecomputeDecision& a, const plan::RecomputeDecision& b) {
  return a.policy == b.policy && a.saved == b.saved && a.recomputed == b.recomputed && a.savedReasons == b.savedReasons;
}

// Live bytes add up per step and per category, the peak is the largest total, storages live in
// order, weights for the whole step.
void requireConsistentTimeline(const ir::Graph& graph, const analysis::GraphInputs& inputs,
                               const analysis::StepSchedule& schedule, const analysis::MemoryTimeline& t) {
  const size_t steps = schedule.nodes.size();
  RC_ASSERT(steps > 0u);
  RC_ASSERT(t.live.size() == steps);
  RC_ASSERT(t.total.size() == steps);
  std::vector<std::array<uint64_t, analysis::kMemoryCategoryCount>> fromStorages(steps);
  for (auto& row : fromStorages) row.fill(0);
  for (const analysis::StorageLife& life : t.storages) {
    RC_ASSERT(life.first <= life.last);
    RC_ASSERT(life.last < steps);
    for (uint32_t step = life.first; step <= life.last; ++step) {
      fromStorages[step][static_cast<size_t>(life.category)] += life.bytes;
    }
  }
  uint64_t weightBytes = 0;
  for (NodeId id : inputs.placeholders) {
    if (inputs.isWeight(id) && graph.node(id).meta.isTensor()) weightBytes += graph.node(id).meta.storageBytes();
  }
  uint64_t peak = 0;
  for (size_t step = 0; step < steps; ++step) {
    const auto& live = t.live[step];
    RC_ASSERT(std::accumulate(live.begin(), live.end(), uint64_t{0}) == t.total[step]);
    RC_ASSERT(live == fromStorages[step]);
    RC_ASSERT(live[static_cast<size_t>(MemoryCategory::Weights)] == weightBytes);
    RC_ASSERT(live[static_cast<size_t>(MemoryCategory::Prefetched)] == 0u);
    peak = std::max(peak, t.total[step]);
  }
  RC_ASSERT(t.peakBytes == peak);
  RC_ASSERT(t.total[t.peakStep] == peak);
  RC_ASSERT(t.atPeak == t.live[t.peakStep]);
}

RC_GTEST_PROP(RandomJoint, AnalysisClassifiesForwardAndBackward, ()) {
  const RandomJoint g = randomJoint();
  const ir::Graph& graph = *g.graph;
  const JointInfo joint = analysis::analyzeJoint(graph);
  RC_ASSERT(joint.joint);
  RC_ASSERT(joint.primals == g.primals);
  RC_ASSERT(joint.tangents == g.tangents);
  RC_ASSERT(joint.forwardOutputCount == g.forwardOutputs.size());
  RC_ASSERT(joint.forwardOutputs == g.forwardOutputs);
  std::vector<NodeId> gradients;
  for (NodeId id : g.gradients) {
    if (id != ir::kNoNode) gradients.push_back(id);
  }
  RC_ASSERT(joint.backwardOutputs == gradients);

  for (NodeId id : joint.forwardOutputs) {
    if (!joint.requiredForward[id]) RC_FAIL("forward output " + nameOf(graph, id) + " is not requiredForward");
  }
  for (NodeId id : joint.tangents) {
    if (!joint.tangentClosure[id]) RC_FAIL("tangent " + nameOf(graph, id) + " is not in the tangent closure");
  }
  int32_t order = 0;
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (joint.requiredForward[id] && joint.tangentClosure[id]) {
      RC_FAIL(nameOf(graph, id) + " is both requiredForward and in the tangent closure");
    }
    RC_ASSERT(joint.forwardOrder[id] == (joint.requiredForward[id] ? order++ : -1));
    if (graph.node(id).kind == ir::NodeKind::Output) continue;
    if (!joint.requiredForward[id] && joint.distanceFromBackward[id] != 0) {
      RC_FAIL(nameOf(graph, id) +
              " is off the forward but distanceFromBackward = " + std::to_string(joint.distanceFromBackward[id]));
    }
    if (joint.requiredForward[id]) RC_ASSERT(joint.distanceFromBackward[id] >= 1);
  }
}

RC_GTEST_PROP(RandomJoint, EveryPolicyGivesARunnableDeterministicStep, ()) {
  const RandomJoint g = randomJoint();
  const ir::Graph& graph = *g.graph;
  const JointInfo joint = analysis::analyzeJoint(graph);
  const plan::RecomputeDecision torch = torchPolicy(graph, joint, g.inputs);
  requireValidDecision(graph, joint, torch);
  RC_ASSERT(sameDecision(torch, torchPolicy(graph, joint, g.inputs)));

  const plan::RecomputeDecision heuristic = heuristicPolicy(graph, joint, ir::OpRegistry::global());
  requireValidDecision(graph, joint, heuristic);
  RC_ASSERT(sameDecision(heuristic, heuristicPolicy(graph, joint, ir::OpRegistry::global())));

  const PlanTarget target = targetOf(g);
  const PassContext context = target.context();
  const std::vector<FrontierPoint> frontier = budgetFrontier(context);
  RC_ASSERT(!frontier.empty());
  for (const FrontierPoint& point : frontier) requireValidSavedSet(graph, joint, point.saved, "budget frontier point");
  const std::vector<FrontierPoint> again = budgetFrontier(context);
  RC_ASSERT(again.size() == frontier.size());
  for (size_t i = 0; i < frontier.size(); ++i) {
    RC_ASSERT(again[i].saved == frontier[i].saved);
    RC_ASSERT(again[i].peakBytes == frontier[i].peakBytes);
    RC_ASSERT(again[i].recomputeSeconds == frontier[i].recomputeSeconds);
  }
}

RC_GTEST_PROP(RandomJoint, MemoryTimelineAddsUp, ()) {
  const RandomJoint g = randomJoint();
  const ir::Graph& graph = *g.graph;
  const JointInfo joint = analysis::analyzeJoint(graph);
  const std::vector<std::pair<std::string, std::vector<NodeId>>> savedSets = {
      {"torch", torchPolicy(graph, joint, g.inputs).saved},
      {"heuristic", heuristicPolicy(graph, joint, ir::OpRegistry::global()).saved},
      {"save everything", saveEverythingTheBackwardReads(graph, joint)},
  };
  for (const auto& [policy, saved] : savedSets) {
    RC_LOG() << "saved set: " << policy << "\n";
    const StepPartition step = analysis::partitionJoint(graph, joint, saved);
    const analysis::StepSchedule schedule = analysis::trainingSchedule(graph, step);
    RC_ASSERT(schedule.backwardStart == step.forward.size());
    // The backward in Inductor's kernel order: the same executions, each after what it reads.
    std::vector<NodeId> backward(schedule.nodes.begin() + static_cast<ptrdiff_t>(schedule.backwardStart), schedule.nodes.end());
    std::vector<NodeId> expected = step.backward;
    std::sort(backward.begin(), backward.end());
    std::sort(expected.begin(), expected.end());
    RC_ASSERT(backward == expected);
    std::vector<size_t> ranOn(graph.size(), SIZE_MAX);
    for (size_t i = schedule.backwardStart; i < schedule.nodes.size(); ++i) ranOn[schedule.nodes[i]] = i;
    for (size_t i = schedule.backwardStart; i < schedule.nodes.size(); ++i) {
      for (NodeId in : graph.inputs(schedule.nodes[i])) RC_ASSERT(ranOn[in] == SIZE_MAX || ranOn[in] < i);
    }
    const analysis::MemoryTimeline timeline = analysis::memoryTimeline(graph, g.inputs, schedule, &joint, &step);
    requireConsistentTimeline(graph, g.inputs, schedule, timeline);
  }

  // Saving everything the backward reads leaves nothing to recompute.
  const std::vector<NodeId>& everything = savedSets.back().second;
  const PlanTarget target = targetOf(g);
  const PassContext context = target.context();
  const RecomputeEvaluation eval = evaluateSavedSet(context, everything);
  RC_ASSERT(eval.partition.valid());
  RC_ASSERT(eval.partition.recomputed.empty());
  RC_ASSERT(eval.recomputeSeconds == 0.0);
  for (const auto& live : eval.timeline.live) RC_ASSERT(live[static_cast<size_t>(MemoryCategory::Recomputed)] == 0u);
}

RC_GTEST_PROP(RandomJoint, BudgetFrontierIsParetoAndBeatsThePolicies, ()) {
  const RandomJoint g = randomJoint();
  const ir::Graph& graph = *g.graph;
  const JointInfo joint = analysis::analyzeJoint(graph);
  const PlanTarget target = targetOf(g);
  const PassContext context = target.context();
  const std::vector<FrontierPoint> frontier = budgetFrontier(context);
  RC_ASSERT(!frontier.empty());
  for (size_t i = 1; i < frontier.size(); ++i) {
    RC_ASSERT(frontier[i - 1].peakBytes < frontier[i].peakBytes);
    RC_ASSERT(frontier[i - 1].recomputeSeconds > frontier[i].recomputeSeconds);
  }
  for (const FrontierPoint& point : frontier) {
    // Each point's numbers are its saved set's evaluation.
    const RecomputeEvaluation own = evaluateSavedSet(context, point.saved);
    RC_ASSERT(own.timeline.peakBytes == point.peakBytes);
    RC_ASSERT(own.recomputeSeconds == point.recomputeSeconds);
    RC_ASSERT(own.savedBytes == point.savedBytes);
  }
  const std::vector<std::pair<std::string, plan::RecomputeDecision>> policies = {
      {"torch", torchPolicy(graph, joint, g.inputs)},
      {"heuristic", heuristicPolicy(graph, joint, ir::OpRegistry::global())},
  };
  for (const auto& [policy, decision] : policies) {
    const RecomputeEvaluation eval = evaluateSavedSet(context, decision.saved);
    RC_ASSERT(eval.partition.valid());
    const uint64_t peak = eval.timeline.peakBytes;
    const double seconds = eval.recomputeSeconds;
    for (const FrontierPoint& point : frontier) {
      const bool dominated = peak <= point.peakBytes && seconds <= point.recomputeSeconds &&
                             (peak < point.peakBytes || seconds < point.recomputeSeconds);
      if (dominated) {
        RC_FAIL(policy + " (peak " + std::to_string(peak) + " B, recompute " + std::to_string(seconds) +
                " s) dominates the frontier point (peak " + std::to_string(point.peakBytes) + " B, recompute " +
                std::to_string(point.recomputeSeconds) + " s)");
      }
    }
  }
}

RC_GTEST_PROP(RandomJoint, CanonicalGraphHasNoDuplicatesAndKeepsNames, ()) {
  const RandomJoint g = randomJoint();
  const ir::Graph& graph = *g.graph;
  const analysis::CanonicalGraph canonical = analysis::canonicalize(graph);
  const ir::Graph& cg = *canonical.graph;
  RC_ASSERT(canonical.toCanonical.size() == graph.size());
  RC_ASSERT(canonical.toOriginal.size() == cg.size());
  RC_ASSERT(canonical.removedNoOps + canonical.mergedDuplicates == graph.size() - cg.size());
  for (NodeId c = 0; c < cg.size(); ++c) {
    const NodeId original = canonical.toOriginal[c];
    RC_ASSERT(original < graph.size());
    RC_ASSERT(canonical.toCanonical[original] == c);
    RC_ASSERT(cg.name(c) == graph.name(original));
    RC_ASSERT(cg.target(c) == graph.target(original));
    RC_ASSERT(cg.find(cg.name(c)) == c);
  }
  for (NodeId id = 0; id < graph.size(); ++id) {
    const NodeId c = canonical.toCanonical[id];
    if (c >= cg.size()) RC_FAIL(nameOf(graph, id) + " maps to no canonical node");
    // A removed node stands for a value equal to its own: a no-op's input or a duplicate.
    const NodeId stand = canonical.toOriginal[c];
    if (stand != id && !(graph.node(stand).meta == graph.node(id).meta)) {
      RC_FAIL(nameOf(graph, id) + " is replaced by " + nameOf(graph, stand) + ", which has other metadata");
    }
    if (stand != id && graph.target(stand) != graph.target(id) && graph.target(id) != "torch.ops.aten.view.default") {
      RC_FAIL(nameOf(graph, id) + " is replaced by " + nameOf(graph, stand) +
              " but is neither a duplicate nor a no-op");
    }
  }
  // Nodes that share storage with an output keep their identity (torch's fx_graph_cse never
  // merges them); any other two calls differ in target or arguments, and no same-shape view is left.
  std::vector<NodeId> storage(cg.size());
  for (NodeId id = 0; id < cg.size(); ++id) {
    storage[id] = id;
    const auto ins = cg.inputs(id);
    if (cg.node(id).kind == ir::NodeKind::CallFunction && !ins.empty() && cg.node(ins[0]).meta.isTensor() &&
        ir::lookupOp(cg.target(id)).category == ir::OpCategory::View) {
      storage[id] = storage[ins[0]];
    }
  }
  std::vector<uint8_t> outputItem(cg.size(), 0), aliasesOutput(cg.size(), 0);
  for (NodeId id : analysis::outputItems(cg)) {
    if (id != ir::kNoNode) outputItem[id] = 1;
  }
  for (NodeId id = 0; id < cg.size(); ++id) {
    if (outputItem[id]) aliasesOutput[storage[id]] = 1;
  }
  for (NodeId a = 0; a < cg.size(); ++a) {
    if (cg.node(a).kind != ir::NodeKind::CallFunction || outputItem[a] || aliasesOutput[storage[a]]) continue;
    if (cg.target(a) == "torch.ops.aten.view.default" && cg.node(cg.inputs(a)[0]).meta == cg.node(a).meta) {
      RC_FAIL("canonical node " + nameOf(cg, a) + " is a no-op view left in place");
    }
    for (NodeId b = a + 1; b < cg.size(); ++b) {
      if (cg.node(b).kind != ir::NodeKind::CallFunction || outputItem[b] || aliasesOutput[storage[b]]) continue;
      if (cg.node(a).target == cg.node(b).target && cg.node(a).args == cg.node(b).args &&
          cg.node(a).kwargs == cg.node(b).kwargs) {
        RC_FAIL("canonical nodes " + nameOf(cg, a) + " and " + nameOf(cg, b) + " compute the same thing");
      }
    }
  }
  // Output items map one to one.
  const std::vector<NodeId> items = analysis::outputItems(graph);
  const std::vector<NodeId> canonicalItems = analysis::outputItems(cg);
  RC_ASSERT(items.size() == canonicalItems.size());
  for (size_t i = 0; i < items.size(); ++i) {
    RC_ASSERT(canonicalItems[i] == (items[i] == ir::kNoNode ? ir::kNoNode : canonical.toCanonical[items[i]]));
  }
}

// Minimal cases the properties found, as fixed graphs.

struct FixedJoint {
  std::shared_ptr<const ir::Graph> graph;
  analysis::GraphInputs inputs;
  JointInfo joint;
};

FixedJoint finishFixed(JointBuilder& b, const std::vector<NodeId>& outputs) {
  b.output(outputs);
  FixedJoint f;
  f.graph = b.finish();
  f.inputs = analysis::inferGraphInputs(*f.graph, nullptr);
  f.joint = analysis::analyzeJoint(*f.graph);
  return f;
}

void expectRunnable(const FixedJoint& f, const plan::RecomputeDecision& decision) {
  const StepPartition step = analysis::partitionJoint(*f.graph, f.joint, decision.saved);
  std::string missing, saved;
  for (NodeId id : step.missing) missing += " " + nameOf(*f.graph, id);
  for (NodeId id : decision.saved) saved += " " + nameOf(*f.graph, id);
  EXPECT_TRUE(step.valid()) << decision.policy << " saves" << saved << "; the backward cannot compute" << missing
                            << "\n"
                            << io::printFxText(*f.graph);
}

TEST(RandomJointCases, TorchPolicySavesNothingWhenTheBackwardReadsNoForwardValue) {
  // loss = w.sum(); the gradient is the tangent broadcast, so the forward has nothing to save.
  JointBuilder b;
  const NodeId w = b.placeholder("primals_1", ir::Role::Parameter, {64, 64, false}, ir::DType::BF16);
  const NodeId tangent = b.placeholder("tangents_1", ir::Role::Tangent, {0, 0, true}, ir::DType::F32);
  const NodeId loss = b.call("torch.ops.aten.sum.default", {ir::Arg::ofNode(w)}, {0, 0, true}, ir::DType::F32);
  const NodeId grad = b.call("torch.ops.aten.expand.default", {ir::Arg::ofNode(tangent), intList({64, 64})},
                             {64, 64, false}, ir::DType::F32);
  const FixedJoint f = finishFixed(b, {loss, grad});
  ASSERT_TRUE(f.joint.joint);
  plan::RecomputeDecision decision;
  ASSERT_NO_THROW(decision = torchPolicy(*f.graph, f.joint, f.inputs));
  EXPECT_TRUE(decision.saved.empty());
  expectRunnable(f, decision);
}

TEST(RandomJointCases, TorchPolicyCoversADuplicateTheBackwardReads) {
  // sum_1 duplicates sum. On the canonical graph (CSE merges them) the min cut saves sum, a 4x
  // smaller reduction banned from recompute; mapped back, sum is never read by the backward, which
  // reads sum_1, so the plan saves nothing and the backward cannot compute its gradient.
  JointBuilder b;
  const NodeId x = b.placeholder("primals_1", ir::Role::UserInput, {64, 64, false}, ir::DType::BF16);
  const NodeId tangent = b.placeholder("tangents_1", ir::Role::Tangent, {0, 0, true}, ir::DType::F32);
  const std::vector<ir::Arg> rowSum = {ir::Arg::ofNode(x), intList({1}), ir::Arg::ofBool(true)};
  const NodeId sum = b.call("torch.ops.aten.sum.dim_IntList", rowSum, {64, 1, false}, ir::DType::BF16);
  const NodeId sumAgain = b.call("torch.ops.aten.sum.dim_IntList", rowSum, {64, 1, false}, ir::DType::BF16);
  const NodeId loss = b.call("torch.ops.aten.sum.default", {ir::Arg::ofNode(sum)}, {0, 0, true}, ir::DType::F32);
  const NodeId scaled = b.call("torch.ops.aten.mul.Tensor", {ir::Arg::ofNode(tangent), ir::Arg::ofNode(sumAgain)},
                               {64, 1, false}, ir::DType::BF16);
  const NodeId grad = b.call("torch.ops.aten.expand.default", {ir::Arg::ofNode(scaled), intList({64, 64})},
                             {64, 64, false}, ir::DType::BF16);
  const FixedJoint f = finishFixed(b, {loss, grad});
  ASSERT_TRUE(f.joint.joint);
  expectRunnable(f, torchPolicy(*f.graph, f.joint, f.inputs));
}

TEST(RandomJointCases, HeuristicPolicySavesAMatmulTheBackwardReadsPastItsView) {
  // The save point of mm moves down to its only forward user, the view, which the backward never
  // reads: it reads mm itself. x and w (user inputs behind a compute-sensitive op) are not kept
  // either, so the plan saves nothing and the backward cannot compute its gradient.
  JointBuilder b;
  const NodeId x = b.placeholder("primals_1", ir::Role::UserInput, {64, 64, false}, ir::DType::BF16);
  const NodeId w = b.placeholder("primals_2", ir::Role::UserInput, {64, 64, false}, ir::DType::BF16);
  const NodeId tangent = b.placeholder("tangents_1", ir::Role::Tangent, {0, 0, true}, ir::DType::F32);
  const NodeId mm =
      b.call("torch.ops.aten.mm.default", {ir::Arg::ofNode(x), ir::Arg::ofNode(w)}, {64, 64, false}, ir::DType::BF16);
  const NodeId view = b.call("torch.ops.aten.view.default", {ir::Arg::ofNode(mm), intList({1, 4096})}, {1, 4096, false},
                             ir::DType::BF16);
  const NodeId loss = b.call("torch.ops.aten.sum.default", {ir::Arg::ofNode(view)}, {0, 0, true}, ir::DType::F32);
  const NodeId grad = b.call("torch.ops.aten.mul.Tensor", {ir::Arg::ofNode(tangent), ir::Arg::ofNode(mm)},
                             {64, 64, false}, ir::DType::BF16);
  const FixedJoint f = finishFixed(b, {loss, grad, ir::kNoNode});
  ASSERT_TRUE(f.joint.joint);
  expectRunnable(f, heuristicPolicy(*f.graph, f.joint, ir::OpRegistry::global()));
}

}  // namespace
}  // namespace lathe::passes
