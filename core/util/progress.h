// Progress reporting and cooperative cancellation for long work (loaders, passes).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace lathe {

// Passed by const reference into long-running work. Both members are optional.
struct Progress {
  // Called with bytes (or items) done and the total (0 = unknown). Called from the working thread.
  std::function<void(uint64_t done, uint64_t total)> report;
  // Set from any thread to ask the work to stop; the work then throws Error(ErrorCode::Cancelled).
  const std::atomic<bool>* cancel = nullptr;

  void update(uint64_t done, uint64_t total) const {
    if (report) report(done, total);
  }
  [[nodiscard]] bool cancelled() const { return cancel && cancel->load(std::memory_order_relaxed); }
  // Throws Error(Cancelled) when cancellation was requested.
  void checkCancelled() const;
};

}  // namespace lathe
