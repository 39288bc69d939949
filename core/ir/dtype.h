// Tensor element types with torch's abbreviations (torch/utils/_dtype_abbrs.py).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace lathe::ir {

enum class DType : uint8_t {
  Unknown,
  Bool,
  U8, I8, I16, I32, I64, U16, U32, U64,
  F16, BF16, F32, F64,
  C32, C64, C128,
  F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ, F8E8M0FNU, F4E2M1FNX2,
  Bits16, Bits1x8,
};

// "bf16", "f32", "b8" ... as printed in FX graph annotations.
[[nodiscard]] std::string_view dtypeAbbr(DType t);
[[nodiscard]] std::optional<DType> dtypeFromAbbr(std::string_view abbr);
// "torch.bfloat16" / "bfloat16" as printed in Python (`dtype = torch.int64`, describe_tensor).
[[nodiscard]] std::string_view dtypeTorchName(DType t);
[[nodiscard]] std::optional<DType> dtypeFromTorchName(std::string_view name);
// torch.export ScalarType enum (serde schema) to DType.
[[nodiscard]] DType dtypeFromScalarType(int64_t scalarType);
// Bytes per element; packed sub-byte types report 1 (their storage unit).
[[nodiscard]] unsigned dtypeSize(DType t);
[[nodiscard]] bool dtypeIsFloating(DType t);

}  // namespace lathe::ir
