#include "passes/pass.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "plan/plan_bundle.h"
#include "util/diagnostics.h"

namespace lathe::passes {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::optional<double> parseNumber(std::string_view text) {
  text = trim(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

}  // namespace

std::optional<uint64_t> parseByteSize(std::string_view text) {
  text = trim(text);
  size_t split = text.size();
  while (split > 0 && std::isalpha(static_cast<unsigned char>(text[split - 1]))) --split;
  const std::optional<double> number = parseNumber(text.substr(0, split));
  if (!number || *number < 0) return std::nullopt;
  std::string unit(trim(text.substr(split)));
  for (char& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 1;
  if (unit.empty() || unit == "b") {
    scale = 1;
  } else if (unit == "kib") {
    scale = 1024.0;
  } else if (unit == "mib") {
    scale = 1024.0 * 1024;
  } else if (unit == "gib") {
    scale = 1024.0 * 1024 * 1024;
  } else if (unit == "tib") {
    scale = 1024.0 * 1024 * 1024 * 1024;
  } else if (unit == "kb") {
    scale = 1e3;
  } else if (unit == "mb") {
    scale = 1e6;
  } else if (unit == "gb") {
    scale = 1e9;
  } else if (unit == "tb") {
    scale = 1e12;
  } else {
    return std::nullopt;
  }
  const double bytes = std::round(*number * scale);
  if (bytes >= 18446744073709551616.0) return std::nullopt;  // 2^64
  return static_cast<uint64_t>(bytes);
}

void requireSupportedGraph(const ir::Graph& graph) {
  if (graph.size() > plan::kMaxPlanNodes) {
    throw Error(ErrorCode::BadInput, "the graph has " + std::to_string(graph.size()) +
                                         " nodes; the planner supports at most " + std::to_string(plan::kMaxPlanNodes) +
                                         " (what a plan bundle holds)");
  }
  uint64_t total = 0;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::TensorMeta& meta = graph.node(id).meta;
    if (!meta.isTensor()) continue;
    for (size_t d = 0; d < meta.sizes.size(); ++d) {
      if (meta.sizes[d].value < 0) {
        throw Error(ErrorCode::BadInput, std::string(graph.name(id)) + ": dimension " + std::to_string(d) +
                                             " has the negative size " + std::to_string(meta.sizes[d].value));
      }
    }
    uint64_t elementBytes = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(meta.numel()), std::max(1u, ir::dtypeSize(meta.dtype)),
                               &elementBytes)) {
      elementBytes = UINT64_MAX;
    }
    const uint64_t bytes = std::max(elementBytes, meta.storageBytes());
    if (bytes > kMaxTensorBytes) {
      const std::string size = bytes >= uint64_t{INT64_MAX} ? "2^63 bytes or more" : std::to_string(bytes) + " bytes";
      throw Error(ErrorCode::BadInput, std::string(graph.name(id)) + ": a tensor of " + size +
                                           "; the planner supports at most " + std::to_string(kMaxTensorBytes) +
                                           " bytes (1 TiB) per tensor");
    }
    total += bytes;
  }
  if (total > kMaxGraphBytes) {
    throw Error(ErrorCode::BadInput, "the graph's tensors hold " + std::to_string(total) +
                                         " bytes; the planner supports at most " + std::to_string(kMaxGraphBytes) +
                                         " bytes (16 TiB) in all");
  }
}

bool PassOptions::has(std::string_view key) const { return values_.find(std::string(key)) != values_.end(); }

std::string PassOptions::string(std::string_view key, std::string_view fallback) const {
  const auto it = values_.find(std::string(key));
  return it == values_.end() ? std::string(fallback) : it->second;
}

double PassOptions::number(std::string_view key, double fallback) const {
  const auto it = values_.find(std::string(key));
  if (it == values_.end()) return fallback;
  const std::optional<double> value = parseNumber(it->second);
  if (!value) throw Error(ErrorCode::Usage, "option " + it->first + "=" + it->second + " is not a number");
  return *value;
}

uint64_t PassOptions::bytes(std::string_view key, uint64_t fallback) const {
  const auto it = values_.find(std::string(key));
  if (it == values_.end()) return fallback;
  const std::optional<uint64_t> value = parseByteSize(it->second);
  if (!value) throw Error(ErrorCode::Usage, "option " + it->first + "=" + it->second + " is not a byte size (e.g. 40GiB, 512MB)");
  return *value;
}

bool PassOptions::flag(std::string_view key, bool fallback) const {
  const auto it = values_.find(std::string(key));
  if (it == values_.end()) return fallback;
  if (it->second == "true" || it->second == "1" || it->second == "on") return true;
  if (it->second == "false" || it->second == "0" || it->second == "off") return false;
  throw Error(ErrorCode::Usage, "option " + it->first + "=" + it->second + " is not true or false");
}

void PassOptions::requireKnown(std::string_view pass, std::initializer_list<std::string_view> known) const {
  for (const auto& [key, value] : values_) {
    bool ok = false;
    for (std::string_view k : known) ok = ok || k == key;
    if (ok) continue;
    std::string list;
    for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    throw Error(ErrorCode::Usage, std::string(pass) + ": unknown option '" + key + "' (known: " + list + ")");
  }
}

}  // namespace lathe::passes
