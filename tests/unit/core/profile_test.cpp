#include "plan/profile.h"

#include <gtest/gtest.h>

#include <string>

#include "io/fx/fx_text.h"
#include "util/diagnostics.h"

namespace lathe::plan {
namespace {

MeasuredProfile sample() {
  MeasuredProfile p;
  p.device = "NVIDIA H200";
  p.deviceMemoryBytes = uint64_t{150} << 30;
  p.torchVersion = "2.11.0+cu130";
  p.graphs.push_back({"0/0:aot_joint_graph", "0123456789abcdef", "plans/0_0_aot_joint_graph.plan.json", 4'800'000'000, 0.098});
  p.steps.push_back({0.0763, 4'070'000'000, 1'880'000'000});
  p.steps.push_back({0.0761, 4'070'000'016, 1'880'000'000});
  p.steps.push_back({0.0790, std::nullopt, std::nullopt});
  // Under torch.profiler: slower, and the only step with kernels.
  p.steps.push_back({0.0950, 4'070'000'000, 1'880'000'000,
                     {{"sm90_xmma_gemm_bf16bf16_bf16f32", 224, 0.0412}, {"triton_poi_fused_mul_silu_0", 8, 0.0031}}});
  return p;
}

// A training step of two streamed units: forwards, backwards in reverse, a copy from the previous step.
WeightOffloadRun offloadRun() {
  WeightOffloadRun run;
  run.kind = "training";
  run.policy = "optimal";
  run.units = {"layers.0", "layers.1"};
  run.unitBytes = {436'207'616, 436'207'616};
  run.resident = {"layers.1"};
  run.h2dBandwidth = 55.2e9;
  run.simulated = {0.0205, {{0, 0, 0.004}, {1, 0.004, 0.008}, {1, 0.008, 0.014}, {0, 0.014, 0.0205}}, {{0, -0.008, 0.0}, {0, 0.006, 0.014}}, {}};
  run.measured = {0.0211, {{0, 0, 0.0041}, {1, 0.0041, 0.0082}, {1, 0.0082, 0.0143}, {0, 0.0145, 0.0211}},
                  {{0, 0.0, 0.0079}, {0, 0.0062, 0.0145}}, {{0, 0.0150, 0.0211}}};
  return run;
}

std::string errorOf(const std::string& json) {
  try {
    (void)profileFromJson(json, "p.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    return e.what();
  }
  return "";
}

TEST(Profile, RoundTripsEveryField) {
  MeasuredProfile p = sample();
  EXPECT_EQ(profileFromJson(profileToJson(p), "p.json"), p);
  p.weightOffload = offloadRun();
  EXPECT_EQ(profileFromJson(profileToJson(p), "p.json"), p);
}

TEST(Profile, BadWeightOffloadValuesNameTheirPath) {
  MeasuredProfile p = sample();
  p.weightOffload = offloadRun();
  p.weightOffload->measured.h2d[1].unit = 2;
  EXPECT_NE(errorOf(profileToJson(p)).find("$.weight_offload.measured.h2d[1].unit: not a unit's index"), std::string::npos);
  p.weightOffload = offloadRun();
  p.weightOffload->simulated.segments[2].end = 0.001;
  EXPECT_NE(errorOf(profileToJson(p)).find("$.weight_offload.simulated.segments[2].end: a span ends where or after"),
            std::string::npos);
  p.weightOffload = offloadRun();
  p.weightOffload->resident = {"layers.7"};
  EXPECT_NE(errorOf(profileToJson(p)).find("$.weight_offload.resident[0]: not a unit"), std::string::npos);
  p.weightOffload = offloadRun();
  p.weightOffload->unitBytes.pop_back();
  EXPECT_NE(errorOf(profileToJson(p)).find("$.weight_offload.unit_bytes: one size per unit"), std::string::npos);
  p.weightOffload = offloadRun();
  p.weightOffload->kind = "serving";
  EXPECT_NE(errorOf(profileToJson(p)).find("$.weight_offload.kind: inference or training"), std::string::npos);
}

TEST(Profile, MedianAndPeakOfTheSteps) {
  MeasuredProfile p = sample();
  EXPECT_DOUBLE_EQ(p.medianStepSeconds(), 0.0763);  // the profiled step left out
  ASSERT_NE(p.kernelStep(), nullptr);
  EXPECT_EQ(p.kernelStep()->kernels.size(), 2u);
  EXPECT_EQ(p.maxPeakBytes(), 4'070'000'016u);
  p.steps.erase(p.steps.begin(), p.steps.begin() + 3);
  EXPECT_DOUBLE_EQ(p.medianStepSeconds(), 0.0950);  // all profiled: their median
  EXPECT_EQ(MeasuredProfile{}.kernelStep(), nullptr);
  EXPECT_EQ(MeasuredProfile{}.maxPeakBytes(), std::nullopt);
  EXPECT_EQ(MeasuredProfile{}.medianStepSeconds(), 0.0);
}

TEST(Profile, BadValuesNameTheirPath) {
  std::string good = profileToJson(sample());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_NE(errorOf(replaced("lathe.profile/1", "lathe.profile/2")).find("(another version)"), std::string::npos);
  EXPECT_NE(errorOf(replaced("\"seconds\": 0.0763", "\"seconds\": -1")).find("$.steps[0].seconds: a time is not negative"),
            std::string::npos);
  EXPECT_NE(errorOf(replaced("\"peak_bytes\": 4070000000", "\"peak_bytes\": 1.5")).find("$.steps[0].peak_bytes: expected an integer"),
            std::string::npos);
  EXPECT_NE(errorOf(replaced("\"graph\": \"0/0:aot_joint_graph\"", "\"graph\": \"\"")).find("$.graphs[0].graph: empty name"),
            std::string::npos);
  EXPECT_NE(errorOf(replaced("\"calls\": 224", "\"calls\": -3")).find("$.steps[3].kernels[0].calls: -3 is out of range"),
            std::string::npos);
  EXPECT_NE(errorOf(replaced("\"seconds\": 0.0412", "\"seconds\": -0.1")).find("$.steps[3].kernels[0].seconds: a time is not negative"),
            std::string::npos);
  EXPECT_NE(errorOf("[1, 2]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(errorOf("{\"format\": \"lathe.profile/1\"").find("not a JSON object"), std::string::npos);
  EXPECT_NE(errorOf(std::string(40, '[')).find("deeper than 16"), std::string::npos);
}

// `lathe measure -o`: a graph's nodes as lathe_runtime timed them.
MeasuredNodes measuredNodes() {
  return {"lathe_runtime cuda", 1'234'567, {{"mm", 0.0021, 8192}, {"relu", 0.000004, 0}, {"mm", 0.0001, 0}}};
}

TEST(Profile, MeasuredNodesRoundTripAndAreFoundByFingerprint) {
  MeasuredProfile p = sample();
  p.graphs.push_back({"0/0:aot_forward_graph", "fedcba9876543210", "", 0, 0, measuredNodes()});
  EXPECT_EQ(profileFromJson(profileToJson(p), "p.json"), p);
  EXPECT_EQ(p.measuredGraph("fedcba9876543210"), &p.graphs[1]);
  EXPECT_EQ(p.measuredGraph("0123456789abcdef"), nullptr);  // that entry measured no nodes
  std::string json = profileToJson(p);
  json.replace(json.find("\"seconds\": 0.0021"), 17, "\"seconds\": -1");
  EXPECT_NE(errorOf(json).find("$.graphs[1].measured.nodes[0].seconds: a time is not negative"), std::string::npos)
      << errorOf(json);
}

TEST(Profile, MeasuredSecondsMapToNodeIdsAndARepeatedNameAddsUp) {
  Diagnostics diagnostics;
  const auto graph = io::parseFxText(R"(
class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[4, 4]"):
        mm: "f32[4, 4]" = torch.ops.aten.mm.default(x, x)
        relu: "f32[4, 4]" = torch.ops.aten.relu.default(mm)
        return (relu,)
)", {}, diagnostics);
  ASSERT_TRUE(graph);
  const std::vector<std::optional<double>> seconds = measuredSecondsByNode(measuredNodes(), *graph);
  ASSERT_EQ(seconds.size(), graph->size());
  EXPECT_FALSE(seconds[graph->find("x")].has_value());
  EXPECT_DOUBLE_EQ(*seconds[graph->find("mm")], 0.0022);  // a recomputed node measured twice
  EXPECT_DOUBLE_EQ(*seconds[graph->find("relu")], 0.000004);
  MeasuredNodes other = measuredNodes();
  other.nodes.push_back({"softmax", 0.001, 0});
  try {
    (void)measuredSecondsByNode(other, *graph);
    FAIL() << "a node the graph lacks was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("softmax"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("another graph"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lathe::plan
