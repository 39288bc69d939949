#include "util/format.h"

#include <algorithm>
#include <array>
#include <cstdio>

namespace lathe {

std::string formatBytes(uint64_t bytes, int significantDigits) {
  static constexpr std::array<const char*, 6> kUnits{"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  std::array<char, 48> text{};
  if (unit == 0) {
    std::snprintf(text.data(), text.size(), "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    // Rounding can carry to the next power of ten (999.6 KiB prints as "1000 KiB"): fine for reading.
    const int integerDigits = value < 10 ? 1 : (value < 100 ? 2 : (value < 1000 ? 3 : 4));
    const int decimals = std::max(0, significantDigits - integerDigits);
    std::snprintf(text.data(), text.size(), "%.*f %s", decimals, value, kUnits[unit]);
  }
  return text.data();
}

std::string formatSeconds(double seconds) {
  std::array<char, 48> text{};
  if (seconds >= 1.0) {
    std::snprintf(text.data(), text.size(), "%.2f s", seconds);
  } else if (seconds >= 1e-3) {
    std::snprintf(text.data(), text.size(), "%.2f ms", seconds * 1e3);
  } else if (seconds >= 1e-6) {
    std::snprintf(text.data(), text.size(), "%.2f \u00b5s", seconds * 1e6);
  } else if (seconds > 0) {
    std::snprintf(text.data(), text.size(), "%.1f ns", seconds * 1e9);
  } else {
    return "0";
  }
  return text.data();
}

std::string formatMilliseconds(double seconds) {
  std::array<char, 48> text{};
  std::snprintf(text.data(), text.size(), "%.3f ms", seconds * 1e3);
  return text.data();
}

std::string formatEstimate(std::string_view name, double value) {
  if (name.ends_with("_bytes")) return formatBytes(static_cast<uint64_t>(std::max(0.0, value)));
  if (name.ends_with("_seconds")) return formatSeconds(value);
  std::array<char, 48> text{};
  std::snprintf(text.data(), text.size(), "%g", value);
  return text.data();
}

std::string formatBytesChange(uint64_t a, uint64_t b) {
  return b >= a ? "+" + formatBytes(b - a) : "-" + formatBytes(a - b);
}

std::string formatEstimateChange(std::string_view name, double a, double b) {
  if (name.ends_with("_bytes")) {
    return formatBytesChange(static_cast<uint64_t>(std::max(0.0, a)), static_cast<uint64_t>(std::max(0.0, b)));
  }
  std::array<char, 48> text{};
  std::snprintf(text.data(), text.size(), "%+.1f%%", a != 0 ? (b / a - 1) * 100 : 0.0);
  return text.data();
}

}  // namespace lathe
