// What one compile cost, from the compilation_metrics torch logs for it (TraceCompile::metrics and
// ::backwardMetrics): the compile time by phase, the cache outcomes and the graph breaks, as
// tlparse's compile summary gives them.
//
// The phases nest in the metrics (the whole frame ⊇ the backend ⊇ Inductor ⊇ code generation), so
// each phase here is its own share: Dynamo's tracing is the whole frame less the backend, AOTAutograd
// the backend less Inductor, Inductor's lowering Inductor less code generation. A phase the log does
// not give is absent, and so is any share it would need. Times in seconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io/trace/trace_log.h"

namespace lathe::io {

struct CacheOutcome {
  int64_t hits = 0;
  int64_t misses = 0;
  [[nodiscard]] bool any() const { return hits + misses > 0; }
};

struct CompileMetrics {
  std::optional<double> totalSeconds;       // entire_frame_compile_time_s
  std::optional<double> dynamoSeconds;      // tracing: the whole frame less the backend
  std::optional<double> aotAutogradSeconds; // the backend less Inductor (joint graph, partition)
  std::optional<double> inductorSeconds;    // Inductor less code generation (passes, lowering, scheduling)
  std::optional<double> codegenSeconds;     // code generation, Triton compiles and autotuning included
  std::optional<double> tritonSeconds;      // triton_compile_time_us, within code generation
  std::optional<double> jointGraphPassSeconds, preGradPassSeconds, postGradPassSeconds;
  std::optional<double> dynamoBeforeRestartSeconds;  // tracing thrown away by a graph-break restart
  // A backward compiled at its first call (bwd_compilation_metrics): Inductor and code generation.
  std::optional<double> backwardInductorSeconds, backwardCodegenSeconds;

  CacheOutcome fxGraphLocal, fxGraphRemote, aotAutogradLocal, aotAutogradRemote;
  // Local and remote lookups together.
  [[nodiscard]] CacheOutcome fxGraph() const {
    return {fxGraphLocal.hits + fxGraphRemote.hits, fxGraphLocal.misses + fxGraphRemote.misses};
  }
  [[nodiscard]] CacheOutcome aotAutograd() const {
    return {aotAutogradLocal.hits + aotAutogradRemote.hits, aotAutogradLocal.misses + aotAutogradRemote.misses};
  }
  std::optional<int64_t> graphBreaks;
  // Triton kernels by compile time, longest first (triton_kernel_compile_times_us, a list or its JSON text).
  std::vector<std::pair<std::string, double>> tritonKernels;

  // The backward compiled at its first call: its Inductor and code generation together.
  [[nodiscard]] std::optional<double> backwardSeconds() const {
    if (!backwardInductorSeconds) return std::nullopt;
    return *backwardInductorSeconds + backwardCodegenSeconds.value_or(0);
  }
  [[nodiscard]] bool empty() const { return !totalSeconds && !inductorSeconds && !backwardInductorSeconds; }
};

// Reads the compile's metrics; fields of an unexpected type count as absent.
[[nodiscard]] CompileMetrics compileMetrics(const TraceCompile& compile);

}  // namespace lathe::io
