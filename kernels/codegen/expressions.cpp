#include "kernels/codegen/expressions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

namespace lathe::kernels::codegen {

[[noreturn]] void unsupported(std::string reason) {
  throw Unsupported{std::move(reason)};
}

int64_t product(const Shape& shape, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < shape.size() && d < to; ++d) p *= shape[d];
  return p;
}

Shape contiguousStrides(const Shape& sizes) {
  Shape strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

bool isContiguous(const TensorSpec& spec) {
  const Shape dense = contiguousStrides(spec.sizes);
  for (size_t d = 0; d < spec.sizes.size(); ++d) {
    if (spec.sizes[d] != 1 && spec.strides[d] != dense[d]) return false;
  }
  return true;
}

Shape squeezed(const Shape& shape) {
  Shape out;
  for (int64_t s : shape) {
    if (s != 1) out.push_back(s);
  }
  return out;
}

std::string_view cTypeName(CType type) {
  switch (type) {
    case CType::Float: return "float";
    case CType::Int: return "long long";
    case CType::Bool: return "bool";
  }
  return "float";
}

CType computeType(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::BF16:
    case ir::DType::F16:
    case ir::DType::F32: return CType::Float;
    case ir::DType::I64:
    case ir::DType::I32:
    case ir::DType::I16:
    case ir::DType::I8:
    case ir::DType::U8: return CType::Int;
    case ir::DType::Bool: return CType::Bool;
    default: unsupported("dtype " + std::string(ir::dtypeTorchName(dtype)));
  }
}

std::string_view storageType(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::BF16: return "__nv_bfloat16";
    case ir::DType::F16: return "__half";
    case ir::DType::F32: return "float";
    case ir::DType::I64: return "long long";
    case ir::DType::I32: return "int";
    case ir::DType::I16: return "short";
    case ir::DType::I8: return "signed char";
    case ir::DType::U8: return "unsigned char";
    case ir::DType::Bool: return "bool";
    default: unsupported("dtype " + std::string(ir::dtypeTorchName(dtype)));
  }
}

Val cast(const Val& v, CType to) {
  if (v.type == to) return v;
  if (to == CType::Bool) return {"(" + v.expr + " != 0)", to};
  return {"static_cast<" + std::string(cTypeName(to)) + ">(" + v.expr + ")", to};
}

std::string floatLiteral(double value) {
  if (std::isnan(value)) return "__int_as_float(0x7fffffff)";
  if (std::isinf(value)) return value > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  std::string text(buffer);
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text + "f";
}

Val literal(const Arg& arg) {
  switch (arg.kind) {
    case Arg::Kind::Int: return {std::to_string(arg.i) + "LL", CType::Int};
    case Arg::Kind::Float: return {floatLiteral(arg.f), CType::Float};
    case Arg::Kind::Bool: return {arg.b ? "true" : "false", CType::Bool};
    default: unsupported("a scalar argument that is not a constant");
  }
}

std::string rounded(const std::string& expr, ir::DType dtype) {
  if (dtype == ir::DType::BF16) return "lathe::round_bf16(" + expr + ")";
  if (dtype == ir::DType::F16) return "lathe::round_f16(" + expr + ")";
  return expr;
}

bool sameLayout(const Shape& sizes, const Shape& strides, const TensorSpec& tensor) {
  if (tensor.sizes != sizes) return false;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] != 1 && tensor.strides[d] != strides[d]) return false;
  }
  return true;
}

std::optional<std::vector<size_t>> memoryOrder(const TensorSpec& tensor) {
  std::vector<size_t> order;
  for (size_t d = 0; d < tensor.sizes.size(); ++d) {
    if (tensor.sizes[d] != 1) order.push_back(d);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tensor.strides[a] > tensor.strides[b]; });
  int64_t expected = 1;
  for (size_t k = order.size(); k-- > 0;) {
    if (tensor.strides[order[k]] != expected) return std::nullopt;
    expected *= tensor.sizes[order[k]];
  }
  return order;
}

}  // namespace lathe::kernels::codegen
