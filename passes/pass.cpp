#include "passes/pass.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "plan/plan_bundle.h"
#include "util/format.h"
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

std::optional<std::string> unsupportedGraph(const ir::Graph& graph) {
  if (graph.size() > plan::kMaxPlanNodes) {
    return "the graph has " + std::to_string(graph.size()) + " nodes; the planner supports at most " +
           std::to_string(plan::kMaxPlanNodes) + " (what a plan bundle holds)";
  }
  uint64_t total = 0;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    const ir::TensorMeta& meta = graph.node(id).meta;
    if (!meta.isTensor()) continue;
    for (size_t d = 0; d < meta.sizes.size(); ++d) {
      if (meta.sizes[d].value < 0) {
        return std::string(graph.name(id)) + ": dimension " + std::to_string(d) + " has the negative size " +
               std::to_string(meta.sizes[d].value);
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
      return std::string(graph.name(id)) + ": a tensor of " + size + "; the planner supports at most " +
             std::to_string(kMaxTensorBytes) + " bytes (1 TiB) per tensor";
    }
    total += bytes;
  }
  if (total > kMaxGraphBytes) {
    return "the graph's tensors hold " + std::to_string(total) + " bytes; the planner supports at most " +
           std::to_string(kMaxGraphBytes) + " bytes (16 TiB) in all";
  }
  return std::nullopt;
}

void requireSupportedGraph(const ir::Graph& graph) {
  if (std::optional<std::string> reason = unsupportedGraph(graph)) throw Error(ErrorCode::BadInput, std::move(*reason));
}

std::string_view optionTypeName(OptionType type) {
  switch (type) {
    case OptionType::Flag: return "flag";
    case OptionType::Number: return "number";
    case OptionType::Bytes: return "bytes";
    case OptionType::Choice: return "choice";
    case OptionType::Path: return "path";
  }
  return "?";
}

std::string_view statUnitName(StatUnit unit) {
  switch (unit) {
    case StatUnit::Count: return "";
    case StatUnit::Bytes: return "bytes";
    case StatUnit::Seconds: return "s";
    case StatUnit::Flag: return "flag";
  }
  return "?";
}

std::string formatStat(const PassStat& stat) {
  switch (stat.key.unit) {
    case StatUnit::Bytes: return formatBytes(static_cast<uint64_t>(stat.value));
    case StatUnit::Seconds: return formatSeconds(stat.value);
    case StatUnit::Flag: return stat.value != 0 ? "yes" : "no";
    case StatUnit::Count: break;
  }
  if (stat.value == std::floor(stat.value) && std::abs(stat.value) < 1e15) {
    return std::to_string(static_cast<int64_t>(stat.value));
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", stat.value);
  return text;
}

void PassResult::set(const StatKey& key, double value) {
  for (PassStat& stat : stats) {
    if (stat.key.name == key.name) {
      stat.value = value;
      return;
    }
  }
  stats.push_back({key, value});
}

std::optional<double> PassResult::stat(const StatKey& key) const {
  for (const PassStat& stat : stats) {
    if (stat.key.name == key.name) return stat.value;
  }
  return std::nullopt;
}

namespace {

[[noreturn]] void badValue(const OptionSpec& option, const std::string& value, std::string_view expected) {
  throw Error(ErrorCode::Usage, "option " + std::string(option.name) + "=" + value + " is not " + std::string(expected));
}

void requireType(const OptionSpec& option, std::initializer_list<OptionType> types) {
  for (OptionType type : types) {
    if (option.type == type) return;
  }
  throw Error(ErrorCode::Internal, "option " + std::string(option.name) + " is declared a " +
                                       std::string(optionTypeName(option.type)) + ", read as another type");
}

std::string rangeText(const OptionSpec& option) {
  std::string text = option.whole ? "a whole number" : "a number";
  const bool low = std::isfinite(option.min), high = std::isfinite(option.max);
  char bound[64];
  if (low && high) {
    std::snprintf(bound, sizeof bound, " in %s%g, %g]", option.minExclusive ? "(" : "[", option.min, option.max);
    text += bound;
  } else if (low) {
    std::snprintf(bound, sizeof bound, " %s %g", option.minExclusive ? "above" : "of at least", option.min);
    text += bound;
  } else if (high) {
    std::snprintf(bound, sizeof bound, " of at most %g", option.max);
    text += bound;
  }
  return text;
}

}  // namespace

const std::string* PassOptions::find(const OptionSpec& option) const {
  const auto it = values_.find(std::string(option.name));
  if (it != values_.end()) return &it->second;
  return nullptr;
}

bool PassOptions::has(const OptionSpec& option) const { return find(option) != nullptr; }

bool PassOptions::flag(const OptionSpec& option) const {
  requireType(option, {OptionType::Flag});
  const std::string* given = find(option);
  const std::string value = given ? *given : std::string(option.fallback);
  if (value == "true" || value == "1" || value == "on") return true;
  if (value == "false" || value == "0" || value == "off") return false;
  badValue(option, value, "true or false");
}

double PassOptions::number(const OptionSpec& option) const {
  requireType(option, {OptionType::Number});
  const std::string* given = find(option);
  const std::string value = given ? *given : std::string(option.fallback);
  const std::optional<double> number = parseNumber(value);
  const bool inRange = number && (option.minExclusive ? *number > option.min : *number >= option.min) &&
                       *number <= option.max && (!option.whole || *number == std::floor(*number));
  if (!inRange) badValue(option, value, rangeText(option));
  return *number;
}

uint64_t PassOptions::bytes(const OptionSpec& option) const {
  requireType(option, {OptionType::Bytes});
  const std::string* given = find(option);
  const std::string value = given ? *given : std::string(option.fallback);
  const std::optional<uint64_t> bytes = parseByteSize(value);
  if (!bytes) badValue(option, value, "a byte size (e.g. 40GiB, 512MB)");
  return *bytes;
}

std::string PassOptions::text(const OptionSpec& option) const {
  requireType(option, {OptionType::Choice, OptionType::Path});
  const std::string* given = find(option);
  const std::string value = given ? *given : std::string(option.fallback);
  if (option.type == OptionType::Path && value.empty()) badValue(option, value, "a file name");
  if (option.type == OptionType::Choice &&
      std::find(option.choices.begin(), option.choices.end(), value) == option.choices.end()) {
    std::string known;
    for (std::string_view choice : option.choices) known += (known.empty() ? "" : ", ") + std::string(choice);
    badValue(option, value, "one of " + known);
  }
  return value;
}

void PassOptions::check(std::string_view pass, std::span<const OptionSpec> specs) const {
  for (const auto& [key, value] : values_) {
    const auto spec = std::find_if(specs.begin(), specs.end(), [&](const OptionSpec& s) { return s.name == key; });
    if (spec == specs.end()) {
      std::string known;
      for (const OptionSpec& s : specs) known += (known.empty() ? "" : ", ") + std::string(s.name);
      throw Error(ErrorCode::Usage, std::string(pass) + ": unknown option '" + key + "' (known: " +
                                        (known.empty() ? "none" : known) + ")");
    }
    try {
      switch (spec->type) {
        case OptionType::Flag: (void)flag(*spec); break;
        case OptionType::Number: (void)number(*spec); break;
        case OptionType::Bytes: (void)bytes(*spec); break;
        case OptionType::Choice:
        case OptionType::Path: (void)text(*spec); break;
      }
    } catch (const Error& e) {
      throw Error(e.code(), std::string(pass) + ": " + e.what());
    }
  }
}

}  // namespace lathe::passes
