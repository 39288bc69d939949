// Internal to the op registry: the built-in table's row type (op_table.cpp holds the rows).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "ir/op_info.h"

namespace lathe::ir::detail {

enum OpTrait : uint8_t {
  kComputeSensitive = 1,  // torch's compute-intensive list
  kNotFusible = 2,        // an exception to its category's fusibility (sort, histc, nonzero ...)
  kFusible = 4,           // likewise the other way (getitem joins its producer's group)
  kUpdatesFirstArgument = 8,  // OpInfo::updatesFirstArgument
};

struct OpRow {
  std::string_view name;
  OpCategory category = OpCategory::Unknown;
  CostFormula formula = CostFormula::Opaque;
  double flopsPerElement = 0;
  uint8_t traits = 0;
  AttentionArgs attention{};
  std::string_view aliasOf{};  // non-empty: everything but the name comes from that row
};

[[nodiscard]] std::span<const OpRow> builtInOpRows();

}  // namespace lathe::ir::detail
