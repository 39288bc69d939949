// Peak resident size of the test process, for tests that bound what a reader holds. AddressSanitizer's
// quarantine and shadow memory make resident size say nothing about the code under test, so such
// tests check the bound only where kResidentSizeMeaningful.
#pragma once

#include <sys/resource.h>

namespace lathe::testing {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kResidentSizeMeaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kResidentSizeMeaningful = false;
#else
inline constexpr bool kResidentSizeMeaningful = true;
#endif
#else
inline constexpr bool kResidentSizeMeaningful = true;
#endif

// ru_maxrss of this process, in KiB.
inline long peakResidentKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace lathe::testing
