#include "util/format.h"

#include <gtest/gtest.h>

namespace lathe {
namespace {

TEST(FormatBytes, BinaryUnitsWithThreeSignificantDigitsUnlessAskedForMore) {
  EXPECT_EQ(formatBytes(0), "0 B");
  EXPECT_EQ(formatBytes(1023), "1023 B");
  EXPECT_EQ(formatBytes(1024), "1.00 KiB");
  EXPECT_EQ(formatBytes(1536), "1.50 KiB");
  EXPECT_EQ(formatBytes(147968), "144 KiB");
  EXPECT_EQ(formatBytes(1153433), "1.10 MiB");
  EXPECT_EQ(formatBytes(uint64_t{1737} << 20), "1.70 GiB");
  EXPECT_EQ(formatBytes(10374889472), "9.66 GiB");
  EXPECT_EQ(formatBytes(uint64_t{45} << 30), "45.0 GiB");
  EXPECT_EQ(formatBytes(UINT64_MAX), "16384 PiB");  // the largest unit keeps counting
  // More significant digits where neighbours must read apart; bytes stay whole.
  EXPECT_EQ(formatBytes(10374889472, 4), "9.662 GiB");
  EXPECT_EQ(formatBytes(uint64_t{45} << 30, 4), "45.00 GiB");
  EXPECT_EQ(formatBytes(147968, 4), "144.5 KiB");
  EXPECT_EQ(formatBytes(1023, 4), "1023 B");
}

TEST(FormatEstimate, ReadsTheUnitFromTheName) {
  EXPECT_EQ(formatEstimate("peak_bytes", 1536), "1.50 KiB");
  EXPECT_EQ(formatEstimate("step_seconds", 0.0123), "12.30 ms");
  EXPECT_EQ(formatEstimate("saved_values", 3), "3");
  EXPECT_EQ(formatEstimate("ratio", 0.125), "0.125");
  EXPECT_EQ(formatEstimate("peak_bytes", -1), "0 B");  // a negative size is not a huge one
}

TEST(FormatEstimateChange, BytesSignedOthersRelative) {
  EXPECT_EQ(formatBytesChange(1024, 1536), "+512 B");
  EXPECT_EQ(formatBytesChange(1536, 1024), "-512 B");
  EXPECT_EQ(formatBytesChange(7, 7), "+0 B");
  EXPECT_EQ(formatEstimateChange("peak_bytes", 2048, 1024), "-1.00 KiB");
  EXPECT_EQ(formatEstimateChange("step_seconds", 0.010, 0.011), "+10.0%");
  EXPECT_EQ(formatEstimateChange("executions", 100, 90), "-10.0%");
  EXPECT_EQ(formatEstimateChange("executions", 0, 5), "+0.0%");  // no base to be relative to
}

}  // namespace
}  // namespace lathe
