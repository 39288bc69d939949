// Inductor output code: the launch sequence of `call` on the real payloads of the sample captures,
// synthetic modules in older and odd shapes, and matching a trace's kernels back to launches.
// Expected counts on the captures were taken from the payload text with a line scan in Python
// (`X.run(` lines and extern call lines inside `def call`), never from this parser.
#include "io/trace/output_code.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/artifact.h"
#include "io/trace/trace_log.h"

namespace fs = std::filesystem;
using namespace lathe;
using namespace lathe::io;
using Kind = OutputCodeKernel::Kind;

namespace {

const fs::path kCaptures = fs::path(LATHE_SAMPLES_DIR) / "captures";

const Artifact& llamaTinyTrain() {
  static const Artifact artifact = loadArtifact(kCaptures / "llama3_8b_2l_tiny_train.log.gz");
  return artifact;
}

// The output code payloads of a log, in log order (a training compile logs forward, then backward).
std::vector<std::string_view> outputCodes(const TraceLog& log) {
  std::vector<std::string_view> codes;
  for (const TraceCompile& compile : log.compiles)
    for (size_t event : compile.outputCodeEvents) codes.push_back(log.events[event].payload);
  return codes;
}

size_t countKind(const std::vector<OutputCodeKernel>& launches, Kind kind) {
  return static_cast<size_t>(
      std::count_if(launches.begin(), launches.end(), [&](const OutputCodeKernel& k) { return k.kind == kind; }));
}

size_t countNamed(const std::vector<OutputCodeKernel>& launches, std::string_view name) {
  return static_cast<size_t>(
      std::count_if(launches.begin(), launches.end(), [&](const OutputCodeKernel& k) { return k.name == name; }));
}

ChromeKernelEvent kernelEvent(std::string name, double seconds) {
  ChromeKernelEvent event;
  event.name = std::move(name);
  event.seconds = seconds;
  event.device = 0;
  event.stream = 7;
  return event;
}

OutputCodeKernel launch(std::string name, Kind kind) {
  OutputCodeKernel kernel;
  kernel.name = std::move(name);
  kernel.kind = kind;
  return kernel;
}

}  // namespace

TEST(OutputCode, LlamaTrainingForwardLaunchesInCallOrder) {
  const std::vector<std::string_view> codes = outputCodes(*llamaTinyTrain().trace);
  ASSERT_EQ(codes.size(), 2u);
  const std::vector<OutputCodeKernel> launches = parseOutputCode(codes[0]);
  // 20 Triton launches of 15 kernels, 16 matmuls and 2 cuDNN attentions (one per layer).
  EXPECT_EQ(launches.size(), 38u);
  EXPECT_EQ(countKind(launches, Kind::Triton), 20u);
  EXPECT_EQ(countNamed(launches, "extern_kernels.mm"), 16u);
  EXPECT_EQ(countNamed(launches, "torch.ops.aten._scaled_dot_product_cudnn_attention.default"), 2u);
  std::set<std::string> tritonKernels;
  for (const OutputCodeKernel& kernel : launches)
    if (kernel.kind == Kind::Triton) tritonKernels.insert(kernel.name);
  EXPECT_EQ(tritonKernels.size(), 15u);

  const OutputCodeKernel& first = launches.front();
  EXPECT_EQ(first.name, "triton_per_fused__to_copy_add_embedding_mean_mul_pow_rsqrt_0");
  EXPECT_EQ(first.kind, Kind::Triton);
  EXPECT_EQ(first.sourceNodes, (std::vector<std::string>{"inputs_embeds", "hidden_states", "pow_1", "variance", "add_3",
                                                         "rsqrt", "hidden_states_1", "to_6", "hidden_states_2"}));
  EXPECT_EQ(first.atenOps, (std::vector<std::string>{"aten.embedding", "aten._to_copy", "aten.pow", "aten.mean",
                                                     "aten.add", "aten.rsqrt", "aten.mul"}));
  // The first extern call: the rotary embedding's inv_freq @ position_ids.
  const OutputCodeKernel& matmul = launches[4];
  EXPECT_EQ(matmul.name, "extern_kernels.mm");
  EXPECT_EQ(matmul.kind, Kind::Extern);
  EXPECT_EQ(matmul.sourceNodes.back(), "matmul");
  EXPECT_EQ(matmul.atenOps.back(), "aten.bmm");
  for (size_t i = 1; i < launches.size(); ++i) EXPECT_LT(launches[i - 1].line, launches[i].line);

  // The query rotary kernel runs once per layer, for that layer's nodes (the comment at the call,
  // not the one at the definition).
  std::vector<const OutputCodeKernel*> rotary;
  for (const OutputCodeKernel& kernel : launches)
    if (kernel.name == "triton_poi_fused__to_copy__unsafe_view_add_bmm_cat_cos_mul_neg_sin_slice_transpose_unsqueeze_view_4")
      rotary.push_back(&kernel);
  ASSERT_EQ(rotary.size(), 2u);
  EXPECT_EQ(rotary[0]->sourceNodes.back(), "q_embed");
  EXPECT_EQ(rotary[1]->sourceNodes.back(), "q_embed_1");
  const OutputCodeKernel& attention = launches[12];
  EXPECT_EQ(attention.name, "torch.ops.aten._scaled_dot_product_cudnn_attention.default");
  EXPECT_EQ(attention.sourceNodes.back(), "attn_output");
}

TEST(OutputCode, LlamaTrainingBackwardLaunches) {
  const std::vector<OutputCodeKernel> launches = parseOutputCode(outputCodes(*llamaTinyTrain().trace)[1]);
  EXPECT_EQ(countKind(launches, Kind::Triton), 22u);
  EXPECT_EQ(countNamed(launches, "extern_kernels.mm"), 30u);
  EXPECT_EQ(countNamed(launches, "torch.ops.aten._scaled_dot_product_cudnn_attention_backward.default"), 2u);
  EXPECT_EQ(launches.size(), 54u);
  EXPECT_EQ(launches.front().name,
            "triton_red_fused__log_softmax__log_softmax_backward_data__to_copy_add_arange_eq_expand_nll_loss_backward_"
            "nll_loss_forward_scalar_tensor_slice_view_where_0");
}

TEST(OutputCode, EverySourceNodeIsANodeOfTheCapturesGraphs) {
  size_t checked = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kCaptures)) {
    if (!entry.is_regular_file() || !entry.path().string().ends_with(".log.gz")) continue;
    SCOPED_TRACE(entry.path().filename().string());
    const Artifact artifact = loadArtifact(entry.path());
    std::set<std::string, std::less<>> names;
    for (const GraphListing& graph : artifact.graphs())
      for (const ir::Node& node : graph.graph->nodes()) names.insert(std::string(graph.graph->str(node.name)));
    for (std::string_view code : outputCodes(*artifact.trace)) {
      for (const OutputCodeKernel& kernel : parseOutputCode(code)) {
        for (const std::string& node : kernel.sourceNodes) {
          EXPECT_TRUE(names.contains(node)) << node << " of " << kernel.name;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 19161u);  // names in the call-site comments of the 32 modules
}

TEST(OutputCode, EveryCaptureLaunchesWhatItsCallFunctionLaunches) {
  size_t modules = 0, triton = 0, externs = 0, withoutSourceNodes = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kCaptures)) {
    if (!entry.is_regular_file() || !entry.path().string().ends_with(".log.gz")) continue;
    SCOPED_TRACE(entry.path().filename().string());
    const TraceLog log = loadTraceLog(entry.path());
    for (std::string_view code : outputCodes(log)) {
      const std::vector<OutputCodeKernel> launches = parseOutputCode(code);
      ++modules;
      triton += countKind(launches, Kind::Triton);
      externs += countKind(launches, Kind::Extern);
      for (const OutputCodeKernel& kernel : launches) {
        withoutSourceNodes += kernel.sourceNodes.empty();
        if (kernel.kind == Kind::Triton) {
          EXPECT_NE(code.find("async_compile.triton('" + kernel.name + "'"), std::string_view::npos) << kernel.name;
        }
      }
    }
  }
  EXPECT_EQ(modules, 32u);
  EXPECT_EQ(triton, 976u);
  EXPECT_EQ(externs, 885u);
  // "Source Nodes: []" at the call: GPT-2's two randint seeds and ViT's two layout conversions.
  EXPECT_EQ(withoutSourceNodes, 4u);
}

TEST(OutputCode, ReadsOlderAndUnusualModules) {
  // A top-level `call(args)`, "# Source Nodes" comments, an alias call, bookkeeping calls, a
  // launch without a comment at the call, a kernel defined with double quotes, and Triton source
  // text that looks like code of the module.
  const std::string code = R"PY(
# Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]
triton_poi_fused_add_relu_0 = async_compile.triton('triton_poi_fused_add_relu_0', '''
import triton
def call(args):
    extern_kernels.mm(a, b)
''', device_str='cuda')

# kernel path: /tmp/x.py
# Source Nodes: [sum_1], Original ATen: [aten.sum]
user_kernel_1 = async_compile.triton("add_kernel", """
@triton.jit
def add_kernel(x):
    pass
""")


async_compile.wait(globals())
def call(args):
    arg0_1, = args
    args.clear()
    with torch.cuda._DeviceGuard(0):
        buf0 = empty_strided_cuda((4, ), (1, ), torch.float32)
        # Source Nodes: [], Original ATen: []
        aten.randint.low_out(-9223372036854775808, 9223372036854775807, [5], out=buf0)
        buf1 = torch.ops.inductor._alloc_from_pool(buf0, 0, torch.float32, (4, ), (1, ))
        # Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]
        stream0 = get_raw_stream(0)
        triton_poi_fused_add_relu_0.run(arg0_1, buf0, 4, stream=stream0)
        user_kernel_1.run(buf0, stream=stream0)
        buf2, buf3 = torch.ops.aten.sort.default(buf0)
        torch.ops._c10d_functional.wait_tensor.default(buf2)
        assert_size_stride(buf2, (4, ), (1, ), 'torch.ops.aten.sort.default')
        loaded_elsewhere.run(buf2)
    return (buf2, )

def benchmark_compiled_module(args, times=10, repeat=10):
    extern_kernels.mm(a, b)
)PY";
  const std::vector<OutputCodeKernel> launches = parseOutputCode(code);
  ASSERT_EQ(launches.size(), 5u);
  EXPECT_EQ(launches[0].name, "torch.ops.aten.randint.low_out");
  EXPECT_EQ(launches[0].kind, Kind::Extern);
  EXPECT_TRUE(launches[0].sourceNodes.empty());
  EXPECT_EQ(launches[0].line, 25u);
  EXPECT_EQ(launches[1].name, "triton_poi_fused_add_relu_0");
  EXPECT_EQ(launches[1].sourceNodes, (std::vector<std::string>{"add", "relu"}));
  EXPECT_EQ(launches[2].name, "add_kernel");  // the kernel's own name, not its variable's
  EXPECT_EQ(launches[2].kind, Kind::Triton);
  EXPECT_EQ(launches[2].sourceNodes, std::vector<std::string>{"sum_1"});  // from its definition
  EXPECT_EQ(launches[2].atenOps, std::vector<std::string>{"aten.sum"});
  EXPECT_EQ(launches[3].name, "torch.ops.aten.sort.default");
  EXPECT_TRUE(launches[3].sourceNodes.empty());
  EXPECT_EQ(launches[4].name, "loaded_elsewhere");
  EXPECT_EQ(launches[4].kind, Kind::Triton);
}

TEST(OutputCode, TextThatIsNoOutputCodeGivesNoLaunches) {
  EXPECT_TRUE(parseOutputCode("").empty());
  EXPECT_TRUE(parseOutputCode("def call(args):\n").empty());
  EXPECT_TRUE(parseOutputCode("extern_kernels.mm(a, b)\nx.run(1)\n").empty());  // not inside `call`
  EXPECT_TRUE(parseOutputCode(std::string(1 << 16, '(') + "\n'''\n# Source Nodes: [").empty());
  EXPECT_TRUE(parseOutputCode("def call(args):\n    # Source Nodes: [a, b\n    (.run(\n    = x(\n    a..b(\n").empty());
}

TEST(OutputCode, APrefixOfTheCodeLaunchesAPrefixOfItsSequence) {
  const std::string_view code = outputCodes(*llamaTinyTrain().trace)[0];
  const std::vector<OutputCodeKernel> whole = parseOutputCode(code);
  for (size_t cut = 0; cut < code.size(); cut += code.size() / 7 + 1) {
    const std::vector<OutputCodeKernel> part = parseOutputCode(code.substr(0, cut));
    ASSERT_LE(part.size(), whole.size());
    // The last launch may be cut inside its line; the ones before are whole.
    for (size_t i = 0; i + 1 < part.size(); ++i) {
      EXPECT_EQ(part[i].name, whole[i].name);
      EXPECT_EQ(part[i].sourceNodes, whole[i].sourceNodes);
    }
  }
}

TEST(MatchKernels, MapsTwoPassesOfTheLlamaForwardBackToItsLaunches) {
  const std::vector<OutputCodeKernel> launches = parseOutputCode(outputCodes(*llamaTinyTrain().trace)[0]);
  ASSERT_EQ(launches.size(), 38u);
  // A device timeline as torch.profiler would record two steps: each Triton launch one kernel of
  // its name, each matmul one cuBLAS kernel, each attention two cuDNN kernels; between the passes
  // a copy (not a kernel) and a Triton kernel of other code.
  const auto secondsOf = [](size_t launch) { return static_cast<double>(launch + 1) * 1e-6; };
  std::vector<ChromeKernelEvent> events;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < launches.size(); ++i) {
      if (launches[i].kind == Kind::Triton) {
        events.push_back(kernelEvent(launches[i].name, secondsOf(i)));
      } else if (launches[i].name == "extern_kernels.mm") {
        events.push_back(kernelEvent("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64", secondsOf(i)));
      } else {
        events.push_back(kernelEvent("cudnn_generated_fort_native_sdpa_sm90_flash_fprop", secondsOf(i) / 2));
        events.push_back(kernelEvent("cudnn_generated_fort_native_sdpa_sm90_knob_7", secondsOf(i) / 2));
      }
    }
    ChromeKernelEvent copy = kernelEvent("Memcpy HtoD (Pageable -> Device)", 1);
    copy.kind = DeviceActivity::Memcpy;
    events.push_back(copy);
    events.push_back(kernelEvent("triton_poi_fused_optimizer_step_0", 1));
  }

  const KernelMatch match = matchKernels(launches, events);
  ASSERT_EQ(match.launches.size(), launches.size());
  EXPECT_EQ(match.passes, 2u);
  EXPECT_EQ(match.unmatchedLaunches, 0u);
  EXPECT_EQ(match.unmatchedEvents, 2u);  // the other code's Triton kernel, twice
  for (size_t i = 0; i < launches.size(); ++i) {
    SCOPED_TRACE(std::to_string(i) + " " + launches[i].name);
    const MatchedKernel& matched = match.launches[i];
    // An attention shares its gap with the output projection after it: 3 kernels for 2 calls.
    const bool sharesGap = launches[i].kind == Kind::Extern &&
                           ((i > 0 && launches[i - 1].name.ends_with("attention.default")) ||
                            launches[i].name.ends_with("attention.default"));
    EXPECT_EQ(matched.shared, sharesGap);
    if (sharesGap) {
      const size_t attention = launches[i].name.ends_with("attention.default") ? i : i - 1;
      EXPECT_NEAR(matched.seconds, secondsOf(attention) + secondsOf(attention + 1), 1e-12);
      EXPECT_EQ(matched.deviceKernels, 0u);
    } else {
      EXPECT_NEAR(matched.seconds, 2 * secondsOf(i), 1e-12);
      EXPECT_EQ(matched.deviceKernels, 2u);
    }
  }
}

TEST(MatchKernels, GapsBetweenAnchorsAndAtTheEnds) {
  const std::vector<OutputCodeKernel> launches = {
      launch("extern_kernels.mm", Kind::Extern),         launch("triton_a", Kind::Triton),
      launch("torch.ops.aten.sort.default", Kind::Extern), launch("triton_b", Kind::Triton),
      launch("extern_kernels.addmm", Kind::Extern),      launch("extern_kernels.bmm", Kind::Extern),
  };
  // One pass: the leading gap (2 kernels for 1 call: unmatched at a boundary), sort's 3 kernels
  // (one call within the pass: all its), and the trailing gap (2 kernels for 2 calls: one each).
  const KernelMatch match = matchKernels(launches, {kernelEvent("other", 1), kernelEvent("gemm", 2),
                                                    kernelEvent("triton_a", 3), kernelEvent("radix_sort_1", 4),
                                                    kernelEvent("radix_sort_2", 5), kernelEvent("fill", 6),
                                                    kernelEvent("triton_b", 7), kernelEvent("gemm", 8),
                                                    kernelEvent("gemm", 9)});
  EXPECT_EQ(match.passes, 1u);
  EXPECT_EQ(match.unmatchedEvents, 2u);
  EXPECT_EQ(match.unmatchedLaunches, 1u);
  EXPECT_EQ(match.launches[0].deviceKernels, 0u);
  EXPECT_EQ(match.launches[1].seconds, 3);
  EXPECT_EQ(match.launches[2].seconds, 15);
  EXPECT_EQ(match.launches[2].deviceKernels, 3u);
  EXPECT_EQ(match.launches[3].seconds, 7);
  EXPECT_EQ(match.launches[4].seconds, 8);
  EXPECT_EQ(match.launches[5].seconds, 9);

  // The same events as one call's (a compiled-graph call of a trace): its head is its own, so the
  // leading gap's 2 kernels go to the one call there; a trailing gap of 3 kernels for 2 calls is
  // shared by them.
  const std::vector<ChromeKernelEvent> oneCall = {kernelEvent("other", 1), kernelEvent("gemm", 2),
                                                  kernelEvent("triton_a", 3), kernelEvent("radix_sort_1", 4),
                                                  kernelEvent("triton_b", 7), kernelEvent("gemm", 8),
                                                  kernelEvent("gemm", 9), kernelEvent("reduce", 10)};
  const KernelMatch call = matchKernels(launches, oneCall, /*oneCall=*/true);
  EXPECT_EQ(call.unmatchedEvents, 0u);
  EXPECT_EQ(call.unmatchedLaunches, 0u);
  EXPECT_EQ(call.launches[0].seconds, 3);
  EXPECT_EQ(call.launches[0].deviceKernels, 2u);
  EXPECT_TRUE(call.launches[4].shared);
  EXPECT_TRUE(call.launches[5].shared);
  EXPECT_EQ(call.launches[4].seconds + call.launches[5].seconds, 27);
  // Without it the ends stay unmatched: code outside the sequence may have run there.
  const KernelMatch loose = matchKernels(launches, oneCall);
  EXPECT_EQ(loose.unmatchedEvents, 5u);
  EXPECT_EQ(loose.unmatchedLaunches, 3u);

  // A Triton kernel missing from the trace leaves its launch unmatched and the rest in step.
  const KernelMatch skipped = matchKernels({launch("triton_a", Kind::Triton), launch("triton_b", Kind::Triton),
                                            launch("triton_c", Kind::Triton)},
                                           {kernelEvent("triton_a", 1), kernelEvent("triton_c", 2),
                                            kernelEvent("triton_a", 3), kernelEvent("triton_b", 4)});
  EXPECT_EQ(skipped.passes, 2u);
  EXPECT_EQ(skipped.unmatchedLaunches, 0u);  // triton_c ran in the first pass only, triton_b in the second
  EXPECT_EQ(skipped.launches[0].seconds, 4);
  EXPECT_EQ(skipped.launches[1].seconds, 4);
  EXPECT_EQ(skipped.launches[2].seconds, 2);

  // Extern calls only: nothing anchors, and a one-to-one count is the only safe match.
  const std::vector<OutputCodeKernel> externOnly = {launch("extern_kernels.mm", Kind::Extern),
                                                    launch("extern_kernels.mm", Kind::Extern)};
  EXPECT_EQ(matchKernels(externOnly, {kernelEvent("gemm", 1), kernelEvent("gemm", 2)}).passes, 1u);
  const KernelMatch uneven = matchKernels(externOnly, {kernelEvent("gemm", 1)});
  EXPECT_EQ(uneven.passes, 0u);
  EXPECT_EQ(uneven.unmatchedLaunches, 2u);
  EXPECT_EQ(uneven.unmatchedEvents, 1u);
  EXPECT_EQ(matchKernels({}, {kernelEvent("gemm", 1)}).unmatchedEvents, 1u);
}
