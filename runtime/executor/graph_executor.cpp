#include "graph_executor.h"

#include <ATen/ATen.h>
#include <ATen/DeviceAccelerator.h>
#include <c10/core/Event.h>
#include <dlfcn.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "op_call.h"
#include "util/diagnostics.h"

namespace lathe::runtime {
namespace {

using detail::CallKind;
using detail::ResolvedCall;
using ir::NodeId;

std::string nodeLabel(const ir::Graph& graph, NodeId id) {
  return std::string(graph.name(id)) + " (" + detail::shortOpName(graph.target(id)) + ")";
}

c10::Device parseDevice(const std::string& text) {
  try {
    c10::Device device(text);
    if (device.is_cuda()) {
      if (!at::hasCUDA()) throw Error(ErrorCode::Usage, "device " + text + ": this libtorch has no CUDA (" + TORCH_VERSION + ")");
      if (!device.has_index()) device.set_index(0);
    } else if (!device.is_cpu()) {
      throw Error(ErrorCode::Usage, "device " + text + ": only cpu and cuda run graphs");
    }
    return device;
  } catch (const c10::Error&) {
    throw Error(ErrorCode::Usage, "device " + text + ": not a device (cpu, cuda, cuda:N)");
  }
}

// The GPU's marketing name through the driver torch already loaded (the CUDA runtime's headers are
// not part of the torch wheel).
std::string cudaDeviceName(c10::DeviceIndex index) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!driver) return "cuda";
  using GetName = int (*)(char*, int, int);
  auto getName = reinterpret_cast<GetName>(dlsym(driver, "cuDeviceGetName"));
  char name[256] = {};
  std::string result = "cuda";
  if (getName && getName(name, sizeof(name) - 1, index) == 0) result = name;
  dlclose(driver);
  return result;
}

void synchronize(const c10::Device& device) {
  if (device.is_cuda()) at::accelerator::synchronizeDevice(device.index());
}

// --- inputs drawn from the captured metadata ---

bool isIndexLike(std::string_view target) {
  static constexpr std::string_view kPassThrough[] = {
      "aten.view.", "aten._unsafe_view.", "aten.reshape.", "aten.clone.", "aten.slice.", "aten.unsqueeze.",
      "aten.squeeze.", "aten.expand.", "aten.permute.", "aten.alias.", "aten.select.", "aten._to_copy.",
      "prims.convert_element_type.", "aten.contiguous.", "aten.t.", "aten.transpose.", "aten.flatten."};
  const std::string name = detail::shortOpName(target);
  return std::any_of(std::begin(kPassThrough), std::end(kPassThrough),
                     [&](std::string_view prefix) { return name.starts_with(prefix); });
}

int64_t dimSize(const ir::Graph& graph, const ir::Arg& tensorArg, int64_t dim) {
  if (tensorArg.kind != ir::Arg::Kind::Node) return 0;
  const auto& sizes = graph.node(tensorArg.node).meta.sizes;
  if (sizes.empty()) return 0;
  if (dim < 0) dim += static_cast<int64_t>(sizes.size());
  if (dim < 0 || dim >= static_cast<int64_t>(sizes.size())) return 0;
  return sizes[static_cast<size_t>(dim)].value;
}

// The largest valid value + 1 of an integer input, from the ops that index with it (embedding rows,
// loss classes, gather / index dimensions), followed through views; 0 when nothing bounds it.
int64_t indexBound(const ir::Graph& graph, NodeId id, int depth = 0) {
  if (depth > 16) return 0;
  int64_t bound = 0;
  auto tighten = [&](int64_t b) {
    if (b > 0) bound = bound == 0 ? b : std::min(bound, b);
  };
  for (NodeId user : graph.users(id)) {
    const ir::Node& u = graph.node(user);
    const std::string name = detail::shortOpName(graph.target(user));
    auto argIs = [&](size_t i) {
      return i < u.args.size() && u.args[i].kind == ir::Arg::Kind::Node && u.args[i].node == id;
    };
    auto intArg = [&](size_t i) { return i < u.args.size() && u.args[i].kind == ir::Arg::Kind::Int ? u.args[i].i : 0; };
    if (name.starts_with("aten.embedding.") && argIs(1)) {
      tighten(dimSize(graph, u.args[0], 0));
    } else if (name.starts_with("aten.embedding_dense_backward.") && argIs(1)) {
      tighten(intArg(2));
    } else if (name.starts_with("aten.nll_loss") && !name.starts_with("aten.nll_loss_backward") && argIs(1)) {
      tighten(dimSize(graph, u.args[0], -1));
    } else if (name.starts_with("aten.nll_loss_backward") && argIs(2)) {
      tighten(dimSize(graph, u.args[1], -1));
    } else if ((name.starts_with("aten.gather.") || name.starts_with("aten.scatter") ||
                name.starts_with("aten.index_select.")) && argIs(2)) {
      tighten(dimSize(graph, u.args[0], intArg(1)));
    } else if (name.starts_with("aten.index.") || name.starts_with("aten.index_put") ||
               name.starts_with("aten._unsafe_index")) {
      if (u.args.size() > 1 && u.args[1].kind == ir::Arg::Kind::List) {
        for (size_t d = 0; d < u.args[1].items.size(); ++d) {
          const ir::Arg& item = u.args[1].items[d];
          if (item.kind == ir::Arg::Kind::Node && item.node == id) tighten(dimSize(graph, u.args[0], static_cast<int64_t>(d)));
        }
      }
    } else if (isIndexLike(graph.target(user)) && argIs(0)) {
      tighten(indexBound(graph, user, depth + 1));
    }
  }
  return bound;
}

c10::IValue drawInput(const ir::Graph& graph, NodeId id, const c10::Device& device) {
  const ir::Node& node = graph.node(id);
  const ir::TensorMeta& meta = node.meta;
  switch (meta.kind) {
    case ir::ValueKind::SymInt:
    case ir::ValueKind::SymBool:
    case ir::ValueKind::SymFloat:
      throw Error(ErrorCode::BadInput, "input " + std::string(graph.name(id)) +
                                           " is a symbolic scalar: the executor runs graphs with concrete sizes");
    case ir::ValueKind::Tensor: break;
    default:
      throw Error(ErrorCode::BadInput, "input " + std::string(graph.name(id)) + " has no tensor metadata to draw it from");
  }
  std::vector<int64_t> sizes, strides;
  for (const ir::SymDim& d : meta.sizes) {
    if (!d.hasHint) throw Error(ErrorCode::BadInput, "input " + std::string(graph.name(id)) + " has a size without a hint");
    sizes.push_back(d.value);
  }
  for (const ir::SymDim& d : meta.strides) strides.push_back(d.value);
  if (!meta.hasStrides || strides.size() != sizes.size()) {
    const c10::DimVector contiguous = c10::contiguous_strides(sizes);
    strides.assign(contiguous.begin(), contiguous.end());
  }
  const c10::ScalarType type = detail::scalarTypeOf(meta.dtype);
  const auto options = at::TensorOptions().device(device).dtype(type);
  at::Tensor tensor = at::empty_strided(sizes, strides, options);
  if (type == at::kBool) {
    tensor.fill_(true);
  } else if (at::isIntegralType(type, false)) {
    const int64_t bound = indexBound(graph, id);
    if (bound > 1) tensor.random_(0, bound); else tensor.zero_();
  } else if (at::isFloatingType(type)) {
    tensor.normal_();
    // Parameters scaled as initialisers do, so that activations stay finite through the layers in
    // low precision: matrices by 1/sqrt(fan-in), vectors (norm weights, biases) around one.
    if (node.role == ir::Role::Parameter && sizes.size() >= 2) {
      tensor.mul_(1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(sizes.back(), 1))));
    } else if (node.role == ir::Role::Parameter) {
      tensor.mul_(0.1).add_(1.0);
    }
  } else {
    tensor.zero_();
  }
  return tensor;
}

// --- one run of a node order ---

void collectStorages(const c10::IValue& value, std::vector<const c10::StorageImpl*>& out) {
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    if (t.defined() && t.has_storage()) out.push_back(t.storage().unsafeGetStorageImpl());
  } else if (value.isTuple()) {
    for (const auto& e : value.toTupleRef().elements()) collectStorages(e, out);
  } else if (value.isList()) {
    const c10::List<c10::IValue> list = value.toList();
    for (size_t i = 0; i < list.size(); ++i) collectStorages(list.get(i), out);
  }
}

struct Timing {
  std::vector<double> nodeSeconds;
  double total = 0;
};

class Interpreter {
 public:
  Interpreter(const ir::Graph& graph, const std::vector<ResolvedCall>& calls, const c10::Device& device,
              const std::vector<c10::IValue>& inputs)
      : graph_(graph), calls_(calls), device_(device), values_(inputs) {
    for (NodeId id = 0; id < graph.size(); ++id) {
      if (!graph.node(id).isInput()) continue;
      std::vector<const c10::StorageImpl*> storages;
      collectStorages(values_[id], storages);
      for (auto* s : storages) inputStorages_.emplace(s, 0);
    }
  }

  // Runs `order`, releasing every value after its last use in it unless `keep` holds it. With
  // `timing`, each node's time is recorded.
  void run(const std::vector<NodeId>& order, const std::vector<uint8_t>& keep, Timing* timing) {
    std::vector<size_t> lastUse(graph_.size(), SIZE_MAX);
    for (size_t p = 0; p < order.size(); ++p) {
      for (NodeId in : graph_.inputs(order[p])) lastUse[in] = p;
    }
    std::vector<c10::Event> events;
    const bool cuda = device_.is_cuda();
    if (timing && cuda) {
      events.reserve(order.size() + 1);
      for (size_t i = 0; i <= order.size(); ++i) events.emplace_back(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
      events[0].record(at::accelerator::getCurrentStream(device_.index()));
    }
    std::vector<double> hostSeconds(timing ? order.size() : 0);
    for (size_t p = 0; p < order.size(); ++p) {
      const NodeId id = order[p];
      const auto start = std::chrono::steady_clock::now();
      execute(id);
      if (timing) {
        if (cuda) {
          events[p + 1].record(at::accelerator::getCurrentStream(device_.index()));
        } else {
          hostSeconds[p] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        }
      }
      for (NodeId in : graph_.inputs(id)) {
        if (lastUse[in] == p && !keep[in]) release(in);
      }
      if (graph_.users(id).empty() && !keep[id] && graph_.node(id).kind != ir::NodeKind::Output) release(id);
    }
    if (!timing) return;
    synchronize(device_);
    for (size_t p = 0; p < order.size(); ++p) {
      const double seconds = cuda ? events[p].elapsedTime(events[p + 1]) / 1e3 : hostSeconds[p];
      timing->nodeSeconds[order[p]] += seconds;
      timing->total += seconds;
    }
  }

  // Drops every computed value not in `keep` (the end of a forward: only saved values survive).
  void releaseAllBut(const std::vector<uint8_t>& keep) {
    for (NodeId id = 0; id < graph_.size(); ++id) {
      if (!keep[id] && !graph_.node(id).isInput()) release(id);
    }
  }

  [[nodiscard]] const c10::IValue& value(NodeId id) const { return values_[id]; }
  [[nodiscard]] uint64_t livePeakBytes() const { return livePeak_; }
  [[nodiscard]] const std::vector<uint64_t>& outputBytes() const { return outputBytes_; }
  [[nodiscard]] const std::map<std::string, std::pair<std::string, uint64_t>>& substitutions() const {
    return substitutions_;
  }

 private:
  void execute(NodeId id) {
    const ResolvedCall& call = calls_[id];
    try {
      switch (call.kind) {
        case CallKind::Input: return;
        case CallKind::Output: return;
        case CallKind::Getitem:
        case CallKind::IntArithmetic: values_[id] = detail::runPythonOperator(graph_, id, values_); break;
        case CallKind::Dispatcher: {
          detail::Stack stack = detail::buildStack(graph_, id, *call.schema, values_, device_);
          call.op->callBoxed(&stack);
          values_[id] = resultOf(stack, call.schema->returns().size());
          break;
        }
        case CallKind::Substitute: {
          detail::Stack stack = detail::buildStack(graph_, id, *call.schema, values_, device_);
          values_[id] = conformStrides(id, call.substitute(stack, device_));
          auto& entry = substitutions_[detail::shortOpName(graph_.target(id))];
          entry.first = call.substituteName;
          ++entry.second;
          break;
        }
      }
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      std::string message = e.what();
      // torch's messages end with a C++ backtrace in debug builds; the first line says what failed.
      if (const size_t eol = message.find('\n'); eol != std::string::npos) message.resize(eol);
      throw Error(ErrorCode::BadInput, "node " + nodeLabel(graph_, id) + " failed on " + device_.str() + ": " + message);
    }
    account(id);
  }

  static c10::IValue resultOf(detail::Stack& stack, size_t returns) {
    if (returns == 0) return {};
    if (returns == 1) return std::move(stack.back());
    std::vector<c10::IValue> items(std::make_move_iterator(stack.end() - static_cast<ptrdiff_t>(returns)),
                                   std::make_move_iterator(stack.end()));
    return c10::ivalue::Tuple::create(std::move(items));
  }

  // A substitute's tensor result takes the strides the capture recorded, so that views the graph
  // takes of it are valid as they were on the device it was captured on.
  c10::IValue conformStrides(NodeId id, c10::IValue value) const {
    if (!value.isTensor()) return value;
    const ir::TensorMeta& meta = graph_.node(id).meta;
    const at::Tensor& t = value.toTensor();
    if (!meta.isTensor() || !meta.hasStrides || meta.sizes.size() != static_cast<size_t>(t.dim())) return value;
    std::vector<int64_t> strides;
    for (size_t d = 0; d < meta.sizes.size(); ++d) {
      if (meta.sizes[d].value != t.size(static_cast<int64_t>(d))) return value;
      strides.push_back(meta.strides[d].value);
    }
    at::Tensor out = at::empty_strided(t.sizes(), strides, t.options());
    out.copy_(t);
    return out;
  }

  void account(NodeId id) {
    std::vector<const c10::StorageImpl*> storages;
    collectStorages(values_[id], storages);
    std::sort(storages.begin(), storages.end());
    storages.erase(std::unique(storages.begin(), storages.end()), storages.end());
    uint64_t added = 0;
    for (const c10::StorageImpl* s : storages) {
      if (inputStorages_.count(s)) continue;
      if (live_[s]++ == 0) {
        added += s->nbytes();
        liveBytes_ += s->nbytes();
      }
    }
    holds_[id] = std::move(storages);
    if (outputBytes_.size() < graph_.size()) outputBytes_.assign(graph_.size(), 0);
    outputBytes_[id] = added;
    livePeak_ = std::max(livePeak_, liveBytes_);
  }

  void release(NodeId id) {
    if (graph_.node(id).isInput()) return;
    values_[id] = c10::IValue();
    auto it = holds_.find(id);
    if (it == holds_.end()) return;
    for (const c10::StorageImpl* s : it->second) {
      if (inputStorages_.count(s)) continue;
      auto live = live_.find(s);
      if (live != live_.end() && --live->second == 0) {
        liveBytes_ -= s->nbytes();
        live_.erase(live);
      }
    }
    holds_.erase(it);
  }

  const ir::Graph& graph_;
  const std::vector<ResolvedCall>& calls_;
  c10::Device device_;
  std::vector<c10::IValue> values_;
  std::unordered_map<const c10::StorageImpl*, int> inputStorages_;
  std::unordered_map<const c10::StorageImpl*, int> live_;
  std::unordered_map<NodeId, std::vector<const c10::StorageImpl*>> holds_;
  uint64_t liveBytes_ = 0, livePeak_ = 0;
  std::vector<uint64_t> outputBytes_;
  std::map<std::string, std::pair<std::string, uint64_t>> substitutions_;
};

// Everything one measured graph needs: resolved calls, the device, the drawn inputs.
struct Prepared {
  c10::Device device{c10::DeviceType::CPU};
  std::vector<ResolvedCall> calls;
  std::vector<c10::IValue> inputs;
};

Prepared prepare(const ir::Graph& graph, const ExecuteOptions& options) {
  Prepared prepared;
  prepared.device = parseDevice(options.device);
  prepared.calls = detail::resolveCalls(graph, prepared.device);
  const std::vector<std::string> missing = unsupportedOps(graph, options.device);
  if (!missing.empty()) {
    std::string message = "cannot run " + std::to_string(missing.size()) + " op(s) on " + options.device + ":";
    for (const std::string& line : missing) message += "\n  " + line;
    throw Error(ErrorCode::BadInput, message);
  }
  at::manual_seed(options.seed);
  prepared.inputs.resize(graph.size());
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).kind == ir::NodeKind::Placeholder) prepared.inputs[id] = drawInput(graph, id, prepared.device);
    else if (graph.node(id).kind == ir::NodeKind::GetAttr) {
      throw Error(ErrorCode::BadInput, "get_attr " + std::string(graph.name(id)) + ": the executor runs graphs whose weights are inputs");
    }
  }
  return prepared;
}

std::vector<NodeId> programOrder(const ir::Graph& graph) {
  std::vector<NodeId> order;
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (!graph.node(id).isInput()) order.push_back(id);
  }
  return order;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Runs `phases` (each an order and the values kept past it) warmup + repeats times; the result has
// the medians, the live peak and, on CUDA, the allocator's figures over the last run.
template <typename RunOnce>
GraphRun measure(const ir::Graph& graph, const Prepared& prepared, const ExecuteOptions& options, RunOnce runOnce) {
  GraphRun result;
  const c10::Device& device = prepared.device;
  result.torchVersion = TORCH_VERSION;
  if (device.is_cuda()) {
    result.deviceName = cudaDeviceName(device.index());
    result.deviceMemoryBytes = at::accelerator::getMemoryInfo(device.index()).second;
  } else {
    result.deviceName = "cpu";
  }
  const int warmup = std::max(options.warmup, 0), repeats = std::max(options.repeats, 1);
  std::vector<std::vector<double>> perNode(graph.size());
  std::vector<double> totals;
  for (int r = 0; r < warmup + repeats; ++r) {
    options.progress.checkCancelled();
    const bool timed = r >= warmup;
    Timing timing{std::vector<double>(graph.size(), 0.0), 0};
    at::manual_seed(options.seed + 1);
    uint64_t before = 0;
    if (device.is_cuda()) {
      synchronize(device);
      at::accelerator::resetPeakStats(device.index());
      before = static_cast<uint64_t>(at::accelerator::getDeviceStats(device.index()).allocated_bytes[0].current);
    }
    Interpreter interpreter(graph, prepared.calls, device, prepared.inputs);
    runOnce(interpreter, timed ? &timing : nullptr);
    if (device.is_cuda()) {
      synchronize(device);
      const auto stats = at::accelerator::getDeviceStats(device.index());
      result.allocatorBeforeBytes = before;
      result.allocatorPeakBytes = static_cast<uint64_t>(stats.allocated_bytes[0].peak) - before;
    }
    if (timed) {
      for (NodeId id = 0; id < graph.size(); ++id) perNode[id].push_back(timing.nodeSeconds[id]);
      totals.push_back(timing.total);
    }
    result.livePeakBytes = interpreter.livePeakBytes();
    result.nodeOutputBytes = interpreter.outputBytes();
    result.substitutions.clear();
    for (const auto& [op, entry] : interpreter.substitutions()) result.substitutions.push_back({op, entry.first, entry.second});
    options.progress.update(static_cast<uint64_t>(r + 1), static_cast<uint64_t>(warmup + repeats));
  }
  result.nodeSeconds.resize(graph.size());
  for (NodeId id = 0; id < graph.size(); ++id) result.nodeSeconds[id] = median(perNode[id]);
  result.stepSeconds = median(totals);
  result.runs = repeats;
  if (result.nodeOutputBytes.empty()) result.nodeOutputBytes.assign(graph.size(), 0);
  return result;
}

// The largest |a - b|, NaN at the same place in both counting as equal (a step that overflows does so
// in both runs); a NaN in one only is an infinite difference.
double maxAbsDifference(const at::Tensor& a, const at::Tensor& b) {
  if (a.numel() == 0) return 0;
  const at::Tensor x = a.to(at::kDouble), y = b.to(at::kDouble);
  const at::Tensor bothNan = x.isnan() & y.isnan();
  const at::Tensor diff = at::where(bothNan, at::zeros_like(x), (x - y).abs());
  return at::where(diff.isnan(), at::full_like(diff, INFINITY), diff).max().item<double>();
}

// Whether `got` is `want` up to rounding in their own dtype: elementwise within two units of its
// precision of the value (a bf16 gradient summed in another order moves by an ulp, 2^-8 relative),
// and one unit of the tensor's largest value (sums that cancel to near zero keep the rounding of
// their large addends). Never tighter than allclose(rtol 1e-3, atol 1e-5). NaN at the same place is
// equal.
bool closeInOwnPrecision(const at::Tensor& want, const at::Tensor& got) {
  const at::Tensor a = want.to(at::kDouble), b = got.to(at::kDouble);
  double eps = 0;
  switch (want.scalar_type()) {
    case at::kBFloat16: eps = 0x1p-7; break;
    case at::kHalf: eps = 0x1p-10; break;
    case at::kFloat: eps = 0x1p-23; break;
    default: break;
  }
  const double largest = at::where(a.isfinite(), a.abs(), at::zeros_like(a)).max().item<double>();
  const double rtol = std::max(1e-3, 2 * eps);
  const double atol = std::max(1e-5, eps * largest);
  return at::allclose(a, b, rtol, atol, /*equal_nan=*/true);
}

bool sameValues(const at::Tensor& a, const at::Tensor& b) {
  if (!at::isFloatingType(a.scalar_type()) && !at::isComplexType(a.scalar_type())) return at::equal(a, b);
  return (a.eq(b) | (a.isnan() & b.isnan())).all().item<bool>();
}

}  // namespace

std::vector<std::string> unsupportedOps(const ir::Graph& graph, const std::string& device) {
  const std::vector<ResolvedCall> calls = detail::resolveCalls(graph, parseDevice(device));
  std::map<std::string, std::vector<std::string>> byReason;
  for (NodeId id = 0; id < graph.size(); ++id) {
    if (!calls[id].unsupported.empty()) byReason[calls[id].unsupported].push_back(std::string(graph.name(id)));
  }
  std::vector<std::string> lines;
  for (const auto& [reason, nodes] : byReason) {
    std::string line = reason + " (" + std::to_string(nodes.size()) + " node" + (nodes.size() == 1 ? "" : "s") + ": ";
    for (size_t i = 0; i < nodes.size() && i < 3; ++i) line += (i ? ", " : "") + nodes[i];
    line += nodes.size() > 3 ? ", ...)" : ")";
    lines.push_back(std::move(line));
  }
  return lines;
}

GraphRun measureGraph(const ir::Graph& graph, const ExecuteOptions& options) {
  const Prepared prepared = prepare(graph, options);
  const std::vector<NodeId> order = programOrder(graph);
  std::vector<uint8_t> keep(graph.size(), 0);
  return measure(graph, prepared, options, [&](Interpreter& interpreter, Timing* timing) {
    interpreter.run(order, keep, timing);
  });
}

PlanCheck checkPlan(const ir::Graph& joint, const analysis::JointInfo& info, const analysis::StepPartition& partition,
                    const ExecuteOptions& options) {
  if (!info.joint) throw Error(ErrorCode::BadInput, "checking a plan needs a joint graph (primals and tangents)");
  if (!partition.valid()) {
    std::string missing;
    for (NodeId id : partition.missing) missing += (missing.empty() ? "" : ", ") + std::string(joint.name(id));
    throw Error(ErrorCode::BadInput, "the plan's backward cannot compute " + missing + " from what it saves");
  }
  const Prepared prepared = prepare(joint, options);
  const std::vector<NodeId> items = analysis::outputItems(joint);
  const NodeId output = joint.outputNode();

  PlanCheck check;
  // The first run's gradients too: a GPU's atomics make the unplanned graph differ from itself from
  // run to run, and a plan is only held to that.
  std::vector<c10::IValue> referenceGradients, firstReferenceGradients, plannedGradients;
  const std::vector<uint8_t> keepNothing(joint.size(), 0);
  check.reference = measure(joint, prepared, options, [&](Interpreter& interpreter, Timing* timing) {
    std::vector<uint8_t> keepOutputs(joint.size(), 0);
    for (NodeId item : items) {
      if (item != ir::kNoNode) keepOutputs[item] = 1;
    }
    interpreter.run(programOrder(joint), keepOutputs, timing);
    referenceGradients.clear();
    for (size_t i = info.forwardOutputCount; i < items.size(); ++i) {
      referenceGradients.push_back(items[i] == ir::kNoNode ? c10::IValue() : interpreter.value(items[i]));
    }
    if (firstReferenceGradients.empty()) firstReferenceGradients = referenceGradients;
  });

  // The planned step: the forward keeps its outputs and the saved values; the backward (with its
  // recomputations) then runs from those and the tangents.
  std::vector<uint8_t> keepAfterForward(joint.size(), 0);
  for (NodeId id : partition.saved) keepAfterForward[id] = 1;
  for (size_t i = 0; i < info.forwardOutputCount && i < items.size(); ++i) {
    if (items[i] != ir::kNoNode) keepAfterForward[items[i]] = 1;
  }
  // Past the backward only the step's outputs live on; saved values go after their last use.
  std::vector<uint8_t> keepGradients(joint.size(), 0);
  for (NodeId item : items) {
    if (item != ir::kNoNode) keepGradients[item] = 1;
  }
  std::vector<NodeId> backward = partition.backward;
  backward.push_back(output);
  check.planned = measure(joint, prepared, options, [&](Interpreter& interpreter, Timing* timing) {
    interpreter.run(partition.forward, keepAfterForward, timing);
    interpreter.releaseAllBut(keepAfterForward);
    interpreter.run(backward, keepGradients, timing);
    plannedGradients.clear();
    for (size_t i = info.forwardOutputCount; i < items.size(); ++i) {
      plannedGradients.push_back(items[i] == ir::kNoNode ? c10::IValue() : interpreter.value(items[i]));
    }
  });

  for (size_t i = 0; i < referenceGradients.size(); ++i) {
    const c10::IValue& want = referenceGradients[i];
    const c10::IValue& got = plannedGradients[i];
    if (!want.isTensor()) continue;
    const size_t slot = info.forwardOutputCount + i;
    const ir::Node& outputNode = joint.node(output);
    std::string name = slot < outputNode.itemComments.size() && outputNode.itemComments[slot]
                           ? std::string(joint.str(outputNode.itemComments[slot]))
                           : "gradient " + std::to_string(i) + " (" + std::string(joint.name(items[slot])) + ")";
    ++check.gradientsCompared;
    if (!got.isTensor()) {
      check.differences.push_back({name, INFINITY, false, true});
      check.allClose = false;
      continue;
    }
    const at::Tensor& a = want.toTensor();
    const at::Tensor& b = got.toTensor();
    if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) {
      check.differences.push_back({name, INFINITY, false, true});
      check.allClose = false;
      continue;
    }
    const bool finite = at::isfinite(a).all().item<bool>();
    if (!finite) ++check.nonFiniteReferences;
    if (sameValues(a, b)) continue;
    const double error = maxAbsDifference(a, b);
    const c10::IValue& first = firstReferenceGradients[i];
    const double runToRun = first.isTensor() && first.toTensor().sizes() == a.sizes() ? maxAbsDifference(first.toTensor(), a) : 0;
    check.maxAbsError = std::max(check.maxAbsError, error);
    check.differences.push_back({name, error, false, finite, runToRun});
    // Two runs only sample the unplanned graph's spread: a plan is held to twice what they show.
    if (error > 2 * runToRun && !closeInOwnPrecision(a, b)) {
      check.allClose = false;
    }
  }
  return check;
}

}  // namespace lathe::runtime
