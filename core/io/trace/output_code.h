// Inductor's output code (the payload of `inductor_output_code` events, TraceCompile::outputCodeEvents):
// the kernels its `call(args)` launches, in launch order, each with the graph nodes it computes; and
// the mapping of a profiler trace's device kernels back onto that launch sequence.
//
// What the code looks like (torch 2.x wrapper codegen):
//   # Topologically Sorted Source Nodes: [pow_1, variance, ...], Original ATen: [aten.pow, aten.mean, ...]
//   triton_per_fused_mean_pow_0 = async_compile.triton('triton_per_fused_mean_pow_0', '''
//   ...Triton source...''', device_str='cuda')
//   ...
//   def call(self, args):             (or `def call(args):` in older versions)
//       # Topologically Sorted Source Nodes: [...], Original ATen: [...]
//       stream0 = get_raw_stream(0)
//       triton_per_fused_mean_pow_0.run(buf0, ..., stream=stream0)
//       # Topologically Sorted Source Nodes: [linear], Original ATen: [aten.mm]
//       extern_kernels.mm(buf1, reinterpret_tensor(primals_5, ...), out=buf2)
//       buf3 = torch.ops.aten._scaled_dot_product_cudnn_attention.default(...)
// A kernel used at several places in `call` is launched for other nodes each time: the comment
// above the launch names them; the one above the definition is the fallback.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/trace/chrome_trace.h"

namespace lathe::io {

struct OutputCodeKernel {
  enum class Kind : uint8_t { Triton, Extern };
  // Triton: the kernel's name as it runs ("triton_per_fused_mean_pow_0", the name given to
  // async_compile.triton). Extern: the callee, aliases spelled out ("extern_kernels.mm",
  // "torch.ops.aten._scaled_dot_product_cudnn_attention.default"; `aten.x` as `torch.ops.aten.x`).
  std::string name;
  Kind kind = Kind::Triton;
  std::vector<std::string> sourceNodes;  // "Source Nodes: [...]": node names of the pre-grad graph
  std::vector<std::string> atenOps;      // "Original ATen: [...]": "aten.mm", ...
  uint64_t line = 0;                     // 1-based line of the launch in the code
};

// The launches of `call`, in order. Text that is not output code gives an empty list; never throws.
// Calls that launch no device work are left out: torch.ops.inductor.* (buffer reuse) and
// _c10d_functional wait_tensor. Launches in functions other than `call` (graph partitions,
// subgraphs of control-flow operators) are not followed.
[[nodiscard]] std::vector<OutputCodeKernel> parseOutputCode(std::string_view code);

// Device time of one launch of the output code, summed over every pass of the sequence found in
// the trace.
struct MatchedKernel {
  double seconds = 0;
  uint32_t deviceKernels = 0;  // trace events counted into `seconds`
  // Part of its time is a share of a gap's: extern calls whose device kernels could not be told
  // apart (see matchKernels).
  bool shared = false;
};

struct KernelMatch {
  std::vector<MatchedKernel> launches;  // one per launch, in launch order
  uint32_t passes = 0;                  // times the trace ran through the launch sequence (or part of it)
  size_t unmatchedLaunches = 0;         // launches that got no device time in any pass
  size_t unmatchedEvents = 0;           // kernel events given to no launch
};

// Maps device kernels (ChromeTrace::kernels, kind Kernel; copies and fills are no launches of the
// code) onto the launch sequence. Triton launches anchor it: an event named like a Triton launch
// matches the next launch of that name at or after the current position, wrapping to the start
// (a new pass) when none is left. The other events between two anchors ran for the extern calls
// between them (a cuDNN attention or a split-K matmul runs several kernels for one call):
//  - as many events as extern calls: one each, in order;
//  - else, within a pass, one extern call takes them all, and several share the gap's total time
//    evenly (`shared`);
//  - else (before the first anchor, after the last, or across two passes, where code outside the
//    module may have run) they are left unmatched; with `oneCall` (the events are those launched
//    inside one call of the code, as a compiled-graph call of a torch.profiler trace windows them)
//    the head before the first anchor and the tail after the last are the call's own and are
//    matched as within a pass.
// Events named `triton_...` that the sequence does not launch belong to other code: unmatched.
// `events` should be of one stream of one device, in time order, as ChromeTrace gives them.
[[nodiscard]] KernelMatch matchKernels(const std::vector<OutputCodeKernel>& launches,
                                       const std::vector<ChromeKernelEvent>& events, bool oneCall = false);

}  // namespace lathe::io
