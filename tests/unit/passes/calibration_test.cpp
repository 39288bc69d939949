// passes::calibrate: a profile's measured node times price the plan; the model's own estimate stays
// readable beside them; a profile of another graph is refused.
#include "passes/calibration.h"

#include <gtest/gtest.h>

#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "plan/plan_bundle.h"
#include "util/diagnostics.h"

namespace lathe::passes {
namespace {

PlanTarget tinyLlama() {
  const io::Artifact artifact =
      io::loadArtifact(std::string(LATHE_SAMPLES_DIR) + "/captures/llama3_8b_2l_tiny_train.log.gz");
  return PlanTarget(artifact, "0/0:aot_joint_graph", hw::resolveHwProfile("h200"));
}

// Every call node measured at 1 ms, as a profile of this graph would say.
plan::MeasuredProfile oneMillisecondEach(const PlanTarget& target) {
  const ir::Graph& graph = target.graph();
  plan::MeasuredProfile profile;
  profile.device = "NVIDIA H200";
  plan::MeasuredNodes nodes{"lathe_runtime cuda", 1 << 20, {}};
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).isCall()) nodes.nodes.push_back({std::string(graph.name(id)), 1e-3, 0});
  }
  profile.graphs.push_back({target.graphId(), plan::graphFingerprint(graph), "", 0, 0, std::move(nodes)});
  return profile;
}

TEST(Calibration, MeasuredNodesCostWhatWasMeasured) {
  const PlanTarget target = tinyLlama();
  const Calibration c = calibrate(target, oneMillisecondEach(target), "p.json");
  const ir::Graph& graph = target.graph();
  size_t calls = 0;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (!graph.node(id).isCall()) continue;
    ++calls;
    EXPECT_DOUBLE_EQ(c.target.nodeSeconds()[id], 1e-3) << graph.name(id);
    EXPECT_DOUBLE_EQ(c.target.estimatedNodeSeconds()[id], target.nodeSeconds()[id]) << graph.name(id);
  }
  EXPECT_EQ(c.measuredNodes, calls);
  EXPECT_EQ(c.source, "lathe_runtime cuda on NVIDIA H200");
  EXPECT_EQ(c.target.calibration(), c.source);
  EXPECT_TRUE(target.calibration().empty());
  size_t byCategory = 0;
  double measured = 0;
  for (const CategoryTimes& t : c.byCategory) {
    byCategory += t.nodes;
    measured += t.measured;
  }
  EXPECT_EQ(byCategory, calls);
  EXPECT_NEAR(measured, 1e-3 * static_cast<double>(calls), 1e-9);

  // The plan's step is priced with them: the torch policy's GPU time is about one millisecond per
  // executed call (views and getitems included), far above the model's 0.1 ms for the whole step
  // (whose step time is the host's launches on a graph this small).
  const PipelineRun modelRun = runPipeline(target.context(), parsePipeline("split,fusion,recompute(policy=torch)"));
  const PipelineRun measuredRun = runPipeline(c.target.context(), parsePipeline("split,fusion,recompute(policy=torch)"));
  const plan::PlanBundle model = buildPlanBundle(target.context(), modelRun, "tiny", target.graphId());
  const plan::PlanBundle calibrated = buildPlanBundle(c.target.context(), measuredRun, "tiny", target.graphId());
  const auto computeSeconds = [](const plan::PlanBundle& bundle) {
    for (const auto& [name, value] : bundle.estimates) {
      if (name == "compute_seconds") return value;
    }
    ADD_FAILURE() << "no compute_seconds estimate";
    return 0.0;
  };
  EXPECT_GT(computeSeconds(calibrated), 0.5 * 1e-3 * static_cast<double>(calls));
  EXPECT_LT(computeSeconds(model), 1e-3);
  EXPECT_GT(calibrated.estimates[0].second, model.estimates[0].second);
}

TEST(Calibration, AProfileOfAnotherGraphIsRefused) {
  const PlanTarget target = tinyLlama();
  plan::MeasuredProfile profile = oneMillisecondEach(target);
  profile.graphs[0].fingerprint = "0000000000000000";
  try {
    (void)calibrate(target, profile, "p.json");
    FAIL() << "a profile of another graph calibrated this one";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    EXPECT_NE(std::string(e.what()).find("p.json: no measured nodes of graph 0/0:aot_joint_graph"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lathe::passes
