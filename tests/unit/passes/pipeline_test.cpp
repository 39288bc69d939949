// Pipeline text: parsing (spaces, options, several passes, byte sizes), the usage errors malformed
// text gives and where they point, canonical formatting, byte sizes, and unknown options.
#include "passes/pipeline.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/graph_inputs.h"
#include "hw/hw_profile.h"
#include "io/fx/fx_text.h"
#include "ir/op_info.h"
#include "passes/activation_offload.h"
#include "passes/fusion.h"
#include "passes/offload_pass.h"
#include "passes/plan_target.h"
#include "passes/recompute.h"
#include "passes/split.h"
#include "util/diagnostics.h"

namespace lathe::passes {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMiB = uint64_t{1} << 20;

using Options = std::map<std::string, std::string>;

void expectStep(const PipelineStep& step, const std::string& pass, const Options& options) {
  EXPECT_EQ(step.pass, pass);
  EXPECT_EQ(step.options.values(), options);
}

// The text is refused as a usage error whose message contains every fragment.
void expectUsageError(const std::string& text, const std::vector<std::string>& fragments) {
  try {
    (void)parsePipeline(text);
    ADD_FAILURE() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Usage) << text;
    for (const std::string& fragment : fragments) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "\"" << text << "\": message \"" << e.what() << "\" lacks \"" << fragment << "\"";
    }
  }
}

TEST(ParsePipeline, OnePassWithoutOptions) {
  const std::vector<PipelineStep> steps = parsePipeline("split");
  ASSERT_EQ(steps.size(), 1u);
  expectStep(steps[0], "split", {});
}

TEST(ParsePipeline, EmptyTextIsAnEmptyPipeline) {
  EXPECT_TRUE(parsePipeline("").empty());
  EXPECT_TRUE(parsePipeline("  \t ").empty());
}

TEST(ParsePipeline, SeveralPassesWithOptionsAndSpaces) {
  const std::vector<PipelineStep> steps = parsePipeline(
      "  split ,fusion( max_nodes = 32 ),  recompute(policy=budget, memory=40GiB) ,offload(policy=heuristic,"
      "resident=0.3)  ");
  ASSERT_EQ(steps.size(), 4u);
  expectStep(steps[0], "split", {});
  expectStep(steps[1], "fusion", {{"max_nodes", "32"}});
  expectStep(steps[2], "recompute", {{"policy", "budget"}, {"memory", "40GiB"}});
  expectStep(steps[3], "offload", {{"policy", "heuristic"}, {"resident", "0.3"}});
  EXPECT_EQ(steps[2].options.bytes(RecomputePass::kMemory), 40 * kGiB);
  EXPECT_DOUBLE_EQ(steps[3].options.number(OffloadPass::kResident), 0.3);
}

TEST(ParsePipeline, ValuesTakeNumbersSizesAndPaths) {
  const std::vector<PipelineStep> steps =
      parsePipeline("recompute(memory=1.5e9),recompute(memory=2e+9),recompute(policy=file,path=plans/run-1.json)");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].options.bytes(RecomputePass::kMemory), 1'500'000'000u);
  EXPECT_EQ(steps[1].options.bytes(RecomputePass::kMemory), 2'000'000'000u);
  expectStep(steps[2], "recompute", {{"policy", "file"}, {"path", "plans/run-1.json"}});
}

TEST(ParsePipeline, UnknownPassIsAUsageErrorNamingItsPosition) {
  // "fusoin" starts at the 7th character.
  expectUsageError("split,fusoin", {"fusoin", "character 7"});
}

TEST(ParsePipeline, MalformedTextIsAUsageErrorNamingThePosition) {
  expectUsageError("recompute(policy=torch", {"character 23", "')'"});
  expectUsageError("recompute(policy)", {"character 17", "'='"});
  expectUsageError("recompute(policy torch)", {"character 18", "'='"});
  expectUsageError("recompute(policy=torch,policy=budget)", {"character", "policy only once"});
  expectUsageError("recompute(policy=)", {"character 18", "a value for policy"});
  expectUsageError("recompute(=torch)", {"character 11", "an option name"});
  expectUsageError("split,,fusion", {"character 7", "a pass name"});
  expectUsageError("split,", {"character 7", "a pass name"});
  expectUsageError("split fusion", {"character 7", "','"});
  expectUsageError("recompute(policy=torch))", {"character 24", "','"});
}

TEST(FormatStep, SortsOptionsIntoCanonicalText) {
  const std::vector<PipelineStep> steps = parsePipeline("recompute( policy = budget , memory = 40GiB )");
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(formatStep(steps[0]), "recompute(memory=40GiB,policy=budget)");
  EXPECT_EQ(formatStep(PipelineStep{"split", {}}), "split");
}

TEST(FormatPipeline, CanonicalTextParsesBackToItself) {
  const std::vector<std::string> texts = {
      "split",
      " split , fusion ",
      "split,fusion,recompute(policy=torch)",
      "split,fusion(max_nodes=8),recompute(path=a/b.json,policy=file),offload(resident=0.3,policy=heuristic)",
      "recompute(policy=budget,memory=1.5e9)",
  };
  for (const std::string& text : texts) {
    const std::string canonical = formatPipeline(parsePipeline(text));
    EXPECT_EQ(formatPipeline(parsePipeline(canonical)), canonical) << text;
    EXPECT_EQ(canonical.find(' '), std::string::npos) << canonical;
  }
  EXPECT_EQ(formatPipeline(parsePipeline(" split , fusion ")), "split,fusion");
  EXPECT_EQ(formatPipeline(parsePipeline("split,offload(resident=0.3,policy=heuristic)")),
            "split,offload(policy=heuristic,resident=0.3)");
}

TEST(ParseByteSize, UnitsScalesAndSpaces) {
  EXPECT_EQ(parseByteSize("40GiB"), 40 * kGiB);
  EXPECT_EQ(parseByteSize("40 GB"), 40'000'000'000u);
  EXPECT_EQ(parseByteSize("40gib"), 40 * kGiB);
  EXPECT_EQ(parseByteSize("512MiB"), 512 * kMiB);
  EXPECT_EQ(parseByteSize("3.5GB"), 3'500'000'000u);
  EXPECT_EQ(parseByteSize("1.5e9"), 1'500'000'000u);
  EXPECT_EQ(parseByteSize("1e9"), 1'000'000'000u);
  EXPECT_EQ(parseByteSize("0.5KiB"), 512u);
  EXPECT_EQ(parseByteSize("7kb"), 7000u);
  EXPECT_EQ(parseByteSize("2TiB"), 2 * 1024 * kGiB);
  EXPECT_EQ(parseByteSize("12B"), 12u);
  EXPECT_EQ(parseByteSize(" 12 "), 12u);
  EXPECT_EQ(parseByteSize("0"), 0u);
}

TEST(ParseByteSize, SizesAboveInt64MaxStayExact) {
  // Above INT64_MAX, below the 1.8e19 limit parseByteSize sets itself.
  EXPECT_EQ(parseByteSize("1e19"), uint64_t{10'000'000'000'000'000'000u});
  EXPECT_EQ(parseByteSize("9.5e18"), uint64_t{9'500'000'000'000'000'000u});
}

TEST(ParseByteSize, RejectsWhatIsNotASize) {
  for (const char* text : {"", "GiB", "-1GiB", "40XB", "16EB", "abc", "4 0GiB", "1e30", "inf", "nan", "40GiB extra"}) {
    EXPECT_EQ(parseByteSize(text), std::nullopt) << text;
  }
}

TEST(PassOptions, TypedReadsTakeTheGivenValueElseTheDeclaredDefault) {
  const PassOptions options(Options{{"memory", "40GB"}, {"max_nodes", "32"}});
  EXPECT_EQ(options.bytes(RecomputePass::kMemory), 40'000'000'000u);
  EXPECT_DOUBLE_EQ(options.number(FusionPass::kMaxNodes), 32);
  EXPECT_EQ(options.text(RecomputePass::kPolicy), "torch");
  EXPECT_TRUE(options.flag(SplitPass::kUnits));
  EXPECT_EQ(options.bytes(RecomputePass::kOffloadMin), kMiB);
  EXPECT_FALSE(options.has(OffloadPass::kResident));
  // A spec read as another type is our bug, not the user's.
  try {
    (void)options.flag(RecomputePass::kMemory);
    ADD_FAILURE() << "read a byte size as a flag";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Internal);
  }
}

// Each bad value is a usage error naming the pass, the option and the value, before any pass runs.
TEST(CheckPipeline, ValuesAreCheckedAgainstTheirSpecs) {
  struct Bad {
    std::string text, pass, fragment;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"recompute(policy=fastest)", "recompute", "torch, heuristic, budget, file"},
           {"recompute(policy=budget,memory=lots)", "recompute", "memory=lots is not a byte size"},
           {"recompute(offload=maybe)", "recompute", "offload=maybe is not true or false"},
           {"recompute(offload=true,offload_link=1.5)", "recompute", "offload_link=1.5 is not a number in (0, 1]"},
           {"recompute(offload=true,offload_link=0)", "recompute", "offload_link=0"},
           {"fusion(max_nodes=2.5)", "fusion", "max_nodes=2.5 is not a whole number"},
           {"fusion(max_nodes=0)", "fusion", "max_nodes=0"},
           {"split(units=yes)", "split", "units=yes"},
           {"split,offload(resident=2)", "offload", "resident=2 is not a number in [0, 1]"},
           {"split,offload(policy=lru)", "offload", "base, cost-effective, heuristic, optimal"},
       }) {
    expectUsageError(bad.text, {bad.pass + ": option", bad.fragment});
  }
}

TEST(CheckPipeline, RulesBetweenOptionsAndPassesAreCheckedBeforeAnythingRuns) {
  expectUsageError("recompute(policy=file)", {"needs path=FILE"});
  expectUsageError("recompute(offload_min=1MiB)", {"apply with offload=true"});
  expectUsageError("fusion,offload", {"offload needs split before it", "put split before offload"});
  expectUsageError("offload,split", {"offload needs split before it"});
  EXPECT_NO_THROW((void)parsePipeline("split,fusion,offload(policy=optimal,memory=2GiB)"));
  EXPECT_NO_THROW((void)parsePipeline("recompute(policy=budget)"));  // no budget: no slower than torch's plan
}

TEST(CheckPipeline, UnknownOptionsAreRefusedWithTheKnownOnesListed) {
  for (const Pass* pass : registeredPasses()) {
    const std::string name(pass->name());
    expectUsageError(name + "(bogus=1)", {name, "unknown option 'bogus'"});
    if (!pass->info().options.empty()) expectUsageError(name + "(bogus=1)", {std::string(pass->info().options[0].name)});
  }
  expectUsageError("recompute(polcy=torch)", {"polcy", "policy, memory, path"});
}

// What `lathe passes` lists: every pass declares its options with defaults of their own type, and
// statistics with distinct names.
TEST(PassInfo, EveryDeclaredDefaultParsesAsItsType) {
  const std::vector<std::string_view> names = passNames();
  EXPECT_EQ(names, (std::vector<std::string_view>{"split", "fusion", "recompute", "offload"}));
  for (const Pass* pass : registeredPasses()) {
    const PassInfo& info = pass->info();
    EXPECT_EQ(pass->name(), info.name);
    EXPECT_FALSE(info.summary.empty()) << info.name;
    std::set<std::string_view> stats;
    for (const StatKey& stat : info.statistics) {
      EXPECT_TRUE(stats.insert(stat.name).second) << info.name << " declares " << stat.name << " twice";
      EXPECT_FALSE(stat.help.empty()) << stat.name;
    }
    for (const OptionSpec& option : info.options) {
      EXPECT_FALSE(option.help.empty()) << option.name;
      EXPECT_EQ(option.type == OptionType::Choice, !option.choices.empty()) << option.name;
      if (option.fallback.empty()) continue;
      const PassOptions defaults;
      EXPECT_NO_THROW({
        switch (option.type) {
          case OptionType::Flag: (void)defaults.flag(option); break;
          case OptionType::Number: (void)defaults.number(option); break;
          case OptionType::Bytes: (void)defaults.bytes(option); break;
          case OptionType::Choice:
          case OptionType::Path: (void)defaults.text(option); break;
        }
      }) << info.name << "." << option.name;
    }
    for (std::string_view required : info.runsAfter) EXPECT_NO_THROW((void)findPass(required)) << required;
  }
  // The defaults the declarations state are the ones the code falls back on.
  const PassOptions defaults;
  const ActivationOffloadOptions activationOffload;
  EXPECT_EQ(defaults.bytes(RecomputePass::kOffloadMin), activationOffload.minBytes);
  EXPECT_DOUBLE_EQ(defaults.number(RecomputePass::kOffloadLink), activationOffload.linkShare);
}

TEST(Passes, UnknownPassNamesAreUsageErrors) {
  try {
    (void)findPass("fuse");
    ADD_FAILURE() << "found a pass named fuse";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Usage);
  }
}

// A joint graph whose tensors all have the annotation: primals_1 first, then `extra` products.
std::shared_ptr<ir::Graph> jointOf(const std::string& annotation, int extra = 1) {
  std::string text = "class joint_helper(torch.nn.Module):\n    def forward(self, primals_1: \"" + annotation +
                     "\", tangents_1: \"" + annotation + "\"):\n";
  std::string previous = "primals_1";
  for (int i = 0; i < extra; ++i) {
    const std::string name = "mul_" + std::to_string(i);
    text += "        " + name + ": \"" + annotation + "\" = torch.ops.aten.mul.Tensor(" + previous + ", primals_1)\n";
    previous = name;
  }
  text += "        grad: \"" + annotation + "\" = torch.ops.aten.mul.Tensor(tangents_1, primals_1)\n";
  text += "        return (" + previous + ", grad)\n";
  Diagnostics diagnostics;
  std::shared_ptr<ir::Graph> graph = io::parseFxText(text, {}, diagnostics);
  if (graph == nullptr) throw std::runtime_error("test graph does not parse");
  return graph;
}

// Every pass refuses the graph as bad input, with a message holding `fragment`.
void expectEveryPassRefuses(const std::shared_ptr<const ir::Graph>& graph, const std::string& fragment) {
  const PlanTarget target(graph, "test", hw::resolveHwProfile("h200"));
  const PassContext context = target.context();
  for (std::string_view name : passNames()) {
    try {
      (void)findPass(name).run(context, plan::PlanState::empty(graph->size()), PassOptions());
      ADD_FAILURE() << name << " planned the graph";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::BadInput) << name << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << name << ": " << e.what();
    }
  }
}

TEST(Passes, SizesBeyondWhatThePlannerSupportsAreBadInputNamingTheNode) {
  for (const std::string& annotation :
       {std::string("f32[9223372036854775807, 9223372036854775807][9223372036854775807, 1]cuda:0"),
        std::string("f32[4294967296, 4294967296][4294967296, 1]cuda:0"),
        std::string("f32[8, 137438953472][137438953472, 1]cuda:0")}) {  // 4 TiB
    expectEveryPassRefuses(jointOf(annotation), "primals_1: a tensor of ");
  }
  expectEveryPassRefuses(jointOf("f32[-4, 8][8, 1]cuda:0"), "primals_1: dimension 0 has the negative size -4");
  // 1 TiB each (as much as one tensor may hold), 20 of them: more than the planner sums exactly.
  expectEveryPassRefuses(jointOf("f32[1024, 268435456][268435456, 1]cuda:0", 17), "bytes (16 TiB) in all");
}

}  // namespace
}  // namespace lathe::passes
