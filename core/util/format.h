// Sizes as people read them, one way everywhere: the CLI's tables, the passes' diffs, the studio.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lathe {

// Binary units with three significant digits: 512 -> "512 B", 1536 -> "1.50 KiB",
// 1153433 -> "1.10 MiB", 10374889472 -> "9.66 GiB", 147968 -> "144 KiB". More digits where
// neighbouring values must read apart (a frontier's points): formatBytes(10374889472, 4) -> "9.662 GiB".
[[nodiscard]] std::string formatBytes(uint64_t bytes, int significantDigits = 3);

// Times in tables and labels, scaled to their size: 2.5 -> "2.50 s", 0.0123 -> "12.30 ms",
// 4.2e-5 -> "42.00 µs", 3e-8 -> "30.0 ns", 0 -> "0".
[[nodiscard]] std::string formatSeconds(double seconds);

// Estimated times in the passes' diffs: 0.0123 -> "12.300 ms".
[[nodiscard]] std::string formatMilliseconds(double seconds);

// A named quantity by its name's unit, as plans name their estimates and statistics:
// ("peak_bytes", 1.5e9) -> "1.40 GiB", ("step_seconds", 0.0123) -> "12.30 ms", ("saved", 3) -> "3".
[[nodiscard]] std::string formatEstimate(std::string_view name, double value);

// B − A of two plans' figures as `lathe diff` and the studio's Compare tab print it: bytes signed
// (formatBytesChange(1024, 512) -> "-512 B"), any other named estimate as a relative change
// (formatEstimateChange("step_seconds", 0.010, 0.011) -> "+10.0%").
[[nodiscard]] std::string formatBytesChange(uint64_t a, uint64_t b);
[[nodiscard]] std::string formatEstimateChange(std::string_view name, double a, double b);

}  // namespace lathe
