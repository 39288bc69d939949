// Fuzzes what `lathe timeline` and `lathe export` do with a plan bundle once it has been read
// (app/cli/plan_commands.cpp runTimeline, app/cli/export_command.cpp runExport), against a fixed
// tiny joint graph (kGraph below): plan::planFromJson, every timeline access the three timeline
// outputs make (CSV rows, JSON summary, the sampled text table), then plan::bind onto the graph and
// kernels::generateKernels, kernels::manifestJson and kernels::symbolsHeader over the bound state.
// A bundle that reads must be safe to use everywhere: an index the CLI would use out of range is a
// crash here (the accesses go through at()), and past planFromJson the only exception allowed is
// Error(BadInput) from bind — never Internal, which generateKernels throws for a state that does not
// belong to its graph.
//
// The bundle's fingerprint is replaced by the fixed graph's before binding, so that mutations are
// not all refused by the fingerprint check; node names still have to be the graph's. Mutations are
// JSON structure-aware (json_mutator.h).
//
// Seeds (tests/fuzz/seeds/fuzz_plan_entry/): `lathe plan` bundles of kGraph, made from a
// TORCH_TRACE log holding it as its aot_joint_graph (tests/attack/attack.py's trace_log() writes
// one), with several pipelines: split,fusion and the default, recompute(policy=budget/heuristic),
// offload; fusion(max_nodes=2) and fusion(max_nodes=1000). All six groups of the default plan
// generate kernels (one pointwise, four reductions, one normalization).
//
// The timeline's rendering lives in app/cli (runTimeline), so this mirrors its indexing; it should
// move into core (a plan::timelineRows or similar) so that the fuzzer and the CLI share it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "io/fx/fx_text.h"
#include "json_mutator.h"
#include "kernels/cuda_codegen.h"
#include "kernels/export_bundle.h"
#include "plan/plan_bind.h"
#include "plan/plan_bundle.h"
#include "util/diagnostics.h"

LATHE_FUZZ_JSON_CUSTOM_MUTATOR()

namespace {

// A small joint graph: a pointwise prologue, a matmul, softmax written out (amax / exp / sum /
// div), a layer norm (var_mean, rsqrt), a cast and a view, a column reduction, aten._softmax, and
// a backward matmul.
constexpr std::string_view kGraph = R"FX(class joint_helper(torch.nn.Module):
    def forward(
        self,
        primals,
        tangents,
    ):
        primals_1: "f32[16, 64][64, 1]cuda:0"  # PlainAOTInput(idx=0)
        primals_2: "f32[64][1]cuda:0"  # PlainAOTInput(idx=1)
        primals_3: "f32[64, 64][64, 1]cuda:0"  # PlainAOTInput(idx=2)
        tangents_1: "f32[16, 64][64, 1]cuda:0"  # TangentAOTInput(output=PlainAOTOutput(idx=0))
        primals_1, primals_2, primals_3, tangents_1, = fx_pytree.tree_flatten_spec([primals, tangents], self._in_spec)
        mul: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.mul.Tensor(primals_1, primals_2)
        relu: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.relu.default(mul);  mul = None
        mm: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.mm.default(relu, primals_3)
        amax: "f32[16, 1][1, 1]cuda:0" = torch.ops.aten.amax.default(mm, [1], True)
        sub: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.sub.Tensor(mm, amax);  mm = amax = None
        exp: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.exp.default(sub);  sub = None
        sum_1: "f32[16, 1][1, 1]cuda:0" = torch.ops.aten.sum.dim_IntList(exp, [1], True)
        div: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.div.Tensor(exp, sum_1);  exp = sum_1 = None
        var_mean = torch.ops.aten.var_mean.correction(div, [1], correction = 0, keepdim = True)
        getitem: "f32[16, 1][1, 1]cuda:0" = var_mean[0]
        getitem_1: "f32[16, 1][1, 1]cuda:0" = var_mean[1];  var_mean = None
        add: "f32[16, 1][1, 1]cuda:0" = torch.ops.aten.add.Tensor(getitem, 1e-05);  getitem = None
        rsqrt: "f32[16, 1][1, 1]cuda:0" = torch.ops.aten.rsqrt.default(add);  add = None
        sub_1: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.sub.Tensor(div, getitem_1);  div = getitem_1 = None
        mul_1: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.mul.Tensor(sub_1, rsqrt);  sub_1 = rsqrt = None
        convert_element_type: "bf16[16, 64][64, 1]cuda:0" = torch.ops.prims.convert_element_type.default(mul_1, torch.bfloat16)
        view: "bf16[1024][1]cuda:0" = torch.ops.aten.view.default(convert_element_type, [1024]);  convert_element_type = None
        mul_2: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.mul.Tensor(tangents_1, mul_1)
        sum_2: "f32[64][1]cuda:0" = torch.ops.aten.sum.dim_IntList(mul_2, [0]);  mul_2 = None
        _softmax: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten._softmax.default(primals_1, 1, False)
        neg: "f32[16, 64][64, 1]cuda:0" = torch.ops.aten.neg.default(_softmax);  _softmax = None
        permute: "f32[64, 16][1, 64]cuda:0" = torch.ops.aten.permute.default(relu, [1, 0]);  relu = None
        mm_1: "f32[64, 64][64, 1]cuda:0" = torch.ops.aten.mm.default(permute, tangents_1);  permute = tangents_1 = None
        return pytree.tree_unflatten([
            mul_1,  # PlainAOTOutput(idx=0)
            view,  # PlainAOTOutput(idx=1)
            neg,  # PlainAOTOutput(idx=2)
            None,  # GradAOTOutput(grad_of=PlainAOTInput(idx=0))
            sum_2,  # GradAOTOutput(grad_of=PlainAOTInput(idx=1))
            mm_1,  # GradAOTOutput(grad_of=PlainAOTInput(idx=2))
        ], self._out_spec))FX";

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_plan_entry: %s: %s\n", what, detail.c_str());
  std::abort();
}

const lathe::ir::Graph& fixedGraph() {
  static const std::shared_ptr<lathe::ir::Graph> graph = [] {
    lathe::Diagnostics diagnostics;
    lathe::io::FxParseOptions options;
    options.file = "fuzz_plan_entry";
    auto g = lathe::io::parseFxText(kGraph, options, diagnostics);
    if (!g) fail("the fixed graph does not parse", "");
    return g;
  }();
  return *graph;
}

// Every timeline access `lathe timeline` makes, with --csv, --json and the text table for
// --points 1, 24 and every step.
void useTimeline(const lathe::plan::PlanBundle& bundle) {
  const lathe::plan::PlanTimeline& t = bundle.timeline;
  const size_t steps = t.node.size();
  uint64_t sink = 0;
  auto total = [&](size_t i) {
    uint64_t sum = 0;
    for (size_t c = 0; c < lathe::plan::kTimelineCategories; ++c) sum += t.bytes[c].at(i);
    return sum;
  };
  for (size_t i = 0; i < steps; ++i) {  // --csv
    sink += t.node.at(i).size() + static_cast<uint64_t>(t.phase.at(i) == 'f') + static_cast<uint64_t>(t.seconds.at(i) > 0);
    sink += total(i);
  }
  sink += lathe::plan::timelineSummaryJson(bundle).size();  // --json
  if (steps != 0) sink += t.node.at(t.peakStep).size();  // text header
  for (size_t wanted : {size_t{1}, size_t{24}, steps}) {
    const size_t points = std::min(wanted, steps);
    for (size_t k = 0; k < points; ++k) {
      const size_t i = points == 1 ? t.peakStep : k * (steps - 1) / (points - 1);
      sink += t.node.at(i).size() + static_cast<uint64_t>(t.phase.at(i)) + static_cast<uint64_t>(t.seconds.at(i) != 0) + total(i);
    }
  }
  if (sink == 42) std::fputc(' ', stderr);  // keeps the accesses
}

void useKernels(const lathe::plan::PlanBundle& bundle, const lathe::plan::BoundPlan& bound) {
  const lathe::kernels::KernelSet set = lathe::kernels::generateKernels(*bound.graph, bound.state);
  if (set.kernels.size() + set.notGenerated.size() != bound.state.groups.size())
    fail("kernel set", std::to_string(set.kernels.size()) + " kernels and " + std::to_string(set.notGenerated.size()) +
                           " not generated for " + std::to_string(bound.state.groups.size()) + " groups");
  const lathe::kernels::ExportRequest request{"fuzz-out", {"sm_90a", "sm_120"}, "fuzz.plan.json", bundle.graphId,
                                              bundle.state.groups.size()};
  const std::string manifest = lathe::kernels::manifestJson(set, request);
  if (nlohmann::json::parse(manifest, nullptr, false).is_discarded()) fail("manifest is not JSON", manifest.substr(0, 200));
  (void)lathe::kernels::symbolsHeader(set.symbols);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const lathe::ir::Graph& graph = fixedGraph();
  static const std::string fingerprint = lathe::plan::graphFingerprint(graph);
  lathe::plan::PlanBundle bundle;
  try {
    bundle = lathe::plan::planFromJson(input, "fuzz");
  } catch (const lathe::Error& e) {
    if (e.code() != lathe::ErrorCode::BadInput) fail("planFromJson threw other than BadInput", e.what());
    return 0;
  }
  try {
    useTimeline(bundle);
  } catch (const std::out_of_range& e) {
    fail("the timeline of a bundle that reads is indexed out of range", e.what());
  }
  bundle.fingerprint = fingerprint;
  lathe::plan::BoundPlan bound;
  try {
    bound = lathe::plan::bind(bundle, graph, "fuzz");
  } catch (const lathe::Error& e) {
    if (e.code() != lathe::ErrorCode::BadInput) fail("bind threw other than BadInput", e.what());
    return 0;
  }
  try {
    useKernels(bundle, bound);
  } catch (const lathe::Error& e) {
    fail("kernel generation of a bound plan threw", e.what());
  }
  return 0;
}
