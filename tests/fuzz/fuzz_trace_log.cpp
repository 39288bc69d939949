// Fuzzes the TORCH_TRACE loader (core/io/trace/trace_log.h). Text goes through the in-memory entry point;
// gzip bytes (magic 1f 8b) go through a temporary file so that the streamed .gz path, truncated
// members included, is exercised too. Then every accessor is run over what was loaded.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "io/trace/compile_metrics.h"
#include "io/trace/trace_log.h"

namespace {

lathe::io::TraceLog load(std::string_view input) {
  if (input.size() < 2 || static_cast<unsigned char>(input[0]) != 0x1f || static_cast<unsigned char>(input[1]) != 0x8b)
    return lathe::io::loadTraceLogFromString(input, "fuzz.log");
  static const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("fuzz_trace_log_" + std::to_string(getpid()) + ".log.gz");
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(input.data(), static_cast<std::streamsize>(input.size()));
  return lathe::io::loadTraceLog(path);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const lathe::io::TraceLog log = load(std::string_view(reinterpret_cast<const char*>(data), size));
  for (const auto& event : log.events) {
    const nlohmann::json metadata = event.metadata();
    if (metadata.is_object() && metadata.contains("stack")) (void)log.resolveStack(event, metadata["stack"]);
  }
  for (const auto& compile : log.compiles) {
    (void)log.guards(compile);
    (void)log.findCompile(compile.id, compile.rank);
    (void)lathe::io::compileStatusName(compile.status);
    (void)lathe::io::compileMetrics(compile);
  }
  for (const auto& graph : log.graphs) {
    if (log.findGraph(graph.id) != &graph) __builtin_trap();  // ids must be unique
    (void)lathe::ir::countGraph(*graph.graph);
  }
  return 0;
}
