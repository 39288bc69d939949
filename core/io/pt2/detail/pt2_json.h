// Internal to the .pt2 loader: reading the serde encoding of torch/_export/serde/schema.py out of
// nlohmann::json values without trusting their types.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/dtype.h"

namespace lathe::io::pt2 {

using Json = nlohmann::json;

// obj[key] when obj is an object holding key with a non-null value, else nullptr.
[[nodiscard]] const Json* field(const Json& obj, std::string_view key);
[[nodiscard]] std::optional<int64_t> intField(const Json& obj, std::string_view key);
[[nodiscard]] std::optional<std::string_view> stringField(const Json& obj, std::string_view key);
[[nodiscard]] std::optional<int64_t> asInt(const Json& j);
// A float as serde writes it: a number, or "Infinity" / "-Infinity" / "NaN".
[[nodiscard]] std::optional<double> asFloat(const Json& j);

// The member of a serialized union: {"as_tensor": {...}}. Schema <= 2 wrote every member with all
// but one null; the non-null one is taken. A lone null-valued member ({"as_none": null}) counts.
struct UnionMember {
  std::string_view key;
  const Json* value = nullptr;  // never null; points at a null Json for value-less members
};
[[nodiscard]] std::optional<UnionMember> unionMember(const Json& j);

// One size, stride or offset (SymInt): concrete, or a symbolic expression in sympy str form.
struct Dim {
  int64_t value = 0;    // the integer, or the hint of a symbolic expression
  bool hasHint = true;  // false: symbolic without a hint
  std::string expr;     // empty = concrete
};
// SymInt {as_int} | {as_expr: {expr_str, hint}}; the legacy storage_offset plain int too.
[[nodiscard]] std::optional<Dim> parseDim(const Json& j);
// expr_str in sympy str form: srepr is converted, plain text kept. nullopt when srepr is malformed.
[[nodiscard]] std::optional<std::string> exprText(std::string_view exprStr);

struct TensorMetaJson {
  ir::DType dtype = ir::DType::Unknown;
  std::vector<Dim> sizes, strides;
  bool hasStrides = false;
  Dim storageOffset;
  std::string device;  // "cpu", "cuda:0"
  bool requiresGrad = false;
};
// A TensorMeta object. On failure returns nullopt and says why in *why.
[[nodiscard]] std::optional<TensorMetaJson> parseTensorMeta(const Json& j, std::string* why);
// Device {type, index} as "cuda:0" / "cpu".
[[nodiscard]] std::string deviceText(const Json& device);

// Short text of a JSON value for messages and verbatim arguments: depth- and length-bounded (a
// full dump of hostile input could recurse without bound).
[[nodiscard]] std::string shortJson(const Json& j, size_t maxChars = 160);

}  // namespace lathe::io::pt2
