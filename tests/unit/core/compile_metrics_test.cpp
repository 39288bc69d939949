// Compile time by phase, caches and graph breaks from the compilation_metrics of real captures: the
// figures torch logged for gpt2's restarted forward compile (read off the log's text), phases that
// add up to the whole frame on every compile that gives them, and metrics that are missing or of
// the wrong type read as absent.
#include "io/trace/compile_metrics.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "io/trace/trace_log.h"

namespace fs = std::filesystem;
using namespace lathe::io;

namespace {

const fs::path kSamples = LATHE_SAMPLES_DIR;

TEST(CompileMetrics, Gpt2ForwardCompileAsTorchLoggedIt) {
  const TraceLog log = loadTraceLog(kSamples / "captures/gpt2_train.log.gz");
  const TraceCompile* compile = log.findCompile("1/0_1");
  ASSERT_TRUE(compile);
  const CompileMetrics m = compileMetrics(*compile);
  // entire_frame_compile_time_s 18.954045, backend_compile_time_s 15.403895,
  // inductor_compile_time_s 6.87984, code_gen_time_s 3.954635.
  EXPECT_DOUBLE_EQ(*m.totalSeconds, 18.954045);
  EXPECT_NEAR(*m.dynamoSeconds, 18.954045 - 15.403895, 1e-9);
  EXPECT_NEAR(*m.aotAutogradSeconds, 15.403895 - 6.87984, 1e-9);
  EXPECT_NEAR(*m.inductorSeconds, 6.87984 - 3.954635, 1e-9);
  EXPECT_DOUBLE_EQ(*m.codegenSeconds, 3.954635);
  EXPECT_NEAR(*m.tritonSeconds, 0.082715, 1e-9);               // triton_compile_time_us 82715
  EXPECT_NEAR(*m.jointGraphPassSeconds, 1.977926, 1e-9);       // joint_graph_pass_time_us
  EXPECT_NEAR(*m.dynamoBeforeRestartSeconds, 1.66780424118042, 1e-9);
  EXPECT_EQ(m.fxGraphLocal.hits, 0);
  EXPECT_EQ(m.fxGraphLocal.misses, 1);
  EXPECT_EQ(m.aotAutogradLocal.misses, 1);
  EXPECT_FALSE(m.fxGraphRemote.any());
  EXPECT_EQ(m.graphBreaks, 1);
  ASSERT_EQ(m.tritonKernels.size(), 8u);  // entries of triton_kernel_compile_times_us (JSON text in the log)
  for (size_t i = 1; i < m.tritonKernels.size(); ++i) EXPECT_GE(m.tritonKernels[i - 1].second, m.tritonKernels[i].second);
  // The backward was compiled at its first call: bwd_compilation_metrics under this compile.
  ASSERT_TRUE(m.backwardInductorSeconds && m.backwardCodegenSeconds);
  EXPECT_GT(*m.backwardCodegenSeconds, 0.0);
}

TEST(CompileMetrics, PhasesAddUpToTheWholeFrameOnEveryCapture) {
  size_t checked = 0;
  for (const auto& entry : fs::directory_iterator(kSamples / "captures")) {
    if (!entry.is_regular_file()) continue;
    const TraceLog log = loadTraceLog(entry.path());
    for (const TraceCompile& compile : log.compiles) {
      const CompileMetrics m = compileMetrics(compile);
      if (!(m.totalSeconds && m.dynamoSeconds && m.aotAutogradSeconds && m.inductorSeconds && m.codegenSeconds)) continue;
      EXPECT_NEAR(*m.dynamoSeconds + *m.aotAutogradSeconds + *m.inductorSeconds + *m.codegenSeconds, *m.totalSeconds, 1e-6)
          << entry.path().filename() << " " << compile.id;
      ++checked;
    }
  }
  EXPECT_GE(checked, 10u);
}

TEST(CompileMetrics, MissingOrMistypedFieldsAreAbsent) {
  TraceCompile compile;
  EXPECT_TRUE(compileMetrics(compile).empty());
  compile.metrics = R"({"entire_frame_compile_time_s": "slow", "inductor_compile_time_s": 2.0,
                        "inductor_fx_local_cache_hit_count": 3, "num_graph_breaks": null,
                        "triton_kernel_compile_times_us": [["k", 5], [1, 2], "x"]})";
  compile.backwardMetrics = "not json";
  const CompileMetrics m = compileMetrics(compile);
  EXPECT_FALSE(m.totalSeconds);
  EXPECT_FALSE(m.dynamoSeconds);
  EXPECT_FALSE(m.aotAutogradSeconds);
  EXPECT_DOUBLE_EQ(*m.inductorSeconds, 2.0);  // no code generation logged: all of it
  EXPECT_FALSE(m.codegenSeconds);
  EXPECT_EQ(m.fxGraphLocal.hits, 3);
  EXPECT_FALSE(m.graphBreaks);
  ASSERT_EQ(m.tritonKernels.size(), 1u);
  EXPECT_DOUBLE_EQ(m.tritonKernels[0].second, 5e-6);
  EXPECT_FALSE(m.backwardInductorSeconds);
}

}  // namespace
