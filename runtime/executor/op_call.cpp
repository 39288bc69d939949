#include "op_call.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/frontend/function_schema_parser.h>

#include <stdexcept>
#include <string_view>
#include <unordered_map>

namespace lathe::runtime::detail {
namespace {

using ir::Arg;

constexpr std::string_view kOpsPrefix = "torch.ops.";

// prims ops are registered from Python only; these are their schemas (torch/_prims/__init__.py)
// and the aten forms they decompose to, with the same results.
struct PrimsForm {
  std::string_view target;
  std::string_view schema;
  std::string_view ranAs;
  c10::IValue (*run)(Stack&, const c10::Device&);
};

const std::vector<PrimsForm>& primsForms() {
  static const std::vector<PrimsForm> forms{
      {"torch.ops.prims.convert_element_type.default", "prims::convert_element_type(Tensor a, ScalarType dtype) -> Tensor",
       "aten._to_copy",
       [](Stack& s, const c10::Device&) -> c10::IValue {
         // _to_copy keeps the strides of a dense input, as prims.convert_element_type does.
         return at::_to_copy(s[0].toTensor(), static_cast<c10::ScalarType>(s[1].toInt()));
       }},
      {"torch.ops.prims.iota.default",
       "prims::iota(SymInt length, *, SymInt start, SymInt step, ScalarType dtype, Device device, bool requires_grad) -> Tensor",
       "aten.arange",
       [](Stack& s, const c10::Device& device) -> c10::IValue {
         const int64_t length = s[0].toInt(), start = s[1].toInt(), step = s[2].toInt();
         return at::arange(start, start + length * step, step,
                           at::TensorOptions().dtype(static_cast<c10::ScalarType>(s[3].toInt())).device(device));
       }},
      {"torch.ops.prims.fma.default", "prims::fma(Tensor a, Tensor b, Tensor c) -> Tensor", "aten.mul + aten.add",
       [](Stack& s, const c10::Device&) -> c10::IValue { return s[0].toTensor() * s[1].toTensor() + s[2].toTensor(); }},
  };
  return forms;
}

// cuDNN attention has CUDA kernels only; on the CPU the flash kernels compute the same attention
// (their logsumexp is only read by their own backward, which the substitute pairs).
c10::IValue cudnnAttentionOnCpu(Stack& s, const c10::Device& device) {
  const at::Tensor& q = s[0].toTensor();
  std::optional<at::Tensor> bias = s[3].isNone() ? std::nullopt : std::optional<at::Tensor>(s[3].toTensor());
  std::optional<double> scale = s[8].isNone() ? std::nullopt : std::optional<double>(s[8].toDouble());
  // The CPU kernel has no dropout: attention runs without it (the reports say so).
  auto [out, logsumexp] =
      at::_scaled_dot_product_flash_attention_for_cpu(q, s[1].toTensor(), s[2].toTensor(), 0.0, s[6].toBool(), bias, scale);
  const at::Tensor empty = at::empty({0}, at::TensorOptions().device(device).dtype(at::kLong));
  return c10::ivalue::Tuple::create({out, logsumexp, empty, empty, c10::IValue(int64_t{0}), c10::IValue(int64_t{0}),
                                     empty, empty, at::empty({0}, q.options())});
}

c10::IValue cudnnAttentionBackwardOnCpu(Stack& s, const c10::Device&) {
  std::optional<at::Tensor> bias;
  if (!s[8].isNone() && s[8].toTensor().numel() > 0) bias = s[8].toTensor();
  std::optional<double> scale = s[15].isNone() ? std::nullopt : std::optional<double>(s[15].toDouble());
  auto [dq, dk, dv] = at::_scaled_dot_product_flash_attention_for_cpu_backward(
      s[0].toTensor(), s[1].toTensor(), s[2].toTensor(), s[3].toTensor(), s[4].toTensor(), s[5].toTensor(),
      0.0, s[14].toBool(), bias, scale);
  return c10::ivalue::Tuple::create({dq, dk, dv});
}

// histc has no CPU kernel for integer tensors (CUDA has): counted in float, returned in the input's type.
c10::IValue histcOnCpu(Stack& s, const c10::Device&) {
  const at::Tensor& self = s[0].toTensor();
  const int64_t bins = s[1].toInt();
  const double low = s[2].toScalar().toDouble(), high = s[3].toScalar().toDouble();
  if (at::isFloatingType(self.scalar_type())) return at::histc(self, bins, low, high);
  return at::histc(self.to(at::kFloat), bins, low, high).to(self.scalar_type());
}

struct DeviceForm {
  std::string_view target;
  c10::DeviceType device;
  std::string_view ranAs;
  c10::IValue (*run)(Stack&, const c10::Device&);
};

constexpr DeviceForm kDeviceForms[] = {
    {"torch.ops.aten._scaled_dot_product_cudnn_attention.default", c10::DeviceType::CPU,
     "aten._scaled_dot_product_flash_attention_for_cpu (no attention dropout)", cudnnAttentionOnCpu},
    {"torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default", c10::DeviceType::CPU,
     "aten._scaled_dot_product_flash_attention_for_cpu_backward (no attention dropout)", cudnnAttentionBackwardOnCpu},
    {"torch.ops.aten.histc.default", c10::DeviceType::CPU, "aten.histc in float32", histcOnCpu},
};

bool hasKernelFor(const c10::OperatorHandle& op, c10::DeviceType device) {
  const c10::DispatchKey backend = device == c10::DeviceType::CUDA ? c10::DispatchKey::CUDA : c10::DispatchKey::CPU;
  for (c10::DispatchKey key : {backend, c10::DispatchKey::CompositeExplicitAutograd,
                               c10::DispatchKey::CompositeImplicitAutograd,
                               c10::DispatchKey::CompositeExplicitAutogradNonFunctional}) {
    if (op.hasKernelForDispatchKey(key)) return true;
  }
  return false;
}

std::string describeArg(const ir::Graph& graph, const Arg& arg) {
  switch (arg.kind) {
    case Arg::Kind::Node: return std::string(graph.name(arg.node));
    case Arg::Kind::Int: return std::to_string(arg.i);
    case Arg::Kind::Float: return std::to_string(arg.f);
    case Arg::Kind::Bool: return arg.b ? "True" : "False";
    case Arg::Kind::None: return "None";
    case Arg::Kind::DType: return std::string(ir::dtypeTorchName(arg.dtype));
    default: return std::string(graph.str(arg.s));
  }
}

[[noreturn]] void cannotPass(const ir::Graph& graph, const Arg& arg, const c10::TypePtr& type) {
  throw std::runtime_error("cannot pass " + describeArg(graph, arg) + " as " + type->str());
}

c10::MemoryFormat memoryFormatOf(std::string_view text) {
  if (text == "torch.contiguous_format") return c10::MemoryFormat::Contiguous;
  if (text == "torch.preserve_format") return c10::MemoryFormat::Preserve;
  if (text == "torch.channels_last") return c10::MemoryFormat::ChannelsLast;
  if (text == "torch.channels_last_3d") return c10::MemoryFormat::ChannelsLast3d;
  throw std::runtime_error("unknown memory format " + std::string(text));
}

c10::Layout layoutOf(std::string_view text) {
  if (text == "torch.strided") return c10::Layout::Strided;
  if (text == "torch.sparse_coo") return c10::Layout::Sparse;
  if (text == "torch.sparse_csr") return c10::Layout::SparseCsr;
  throw std::runtime_error("unknown layout " + std::string(text));
}

c10::IValue convert(const ir::Graph& graph, const Arg& arg, const c10::TypePtr& type,
                    const std::vector<c10::IValue>& values, const c10::Device& device) {
  using K = c10::TypeKind;
  if (arg.kind == Arg::Kind::Node) {
    const c10::IValue& value = values.at(arg.node);
    if (value.isNone() && type->kind() != K::OptionalType && type->kind() != K::NoneType) {
      throw std::runtime_error(std::string(graph.name(arg.node)) + " has no value (not computed or already released)");
    }
    if (type->kind() == K::FloatType && value.isInt()) return static_cast<double>(value.toInt());
    return value;
  }
  switch (type->kind()) {
    case K::OptionalType:
      if (arg.kind == Arg::Kind::None) return {};
      return convert(graph, arg, type->castRaw<c10::OptionalType>()->getElementType(), values, device);
    case K::TensorType:
      // FX prints an undefined tensor (a cuDNN backward's unused cum_seq) as None.
      if (arg.kind == Arg::Kind::None) return at::Tensor();
      if (arg.kind == Arg::Kind::Int) return at::scalar_tensor(arg.i, at::TensorOptions().device(device).dtype(at::kLong));
      if (arg.kind == Arg::Kind::Float) return at::scalar_tensor(arg.f, at::TensorOptions().device(device));
      break;
    case K::IntType:
      // Schemas carry ScalarType, Layout and MemoryFormat as int (their real type aside).
      if (arg.kind == Arg::Kind::Int) return arg.i;
      if (arg.kind == Arg::Kind::Bool) return int64_t{arg.b};
      if (arg.kind == Arg::Kind::DType) return static_cast<int64_t>(scalarTypeOf(arg.dtype));
      if (arg.kind == Arg::Kind::Layout) return static_cast<int64_t>(layoutOf(graph.str(arg.s)));
      if (arg.kind == Arg::Kind::MemoryFormat) return static_cast<int64_t>(memoryFormatOf(graph.str(arg.s)));
      break;
    case K::FloatType:
      if (arg.kind == Arg::Kind::Float) return arg.f;
      if (arg.kind == Arg::Kind::Int) return static_cast<double>(arg.i);
      break;
    case K::BoolType:
      if (arg.kind == Arg::Kind::Bool) return arg.b;
      if (arg.kind == Arg::Kind::Int) return arg.i != 0;
      break;
    case K::NumberType:
      if (arg.kind == Arg::Kind::Int) return arg.i;
      if (arg.kind == Arg::Kind::Float) return arg.f;
      if (arg.kind == Arg::Kind::Bool) return arg.b;
      break;
    case K::ScalarTypeType:
      if (arg.kind == Arg::Kind::DType) return static_cast<int64_t>(scalarTypeOf(arg.dtype));
      if (arg.kind == Arg::Kind::Int) return arg.i;
      break;
    case K::LayoutType:
      if (arg.kind == Arg::Kind::Layout) return static_cast<int64_t>(layoutOf(graph.str(arg.s)));
      break;
    case K::MemoryFormatType:
      if (arg.kind == Arg::Kind::MemoryFormat) return static_cast<int64_t>(memoryFormatOf(graph.str(arg.s)));
      break;
    case K::DeviceObjType:
      // Every tensor of the run lives on the executor's device, whatever the capture ran on.
      if (arg.kind == Arg::Kind::Device || arg.kind == Arg::Kind::String) return device;
      break;
    case K::StringType:
      if (arg.kind == Arg::Kind::String) return std::string(graph.str(arg.s));
      break;
    case K::GeneratorType:
      if (arg.kind == Arg::Kind::None) return {};
      break;
    case K::ListType: {
      const c10::TypePtr elem = type->castRaw<c10::ListType>()->getElementType();
      if (arg.kind != Arg::Kind::List && arg.kind != Arg::Kind::Tuple) {
        if (arg.kind == Arg::Kind::Int && elem->kind() == K::IntType) return c10::List<int64_t>({arg.i});
        break;
      }
      std::vector<c10::IValue> items;
      items.reserve(arg.items.size());
      for (const Arg& item : arg.items) items.push_back(convert(graph, item, elem, values, device));
      switch (elem->kind()) {
        case K::TensorType: {
          c10::List<at::Tensor> list;
          for (auto& item : items) list.push_back(item.toTensor());
          return list;
        }
        case K::OptionalType: {
          c10::List<std::optional<at::Tensor>> list;
          for (auto& item : items) list.push_back(item.isNone() ? std::nullopt : std::optional<at::Tensor>(item.toTensor()));
          return list;
        }
        case K::IntType: {
          c10::List<int64_t> list;
          for (auto& item : items) list.push_back(item.isInt() ? item.toInt() : item.toTensor().item<int64_t>());
          return list;
        }
        case K::FloatType: {
          c10::List<double> list;
          for (auto& item : items) list.push_back(item.toDouble());
          return list;
        }
        case K::BoolType: {
          c10::List<bool> list;
          for (auto& item : items) list.push_back(item.toBool());
          return list;
        }
        default: break;
      }
      break;
    }
    default: break;
  }
  cannotPass(graph, arg, type);
}

}  // namespace

c10::ScalarType scalarTypeOf(ir::DType dtype) {
  using D = ir::DType;
  switch (dtype) {
    case D::Bool: return at::kBool;
    case D::U8: return at::kByte;
    case D::I8: return at::kChar;
    case D::I16: return at::kShort;
    case D::I32: return at::kInt;
    case D::I64: return at::kLong;
    case D::U16: return at::kUInt16;
    case D::U32: return at::kUInt32;
    case D::U64: return at::kUInt64;
    case D::F16: return at::kHalf;
    case D::BF16: return at::kBFloat16;
    case D::F32: return at::kFloat;
    case D::F64: return at::kDouble;
    case D::C32: return at::kComplexHalf;
    case D::C64: return at::kComplexFloat;
    case D::C128: return at::kComplexDouble;
    case D::F8E4M3FN: return at::kFloat8_e4m3fn;
    case D::F8E5M2: return at::kFloat8_e5m2;
    case D::F8E4M3FNUZ: return at::kFloat8_e4m3fnuz;
    case D::F8E5M2FNUZ: return at::kFloat8_e5m2fnuz;
    case D::F8E8M0FNU: return at::kFloat8_e8m0fnu;
    case D::F4E2M1FNX2: return at::kFloat4_e2m1fn_x2;
    case D::Bits16: return at::kBits16;
    case D::Bits1x8: return at::kBits1x8;
    case D::Unknown: break;
  }
  throw std::runtime_error("a tensor of unknown dtype");
}

std::string shortOpName(std::string_view target) {
  if (target.starts_with(kOpsPrefix)) target.remove_prefix(kOpsPrefix.size());
  return std::string(target);
}

std::vector<ResolvedCall> resolveCalls(const ir::Graph& graph, const c10::Device& device) {
  std::vector<ResolvedCall> calls(graph.size());
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::Node& node = graph.node(id);
    ResolvedCall& call = calls[id];
    if (node.isInput()) continue;
    if (node.kind == ir::NodeKind::Output) {
      call.kind = CallKind::Output;
      continue;
    }
    const std::string_view target = graph.target(id);
    if (node.kind != ir::NodeKind::CallFunction) {
      call.unsupported = std::string(ir::nodeKindName(node.kind)) + " " + std::string(target) + ": not an aten-level call";
      continue;
    }
    if (target == "operator.getitem") {
      call.kind = CallKind::Getitem;
      continue;
    }
    if (target == "operator.add" || target == "operator.sub" || target == "operator.mul" ||
        target == "operator.floordiv" || target == "operator.truediv" || target == "operator.neg") {
      call.kind = CallKind::IntArithmetic;
      continue;
    }
    bool substituted = false;
    for (const DeviceForm& form : kDeviceForms) {
      if (form.target == target && form.device == device.type()) {
        call.kind = CallKind::Substitute;
        call.substitute = form.run;
        call.substituteName = form.ranAs;
        substituted = true;
      }
    }
    for (const PrimsForm& form : primsForms()) {
      if (form.target == target) {
        call.kind = CallKind::Substitute;
        call.schema = torch::jit::parseSchema(std::string(form.schema));
        call.substitute = form.run;
        call.substituteName = form.ranAs;
        substituted = true;
      }
    }
    if (call.kind == CallKind::Substitute && call.schema) continue;
    if (!target.starts_with(kOpsPrefix)) {
      call.unsupported = std::string(target) + ": not a torch op";
      continue;
    }
    // torch.ops.<namespace>.<op>.<overload>
    const std::string name = shortOpName(target);
    const size_t firstDot = name.find('.');
    const size_t lastDot = name.rfind('.');
    if (firstDot == std::string::npos || lastDot == firstDot) {
      call.unsupported = std::string(target) + ": no overload named";
      continue;
    }
    const std::string opName = name.substr(0, firstDot) + "::" + name.substr(firstDot + 1, lastDot - firstDot - 1);
    std::string overload = name.substr(lastDot + 1);
    if (overload == "default") overload.clear();
    const auto op = c10::Dispatcher::singleton().findSchema({opName, overload});
    if (!op) {
      call.unsupported = std::string(target) + ": not registered in this libtorch";
      continue;
    }
    call.schema = op->schema();
    if (substituted) continue;
    if (!hasKernelFor(*op, device.type())) {
      call.unsupported = std::string(target) + ": no " + c10::DeviceTypeName(device.type(), true) + " kernel";
      continue;
    }
    call.kind = CallKind::Dispatcher;
    call.op = op;
  }
  return calls;
}

Stack buildStack(const ir::Graph& graph, ir::NodeId id, const c10::FunctionSchema& schema,
                 const std::vector<c10::IValue>& values, const c10::Device& device) {
  const ir::Node& node = graph.node(id);
  const auto& arguments = schema.arguments();
  if (node.args.size() > arguments.size()) {
    throw std::runtime_error(std::to_string(node.args.size()) + " arguments for " + std::to_string(arguments.size()) +
                             " parameters of " + schema.name());
  }
  Stack stack;
  stack.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::Argument& parameter = arguments[i];
    const Arg* given = i < node.args.size() ? &node.args[i] : nullptr;
    for (const auto& [key, value] : node.kwargs) {
      if (graph.str(key) == parameter.name()) given = &value;
    }
    try {
      if (given) {
        stack.push_back(convert(graph, *given, parameter.type(), values, device));
      } else if (parameter.default_value()) {
        stack.push_back(*parameter.default_value());
      } else {
        throw std::runtime_error("not given and without a default");
      }
    } catch (const std::exception& e) {
      throw std::runtime_error("argument " + parameter.name() + ": " + e.what());
    }
  }
  return stack;
}

c10::IValue runPythonOperator(const ir::Graph& graph, ir::NodeId id, const std::vector<c10::IValue>& values) {
  const ir::Node& node = graph.node(id);
  const std::string_view target = graph.target(id);
  auto valueOf = [&](const Arg& arg) -> c10::IValue {
    switch (arg.kind) {
      case Arg::Kind::Node: return values.at(arg.node);
      case Arg::Kind::Int: return arg.i;
      case Arg::Kind::Float: return arg.f;
      case Arg::Kind::Bool: return arg.b;
      default: throw std::runtime_error("operand " + describeArg(graph, arg) + " is not a number");
    }
  };
  if (target == "operator.getitem") {
    if (node.args.size() != 2) throw std::runtime_error("getitem takes two arguments");
    const c10::IValue container = valueOf(node.args[0]);
    const int64_t index = valueOf(node.args[1]).toInt();
    if (container.isTuple()) {
      const auto& elements = container.toTupleRef().elements();
      if (index < 0 || static_cast<size_t>(index) >= elements.size()) throw std::runtime_error("getitem index out of range");
      return elements[static_cast<size_t>(index)];
    }
    if (container.isList()) {
      const auto list = container.toList();
      if (index < 0 || static_cast<size_t>(index) >= list.size()) throw std::runtime_error("getitem index out of range");
      return list.get(static_cast<size_t>(index));
    }
    throw std::runtime_error("getitem of a value that is neither a tuple nor a list");
  }
  if (target == "operator.neg") {
    const c10::IValue a = valueOf(node.args.at(0));
    return a.isInt() ? c10::IValue(-a.toInt()) : c10::IValue(-a.toDouble());
  }
  const c10::IValue a = valueOf(node.args.at(0)), b = valueOf(node.args.at(1));
  if (a.isInt() && b.isInt() && target != "operator.truediv") {
    const int64_t x = a.toInt(), y = b.toInt();
    if (target == "operator.add") return x + y;
    if (target == "operator.sub") return x - y;
    if (target == "operator.mul") return x * y;
    if (y == 0) throw std::runtime_error("integer division by zero");
    // Python's floor division.
    return x / y - ((x % y != 0) && ((x < 0) != (y < 0)) ? 1 : 0);
  }
  const double x = a.toDouble(), y = b.toDouble();
  if (target == "operator.add") return x + y;
  if (target == "operator.sub") return x - y;
  if (target == "operator.mul") return x * y;
  if (target == "operator.truediv") return x / y;
  return std::floor(x / y);
}

}  // namespace lathe::runtime::detail
