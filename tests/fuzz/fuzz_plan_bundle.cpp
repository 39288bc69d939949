// Fuzzes the readers of user-supplied planning JSON: plan bundles (core/plan/plan_bundle.h),
// measured profiles (core/plan/profile.h) and hardware profiles (core/hw/hw_profile.h). Bad input must come back as Error(BadInput), never as
// a crash; a plan or profile that reads must write back to text that reads again to the same text.
// Mutations are JSON structure-aware (json_mutator.h: depth, integer limits, lengths, names), so
// that they reach the bundle's validation rather than stopping at the JSON parser. Seeds: bundles
// `lathe plan` made from the tiny captures, the runtime's run folder (tests/data/run_folder), and the
// crafted inputs of the attack run.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hw/hw_profile.h"
#include "json_mutator.h"
#include "plan/plan_bundle.h"
#include "plan/profile.h"
#include "util/diagnostics.h"

LATHE_FUZZ_JSON_CUSTOM_MUTATOR()

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    const lathe::plan::PlanBundle plan = lathe::plan::planFromJson(input, "fuzz");
    const std::string text = lathe::plan::planToJson(plan);
    if (lathe::plan::planToJson(lathe::plan::planFromJson(text, "fuzz")) != text) __builtin_trap();
  } catch (const lathe::Error& e) {
    if (e.code() != lathe::ErrorCode::BadInput) __builtin_trap();
  }
  try {
    const lathe::plan::MeasuredProfile profile = lathe::plan::profileFromJson(input, "fuzz");
    const std::string text = lathe::plan::profileToJson(profile);
    if (lathe::plan::profileToJson(lathe::plan::profileFromJson(text, "fuzz")) != text) __builtin_trap();
  } catch (const lathe::Error& e) {
    if (e.code() != lathe::ErrorCode::BadInput) __builtin_trap();
  }
  try {
    (void)lathe::hw::parseHwProfile(input, "fuzz");
  } catch (const lathe::Error& e) {
    if (e.code() != lathe::ErrorCode::BadInput) __builtin_trap();
  }
  return 0;
}
