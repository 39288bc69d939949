#include "ir/dtype.h"

#include <array>

namespace lathe::ir {
namespace {

struct DTypeRow {
  DType type;
  std::string_view abbr;
  std::string_view torchName;
  unsigned size;
  bool floating;
};

constexpr std::array kRows{
    DTypeRow{DType::Unknown, "?", "unknown", 0, false},
    DTypeRow{DType::Bool, "b8", "bool", 1, false},
    DTypeRow{DType::U8, "u8", "uint8", 1, false},
    DTypeRow{DType::I8, "i8", "int8", 1, false},
    DTypeRow{DType::I16, "i16", "int16", 2, false},
    DTypeRow{DType::I32, "i32", "int32", 4, false},
    DTypeRow{DType::I64, "i64", "int64", 8, false},
    DTypeRow{DType::U16, "u16", "uint16", 2, false},
    DTypeRow{DType::U32, "u32", "uint32", 4, false},
    DTypeRow{DType::U64, "u64", "uint64", 8, false},
    DTypeRow{DType::F16, "f16", "float16", 2, true},
    DTypeRow{DType::BF16, "bf16", "bfloat16", 2, true},
    DTypeRow{DType::F32, "f32", "float32", 4, true},
    DTypeRow{DType::F64, "f64", "float64", 8, true},
    DTypeRow{DType::C32, "c32", "complex32", 4, true},
    DTypeRow{DType::C64, "c64", "complex64", 8, true},
    DTypeRow{DType::C128, "c128", "complex128", 16, true},
    DTypeRow{DType::F8E4M3FN, "f8e4m3fn", "float8_e4m3fn", 1, true},
    DTypeRow{DType::F8E5M2, "f8e5m2", "float8_e5m2", 1, true},
    DTypeRow{DType::F8E4M3FNUZ, "f8e4m3fnuz", "float8_e4m3fnuz", 1, true},
    DTypeRow{DType::F8E5M2FNUZ, "f8e5m2fnuz", "float8_e5m2fnuz", 1, true},
    DTypeRow{DType::F8E8M0FNU, "f8e8m0fnu", "float8_e8m0fnu", 1, true},
    DTypeRow{DType::F4E2M1FNX2, "f4e2m1fnx2", "float4_e2m1fn_x2", 1, true},
    DTypeRow{DType::Bits16, "b16", "bits16", 2, false},
    DTypeRow{DType::Bits1x8, "b1x8", "bits1x8", 1, false},
};

const DTypeRow& row(DType t) {
  const auto i = static_cast<size_t>(t);
  return i < kRows.size() ? kRows[i] : kRows[0];
}

// Python aliases that torch prints for some dtypes.
struct Alias {
  std::string_view name;
  DType type;
};
constexpr std::array kAliases{
    Alias{"float", DType::F32},   Alias{"double", DType::F64}, Alias{"half", DType::F16},
    Alias{"int", DType::I32},     Alias{"long", DType::I64},   Alias{"short", DType::I16},
    Alias{"cfloat", DType::C64},  Alias{"cdouble", DType::C128}, Alias{"chalf", DType::C32},
};

}  // namespace

std::string_view dtypeAbbr(DType t) { return row(t).abbr; }
std::string_view dtypeTorchName(DType t) { return row(t).torchName; }
unsigned dtypeSize(DType t) { return row(t).size; }
bool dtypeIsFloating(DType t) { return row(t).floating; }

std::optional<DType> dtypeFromAbbr(std::string_view abbr) {
  for (const auto& r : kRows)
    if (r.type != DType::Unknown && r.abbr == abbr) return r.type;
  return std::nullopt;
}

std::optional<DType> dtypeFromTorchName(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  for (const auto& r : kRows)
    if (r.type != DType::Unknown && r.torchName == name) return r.type;
  for (const auto& a : kAliases)
    if (a.name == name) return a.type;
  return std::nullopt;
}

DType dtypeFromScalarType(int64_t scalarType) {
  switch (scalarType) {
    case 1: return DType::U8;
    case 2: return DType::I8;
    case 3: return DType::I16;
    case 4: return DType::I32;
    case 5: return DType::I64;
    case 6: return DType::F16;
    case 7: return DType::F32;
    case 8: return DType::F64;
    case 9: return DType::C32;
    case 10: return DType::C64;
    case 11: return DType::C128;
    case 12: return DType::Bool;
    case 13: return DType::BF16;
    case 28: return DType::U16;
    case 29: return DType::F8E4M3FN;
    case 30: return DType::F8E5M2;
    case 31: return DType::F8E4M3FNUZ;
    case 32: return DType::F8E5M2FNUZ;
    case 33: return DType::F8E8M0FNU;
    case 34: return DType::U32;
    case 35: return DType::U64;
    default: return DType::Unknown;
  }
}

}  // namespace lathe::ir
