// Fuzzes the torch.profiler Chrome trace reader (core/io/trace/chrome_trace.h) and what reads
// beside it (core/io/trace/output_code.h). Bad input must come back as Error(BadInput), never as a
// crash; a trace that reads must hold finite, ordered times. Text goes through parseChromeTrace;
// gzip bytes (magic 1f 8b) through a temporary file and readChromeTrace, so that truncated and
// oversized members are tried too. The kernels read are then matched against a launch sequence
// made of their own names, and the input is also read as Inductor output code. Mutations are JSON
// structure-aware (json_mutator.h).
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "io/trace/chrome_trace.h"
#include "io/trace/output_code.h"
#include "json_mutator.h"
#include "util/diagnostics.h"

LATHE_FUZZ_JSON_CUSTOM_MUTATOR()

namespace {

lathe::io::ChromeTrace read(std::string_view input) {
  if (input.size() < 2 || static_cast<unsigned char>(input[0]) != 0x1f || static_cast<unsigned char>(input[1]) != 0x8b)
    return lathe::io::parseChromeTrace(input, "fuzz.json");
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("fuzz_chrome_trace_" + std::to_string(getpid()) + ".json.gz");
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(input.data(), static_cast<std::streamsize>(input.size()));
  return lathe::io::readChromeTrace(path);
}

bool isTime(double seconds) { return std::isfinite(seconds) && seconds >= 0; }

void check(const lathe::io::ChromeTrace& trace) {
  if (!isTime(trace.spanSeconds)) __builtin_trap();
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const auto& kernel = trace.kernels[i];
    if (!isTime(kernel.start) || !isTime(kernel.seconds)) __builtin_trap();
    if (i > 0 && trace.kernels[i - 1].start > kernel.start) __builtin_trap();
  }
  for (const auto& op : trace.cpuOps)
    if (!isTime(op.start) || !isTime(op.selfSeconds) || op.selfSeconds > op.seconds) __builtin_trap();
  uint64_t calls = 0;
  for (const auto& total : trace.totals()) calls += total.calls;
  if (calls != trace.kernels.size()) __builtin_trap();
  calls = 0;
  for (const auto& total : trace.cpuTotals()) calls += total.calls;
  if (calls != trace.cpuOps.size()) __builtin_trap();

  // Every kernel read as a launch: names starting with "triton_" as Triton launches, the others
  // as extern calls, so that anchors, gaps and passes all occur.
  std::vector<lathe::io::OutputCodeKernel> launches;
  for (const auto& kernel : trace.kernels) {
    lathe::io::OutputCodeKernel launch;
    launch.name = kernel.name;
    launch.kind = kernel.name.starts_with("triton_") ? lathe::io::OutputCodeKernel::Kind::Triton
                                                     : lathe::io::OutputCodeKernel::Kind::Extern;
    launches.push_back(std::move(launch));
  }
  for (const bool oneCall : {false, true}) {
    const lathe::io::KernelMatch match = lathe::io::matchKernels(launches, trace.kernels, oneCall);
    if (match.launches.size() != launches.size() || match.unmatchedEvents > trace.kernels.size() ||
        match.unmatchedLaunches > launches.size())
      __builtin_trap();
    for (const auto& matched : match.launches)
      if (!std::isfinite(matched.seconds) || matched.seconds < 0) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  try {
    check(read(input));
  } catch (const lathe::Error& e) {
    if (e.code() != lathe::ErrorCode::BadInput) __builtin_trap();
  }
  const std::vector<lathe::io::OutputCodeKernel> launches = lathe::io::parseOutputCode(input);
  for (size_t i = 1; i < launches.size(); ++i)
    if (launches[i - 1].line >= launches[i].line) __builtin_trap();
  return 0;
}
