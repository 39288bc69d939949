// The plan bundle of a real capture (llama3 8B, 2 tiny layers, training; split, fusion and torch's
// recompute): JSON round trips byte for byte, files are written atomically, every kind of damage is
// a BadInput error and never a crash, and planning is deterministic.
#include "plan/plan_bundle.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "hw/hw_profile.h"
#include "io/fx/fx_text.h"
#include "ir/op_info.h"
#include "passes/pipeline.h"
#include "passes/plan_builder.h"
#include "plan/plan_bind.h"
#include "sample_graphs.h"
#include "util/diagnostics.h"
#include "passes/plan_target.h"

namespace lathe::plan {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

constexpr const char* kSample = "captures/llama3_8b_2l_tiny_train.log.gz";
constexpr const char* kGraph = "0/0:aot_joint_graph";
// Activation offload of every saved value that can leave (the tiny capture's are all small), so
// that the bundle carries every section the reader checks.
constexpr const char* kPipeline = "split,fusion,recompute(offload=true,offload_min=0,policy=torch)";  // keys in the order plans print them

PlanBundle planOf(const testing::SampleGraph& sample, const hw::HwProfile& hw) {
  const passes::PlanTarget target{sample.graph, "test", sample.inputs, hw};
  const passes::PassContext context = target.context();
  const passes::PipelineRun run = passes::runPipeline(context, passes::parsePipeline(kPipeline));
  return passes::buildPlanBundle(context, run, kSample, kGraph);
}

// Wall times of the passes are the only fields that may differ between two runs.
PlanBundle withoutWallTimes(PlanBundle plan) {
  for (PlanStep& step : plan.steps) step.seconds = 0;
  return plan;
}

// The capture's plan, made once for every test.
struct Planned {
  testing::SampleGraph sample;
  hw::HwProfile hw;
  PlanBundle plan;
  std::string json;
};

const Planned& planned() {
  static const Planned p = [] {
    Planned out{testing::loadSampleGraph(kSample, kGraph), hw::resolveHwProfile("h200"), {}, {}};
    out.plan = planOf(out.sample, out.hw);
    out.json = planToJson(out.plan);
    return out;
  }();
  return p;
}

// Parsing `text` either succeeds or throws Error(BadInput); anything else fails the test.
void expectBadInputOrAccepted(const std::string& text, const std::string& what) {
  try {
    (void)planFromJson(text, "damaged.plan.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what() << " escaped as a non-lathe exception";
  }
}

// Parsing `text` throws Error(BadInput) whose message contains `fragment`.
void expectBadInput(const std::string& text, const std::string& fragment, const std::string& what) {
  try {
    (void)planFromJson(text, "damaged.plan.json");
    ADD_FAILURE() << what << ": accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << what;
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << what << ": " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what() << " escaped as a non-lathe exception";
  }
}

// The capture's plan as JSON, damaged.
std::string damaged(const std::function<void(Json&)>& damage) {
  Json j = Json::parse(planned().json);
  damage(j);
  return j.dump(1);
}

TEST(PlanBundle, TheFingerprintLeavesOutWhereTheSourceLives) {
  // The same graph logged from a checkout elsewhere: every `# File:` path differs.
  const ir::Graph& graph = *planned().sample.graph;
  std::string text = io::printFxText(graph);
  ASSERT_NE(text.find("# File: "), std::string::npos);
  for (size_t at = text.find("# File: "); at != std::string::npos; at = text.find("# File: ", at + 1)) {
    text.insert(at + 8, "/elsewhere/checkout/");
  }
  Diagnostics diagnostics;
  const auto moved = io::parseFxText(text, {}, diagnostics);
  ASSERT_TRUE(moved);
  EXPECT_NE(io::printFxText(*moved), io::printFxText(graph));
  EXPECT_EQ(graphFingerprint(*moved), graphFingerprint(graph));
}

TEST(PlanBundle, DescribesTheGraphAndThePipeline) {
  const ir::Graph& graph = *planned().sample.graph;
  const PlanBundle& plan = planned().plan;
  EXPECT_EQ(plan.graphId, kGraph);
  EXPECT_EQ(plan.fingerprint, graphFingerprint(graph));
  EXPECT_EQ(plan.fingerprint.size(), 16u);
  ASSERT_EQ(plan.nodeNames.size(), graph.size());
  for (ir::NodeId id = 0; id < graph.size(); ++id) EXPECT_EQ(plan.nodeNames[id], graph.name(id));
  EXPECT_EQ(plan.pipeline, kPipeline);
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[2].step, "recompute(offload=true,offload_min=0,policy=torch)");
  ASSERT_TRUE(plan.state.recompute.has_value());
  EXPECT_EQ(plan.state.recompute->policy, "torch");
  EXPECT_FALSE(plan.state.recompute->saved.empty());
  EXPECT_GT(plan.state.pieceCount, 1);
  EXPECT_FALSE(plan.state.groups.empty());
  EXPECT_GT(plan.timeline.peakBytes, 0u);
  EXPECT_EQ(plan.timeline.node.size(), plan.timeline.phase.size());
}

TEST(PlanBundle, JsonRoundTripsByteForByte) {
  const PlanBundle& plan = planned().plan;
  const PlanBundle read = planFromJson(planned().json, "plan.json");
  EXPECT_EQ(planToJson(read), planned().json);
  EXPECT_EQ(read.hardware, plan.hardware);
  ASSERT_TRUE(read.state.recompute.has_value());
  EXPECT_EQ(read.state.recompute->saved, plan.state.recompute->saved);
  EXPECT_EQ(read.state.group, plan.state.group);
  ASSERT_TRUE(plan.state.activationOffload.has_value());
  ASSERT_FALSE(plan.state.activationOffload->tensors.empty());
  ASSERT_TRUE(read.state.activationOffload.has_value());
  ASSERT_EQ(read.state.activationOffload->tensors.size(), plan.state.activationOffload->tensors.size());
  for (size_t i = 0; i < plan.state.activationOffload->tensors.size(); ++i) {
    const plan::OffloadedActivation& a = plan.state.activationOffload->tensors[i];
    const plan::OffloadedActivation& b = read.state.activationOffload->tensors[i];
    EXPECT_EQ(std::tie(a.node, a.waitAfter, a.reloadAfter, a.firstUse, a.offGpuStep, a.onGpuStep, a.bytes),
              std::tie(b.node, b.waitAfter, b.reloadAfter, b.firstUse, b.offGpuStep, b.onGpuStep, b.bytes));
  }
}

TEST(PlanBundle, WritePlanLeavesOnlyThePlanAndReadPlanReadsIt) {
  const fs::path dir = fs::temp_directory_path() / ("lathe_plan_bundle_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path path = dir / "llama.plan.json";
  writePlan(path, planned().plan);
  writePlan(path, planned().plan);  // over an existing file too
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) files.push_back(entry.path());
  EXPECT_EQ(files, std::vector<fs::path>{path});
  EXPECT_EQ(planToJson(readPlan(path)), planned().json);
  try {
    (void)readPlan(dir / "missing.plan.json");
    ADD_FAILURE() << "read a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
  }
  fs::remove_all(dir);
}

TEST(PlanBundle, TruncatedPlansAreBadInput) {
  // Every cut of the first 200 bytes, then cuts spread over the rest (the last byte is the newline,
  // without which the text is still whole).
  const std::string& json = planned().json;
  std::vector<size_t> cuts;
  for (size_t n = 0; n < 200; ++n) cuts.push_back(n);
  for (size_t n = 200; n + 1 < json.size(); n += json.size() / 97) cuts.push_back(n);
  for (size_t n : cuts) expectBadInput(json.substr(0, n), "damaged.plan.json", "cut at " + std::to_string(n));
}

TEST(PlanBundle, OtherFormatsAndVersionsAreBadInput) {
  expectBadInput(damaged([](Json& j) { j["format"] = "lathe.hw/1"; }), "lathe.hw/1", "another format");
  expectBadInput(damaged([](Json& j) { j["format"] = "lathe.plan/2"; }), "another version", "version 2");
  expectBadInput(damaged([](Json& j) { j.erase("format"); }), "is not lathe.plan/1", "no format");
  expectBadInput("[1, 2]", "not a JSON object", "an array");
  expectBadInput("", "not a JSON object", "nothing");
}

TEST(PlanBundle, DecisionsNamingUnknownNodesAreBadInput) {
  expectBadInput(damaged([](Json& j) { j["recompute"]["saved"][0] = "no_such_node"; }), "no_such_node", "saved");
  expectBadInput(damaged([](Json& j) { j["recompute"]["recomputed"].push_back("ghost"); }), "ghost", "recomputed");
  expectBadInput(damaged([](Json& j) { j["groups"][0]["nodes"][0] = "ghost"; }), "ghost", "group node");
  expectBadInput(damaged([](Json& j) { j["groups"][0]["anchor"] = "ghost"; }), "ghost", "group anchor");
  expectBadInput(damaged([](Json& j) { j["units"][0]["weights"].push_back("ghost"); }), "ghost", "unit weight");
  expectBadInput(damaged([](Json& j) { j["timeline"]["node"][0] = "ghost"; }), "ghost", "timeline node");
}

TEST(PlanBundle, PerNodeArraysOfTheWrongLengthAreBadInput) {
  for (const char* field : {"piece", "boundary", "unit", "group"}) {
    expectBadInput(damaged([&](Json& j) { j["nodes"][field].erase(j["nodes"][field].size() - 1); }),
                   "one entry per node", std::string("short ") + field);
    expectBadInput(damaged([&](Json& j) { j["nodes"][field].push_back(0); }), "one entry per node",
                   std::string("long ") + field);
  }
  expectBadInput(damaged([](Json& j) { j["nodes"]["names"].push_back("extra"); }), "one entry per node", "names");
  expectBadInput(damaged([](Json& j) { j["timeline"]["saved"].push_back(0); }), "one entry per step", "timeline");
  expectBadInput(damaged([](Json& j) { j["recompute"]["saved_reasons"].push_back("why"); }), "one reason", "reasons");
}

TEST(PlanBundle, NonNumberStatsAreBadInput) {
  expectBadInput(damaged([](Json& j) { j["steps"][2]["stats"]["peak_bytes"] = "large"; }), "peak_bytes", "step stat");
  expectBadInput(damaged([](Json& j) { j["estimates"]["step_seconds"] = nullptr; }), "step_seconds", "estimate");
  expectBadInput(damaged([](Json& j) { j["steps"][0]["stats"] = Json::array(); }), "stats", "stats list");
}

// The values listed at the peak are what the timeline counts there, but for the weights.
TEST(PlanBundle, ThePeakIsListedValueByValue) {
  const PlanTimeline& t = planned().plan.timeline;
  ASSERT_FALSE(t.atPeakValues.empty());
  uint64_t listed = 0;
  for (size_t i = 0; i < t.atPeakValues.size(); ++i) {
    const PeakValue& v = t.atPeakValues[i];
    EXPECT_NE(v.category, "weights") << v.node;
    EXPECT_GT(v.bytes, 0u) << v.node;
    if (i > 0) {
      EXPECT_GE(t.atPeakValues[i - 1].bytes, v.bytes) << v.node;
    }
    listed += v.bytes;
  }
  const auto index = [](std::string_view name) {
    return static_cast<size_t>(std::find(kTimelineCategoryNames.begin(), kTimelineCategoryNames.end(), name) -
                               kTimelineCategoryNames.begin());
  };
  EXPECT_EQ(listed, t.peakBytes - t.atPeak[index("weights")] - t.atPeak[index("prefetched")]);
}

// Each check of Inductor's buffer reuse the plan lists decided as its numbers say, and every dead
// buffer listed at the peak as kept for a later allocation is one a check held.
TEST(PlanBundle, ReuseHoldsAreTheChecksTheyList) {
  const PlanTimeline& t = planned().plan.timeline;
  ASSERT_FALSE(t.reuseHolds.empty());
  size_t held = 0;
  for (size_t i = 0; i < t.reuseHolds.size(); ++i) {
    const ReuseHold& h = t.reuseHolds[i];
    SCOPED_TRACE(h.buffer + " for " + h.forNode);
    EXPECT_EQ(h.held, static_cast<int64_t>(h.bytes) + h.heldOverSpan <= h.programPeak);
    EXPECT_LT(h.step, t.node.size());
    EXPECT_GT(h.bytes, 0u);
    if (i > 0) {
      EXPECT_GE(h.step, t.reuseHolds[i - 1].step);
    }
    held += h.held;
  }
  EXPECT_GT(held, 0u);
  for (const PeakValue& v : t.atPeakValues) {
    if (v.heldFor.empty()) continue;
    EXPECT_TRUE(std::any_of(t.reuseHolds.begin(), t.reuseHolds.end(), [&](const ReuseHold& h) {
      return h.held && h.buffer == v.node && h.forNode == v.heldFor;
    })) << v.node << " kept for " << v.heldFor;
  }
}

// The backward's kernels name backward steps, each output in one kernel, and a norm's backward is
// one kernel: its weight-gradient sum over the tokens, its sum over the hidden size and the input
// gradient they make (Inductor's mix-order reduction).
TEST(PlanBundle, BackwardKernelsHoldEachBackwardOutputOnce) {
  const PlanTimeline& t = planned().plan.timeline;
  ASSERT_FALSE(t.backwardKernels.empty());
  std::vector<int> kernelsOf(t.node.size(), 0);
  bool normBackward = false;
  for (const std::vector<uint32_t>& kernel : t.backwardKernels) {
    ASSERT_FALSE(kernel.empty());
    EXPECT_TRUE(std::is_sorted(kernel.begin(), kernel.end()));
    size_t sums = 0;
    for (uint32_t step : kernel) {
      ASSERT_LT(step, t.node.size());
      EXPECT_GE(step, t.backwardStart);
      EXPECT_EQ(t.phase[step], 'b') << t.node[step];
      ++kernelsOf[step];
      sums += t.node[step].starts_with("sum_");
    }
    normBackward |= sums >= 2 && kernel.size() > sums;
  }
  EXPECT_TRUE(std::all_of(kernelsOf.begin(), kernelsOf.end(), [](int n) { return n <= 1; }));
  EXPECT_TRUE(normBackward);
}

TEST(PlanBundle, EveryFieldDamagedIsBadInputOrAccepted) {
  // Each object field and the first item of each list: removed, made null, and replaced by a value
  // of another JSON type (taking turns, to keep the run short under the sanitizers). The reader may
  // accept some, but must answer BadInput to the rest and never crash.
  const Json original = Json::parse(planned().json);
  std::vector<Json::json_pointer> paths;
  std::function<void(const Json&, const Json::json_pointer&)> collect = [&](const Json& v,
                                                                            const Json::json_pointer& at) {
    if (v.is_object()) {
      for (const auto& [key, child] : v.items()) {
        paths.push_back(at / key);
        collect(child, at / key);
      }
    } else if (v.is_array() && !v.empty()) {
      paths.push_back(at / 0);
      collect(v[0], at / 0);
    }
  };
  collect(original, Json::json_pointer());
  EXPECT_GT(paths.size(), 100u);
  const std::vector<Json> others = {true, -1, 4294967296.5, "x", Json::array(), Json::object()};
  for (size_t i = 0; i < paths.size(); ++i) {
    const Json::json_pointer& path = paths[i];
    Json removed = original;
    Json& parent = removed.at(path.parent_pointer());
    if (parent.is_object()) {
      parent.erase(path.back());
    } else {
      parent.erase(0);
    }
    expectBadInputOrAccepted(removed.dump(), "removed " + path.to_string());
    for (const Json& replacement : {Json(nullptr), others[i % others.size()]}) {
      Json j = original;
      j.at(path) = replacement;
      expectBadInputOrAccepted(j.dump(), path.to_string() + " = " + replacement.dump());
    }
  }
}

// The bundles an attack on `lathe timeline` / `lathe export` crashed with, and their neighbours:
// each is refused with the JSON path of the first bad value.
TEST(PlanBundle, ValuesTheReaderWouldIndexAreCheckedAndNamedByPath) {
  const size_t steps = planned().plan.timeline.node.size();
  struct Case {
    std::function<void(Json&)> damage;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {[](Json& j) { j["timeline"]["peak_step"] = 2147483647; }, "$.timeline.peak_step"},
      {[](Json& j) { j["timeline"]["peak_step"] = 1000000; }, "$.timeline.peak_step"},
      {[&](Json& j) { j["timeline"]["peak_step"] = steps; }, "$.timeline.peak_step"},
      {[](Json& j) { j["timeline"]["peak_bytes"] = uint64_t{1} << 32; }, "$.timeline.peak_bytes"},
      {[](Json& j) { j["timeline"]["at_peak"]["weights"] = 1; }, "$.timeline.at_peak.weights"},
      {[](Json& j) { j["timeline"]["outputs"].push_back(0); }, "$.timeline.outputs: one entry per step"},
      {[](Json& j) { j["timeline"]["weights"][3] = UINT64_MAX; }, "add up to more than 2^64"},
      {[&](Json& j) { j["timeline"]["backward_start"] = steps + 1; }, "$.timeline.backward_start"},
      {[](Json& j) { j["timeline"]["phase"] = "x" + j["timeline"]["phase"].get<std::string>().substr(1); }, "$.timeline.phase"},
      {[](Json& j) { j["timeline"]["seconds"][0] = "soon"; }, "$.timeline.seconds[0]: expected a number"},
      {[](Json& j) { j["timeline"]["at_peak_values"][0]["node"] = "nowhere"; },
       "$.timeline.at_peak_values[0].node: node \"nowhere\" is not in the plan's node list"},
      {[](Json& j) { j["timeline"]["at_peak_values"][0]["held_for"] = "nowhere"; },
       "$.timeline.at_peak_values[0].held_for"},
      {[](Json& j) { j["timeline"]["at_peak_values"][0]["category"] = "cache"; },
       "$.timeline.at_peak_values[0].category: 'cache' is not a memory category"},
      {[](Json& j) { j["timeline"]["reuse_holds"][0]["buffer"] = "nowhere"; },
       "$.timeline.reuse_holds[0].buffer: node \"nowhere\" is not in the plan's node list"},
      {[&](Json& j) { j["timeline"]["reuse_holds"][0]["step"] = steps; }, "$.timeline.reuse_holds[0].step"},
      {[](Json& j) { j["timeline"]["reuse_holds"][0]["held"] = "yes"; },
       "$.timeline.reuse_holds[0].held: expected true or false"},
      {[](Json& j) { j["timeline"]["reuse_holds"][0]["program_peak"] = 1.5; },
       "$.timeline.reuse_holds[0].program_peak: expected an integer"},
      {[&](Json& j) { j["timeline"]["backward_kernels"][0] = Json::array({steps}); },
       "$.timeline.backward_kernels[0]: " + std::to_string(steps) + " is not a step"},
      {[](Json& j) { j["timeline"]["backward_kernels"][0] = Json::array(); }, "$.timeline.backward_kernels[0]: a kernel has outputs"},
      {[](Json& j) { j["timeline"]["backward_kernels"][0] = Json::array({5, 3}); }, "$.timeline.backward_kernels[0]: steps must ascend"},
      {[](Json& j) { std::swap(j["timeline"]["backward_kernels"][0], j["timeline"]["backward_kernels"][1]); },
       "$.timeline.backward_kernels[1]: kernels must be in order of their first step"},
      {[](Json& j) { j["groups"][0]["anchor"] = ""; }, "$.groups[0].anchor: empty name"},
      {[](Json& j) { j["groups"][0]["anchor"] = j["groups"][1]["nodes"][0]; }, "$.groups[0].anchor"},
      {[](Json& j) { j["groups"][1] = j["groups"][0]; }, "in two fusion groups"},
      {[](Json& j) { j["groups"][0]["nodes"] = Json::array(); }, "$.groups[0].nodes: a fusion group without nodes"},
      {[](Json& j) { j["nodes"]["group"][0] = 1000; }, "$.nodes.group[0]"},
      {[](Json& j) { j["nodes"]["piece"][0] = -2; }, "$.nodes.piece[0]"},
      {[](Json& j) { j["nodes"]["boundary"][0] = 2; }, "$.nodes.boundary[0]"},
      {[](Json& j) { j["nodes"]["names"][1] = j["nodes"]["names"][0]; }, "$.nodes.names[1]"},
      {[](Json& j) { j["nodes"]["names"][0] = ""; }, "$.nodes.names[0]: empty name"},
      {[](Json& j) { j["source"]["graph"] = ""; }, "$.source.graph: empty name"},
      {[](Json& j) { j["source"]["nodes"] = 1; }, "$.source.nodes"},
      {[](Json& j) { j["pieces"] = -1; }, "$.pieces"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    expectBadInput(damaged(cases[i].damage), cases[i].fragment, "case " + std::to_string(i));
  }
}

TEST(PlanBundle, NestingAndSizeAreBoundedWhileParsing) {
  // 100k levels deep anywhere in the bundle: refused before anything recurses over it.
  const size_t depth = 100000;
  std::string deep = planned().json;
  const size_t at = deep.find("\"pipeline\"");
  ASSERT_NE(at, std::string::npos);
  deep.insert(at, "\"deep\": " + std::string(depth, '[') + std::string(depth, ']') + ", ");
  expectBadInput(deep, "nested deeper than", "100k-deep list");
  expectBadInput(std::string(depth, '['), "nested deeper than", "100k unclosed lists");
}

TEST(PlanBundle, BindsToItsGraphAndRefusesAnother) {
  const PlanBundle& plan = planned().plan;
  const ir::Graph& graph = *planned().sample.graph;
  const BoundPlan bound = bind(plan, graph, "llama.plan.json");
  EXPECT_EQ(bound.graph, &graph);
  ASSERT_EQ(bound.nodeIds.size(), graph.size());
  for (size_t i = 0; i < bound.nodeIds.size(); ++i) EXPECT_EQ(graph.name(bound.nodeIds[i]), plan.nodeNames[i]);
  EXPECT_EQ(bound.state.group, plan.state.group);  // the plan lists the graph's nodes in order
  ASSERT_TRUE(bound.state.recompute.has_value());
  EXPECT_EQ(bound.state.recompute->saved, plan.state.recompute->saved);

  const testing::SampleGraph other = testing::loadSampleGraph("captures/mixtral_2l_tiny_train.log.gz", kGraph);
  try {
    (void)bind(plan, *other.graph, "llama.plan.json");
    ADD_FAILURE() << "bound to another graph";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    const std::string what = e.what();
    EXPECT_NE(what.find(graphFingerprint(*other.graph)), std::string::npos) << what;
    EXPECT_NE(what.find(plan.fingerprint), std::string::npos) << what;
  }
}

TEST(PlanBundle, PlanningTheSameGraphTwiceGivesTheSameBytes) {
  const PlanBundle again = planOf(planned().sample, planned().hw);
  EXPECT_EQ(planToJson(withoutWallTimes(again)), planToJson(withoutWallTimes(planned().plan)));
}

}  // namespace
}  // namespace lathe::plan
