// GroupGenerator: the arithmetic of the elementwise ops, in the C++ types values are computed in
// (kernels/codegen/device/lathe_kernels.cuh holds the device functions it calls).
#include <cmath>

#include "kernels/codegen/group_generator.h"

namespace lathe::kernels::codegen {

namespace {

// pow with an integer exponent up to this size is written as multiplications.
constexpr double kUnrolledPowerLimit = 8;

Val call(std::string_view function, const Val& x) {
  return {std::string(function) + "(" + x.expr + ")", CType::Float};
}

}  // namespace

Val GroupGenerator::elementwise(NodeId node, std::string_view name, const Index& index, CType out) {
  const std::string overload = overloadOf(graph_, node);
  auto a = [&]() { return operand(node, 0, "self", index); };
  auto b = [&]() { return operand(node, 1, "other", index); };
  auto binary = [&](std::string_view symbol) {
    const CType common = a().type == CType::Float || b().type == CType::Float ? CType::Float : out;
    return Val{"(" + cast(a(), common).expr + " " + std::string(symbol) + " " + cast(b(), common).expr + ")", common};
  };
  auto compare = [&](std::string_view symbol) {
    const Val x = a(), y = b();
    const CType common = x.type == CType::Float || y.type == CType::Float ? CType::Float : CType::Int;
    return Val{"(" + cast(x, common).expr + " " + std::string(symbol) + " " + cast(y, common).expr + ")", CType::Bool};
  };
  auto unary = [&](std::string_view function) { return call(function, cast(a(), CType::Float)); };
  auto scaled = [&](std::string_view symbol) {  // add / sub with alpha
    const Arg* alpha = argument(graph_, node, 2, "alpha");
    Val y = cast(b(), out);
    if (alpha != nullptr) y = {"(" + y.expr + " * " + cast(literal(*alpha), out).expr + ")", out};
    return Val{"(" + cast(a(), out).expr + " " + std::string(symbol) + " " + y.expr + ")", out};
  };
  if (name == "add") return scaled("+");
  if (name == "sub") return scaled("-");
  if (name == "rsub") {
    const Val x = cast(a(), out), y = cast(b(), out);
    const Arg* alpha = argument(graph_, node, 2, "alpha");
    const std::string xs = alpha == nullptr ? x.expr : "(" + x.expr + " * " + cast(literal(*alpha), out).expr + ")";
    return {"(" + y.expr + " - " + xs + ")", out};
  }
  if (name == "mul") return binary("*");
  if (name == "div" || name == "true_divide") {
    const Arg* mode = argument(graph_, node, 2, "rounding_mode");
    const Val x = a(), y = b();
    if (mode != nullptr && mode->kind == Arg::Kind::String) {
      const std::string_view how = graph_.str(mode->s);
      if (how != "floor" && how != "trunc") unsupported("div rounding mode " + std::string(how));
      if (out == CType::Int) {
        return {std::string(how == "floor" ? "lathe::floor_div" : "lathe::trunc_div") + "(" + cast(x, CType::Int).expr +
                    ", " + cast(y, CType::Int).expr + ")",
                CType::Int};
      }
      return {std::string(how == "floor" ? "floorf" : "truncf") + "(" + cast(x, CType::Float).expr + " / " +
                  cast(y, CType::Float).expr + ")",
              CType::Float};
    }
    return {"(" + cast(x, CType::Float).expr + " / " + cast(y, CType::Float).expr + ")", CType::Float};
  }
  if (name == "maximum") return {"lathe::maximum(" + cast(a(), out).expr + ", " + cast(b(), out).expr + ")", out};
  if (name == "minimum") return {"lathe::minimum(" + cast(a(), out).expr + ", " + cast(b(), out).expr + ")", out};
  if (name == "pow") {
    if (overload != "Tensor_Scalar") unsupported("pow." + overload);
    const Arg* exponent = argument(graph_, node, 1, "exponent");
    const Val x = cast(a(), CType::Float);
    // Constant exponents as multiplications and square roots (as Inductor does): powf is a
    // long call where the exponent is a float, even when it holds 2.0 or 3.0.
    std::optional<double> constant;
    if (exponent != nullptr && exponent->kind == Arg::Kind::Int) constant = static_cast<double>(exponent->i);
    if (exponent != nullptr && exponent->kind == Arg::Kind::Float) constant = exponent->f;
    if (constant && *constant == 0.5) return call("sqrtf", x);
    if (constant && *constant == -0.5) return call("rsqrtf", x);
    if (constant && *constant == 0.0) return {"1.0f", CType::Float};
    if (constant && std::trunc(*constant) == *constant && std::abs(*constant) <= kUnrolledPowerLimit) {
      const std::string base = temp();
      line("const float " + base + " = " + x.expr + ";");
      std::string product = base;
      for (int k = 1; k < static_cast<int>(std::abs(*constant)); ++k) product += " * " + base;
      return {*constant > 0 ? "(" + product + ")" : "(1.0f / (" + product + "))", CType::Float};
    }
    return {"powf(" + x.expr + ", " + cast(b(), CType::Float).expr + ")", CType::Float};
  }
  if (name == "neg") return {"(-" + cast(a(), out).expr + ")", out};
  if (name == "abs") return {"lathe::absolute(" + cast(a(), out).expr + ")", out};
  if (name == "exp") return unary("lathe::fast_exp");
  if (name == "exp2") return unary("exp2f");
  if (name == "log") return unary("logf");
  if (name == "log1p") return unary("log1pf");
  if (name == "expm1") return unary("expm1f");
  if (name == "sqrt") return unary("sqrtf");
  if (name == "rsqrt") return unary("rsqrtf");
  if (name == "tanh") return unary("tanhf");
  if (name == "sin") return unary("sinf");
  if (name == "cos") return unary("cosf");
  if (name == "erf") return unary("erff");
  if (name == "floor") return out == CType::Float ? unary("floorf") : a();
  if (name == "ceil") return out == CType::Float ? unary("ceilf") : a();
  if (name == "sigmoid") return unary("lathe::sigmoid");
  if (name == "silu") return unary("lathe::silu");
  if (name == "reciprocal") return {"(1.0f / " + cast(a(), CType::Float).expr + ")", CType::Float};
  if (name == "relu")
    return {"lathe::maximum(" + cast(a(), out).expr + ", " + cast({"0LL", CType::Int}, out).expr + ")", out};
  if (name == "sign") return {"lathe::sign(" + cast(a(), out).expr + ")", out};
  if (name == "isnan") return {"lathe::is_nan(" + cast(a(), CType::Float).expr + ")", CType::Bool};
  if (name == "logical_not") return {"(!" + cast(a(), CType::Bool).expr + ")", CType::Bool};
  if (name == "bitwise_not")
    return out == CType::Bool ? Val{"(!" + cast(a(), CType::Bool).expr + ")", CType::Bool}
                              : Val{"(~" + cast(a(), CType::Int).expr + ")", CType::Int};
  if (name == "eq") return compare("==");
  if (name == "ne") return compare("!=");
  if (name == "gt") return compare(">");
  if (name == "ge") return compare(">=");
  if (name == "lt") return compare("<");
  if (name == "le") return compare("<=");
  if (name == "logical_and")
    return {"(" + cast(a(), CType::Bool).expr + " && " + cast(b(), CType::Bool).expr + ")", CType::Bool};
  if (name == "logical_or")
    return {"(" + cast(a(), CType::Bool).expr + " || " + cast(b(), CType::Bool).expr + ")", CType::Bool};
  if (name == "bitwise_and" || name == "bitwise_or" || name == "bitwise_xor" || name == "__and__" || name == "__or__" ||
      name == "__xor__") {
    if (out == CType::Float) unsupported("bitwise op on floating values");
    const std::string symbol = name == "bitwise_and" || name == "__and__" ? "&"
                               : name == "bitwise_or" || name == "__or__" ? "|"
                                                                          : "^";
    return {"(" + cast(a(), out).expr + " " + symbol + " " + cast(b(), out).expr + ")", out};
  }
  if (name == "where") {
    const Val c = cast(operand(node, 0, "condition", index), CType::Bool);
    const Val x = cast(operand(node, 1, "self", index), out), y = cast(operand(node, 2, "other", index), out);
    return {"(" + c.expr + " ? " + x.expr + " : " + y.expr + ")", out};
  }
  if (name == "dropout") {  // the identity outside training; in training it draws random numbers
    const Arg* train = argument(graph_, node, 2, "train");
    if (train == nullptr || train->kind != Arg::Kind::Bool || train->b)
      unsupported("dropout in training mode (random numbers)");
    return a();
  }
  if (name == "masked_fill") {
    const Val c = cast(operand(node, 1, "mask", index), CType::Bool);
    const Val fill = cast(operand(node, 2, "value", index), out);
    return {"(" + c.expr + " ? " + fill.expr + " : " + cast(a(), out).expr + ")", out};
  }
  if (name == "clamp" || name == "clamp_min" || name == "clamp_max") {
    Val x = cast(a(), out);
    const bool hasMin = name != "clamp_max", hasMax = name != "clamp_min";
    const Arg* lo = hasMin ? argument(graph_, node, 1, "min") : nullptr;
    const Arg* hi = hasMax ? argument(graph_, node, name == "clamp" ? 2 : 1, "max") : nullptr;
    if (lo != nullptr && lo->kind != Arg::Kind::None)
      x = {"lathe::maximum(" + x.expr + ", " + cast(operand(node, 1, "min", index), out).expr + ")", out};
    if (hi != nullptr && hi->kind != Arg::Kind::None) {
      x = {"lathe::minimum(" + x.expr + ", " + cast(operand(node, name == "clamp" ? 2 : 1, "max", index), out).expr +
               ")",
           out};
    }
    return x;
  }
  if (name == "gelu" || name == "gelu_backward") {
    const Arg* approximate = kwarg(graph_, node, "approximate");
    const bool tanh =
        approximate != nullptr && approximate->kind == Arg::Kind::String && graph_.str(approximate->s) == "tanh";
    if (name == "gelu")
      return {std::string(tanh ? "lathe::gelu_tanh(" : "lathe::gelu(") + cast(a(), CType::Float).expr + ")",
              CType::Float};
    const Val grad = cast(operand(node, 0, "grad_output", index), CType::Float);
    const Val x = cast(operand(node, 1, "self", index), CType::Float);
    return {
        std::string(tanh ? "lathe::gelu_tanh_backward(" : "lathe::gelu_backward(") + grad.expr + ", " + x.expr + ")",
        CType::Float};
  }
  if (name == "silu_backward") {
    const Val grad = cast(operand(node, 0, "grad_output", index), CType::Float);
    return {"lathe::silu_backward(" + grad.expr + ", " + cast(operand(node, 1, "self", index), CType::Float).expr + ")",
            CType::Float};
  }
  if (name == "sigmoid_backward" || name == "tanh_backward") {
    const Val grad = cast(operand(node, 0, "grad_output", index), CType::Float);
    const Val y = cast(operand(node, 1, "output", index), CType::Float);
    return name == "sigmoid_backward"
               ? Val{"(" + grad.expr + " * " + y.expr + " * (1.0f - " + y.expr + "))", CType::Float}
               : Val{"(" + grad.expr + " * (1.0f - " + y.expr + " * " + y.expr + "))", CType::Float};
  }
  if (name == "threshold_backward") {
    const Val grad = cast(operand(node, 0, "grad_output", index), out);
    const Val x = cast(operand(node, 1, "self", index), CType::Float);
    const Val threshold = cast(operand(node, 2, "threshold", index), CType::Float);
    return {
        "(" + x.expr + " <= " + threshold.expr + " ? " + cast({"0LL", CType::Int}, out).expr + " : " + grad.expr + ")",
        out};
  }
  if (name == "fma") {
    const Val x = cast(a(), out), y = cast(operand(node, 1, "", index), out),
              z = cast(operand(node, 2, "", index), out);
    return out == CType::Float ? Val{"fmaf(" + x.expr + ", " + y.expr + ", " + z.expr + ")", out}
                               : Val{"(" + x.expr + " * " + y.expr + " + " + z.expr + ")", out};
  }
  // clone, _to_copy, convert_element_type, copy, lift_fresh_copy, detach: the value, cast.
  if (name == "copy") return operand(node, 1, "src", index);
  return a();
}

}  // namespace lathe::kernels::codegen
