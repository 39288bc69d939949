#include "plan/profile.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "plan/json_reader.h"
#include "util/atomic_write.h"
#include "util/diagnostics.h"
#include "util/input.h"
#include "util/json_limits.h"

namespace lathe::plan {

namespace {

using At = JsonAt;
using Reader = JsonReader;

// A profile holds a few values per step; a million steps is far beyond any run.
constexpr JsonLimits kProfileJsonLimits{.maxDepth = 16, .maxValues = uint64_t{8} << 20};

Json optionalBytes(const std::optional<uint64_t>& bytes) { return bytes ? Json(*bytes) : Json(nullptr); }

std::optional<uint64_t> readOptionalBytes(const Reader& r, const At& object, std::string_view key) {
  const At at = r.field(object, key);
  if (at.json().is_null()) return std::nullopt;
  return r.as<uint64_t>(at);
}

Json timelineJson(const StepTimeline& timeline) {
  auto spans = [](const std::vector<TimedSpan>& list) {
    Json out = Json::array();
    for (const TimedSpan& s : list) out.push_back({{"unit", s.unit}, {"start", s.start}, {"end", s.end}});
    return out;
  };
  return {{"step_seconds", timeline.stepSeconds},
          {"segments", spans(timeline.segments)},
          {"h2d", spans(timeline.h2d)},
          {"d2h", spans(timeline.d2h)}};
}

StepTimeline readTimeline(const Reader& r, const At& at, size_t unitCount) {
  StepTimeline timeline;
  timeline.stepSeconds = r.value<double>(at, "step_seconds");
  if (timeline.stepSeconds < 0) r.fail(r.field(at, "step_seconds"), "a time is not negative");
  auto spans = [&](std::string_view key, std::vector<TimedSpan>& out) {
    r.forEach(r.field(at, key), [&](const At& s) {
      TimedSpan span;
      span.unit = r.value<int32_t>(s, "unit");
      if (span.unit < 0 || static_cast<size_t>(span.unit) >= unitCount) r.fail(r.field(s, "unit"), "not a unit's index");
      span.start = r.value<double>(s, "start");
      span.end = r.value<double>(s, "end");
      if (span.end < span.start) r.fail(r.field(s, "end"), "a span ends where or after it starts");
      out.push_back(span);
    });
  };
  spans("segments", timeline.segments);
  spans("h2d", timeline.h2d);
  spans("d2h", timeline.d2h);
  return timeline;
}

WeightOffloadRun readWeightOffload(const Reader& r, const At& at) {
  WeightOffloadRun run;
  run.kind = r.value<std::string>(at, "kind");
  if (run.kind != "inference" && run.kind != "training") r.fail(r.field(at, "kind"), "inference or training");
  run.policy = r.name(r.field(at, "policy"));
  r.forEach(r.field(at, "units"), [&](const At& u) { run.units.push_back(r.name(u)); });
  r.forEach(r.field(at, "unit_bytes"), [&](const At& b) { run.unitBytes.push_back(r.as<uint64_t>(b)); });
  if (run.unitBytes.size() != run.units.size()) r.fail(r.field(at, "unit_bytes"), "one size per unit");
  r.forEach(r.field(at, "resident"), [&](const At& u) {
    run.resident.push_back(r.name(u));
    if (std::find(run.units.begin(), run.units.end(), run.resident.back()) == run.units.end()) r.fail(u, "not a unit");
  });
  run.h2dBandwidth = r.value<double>(at, "h2d_bandwidth");
  if (run.h2dBandwidth <= 0) r.fail(r.field(at, "h2d_bandwidth"), "a positive rate");
  run.simulated = readTimeline(r, r.field(at, "simulated"), run.units.size());
  run.measured = readTimeline(r, r.field(at, "measured"), run.units.size());
  return run;
}

}  // namespace

double StepTimeline::idleSeconds() const {
  double busy = 0;
  for (const TimedSpan& s : segments) busy += s.end - s.start;
  return std::max(0.0, stepSeconds - busy);
}

double MeasuredProfile::medianStepSeconds() const {
  if (steps.empty()) return 0;
  std::vector<double> seconds;
  for (const ProfiledStep& s : steps) {
    if (s.kernels.empty()) seconds.push_back(s.seconds);
  }
  if (seconds.empty()) {
    for (const ProfiledStep& s : steps) seconds.push_back(s.seconds);
  }
  std::sort(seconds.begin(), seconds.end());
  const size_t n = seconds.size();
  return n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
}

const ProfiledStep* MeasuredProfile::kernelStep() const {
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if (!it->kernels.empty()) return &*it;
  }
  return nullptr;
}

std::optional<uint64_t> MeasuredProfile::maxPeakBytes() const {
  std::optional<uint64_t> peak;
  for (const ProfiledStep& s : steps) {
    if (s.peakBytes) peak = std::max(peak.value_or(0), *s.peakBytes);
  }
  return peak;
}

uint64_t MeasuredProfile::maxBeforeBytes() const {
  uint64_t before = 0;
  for (const ProfiledStep& s : steps) before = std::max(before, s.beforeBytes.value_or(0));
  return before;
}

const ProfiledGraph* MeasuredProfile::measuredGraph(std::string_view fingerprint) const {
  for (const ProfiledGraph& g : graphs) {
    if (g.measured && g.fingerprint == fingerprint) return &g;
  }
  return nullptr;
}

std::vector<std::optional<double>> measuredSecondsByNode(const MeasuredNodes& measured, const ir::Graph& graph) {
  std::vector<std::optional<double>> seconds(graph.size());
  std::vector<std::string> unknown;
  for (const MeasuredNode& n : measured.nodes) {
    const ir::NodeId id = graph.find(n.node);
    if (id == ir::kNoNode) {
      unknown.push_back(n.node);
      continue;
    }
    seconds[id] = seconds[id].value_or(0) + n.seconds;
  }
  if (!unknown.empty()) {
    std::string names;
    for (size_t i = 0; i < unknown.size() && i < 3; ++i) names += (i ? ", " : "") + unknown[i];
    throw Error(ErrorCode::BadInput, "the profile measured " + std::to_string(unknown.size()) +
                                         " node(s) this graph does not have (" + names + (unknown.size() > 3 ? ", ..." : "") +
                                         "): it was measured on another graph");
  }
  return seconds;
}

std::string profileToJson(const MeasuredProfile& profile) {
  Json j = {{"format", kProfileFormat},
            {"device", {{"name", profile.device}, {"memory_bytes", profile.deviceMemoryBytes}}},
            {"torch", profile.torchVersion}};
  Json graphs = Json::array();
  for (const ProfiledGraph& g : profile.graphs) {
    Json graph = {{"graph", g.graphId},
                  {"fingerprint", g.fingerprint},
                  {"plan", g.plan},
                  {"predicted_peak_bytes", g.predictedPeakBytes},
                  {"predicted_step_seconds", g.predictedStepSeconds}};
    if (g.measured) {
      Json nodes = Json::array();
      for (const MeasuredNode& n : g.measured->nodes) nodes.push_back({{"node", n.node}, {"seconds", n.seconds}, {"bytes", n.bytes}});
      graph["measured"] = {{"source", g.measured->source}, {"live_peak_bytes", g.measured->livePeakBytes}, {"nodes", std::move(nodes)}};
    }
    graphs.push_back(std::move(graph));
  }
  j["graphs"] = std::move(graphs);
  Json steps = Json::array();
  for (const ProfiledStep& s : profile.steps) {
    Json step = {{"seconds", s.seconds}, {"peak_bytes", optionalBytes(s.peakBytes)}, {"before_bytes", optionalBytes(s.beforeBytes)}};
    if (!s.kernels.empty()) {
      Json kernels = Json::array();
      for (const KernelTime& k : s.kernels) kernels.push_back({{"name", k.name}, {"calls", k.calls}, {"seconds", k.seconds}});
      step["kernels"] = std::move(kernels);
    }
    steps.push_back(std::move(step));
  }
  j["steps"] = std::move(steps);
  if (profile.weightOffload) {
    const WeightOffloadRun& run = *profile.weightOffload;
    j["weight_offload"] = {{"kind", run.kind},
                           {"policy", run.policy},
                           {"units", run.units},
                           {"unit_bytes", run.unitBytes},
                           {"resident", run.resident},
                           {"h2d_bandwidth", run.h2dBandwidth},
                           {"simulated", timelineJson(run.simulated)},
                           {"measured", timelineJson(run.measured)}};
  }
  return j.dump(1) + "\n";
}

MeasuredProfile profileFromJson(std::string_view text, const std::string& sourceName) {
  const Reader r(sourceName);
  const Json doc = readFormatDocument(text, sourceName, kProfileJsonLimits, kProfileFormat);
  const At j(doc);
  MeasuredProfile profile;
  const At device = r.field(j, "device");
  profile.device = r.name(r.field(device, "name"));
  profile.deviceMemoryBytes = r.value<uint64_t>(device, "memory_bytes");
  profile.torchVersion = r.value<std::string>(j, "torch");
  r.forEach(r.field(j, "graphs"), [&](const At& g) {
    ProfiledGraph graph;
    graph.graphId = r.name(r.field(g, "graph"));
    graph.fingerprint = r.value<std::string>(g, "fingerprint");
    graph.plan = r.value<std::string>(g, "plan");
    graph.predictedPeakBytes = r.value<uint64_t>(g, "predicted_peak_bytes");
    graph.predictedStepSeconds = r.value<double>(g, "predicted_step_seconds");
    if (graph.predictedStepSeconds < 0) r.fail(r.field(g, "predicted_step_seconds"), "a time is not negative");
    if (r.has(g, "measured")) {
      const At m = r.field(g, "measured");
      MeasuredNodes measured;
      measured.source = r.name(r.field(m, "source"));
      measured.livePeakBytes = r.value<uint64_t>(m, "live_peak_bytes");
      r.forEach(r.field(m, "nodes"), [&](const At& n) {
        MeasuredNode node;
        node.node = r.name(r.field(n, "node"));
        node.seconds = r.value<double>(n, "seconds");
        if (!(node.seconds >= 0)) r.fail(r.field(n, "seconds"), "a time is not negative");
        node.bytes = r.value<uint64_t>(n, "bytes");
        measured.nodes.push_back(std::move(node));
      });
      graph.measured = std::move(measured);
    }
    profile.graphs.push_back(std::move(graph));
  });
  r.forEach(r.field(j, "steps"), [&](const At& s) {
    ProfiledStep step;
    step.seconds = r.value<double>(s, "seconds");
    if (step.seconds < 0) r.fail(r.field(s, "seconds"), "a time is not negative");
    step.peakBytes = readOptionalBytes(r, s, "peak_bytes");
    step.beforeBytes = readOptionalBytes(r, s, "before_bytes");
    if (r.has(s, "kernels")) {
      r.forEach(r.field(s, "kernels"), [&](const At& k) {
        KernelTime kernel;
        kernel.name = r.name(r.field(k, "name"));
        kernel.calls = r.value<uint64_t>(k, "calls");
        kernel.seconds = r.value<double>(k, "seconds");
        if (kernel.seconds < 0) r.fail(r.field(k, "seconds"), "a time is not negative");
        step.kernels.push_back(std::move(kernel));
      });
    }
    profile.steps.push_back(std::move(step));
  });
  if (r.has(j, "weight_offload")) profile.weightOffload = readWeightOffload(r, r.field(j, "weight_offload"));
  return profile;
}

void writeProfile(const std::filesystem::path& path, const MeasuredProfile& profile) {
  writeFileAtomic(path, profileToJson(profile));
}

MeasuredProfile readProfile(const std::filesystem::path& path) {
  return profileFromJson(readFile(path, kMaxProfileBytes), path.string());
}

}  // namespace lathe::plan
