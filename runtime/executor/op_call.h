// How one graph node becomes a dispatcher call: the op's schema, the node's arguments converted to
// IValues by it, and the ops this device runs as another (prims ops, cuDNN attention on the CPU).
// Private to lathe_runtime (torch headers).
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace lathe::runtime::detail {

// Converts the node's arguments into the schema's stack (positional, keyword, defaults).
using Stack = std::vector<c10::IValue>;
using SubstituteFn = std::function<c10::IValue(Stack& stack, const c10::Device& device)>;

enum class CallKind : uint8_t { Dispatcher, Substitute, Getitem, IntArithmetic, Output, Input };

struct ResolvedCall {
  CallKind kind = CallKind::Input;
  std::optional<c10::OperatorHandle> op;       // Dispatcher
  std::optional<c10::FunctionSchema> schema;   // Dispatcher and Substitute
  SubstituteFn substitute;                     // Substitute
  std::string substituteName;                  // "aten._to_copy"
  std::string unsupported;                     // why this node cannot run here; empty when it can
};

// "torch.ops.aten.mm.default" -> "aten.mm.default" (how reports name ops).
[[nodiscard]] std::string shortOpName(std::string_view target);

// Resolves every node of the graph for `device`.
[[nodiscard]] std::vector<ResolvedCall> resolveCalls(const ir::Graph& graph, const c10::Device& device);

// The node's arguments as the schema's stack. `values` holds the value of every node computed so
// far. Throws std::runtime_error naming the argument it cannot convert.
[[nodiscard]] Stack buildStack(const ir::Graph& graph, ir::NodeId node, const c10::FunctionSchema& schema,
                               const std::vector<c10::IValue>& values, const c10::Device& device);

// operator.getitem, operator.add / sub / mul / floordiv / truediv / neg on ints and floats.
[[nodiscard]] c10::IValue runPythonOperator(const ir::Graph& graph, ir::NodeId node,
                                            const std::vector<c10::IValue>& values);

[[nodiscard]] c10::ScalarType scalarTypeOf(ir::DType dtype);

}  // namespace lathe::runtime::detail
