// A compiled step's device time, from a torch.profiler trace, put on the nodes of the capture's graph:
// what `lathe measure CAPTURE --trace TRACE.json.gz` writes as a profile's measured nodes (source
// "torch.profiler"), so that `--profile` prices the plan with the kernels the GPU really ran.
//
// The capture and the trace must come from the same run (the capture's output code names the
// kernels). Each `## Call CompiledFxGraph <key> ##` host operator of the trace is one call of a
// compiled graph: the device kernels launched inside it are matched onto the launch sequence of the
// output code that fits them best (io::matchKernels), among every output code of the log, and are
// that code's when it explains them (four fifths of its launches timed, at most a fifth of the
// call's kernels left over); other calls count as time outside the graph.
// A matched launch's time goes to the graph nodes its "Source Nodes" comment names:
//  - names of the graph's own nodes (the backward's code: post-grad names are the joint graph's);
//  - names of the compile's Dynamo graph (the forward's code names the pre-grad nodes), through their
//    `# File:` line to the graph's forward nodes at the same line that run one of the launch's
//    "Original ATen" ops;
//  - names of nodes Inductor's post-grad passes made, through the graph's one node of the same op
//    and value (dtype and sizes); else the graph's one node of the launch's op;
// shared among them in proportion to the model's estimate (evenly where it prices them at zero).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/trace/chrome_trace.h"
#include "io/trace/trace_log.h"
#include "passes/plan_target.h"
#include "plan/profile.h"

namespace lathe::passes {

struct TraceProfile {
  plan::MeasuredNodes measured;  // every call node of the graph, seconds per step (0: no kernel of its own)
  uint32_t steps = 0;            // calls of the graph's first code found in the trace
  size_t codes = 0;              // output codes of the graph's compile
  size_t calls = 0;              // compiled-graph calls of the trace matched to those codes
  size_t otherCalls = 0;         // compiled-graph calls of other compiles (another graph, the loss)
  size_t launches = 0;           // launches of the graph's codes, summed over codes
  size_t launchesTimed = 0;      // of which the trace gave device time
  size_t nodesTimed = 0;         // graph nodes given time
  double graphSeconds = 0;       // per step: device time of the graph's kernels
  double unattributedSeconds = 0;  // per step: of which no graph node could be named for
  double otherSeconds = 0;       // per step: device kernels outside the graph's calls
  std::string device;            // the trace's device
  std::vector<std::string> notes;  // what the mapping could not do, one line each
};

// Throws Error(BadInput) when the graph's compile logged no output code, the trace holds no call of
// it, or the trace has no kernels.
[[nodiscard]] TraceProfile profileFromTrace(const PlanTarget& target, const io::TraceLog& log,
                                            const io::ChromeTrace& trace);

}  // namespace lathe::passes
