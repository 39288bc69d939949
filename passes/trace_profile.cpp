#include "passes/trace_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>
#include <unordered_map>

#include "io/graph_export.h"
#include "io/trace/output_code.h"
#include "ir/op_info.h"
#include "util/diagnostics.h"

namespace lathe::passes {
namespace {

constexpr std::string_view kCompiledCallPrefix = "## Call CompiledFxGraph";

// "torch.ops.aten.mm.default" and "aten.mm" both as "aten.mm": the op without its overload.
std::string opPacket(std::string_view target) {
  std::string name = ir::canonicalOpName(target);
  const size_t first = name.find('.');
  const size_t second = first == std::string::npos ? std::string::npos : name.find('.', first + 1);
  if (second != std::string::npos) name.resize(second);
  return name;
}

std::string lineKey(const ir::Graph& graph, const ir::Provenance& at) {
  return fmt::format("{}:{}", graph.str(at.file), at.line);
}

struct Code {
  std::vector<io::OutputCodeKernel> launches;
  bool ofTarget = false;
};

// One compiled-graph call of the trace: the device kernels launched inside it, in device order.
struct Call {
  std::vector<io::ChromeKernelEvent> kernels;
};

std::vector<Call> compiledCalls(const io::ChromeTrace& trace) {
  struct Window {
    double begin, end;
    size_t call;
  };
  // Per host thread, in start order (cpuOps are): the calls of one thread do not overlap.
  std::unordered_map<int64_t, std::vector<Window>> windows;
  size_t count = 0;
  for (const io::ChromeCpuOp& op : trace.cpuOps) {
    if (std::string_view(op.name).starts_with(kCompiledCallPrefix))
      windows[op.thread].push_back({op.start, op.start + op.seconds, count++});
  }
  std::vector<Call> calls(count);
  for (const io::ChromeKernelEvent& kernel : trace.kernels) {
    if (kernel.kind != io::DeviceActivity::Kernel || !kernel.launchStart) continue;
    const auto thread = windows.find(kernel.launchThread);
    if (thread == windows.end()) continue;
    const std::vector<Window>& own = thread->second;
    // The last call that began at or before the launch, if the launch falls inside it.
    const auto after = std::upper_bound(own.begin(), own.end(), *kernel.launchStart,
                                        [](double at, const Window& w) { return at < w.begin; });
    if (after == own.begin()) continue;
    const Window& window = *std::prev(after);
    if (*kernel.launchStart <= window.end) calls[window.call].kernels.push_back(kernel);
  }
  return calls;
}

}  // namespace

TraceProfile profileFromTrace(const PlanTarget& target, const io::TraceLog& log, const io::ChromeTrace& trace) {
  const ir::Graph& graph = target.graph();
  const io::GraphEntry* entry = log.findGraph(target.graphId());
  if (!entry || entry->compile < 0) throw Error(ErrorCode::BadInput, "graph " + target.graphId() + " is not in the log");
  const io::TraceCompile& compile = log.compiles[static_cast<size_t>(entry->compile)];
  if (compile.outputCodeEvents.empty()) {
    throw Error(ErrorCode::BadInput, "compile " + compile.id + " logged no inductor_output_code: the trace's kernels " +
                                         "cannot be named (capture with TORCH_TRACE and Inductor)");
  }
  if (trace.kernels.empty()) throw Error(ErrorCode::BadInput, "the trace holds no device kernels (record CUDA activity)");

  // Every output code of the log: a call is recognised among all of them.
  std::vector<Code> codes;
  for (size_t c = 0; c < log.compiles.size(); ++c) {
    for (size_t event : log.compiles[c].outputCodeEvents) {
      Code code;
      code.launches = io::parseOutputCode(log.events[event].payload);
      code.ofTarget = c == static_cast<size_t>(entry->compile);
      if (!code.launches.empty()) codes.push_back(std::move(code));
    }
  }

  TraceProfile result;
  result.device = trace.deviceName;
  for (const Code& code : codes) {
    if (!code.ofTarget) continue;
    ++result.codes;
    result.launches += code.launches.size();
  }
  if (result.codes == 0) throw Error(ErrorCode::BadInput, "compile " + compile.id + "'s output code launches no kernel");

  // Device seconds per launch of each code, summed over the calls; calls per code.
  std::vector<std::vector<double>> launchSeconds(codes.size());
  std::vector<uint32_t> callsOf(codes.size(), 0);
  for (size_t c = 0; c < codes.size(); ++c) launchSeconds[c].assign(codes[c].launches.size(), 0);
  const std::vector<Call> calls = compiledCalls(trace);
  if (calls.empty()) {
    throw Error(ErrorCode::BadInput, "the trace has no compiled-graph calls (\"## Call CompiledFxGraph\" host operators): "
                                     "record it with torch.profiler's CPU and CUDA activity");
  }
  // The part of a code's launches a match timed.
  const auto part = [&](size_t launchesTimed, size_t code) {
    return static_cast<double>(launchesTimed) / static_cast<double>(codes[code].launches.size());
  };
  double attributedTotal = 0;
  for (const Call& call : calls) {
    if (call.kernels.empty()) continue;
    size_t best = codes.size();
    io::KernelMatch bestMatch;
    size_t bestTimed = 0;
    for (size_t c = 0; c < codes.size(); ++c) {
      io::KernelMatch match = io::matchKernels(codes[c].launches, call.kernels, /*oneCall=*/true);
      // Launches given device time: their own kernels, or a share of a gap's (a cuDNN attention
      // backward runs five kernels for the matmuls and the attention call around it).
      const size_t timed = match.launches.size() - match.unmatchedLaunches;
      // The code that explains the call: the largest part of its launches timed (a longer code
      // finds a share of time for more of its extern calls in any call), fewest kernels left over.
      if (best == codes.size() || part(timed, c) > part(bestTimed, best) ||
          (part(timed, c) == part(bestTimed, best) && match.unmatchedEvents < bestMatch.unmatchedEvents)) {
        best = c;
        bestTimed = timed;
        bestMatch = std::move(match);
      }
    }
    // A call is the code's only when the code explains it: most launches timed, few kernels left
    // over (kernel names like triton_poi_fused_add_0 recur in every model's code).
    const bool explained = best < codes.size() && bestTimed * 5 >= codes[best].launches.size() * 4 &&
                           bestMatch.unmatchedEvents * 5 <= call.kernels.size();
    if (!explained || !codes[best].ofTarget) {
      ++result.otherCalls;
      continue;
    }
    ++result.calls;
    ++callsOf[best];
    for (size_t i = 0; i < bestMatch.launches.size(); ++i) {
      launchSeconds[best][i] += bestMatch.launches[i].seconds;
      attributedTotal += bestMatch.launches[i].seconds;
    }
  }
  if (result.calls == 0) {
    throw Error(ErrorCode::BadInput, "none of the trace's " + std::to_string(calls.size()) + " compiled-graph calls ran " +
                                         "compile " + compile.id + "'s code: the trace is of another run");
  }
  // A step calls each of the graph's codes once (forward, backward); the first code's calls count them.
  for (size_t c = 0; c < codes.size(); ++c) {
    if (codes[c].ofTarget && callsOf[c] > 0) {
      result.steps = callsOf[c];
      break;
    }
  }
  for (size_t c = 0; c < codes.size(); ++c) {
    if (codes[c].ofTarget && callsOf[c] != result.steps) {
      result.notes.push_back(fmt::format("one of the graph's codes ran {} times, another {}: per-step times divide by {}",
                                         callsOf[c], result.steps, result.steps));
      break;
    }
  }

  // Names: the graph's own, and the Dynamo graph's by their source line.
  std::unordered_map<std::string_view, ir::NodeId> byName;
  std::unordered_map<std::string, std::vector<ir::NodeId>> forwardByLine;
  const analysis::JointInfo& joint = target.joint();
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (!graph.node(id).isCall()) continue;
    byName.emplace(graph.name(id), id);
    const ir::Provenance& at = graph.node(id).provenance;
    const bool forward = !joint.joint || !joint.isBackward(id);
    if (at.file != 0 && forward) forwardByLine[lineKey(graph, at)].push_back(id);
  }
  std::unordered_map<std::string, std::vector<ir::NodeId>> opNodes;  // op packet -> the graph's nodes running it
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).isCall()) opNodes[opPacket(graph.target(id))].push_back(id);
  }
  // A node by what it computes: its op and the value's dtype and sizes.
  const auto valueKey = [](const ir::Graph& g, ir::NodeId id) {
    return opPacket(g.target(id)) + ' ' + io::metaSummary(g, g.node(id).meta);
  };
  std::unordered_map<std::string, std::vector<ir::NodeId>> twinByKey;
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (graph.node(id).isCall()) twinByKey[valueKey(graph, id)].push_back(id);
  }
  std::unordered_map<std::string, std::string> dynamoLine;    // Dynamo node name -> "file:line"
  std::unordered_map<std::string, std::string> postGradTwin;  // post-grad node not in the graph -> its value key
  for (size_t g : compile.graphs) {
    const io::GraphEntry& other = log.graphs[g];
    if (!other.graph) continue;
    const ir::Graph& og = *other.graph;
    if (other.kind == "dynamo_output_graph") {
      for (ir::NodeId id = 0; id < og.size(); ++id) {
        if (og.node(id).provenance.file != 0) dynamoLine.emplace(og.name(id), lineKey(og, og.node(id).provenance));
      }
    } else if (other.kind == "inductor_post_grad_graph") {
      for (ir::NodeId id = 0; id < og.size(); ++id) {
        if (og.node(id).isCall() && !byName.contains(og.name(id))) postGradTwin.emplace(og.name(id), valueKey(og, id));
      }
    }
  }

  const std::vector<double>& estimate = target.estimatedNodeSeconds();
  std::vector<double> seconds(graph.size(), 0);
  const double perStep = 1.0 / result.steps;
  double unattributed = 0;
  for (size_t c = 0; c < codes.size(); ++c) {
    if (!codes[c].ofTarget) continue;
    for (size_t i = 0; i < codes[c].launches.size(); ++i) {
      const io::OutputCodeKernel& launch = codes[c].launches[i];
      if (launchSeconds[c][i] <= 0) continue;
      ++result.launchesTimed;
      std::set<std::string> ops;
      for (const std::string& op : launch.atenOps) ops.insert(opPacket(op));
      const auto runsOp = [&](ir::NodeId id) { return ops.empty() || ops.contains(opPacket(graph.target(id))); };
      std::vector<ir::NodeId> nodes;
      std::vector<ir::NodeId> byNameOnly;
      for (const std::string& name : launch.sourceNodes) {
        const auto dynamo = dynamoLine.find(name);
        const auto own = byName.find(name);
        // A Dynamo name in a code that also names the graph's nodes: the graph's node when it runs
        // one of the launch's ops at the same line, else the forward nodes of that line.
        if (own != byName.end() && runsOp(own->second) &&
            (dynamo == dynamoLine.end() || lineKey(graph, graph.node(own->second).provenance) == dynamo->second)) {
          nodes.push_back(own->second);
          continue;
        }
        if (dynamo != dynamoLine.end()) {
          const auto line = forwardByLine.find(dynamo->second);
          if (line != forwardByLine.end()) {
            for (ir::NodeId id : line->second) {
              if (runsOp(id)) nodes.push_back(id);
            }
          }
        } else if (own != byName.end()) {
          byNameOnly.push_back(own->second);  // post-grad passes may have rewritten its op
        }
      }
      if (nodes.empty()) nodes = std::move(byNameOnly);
      // Named only by nodes Inductor's post-grad passes made (`full_default_18`, the zeroed buffer an
      // embedding gradient accumulates into): the graph's one node computing the same op and value
      // (`full_13`, aten.full of f32[128256, 4096]); else the graph's one node of the launch's op.
      if (nodes.empty()) {
        for (const std::string& name : launch.sourceNodes) {
          const auto made = postGradTwin.find(name);
          if (made == postGradTwin.end()) continue;
          const auto twin = twinByKey.find(made->second);
          if (twin != twinByKey.end() && twin->second.size() == 1) nodes.push_back(twin->second.front());
        }
      }
      if (nodes.empty() && ops.size() == 1) {
        const auto only = opNodes.find(*ops.begin());
        if (only != opNodes.end() && only->second.size() == 1) nodes = only->second;
      }
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      const double launchPerStep = launchSeconds[c][i] * perStep;
      if (nodes.empty()) {
        unattributed += launchPerStep;
        continue;
      }
      double weight = 0;
      for (ir::NodeId id : nodes) weight += estimate[id];
      for (ir::NodeId id : nodes) {
        seconds[id] += launchPerStep * (weight > 0 ? estimate[id] / weight : 1.0 / static_cast<double>(nodes.size()));
      }
    }
  }

  double allKernels = 0;
  for (const io::ChromeKernelEvent& k : trace.kernels) {
    if (k.kind == io::DeviceActivity::Kernel) allKernels += k.seconds;
  }
  result.graphSeconds = attributedTotal * perStep;
  result.unattributedSeconds = unattributed;
  result.otherSeconds = std::max(0.0, allKernels - attributedTotal) * perStep;
  result.measured.source = "torch.profiler";
  for (ir::NodeId id = 0; id < graph.size(); ++id) {
    if (!graph.node(id).isCall()) continue;
    if (seconds[id] > 0) ++result.nodesTimed;
    result.measured.nodes.push_back({std::string(graph.name(id)), seconds[id], 0});
  }
  if (result.launchesTimed < result.launches) {
    result.notes.push_back(fmt::format("{} of the code's {} launches got no device time in the trace",
                                       result.launches - result.launchesTimed, result.launches));
  }
  return result;
}

}  // namespace lathe::passes
