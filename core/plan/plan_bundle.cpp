#include "plan/plan_bundle.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <unordered_map>

#include "io/fx/fx_text.h"
#include "util/atomic_write.h"
#include "util/diagnostics.h"
#include "util/input.h"
#include "util/json_limits.h"
#include "plan/json_reader.h"

namespace lathe::plan {

namespace {

using At = JsonAt;
using Reader = JsonReader;

// A plan of a graph with kMaxPlanNodes nodes holds about 16 values per node.
constexpr JsonLimits kPlanJsonLimits{.maxDepth = 64, .maxValues = uint64_t{16} * kMaxPlanNodes};

std::vector<std::string> namesOf(const std::vector<std::string>& names, const std::vector<ir::NodeId>& ids) {
  std::vector<std::string> out;
  out.reserve(ids.size());
  for (ir::NodeId id : ids) out.push_back(names[id]);
  return out;
}

Json statsJson(const std::vector<std::pair<std::string, double>>& stats) {
  Json out = Json::object();
  for (const auto& [name, value] : stats) out[name] = value;
  return out;
}

// Reading. A bundle is user input: every value is checked for type and range before it is used,
// every index and length against the bundle's own node list and series, and a failure names the
// JSON path of the first bad value ("$.timeline.peak_step").

// Sum of the categories, or nullopt when it overflows 64 bits.
std::optional<uint64_t> totalOf(const std::array<std::vector<uint64_t>, kTimelineCategories>& bytes, size_t step) {
  uint64_t sum = 0;
  for (const auto& series : bytes) {
    if (__builtin_add_overflow(sum, series[step], &sum)) return std::nullopt;
  }
  return sum;
}

// The values at the peak and the reuse holds, as the bundle and `lathe timeline --json` write them
// (J: the bundle's ordered JSON, or the CLI's, whose keys sort).
template <typename J>
J peakValuesJson(const PlanTimeline& t) {
  J values = J::array();
  for (const PeakValue& v : t.atPeakValues) {
    J value = {{"node", v.node}, {"category", v.category}, {"bytes", v.bytes}};
    if (!v.heldFor.empty()) value["held_for"] = v.heldFor;
    values.push_back(std::move(value));
  }
  return values;
}

template <typename J>
J reuseHoldsJson(const PlanTimeline& t) {
  J holds = J::array();
  for (const ReuseHold& h : t.reuseHolds) {
    holds.push_back({{"buffer", h.buffer}, {"for", h.forNode}, {"step", h.step}, {"bytes", h.bytes},
                     {"held_over_span", h.heldOverSpan}, {"program_peak", h.programPeak}, {"held", h.held}});
  }
  return holds;
}
}  // namespace

std::string graphFingerprint(const ir::Graph& graph) {
  const std::string text = io::printFxText(graph, {.provenance = false});
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

std::string planToJson(const PlanBundle& plan) {
  const auto& names = plan.nodeNames;
  const PlanState& s = plan.state;
  Json j;
  j["format"] = kPlanFormat;
  j["source"] = {{"artifact", plan.artifact}, {"graph", plan.graphId}, {"fingerprint", plan.fingerprint}, {"nodes", names.size()}};
  j["hardware"] = Json::parse(hw::hwProfileToJson(plan.hardware).dump());
  j["pipeline"] = plan.pipeline;
  Json steps = Json::array();
  for (const PlanStep& step : plan.steps) {
    steps.push_back({{"step", step.step}, {"seconds", step.seconds}, {"stats", statsJson(step.stats)}, {"diff", step.diff}});
  }
  j["steps"] = steps;
  Json boundary = Json::array();
  for (bool b : s.boundary) boundary.push_back(b ? 1 : 0);
  j["nodes"] = {{"names", names}, {"piece", s.piece}, {"boundary", boundary}, {"unit", s.unit}, {"group", s.group}};
  j["pieces"] = s.pieceCount;
  Json units = Json::array();
  for (const LayerUnit& u : s.units) {
    units.push_back({{"name", u.name}, {"weights", namesOf(names, u.weights)}, {"weight_bytes", u.weightBytes}});
  }
  j["units"] = units;
  Json groups = Json::array();
  for (const FusionGroup& g : s.groups) {
    groups.push_back({{"kind", g.kind},
                      {"anchor", g.anchor == ir::kNoNode ? std::string() : names[g.anchor]},
                      {"nodes", namesOf(names, g.nodes)}});
  }
  j["groups"] = groups;
  if (s.recompute) {
    j["recompute"] = {{"policy", s.recompute->policy},
                      {"saved", namesOf(names, s.recompute->saved)},
                      {"recomputed", namesOf(names, s.recompute->recomputed)},
                      {"saved_reasons", toEnglish(s.recompute->savedReasons)}};
  }
  if (s.offload) {
    const OffloadDecision& o = *s.offload;
    std::vector<std::string> resident;
    for (size_t u = 0; u < o.resident.size() && u < s.units.size(); ++u) {
      if (o.resident[u]) resident.push_back(s.units[u].name);
    }
    Json prefetches = Json::array();
    for (const Prefetch& p : o.prefetches) {
      prefetches.push_back({{"unit", p.unit >= 0 && static_cast<size_t>(p.unit) < s.units.size() ? s.units[p.unit].name : ""},
                            {"trigger", p.trigger},
                            {"deadline", p.deadline},
                            {"start", p.start},
                            {"end", p.end}});
    }
    j["offload"] = {{"policy", o.policy},           {"budget_bytes", o.budgetBytes},
                    {"resident", resident},         {"prefetches", prefetches},
                    {"step_seconds", o.stepSeconds}, {"compute_seconds", o.computeSeconds},
                    {"bubble_seconds", o.bubbleSeconds}, {"floor_seconds", o.floorSeconds},
                    {"peak_weight_bytes", o.peakWeightBytes}, {"streamed_bytes", o.streamedBytes}};
  }
  if (s.activationOffload) {
    const ActivationOffloadDecision& a = *s.activationOffload;
    auto nameOf = [&](ir::NodeId id) { return id == ir::kNoNode ? std::string() : names[id]; };
    Json tensors = Json::array();
    for (const OffloadedActivation& t : a.tensors) {
      tensors.push_back({{"node", names[t.node]},         {"bytes", t.bytes},
                         {"wait_after", nameOf(t.waitAfter)}, {"reload_after", nameOf(t.reloadAfter)},
                         {"first_use", names[t.firstUse]}, {"off_gpu_step", t.offGpuStep},
                         {"on_gpu_step", t.onGpuStep},     {"out_start", t.outStart},
                         {"out_end", t.outEnd},            {"in_start", t.inStart},
                         {"in_end", t.inEnd}});
    }
    j["activation_offload"] = {{"bytes", a.bytes},
                               {"copy_out_seconds", a.copyOutSeconds},
                               {"copy_in_seconds", a.copyInSeconds},
                               {"link_share", a.linkShare},
                               {"tensors", tensors}};
  }
  const PlanTimeline& t = plan.timeline;
  Json timeline = {{"peak_bytes", t.peakBytes}, {"peak_step", t.peakStep}, {"backward_start", t.backwardStart}};
  Json atPeak = Json::object();
  for (size_t c = 0; c < kTimelineCategories; ++c) atPeak[std::string(kTimelineCategoryNames[c])] = t.atPeak[c];
  timeline["at_peak"] = atPeak;
  timeline["at_peak_values"] = peakValuesJson<Json>(t);
  timeline["reuse_holds"] = reuseHoldsJson<Json>(t);
  timeline["backward_kernels"] = t.backwardKernels;
  timeline["node"] = t.node;
  timeline["phase"] = t.phase;
  timeline["seconds"] = t.seconds;
  for (size_t c = 0; c < kTimelineCategories; ++c) timeline[std::string(kTimelineCategoryNames[c])] = t.bytes[c];
  j["timeline"] = timeline;
  j["estimates"] = statsJson(plan.estimates);
  Json kernels = Json::array();
  for (const KernelsRef& k : plan.kernels) {
    kernels.push_back({{"manifest", k.manifest}, {"format", k.format}, {"targets", k.targets},
                       {"kernels", k.kernels}, {"not_generated", k.notGenerated}});
  }
  j["kernels"] = kernels;
  return j.dump(1) + "\n";
}

std::string timelineSummaryJson(const PlanBundle& plan) {
  const PlanTimeline& t = plan.timeline;
  nlohmann::json out = {{"graph", plan.graphId}, {"peak_bytes", t.peakBytes}, {"peak_step", t.peakStep}, {"steps", t.node.size()}};
  nlohmann::json atPeak = nlohmann::json::object();
  for (size_t c = 0; c < kTimelineCategories; ++c) atPeak[std::string(kTimelineCategoryNames[c])] = t.atPeak[c];
  out["at_peak"] = atPeak;
  out["at_peak_values"] = peakValuesJson<nlohmann::json>(t);
  out["reuse_holds"] = reuseHoldsJson<nlohmann::json>(t);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

PlanBundle planFromJson(std::string_view text, const std::string& sourceName) {
  const Reader r(sourceName);
  const Json doc = readFormatDocument(text, sourceName, kPlanJsonLimits, kPlanFormat);
  const At j(doc);
  PlanBundle plan;
  const At source = r.field(j, "source");
  plan.artifact = r.value<std::string>(source, "artifact");
  plan.graphId = r.name(r.field(source, "graph"));
  plan.fingerprint = r.value<std::string>(source, "fingerprint");
  plan.hardware = hw::parseHwProfile(r.field(j, "hardware").json().dump(), sourceName + " (hardware)");
  plan.pipeline = r.value<std::string>(j, "pipeline");
  r.forEach(r.field(j, "steps"), [&](const At& step) {
    PlanStep s;
    s.step = r.value<std::string>(step, "step");
    s.seconds = r.value<double>(step, "seconds");
    s.stats = r.stats(r.field(step, "stats"));
    s.diff = r.list<std::string>(step, "diff");
    plan.steps.push_back(std::move(s));
  });

  // Nodes: unique, non-empty names; every decision below refers to them.
  const At nodes = r.field(j, "nodes");
  const At names = r.field(nodes, "names");
  std::unordered_map<std::string, ir::NodeId> byName;
  r.forEach(names, [&](const At& item) {
    if (plan.nodeNames.size() >= kMaxPlanNodes) r.fail(item, "more nodes than the " + std::to_string(kMaxPlanNodes) + " a plan may hold");
    std::string name = r.name(item);
    if (!byName.emplace(name, static_cast<ir::NodeId>(plan.nodeNames.size())).second) r.fail(item, "node \"" + name + "\" is listed twice");
    plan.nodeNames.push_back(std::move(name));
  });
  const size_t n = plan.nodeNames.size();
  auto idOf = [&](const At& at) {
    const std::string name = r.name(at);
    const auto it = byName.find(name);
    if (it == byName.end()) r.fail(at, "node \"" + name + "\" is not in the plan's node list");
    return it->second;
  };
  auto idsOf = [&](const At& list) {
    std::vector<ir::NodeId> ids;
    r.forEach(list, [&](const At& item) { ids.push_back(idOf(item)); });
    return ids;
  };
  PlanState& s = plan.state;
  s.pieceCount = r.value<int32_t>(j, "pieces");
  if (s.pieceCount < 0 || static_cast<size_t>(s.pieceCount) > n + 1) {
    r.fail(r.field(j, "pieces"), "expected 0 to " + std::to_string(n + 1) + " pieces");
  }
  // One entry per node, each kNone or an index below `count`.
  auto perNode = [&](std::string_view key, int32_t count, const char* what) {
    const At at = r.field(nodes, key);
    std::vector<int32_t> out = r.list<int32_t>(nodes, key);
    if (out.size() != n) r.fail(at, "one entry per node expected (" + std::to_string(out.size()) + " for " + std::to_string(n) + ")");
    for (size_t i = 0; i < n; ++i) {
      if (out[i] < kNone || out[i] >= count) {
        r.fail(At(at.json()[i], at, i), std::to_string(out[i]) + " names no " + what + " (the plan has " + std::to_string(count) + ")");
      }
    }
    return out;
  };
  s.piece = perNode("piece", s.pieceCount, "piece");
  {
    const At at = r.field(nodes, "boundary");
    const std::vector<int32_t> boundary = r.list<int32_t>(nodes, "boundary");
    if (boundary.size() != n) r.fail(at, "one entry per node expected (" + std::to_string(boundary.size()) + " for " + std::to_string(n) + ")");
    for (size_t i = 0; i < n; ++i) {
      if (boundary[i] != 0 && boundary[i] != 1) r.fail(At(at.json()[i], at, i), "expected 0 or 1");
      s.boundary.push_back(boundary[i] == 1);
    }
  }
  if (r.has(source, "nodes") && r.value<uint64_t>(source, "nodes") != n) {
    r.fail(r.field(source, "nodes"), "differs from the " + std::to_string(n) + " nodes the plan lists");
  }
  std::unordered_map<std::string, int32_t> unitByName;
  r.forEach(r.field(j, "units"), [&](const At& u) {
    LayerUnit unit;
    unit.id = static_cast<int32_t>(s.units.size());
    const At nameAt = r.field(u, "name");
    unit.name = r.name(nameAt);
    if (!unitByName.emplace(unit.name, unit.id).second) r.fail(nameAt, "unit \"" + unit.name + "\" is listed twice");
    unit.weights = idsOf(r.field(u, "weights"));
    unit.weightBytes = r.value<uint64_t>(u, "weight_bytes");
    s.units.push_back(std::move(unit));
  });
  r.forEach(r.field(j, "groups"), [&](const At& g) {
    FusionGroup group;
    group.id = static_cast<int32_t>(s.groups.size());
    group.kind = r.name(r.field(g, "kind"));
    const At nodesAt = r.field(g, "nodes");
    group.nodes = idsOf(nodesAt);
    if (group.nodes.empty()) r.fail(nodesAt, "a fusion group without nodes");
    for (size_t i = 1; i < group.nodes.size(); ++i) {
      if (group.nodes[i] <= group.nodes[i - 1]) r.fail(At(nodesAt.json()[i], nodesAt, i), "group nodes must be listed once each, in program order");
    }
    const At anchorAt = r.field(g, "anchor");
    group.anchor = idOf(anchorAt);
    if (!std::binary_search(group.nodes.begin(), group.nodes.end(), group.anchor)) {
      r.fail(anchorAt, "the anchor \"" + plan.nodeNames[group.anchor] + "\" is not one of the group's nodes");
    }
    s.groups.push_back(std::move(group));
  });
  s.unit = perNode("unit", static_cast<int32_t>(s.units.size()), "unit");
  s.group = perNode("group", static_cast<int32_t>(s.groups.size()), "fusion group");
  {
    // The per-node group entries and the groups' node lists say the same thing.
    const At groupAt = r.field(nodes, "group");
    std::vector<int32_t> listedIn(n, kNone);
    for (const FusionGroup& group : s.groups) {
      for (ir::NodeId id : group.nodes) {
        if (listedIn[id] != kNone) {
          r.fail(r.field(j, "groups"), "node \"" + plan.nodeNames[id] + "\" is in two fusion groups");
        }
        listedIn[id] = group.id;
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (s.group[i] != listedIn[i]) {
        r.fail(At(groupAt.json()[i], groupAt, i), "node \"" + plan.nodeNames[i] + "\" is in group " + std::to_string(listedIn[i]) +
                                                       " by the group lists");
      }
    }
  }
  if (r.has(j, "recompute")) {
    const At rc = r.field(j, "recompute");
    RecomputeDecision d;
    d.policy = r.name(r.field(rc, "policy"));
    d.saved = idsOf(r.field(rc, "saved"));
    d.recomputed = idsOf(r.field(rc, "recomputed"));
    for (std::string& reason : r.list<std::string>(rc, "saved_reasons")) d.savedReasons.emplace_back(std::move(reason));
    if (d.savedReasons.size() != d.saved.size()) r.fail(r.field(rc, "saved_reasons"), "one reason per saved value expected");
    s.recompute = std::move(d);
  }
  const At t = r.field(j, "timeline");
  PlanTimeline& tl = plan.timeline;
  tl.node.clear();
  r.forEach(r.field(t, "node"), [&](const At& item) { tl.node.push_back(plan.nodeNames[idOf(item)]); });
  const size_t steps = tl.node.size();
  if (r.has(j, "offload")) {
    const At of = r.field(j, "offload");
    OffloadDecision o;
    o.policy = r.name(r.field(of, "policy"));
    o.budgetBytes = r.value<uint64_t>(of, "budget_bytes");
    o.resident.assign(s.units.size(), false);
    auto unitOf = [&](const At& at) {
      const std::string name = r.name(at);
      const auto it = unitByName.find(name);
      if (it == unitByName.end()) r.fail(at, "unit \"" + name + "\" is not in the plan's units");
      return it->second;
    };
    r.forEach(r.field(of, "resident"), [&](const At& item) { o.resident[unitOf(item)] = true; });
    r.forEach(r.field(of, "prefetches"), [&](const At& p) {
      Prefetch prefetch;
      prefetch.unit = unitOf(r.field(p, "unit"));
      for (const auto& [key, slot] : {std::pair{"trigger", &prefetch.trigger}, std::pair{"deadline", &prefetch.deadline}}) {
        *slot = r.value<int32_t>(p, key);
        if (*slot < 0 || static_cast<size_t>(*slot) > steps) r.fail(r.field(p, key), "expected a segment of the step (0 to " + std::to_string(steps) + ")");
      }
      prefetch.start = r.value<double>(p, "start");
      prefetch.end = r.value<double>(p, "end");
      if (prefetch.end < prefetch.start) r.fail(r.field(p, "end"), "the copy ends before it starts");
      o.prefetches.push_back(prefetch);
    });
    o.stepSeconds = r.value<double>(of, "step_seconds");
    o.computeSeconds = r.value<double>(of, "compute_seconds");
    o.bubbleSeconds = r.value<double>(of, "bubble_seconds");
    o.floorSeconds = r.value<double>(of, "floor_seconds");
    o.peakWeightBytes = r.value<uint64_t>(of, "peak_weight_bytes");
    o.streamedBytes = r.value<uint64_t>(of, "streamed_bytes");
    s.offload = std::move(o);
  }
  if (r.has(j, "activation_offload")) {
    const At ao = r.field(j, "activation_offload");
    ActivationOffloadDecision a;
    a.bytes = r.value<uint64_t>(ao, "bytes");
    a.copyOutSeconds = r.value<double>(ao, "copy_out_seconds");
    a.copyInSeconds = r.value<double>(ao, "copy_in_seconds");
    const At shareAt = r.field(ao, "link_share");
    a.linkShare = r.as<double>(shareAt);
    if (!(a.linkShare > 0 && a.linkShare <= 1)) r.fail(shareAt, "expected a share of the link in (0, 1]");
    uint64_t total = 0;
    r.forEach(r.field(ao, "tensors"), [&](const At& item) {
      OffloadedActivation tensor;
      tensor.node = idOf(r.field(item, "node"));
      tensor.bytes = r.value<uint64_t>(item, "bytes");
      tensor.waitAfter = idOf(r.field(item, "wait_after"));
      const At reloadAt = r.field(item, "reload_after");
      tensor.reloadAfter = r.as<std::string>(reloadAt).empty() ? ir::kNoNode : idOf(reloadAt);  // "": at the backward's start
      tensor.firstUse = idOf(r.field(item, "first_use"));
      tensor.offGpuStep = r.value<uint32_t>(item, "off_gpu_step");
      const At onAt = r.field(item, "on_gpu_step");
      tensor.onGpuStep = r.as<uint32_t>(onAt);
      if (tensor.onGpuStep < tensor.offGpuStep || tensor.onGpuStep > steps) {
        r.fail(onAt, "expected a step from off_gpu_step (" + std::to_string(tensor.offGpuStep) + ") to " + std::to_string(steps));
      }
      for (const auto& [key, slot] : {std::pair{"out_start", &tensor.outStart}, std::pair{"out_end", &tensor.outEnd},
                                      std::pair{"in_start", &tensor.inStart}, std::pair{"in_end", &tensor.inEnd}}) {
        *slot = r.value<double>(item, key);
      }
      if (tensor.outEnd < tensor.outStart || tensor.inEnd < tensor.inStart) r.fail(item, "a copy ends before it starts");
      total += tensor.bytes;
      a.tensors.push_back(tensor);
    });
    if (total != a.bytes) r.fail(r.field(ao, "bytes"), "differs from the sum over the tensors (" + std::to_string(total) + ")");
    s.activationOffload = std::move(a);
  }

  // The timeline: series of one length; the peak is the largest total and lies on a step.
  const At phaseAt = r.field(t, "phase");
  tl.phase = r.as<std::string>(phaseAt);
  if (tl.phase.size() != steps) r.fail(phaseAt, "one entry per step expected (" + std::to_string(tl.phase.size()) + " for " + std::to_string(steps) + ")");
  if (const size_t bad = tl.phase.find_first_not_of("fb"); bad != std::string::npos) {
    r.fail(phaseAt, "step " + std::to_string(bad) + " is neither 'f' (forward) nor 'b' (backward)");
  }
  const At secondsAt = r.field(t, "seconds");
  tl.seconds = r.list<double>(t, "seconds");
  if (tl.seconds.size() != steps) r.fail(secondsAt, "one entry per step expected (" + std::to_string(tl.seconds.size()) + " for " + std::to_string(steps) + ")");
  for (size_t c = 0; c < kTimelineCategories; ++c) {
    const std::string_view name = kTimelineCategoryNames[c];
    tl.bytes[c] = r.list<uint64_t>(t, name);
    if (tl.bytes[c].size() != steps) {
      r.fail(r.field(t, name), "one entry per step expected (" + std::to_string(tl.bytes[c].size()) + " for " + std::to_string(steps) + ")");
    }
  }
  const At peakStepAt = r.field(t, "peak_step");
  tl.peakStep = r.as<uint32_t>(peakStepAt);
  if (steps == 0 ? tl.peakStep != 0 : tl.peakStep >= steps) {
    r.fail(peakStepAt, std::to_string(tl.peakStep) + " is not a step of the timeline (it has " + std::to_string(steps) + ")");
  }
  const At backwardAt = r.field(t, "backward_start");
  tl.backwardStart = r.as<uint32_t>(backwardAt);
  if (tl.backwardStart > steps) r.fail(backwardAt, std::to_string(tl.backwardStart) + " is beyond the " + std::to_string(steps) + " steps");
  const At atPeak = r.field(t, "at_peak");
  for (size_t c = 0; c < kTimelineCategories; ++c) {
    const std::string_view name = kTimelineCategoryNames[c];
    tl.atPeak[c] = r.value<uint64_t>(atPeak, name);
    const uint64_t series = steps == 0 ? 0 : tl.bytes[c][tl.peakStep];
    if (tl.atPeak[c] != series) r.fail(r.field(atPeak, name), "differs from the series at the peak step (" + std::to_string(series) + ")");
  }
  if (r.has(t, "at_peak_values")) {  // bundles written before it have none
    const auto nodeNamed = [&](const At& at) { return plan.nodeNames[idOf(at)]; };
    r.forEach(r.field(t, "at_peak_values"), [&](const At& item) {
      PeakValue v;
      v.node = nodeNamed(r.field(item, "node"));
      const At categoryAt = r.field(item, "category");
      v.category = r.name(categoryAt);
      if (std::find(kTimelineCategoryNames.begin(), kTimelineCategoryNames.end(), v.category) == kTimelineCategoryNames.end()) {
        r.fail(categoryAt, "'" + v.category + "' is not a memory category");
      }
      v.bytes = r.value<uint64_t>(item, "bytes");
      if (r.has(item, "held_for")) v.heldFor = nodeNamed(r.field(item, "held_for"));
      tl.atPeakValues.push_back(std::move(v));
    });
  }
  if (r.has(t, "reuse_holds")) {  // bundles written before it have none
    r.forEach(r.field(t, "reuse_holds"), [&](const At& item) {
      ReuseHold h;
      h.buffer = plan.nodeNames[idOf(r.field(item, "buffer"))];
      h.forNode = plan.nodeNames[idOf(r.field(item, "for"))];
      const At stepAt = r.field(item, "step");
      h.step = r.as<uint32_t>(stepAt);
      if (h.step >= steps) r.fail(stepAt, std::to_string(h.step) + " is not a step of the timeline (it has " + std::to_string(steps) + ")");
      h.bytes = r.value<uint64_t>(item, "bytes");
      h.heldOverSpan = r.value<int64_t>(item, "held_over_span");
      h.programPeak = r.value<int64_t>(item, "program_peak");
      h.held = r.value<bool>(item, "held");
      tl.reuseHolds.push_back(std::move(h));
    });
  }
  if (r.has(t, "backward_kernels")) {  // bundles written before it have none
    uint32_t previousFirst = 0;
    r.forEach(r.field(t, "backward_kernels"), [&](const At& kernel) {
      std::vector<uint32_t> outputs;
      r.forEach(kernel, [&](const At& step) { outputs.push_back(r.as<uint32_t>(step)); });
      if (outputs.empty()) r.fail(kernel, "a kernel has outputs");
      if (!std::is_sorted(outputs.begin(), outputs.end()) ||
          std::adjacent_find(outputs.begin(), outputs.end()) != outputs.end()) {
        r.fail(kernel, "steps must ascend");
      }
      if (outputs.back() >= steps) {
        r.fail(kernel, std::to_string(outputs.back()) + " is not a step of the timeline (it has " + std::to_string(steps) + ")");
      }
      if (outputs.front() < previousFirst) r.fail(kernel, "kernels must be in order of their first step");
      previousFirst = outputs.front();
      tl.backwardKernels.push_back(std::move(outputs));
    });
  }
  const At peakBytesAt = r.field(t, "peak_bytes");
  tl.peakBytes = r.as<uint64_t>(peakBytesAt);
  uint64_t largest = 0;
  for (size_t i = 0; i < steps; ++i) {
    const std::optional<uint64_t> total = totalOf(tl.bytes, i);
    if (!total) r.fail(t, "the categories of step " + std::to_string(i) + " add up to more than 2^64 bytes");
    largest = std::max(largest, *total);
  }
  const uint64_t atPeakStep = steps == 0 ? 0 : *totalOf(tl.bytes, tl.peakStep);
  if (tl.peakBytes != atPeakStep || atPeakStep != largest) {
    r.fail(peakBytesAt, std::to_string(tl.peakBytes) + " is not the largest total of the steps (" + std::to_string(largest) + ")");
  }

  plan.estimates = r.stats(r.field(j, "estimates"));
  if (r.has(j, "kernels")) {
    r.forEach(r.field(j, "kernels"), [&](const At& k) {
      KernelsRef ref;
      ref.manifest = r.name(r.field(k, "manifest"));
      ref.format = r.value<std::string>(k, "format");
      ref.targets = r.list<std::string>(k, "targets");
      ref.kernels = r.value<uint64_t>(k, "kernels");
      ref.notGenerated = r.value<uint64_t>(k, "not_generated");
      plan.kernels.push_back(std::move(ref));
    });
  }
  return plan;
}

void writePlan(const std::filesystem::path& path, const PlanBundle& plan) { writeFileAtomic(path, planToJson(plan)); }

PlanBundle readPlan(const std::filesystem::path& path) {
  return planFromJson(readFile(path, kMaxPlanBytes), path.string());
}

}  // namespace lathe::plan
