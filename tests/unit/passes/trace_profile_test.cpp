// passes::profileFromTrace on compiled steps captured and profiled in one H100 run
// (tests/data/h100_compiled_step): every launch of the graph's output code timed, the device time
// per step conserved (on nodes, on no node, outside the graph) and almost all of it on nodes, forward
// kernels reaching the joint graph's forward nodes through the Dynamo graph's names, and a trace of
// another run refused.
// Per-step device totals were summed from the traces' kernel events with Python's json module.
#include "passes/trace_profile.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "util/diagnostics.h"

namespace lathe::passes {
namespace {

const std::filesystem::path kData = std::filesystem::path(LATHE_SOURCE_DIR) / "tests/data/h100_compiled_step";

struct ProfiledRun {
  io::Artifact artifact;
  io::ChromeTrace trace;
};

ProfiledRun load(const std::string& name) {
  return {io::loadArtifact(kData / (name + ".log.gz")), io::readChromeTrace(kData / (name + ".trace.json.gz"))};
}

double nodeSum(const TraceProfile& p) {
  double sum = 0;
  for (const plan::MeasuredNode& node : p.measured.nodes) sum += node.seconds;
  return sum;
}

TEST(TraceProfile, PutsEveryKernelOfTheCompiledStepOnTheJointGraph) {
  struct Case {
    const char* name;
    const char* graph;
    double deviceSecondsPerStep;  // every kernel of the trace, halved (two profiled steps)
    size_t otherCalls;
  };
  for (const Case& c : {Case{"mixtral_2l_train", "0/0:aot_joint_graph", 3.574162e-3, 0},
                        Case{"llama3_8b_2l_train", "0/0:aot_joint_graph", 20.431968e-3, 0},
                        Case{"gpt2_train", "1/0_1:aot_joint_graph", 5.1061455e-3, 4}}) {
    SCOPED_TRACE(c.name);
    const ProfiledRun run = load(c.name);
    const PlanTarget target(run.artifact, c.graph, hw::resolveHwProfile("h100_sxm"));
    const TraceProfile p = profileFromTrace(target, *run.artifact.trace, run.trace);
    EXPECT_EQ(p.measured.source, "torch.profiler");
    EXPECT_EQ(p.device, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(p.steps, 2u);
    EXPECT_EQ(p.codes, 2u);          // forward and backward
    EXPECT_EQ(p.calls, 4u);          // each, twice
    EXPECT_EQ(p.otherCalls, c.otherCalls);  // gpt2: the graph before the break and the loss's
    EXPECT_EQ(p.launchesTimed, p.launches);
    EXPECT_TRUE(p.notes.empty());
    // Conservation: the graph's kernels on nodes or on none, and what ran outside its calls.
    EXPECT_NEAR(nodeSum(p) + p.unattributedSeconds, p.graphSeconds, 1e-9);
    EXPECT_NEAR(p.graphSeconds + p.otherSeconds, c.deviceSecondsPerStep, 1e-8);
    EXPECT_LT(p.unattributedSeconds, 0.01 * p.graphSeconds);
    EXPECT_LT(p.otherSeconds, 0.1 * p.graphSeconds);
    // Every call node listed once; the forward's matmuls timed although its code names them by
    // their Dynamo names.
    const ir::Graph& graph = target.graph();
    size_t calls = 0, forwardMatmuls = 0, forwardMatmulsTimed = 0;
    for (ir::NodeId id = 0; id < graph.size(); ++id) calls += graph.node(id).isCall();
    EXPECT_EQ(p.measured.nodes.size(), calls);
    for (const plan::MeasuredNode& node : p.measured.nodes) {
      const ir::NodeId id = graph.find(node.node);
      ASSERT_NE(id, ir::kNoNode) << node.node;
      if (graph.target(id) != "torch.ops.aten.mm.default" || !target.joint().isForward(id)) continue;
      ++forwardMatmuls;
      forwardMatmulsTimed += node.seconds > 0;
    }
    EXPECT_GT(forwardMatmuls, 0u);
    EXPECT_EQ(forwardMatmulsTimed, forwardMatmuls);
  }
}

// A step of lathe.compile's runtime (tests/data/h100_lathe_step): its compiled forward and backward
// are called with no cache key, and the backward's cuDNN attention runs five kernels between the
// matmuls around it, more kernels than the code has launches there.
TEST(TraceProfile, PutsEveryKernelOfALatheRuntimeStepOnTheJointGraph) {
  const std::filesystem::path data = std::filesystem::path(LATHE_SOURCE_DIR) / "tests/data/h100_lathe_step";
  const io::Artifact artifact = io::loadArtifact(data / "lathe_budget_4.7GiB.log.gz");
  const io::ChromeTrace trace = io::readChromeTrace(data / "lathe_budget_4.7GiB.trace.json.gz");
  const PlanTarget target(artifact, "0/0:lathe_joint_graph", hw::resolveHwProfile("h100_sxm"));
  const TraceProfile p = profileFromTrace(target, *artifact.trace, trace);
  EXPECT_EQ(p.steps, 2u);
  EXPECT_EQ(p.codes, 2u);
  EXPECT_EQ(p.calls, 4u);
  EXPECT_EQ(p.otherCalls, 0u);
  EXPECT_EQ(p.launches, 156u);  // 53 forward, 103 backward
  EXPECT_EQ(p.launchesTimed, p.launches);
  EXPECT_TRUE(p.notes.empty());
  EXPECT_NEAR(nodeSum(p) + p.unattributedSeconds, p.graphSeconds, 1e-9);
  // Every kernel of the two steps (392 events: 153.23 ms of device time, summed with Python's
  // json module), on the graph but for the loss's and the gradients' own.
  EXPECT_NEAR(p.graphSeconds + p.otherSeconds, 153.226922e-3 / 2, 1e-7);
  EXPECT_LT(p.otherSeconds, 0.01 * p.graphSeconds);
  EXPECT_LT(p.unattributedSeconds, 0.01 * p.graphSeconds);
}

TEST(TraceProfile, RefusesATraceOfAnotherRun) {
  const ProfiledRun llama = load("llama3_8b_2l_train");
  const io::ChromeTrace mixtral = io::readChromeTrace(kData / "mixtral_2l_train.trace.json.gz");
  const PlanTarget target(llama.artifact, "0/0:aot_joint_graph", hw::resolveHwProfile("h100_sxm"));
  try {
    (void)profileFromTrace(target, *llama.artifact.trace, mixtral);
    FAIL() << "a trace of another model's run was mapped onto llama's graph";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    EXPECT_NE(std::string(e.what()).find("the trace is of another run"), std::string::npos) << e.what();
  }
}

TEST(TraceProfile, RefusesACaptureWithoutOutputCode) {
  // The same capture as Inductor would log it without its output code (another backend, or
  // TORCH_TRACE without Inductor's artifacts): nothing names the trace's kernels.
  const ProfiledRun llama = load("llama3_8b_2l_train");
  io::TraceLog withoutCode = *llama.artifact.trace;
  for (io::TraceCompile& compile : withoutCode.compiles) compile.outputCodeEvents.clear();
  const PlanTarget target(llama.artifact, "0/0:aot_joint_graph", hw::resolveHwProfile("h100_sxm"));
  try {
    (void)profileFromTrace(target, withoutCode, llama.trace);
    FAIL() << "a capture without output code was mapped";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    EXPECT_NE(std::string(e.what()).find("logged no inductor_output_code"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lathe::passes
