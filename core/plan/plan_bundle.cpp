#include "plan/plan_bundle.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <unordered_map>

#include "io/fx_text.h"
#include "util/atomic_write.h"
#include "util/diagnostics.h"
#include "util/input.h"

namespace lathe::plan {

namespace {

using Json = nlohmann::ordered_json;

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

// Reading: every access checks the type and names the field when it is wrong.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const { throw Error(ErrorCode::BadInput, source_ + ": " + what); }

  const Json& field(const Json& object, const char* key) const {
    if (!object.is_object() || !object.contains(key)) fail(std::string("missing \"") + key + "\"");
    return object.at(key);
  }
  template <typename T>
  T value(const Json& object, const char* key) const {
    const Json& v = field(object, key);
    // nlohmann converts a float to an integer type without a range check (undefined behaviour).
    if (!integersFit<T>(v)) fail(std::string("\"") + key + "\" must hold integers in range");
    try {
      return v.get<T>();
    } catch (const nlohmann::json::exception&) {
      fail(std::string("\"") + key + "\" has the wrong type");
    }
  }

  // True unless T is (a vector of) an integer type and `v` holds a number that is not an integer
  // of T's range.
  template <typename T>
  static bool integersFit(const Json& v) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!v.is_number()) return true;  // get<T>() reports the type error
      if (v.is_number_float()) return false;
      if (v.is_number_unsigned()) return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
      const int64_t i = v.get<int64_t>();
      return i >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
             (i < 0 || static_cast<uint64_t>(i) <= static_cast<uint64_t>(std::numeric_limits<T>::max()));
    } else if constexpr (requires { typename T::value_type; } && !std::is_same_v<T, std::string>) {
      if (!v.is_array()) return true;
      for (const Json& item : v) {
        if (!integersFit<typename T::value_type>(item)) return false;
      }
      return true;
    } else {
      return true;
    }
  }
  template <typename T>
  T valueOr(const Json& object, const char* key, T fallback) const {
    return object.is_object() && object.contains(key) ? value<T>(object, key) : fallback;
  }
  std::vector<std::pair<std::string, double>> stats(const Json& object) const {
    std::vector<std::pair<std::string, double>> out;
    if (!object.is_object()) fail("stats must be an object");
    for (const auto& [k, v] : object.items()) {
      if (!v.is_number()) fail("stat \"" + k + "\" is not a number");
      out.emplace_back(k, v.get<double>());
    }
    return out;
  }

 private:
  std::string source_;
};

}  // namespace

std::string graphFingerprint(const ir::Graph& graph) {
  const std::string text = io::printFxText(graph);
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
                      {"saved_reasons", s.recompute->savedReasons}};
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
  const PlanTimeline& t = plan.timeline;
  Json timeline = {{"peak_bytes", t.peakBytes}, {"peak_step", t.peakStep}, {"backward_start", t.backwardStart}};
  Json atPeak = Json::object();
  for (size_t c = 0; c < kTimelineCategories; ++c) atPeak[std::string(kTimelineCategoryNames[c])] = t.atPeak[c];
  timeline["at_peak"] = atPeak;
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

PlanBundle planFromJson(std::string_view text, const std::string& sourceName) {
  const Reader r(sourceName);
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) r.fail("not a JSON object");
  const std::string format = r.valueOr<std::string>(j, "format", "");
  if (format != kPlanFormat) {
    r.fail("format \"" + format + "\" is not " + std::string(kPlanFormat) + (format.starts_with("lathe.plan/") ? " (another version)" : ""));
  }
  PlanBundle plan;
  const Json& source = r.field(j, "source");
  plan.artifact = r.value<std::string>(source, "artifact");
  plan.graphId = r.value<std::string>(source, "graph");
  plan.fingerprint = r.value<std::string>(source, "fingerprint");
  plan.hardware = hw::parseHwProfile(r.field(j, "hardware").dump(), sourceName + " (hardware)");
  plan.pipeline = r.value<std::string>(j, "pipeline");
  for (const Json& step : r.field(j, "steps")) {
    PlanStep s;
    s.step = r.value<std::string>(step, "step");
    s.seconds = r.value<double>(step, "seconds");
    s.stats = r.stats(r.field(step, "stats"));
    s.diff = r.value<std::vector<std::string>>(step, "diff");
    plan.steps.push_back(std::move(s));
  }
  const Json& nodes = r.field(j, "nodes");
  plan.nodeNames = r.value<std::vector<std::string>>(nodes, "names");
  const size_t n = plan.nodeNames.size();
  std::unordered_map<std::string, ir::NodeId> byName;
  for (size_t i = 0; i < n; ++i) byName.emplace(plan.nodeNames[i], static_cast<ir::NodeId>(i));
  auto idOf = [&](const std::string& name) {
    const auto it = byName.find(name);
    if (it == byName.end()) r.fail("a decision names node \"" + name + "\", which the plan does not list");
    return it->second;
  };
  auto idsOf = [&](const Json& list) {
    std::vector<ir::NodeId> ids;
    if (!list.is_array()) r.fail("expected a list of node names");
    for (const Json& name : list) {
      if (!name.is_string()) r.fail("expected a node name");
      ids.push_back(idOf(name.get<std::string>()));
    }
    return ids;
  };
  PlanState& s = plan.state;
  s.piece = r.value<std::vector<int32_t>>(nodes, "piece");
  s.unit = r.value<std::vector<int32_t>>(nodes, "unit");
  s.group = r.value<std::vector<int32_t>>(nodes, "group");
  for (int b : r.value<std::vector<int>>(nodes, "boundary")) s.boundary.push_back(b != 0);
  if (s.piece.size() != n || s.unit.size() != n || s.group.size() != n || s.boundary.size() != n) {
    r.fail("per-node decisions do not have one entry per node");
  }
  s.pieceCount = r.value<int32_t>(j, "pieces");
  for (const Json& u : r.field(j, "units")) {
    LayerUnit unit;
    unit.id = static_cast<int32_t>(s.units.size());
    unit.name = r.value<std::string>(u, "name");
    unit.weights = idsOf(r.field(u, "weights"));
    unit.weightBytes = r.value<uint64_t>(u, "weight_bytes");
    s.units.push_back(std::move(unit));
  }
  for (const Json& g : r.field(j, "groups")) {
    FusionGroup group;
    group.id = static_cast<int32_t>(s.groups.size());
    group.kind = r.value<std::string>(g, "kind");
    const std::string anchor = r.value<std::string>(g, "anchor");
    group.anchor = anchor.empty() ? ir::kNoNode : idOf(anchor);
    group.nodes = idsOf(r.field(g, "nodes"));
    s.groups.push_back(std::move(group));
  }
  for (int32_t v : s.unit) {
    if (v < plan::kNone || v >= static_cast<int32_t>(s.units.size())) r.fail("a node names a unit that does not exist");
  }
  for (int32_t v : s.group) {
    if (v < plan::kNone || v >= static_cast<int32_t>(s.groups.size())) r.fail("a node names a fusion group that does not exist");
  }
  if (j.contains("recompute")) {
    const Json& rc = j["recompute"];
    RecomputeDecision d;
    d.policy = r.value<std::string>(rc, "policy");
    d.saved = idsOf(r.field(rc, "saved"));
    d.recomputed = idsOf(r.field(rc, "recomputed"));
    d.savedReasons = r.value<std::vector<std::string>>(rc, "saved_reasons");
    if (d.savedReasons.size() != d.saved.size()) r.fail("recompute: one reason per saved value expected");
    s.recompute = std::move(d);
  }
  if (j.contains("offload")) {
    const Json& of = j["offload"];
    OffloadDecision o;
    o.policy = r.value<std::string>(of, "policy");
    o.budgetBytes = r.value<uint64_t>(of, "budget_bytes");
    o.resident.assign(s.units.size(), false);
    std::unordered_map<std::string, int32_t> unitByName;
    for (const LayerUnit& u : s.units) unitByName.emplace(u.name, u.id);
    auto unitOf = [&](const std::string& name) {
      const auto it = unitByName.find(name);
      if (it == unitByName.end()) r.fail("offload names unit \"" + name + "\", which the plan does not list");
      return it->second;
    };
    for (const std::string& name : r.value<std::vector<std::string>>(of, "resident")) o.resident[unitOf(name)] = true;
    for (const Json& p : r.field(of, "prefetches")) {
      Prefetch prefetch;
      prefetch.unit = unitOf(r.value<std::string>(p, "unit"));
      prefetch.trigger = r.value<int32_t>(p, "trigger");
      prefetch.deadline = r.value<int32_t>(p, "deadline");
      prefetch.start = r.value<double>(p, "start");
      prefetch.end = r.value<double>(p, "end");
      o.prefetches.push_back(prefetch);
    }
    o.stepSeconds = r.value<double>(of, "step_seconds");
    o.computeSeconds = r.value<double>(of, "compute_seconds");
    o.bubbleSeconds = r.value<double>(of, "bubble_seconds");
    o.floorSeconds = r.value<double>(of, "floor_seconds");
    o.peakWeightBytes = r.value<uint64_t>(of, "peak_weight_bytes");
    o.streamedBytes = r.value<uint64_t>(of, "streamed_bytes");
    s.offload = std::move(o);
  }
  const Json& t = r.field(j, "timeline");
  PlanTimeline& tl = plan.timeline;
  tl.peakBytes = r.value<uint64_t>(t, "peak_bytes");
  tl.peakStep = r.value<uint32_t>(t, "peak_step");
  tl.backwardStart = r.value<uint32_t>(t, "backward_start");
  const Json& atPeak = r.field(t, "at_peak");
  tl.node = r.value<std::vector<std::string>>(t, "node");
  tl.phase = r.value<std::string>(t, "phase");
  tl.seconds = r.value<std::vector<double>>(t, "seconds");
  for (size_t c = 0; c < kTimelineCategories; ++c) {
    const std::string name(kTimelineCategoryNames[c]);
    tl.atPeak[c] = r.value<uint64_t>(atPeak, name.c_str());
    tl.bytes[c] = r.value<std::vector<uint64_t>>(t, name.c_str());
    if (tl.bytes[c].size() != tl.node.size()) r.fail("timeline: \"" + name + "\" does not have one entry per step");
  }
  if (tl.phase.size() != tl.node.size() || tl.seconds.size() != tl.node.size()) r.fail("timeline: columns differ in length");
  for (const std::string& name : tl.node) (void)idOf(name);
  plan.estimates = r.stats(r.field(j, "estimates"));
  if (j.contains("kernels")) {
    const Json& kernels = j["kernels"];
    if (!kernels.is_array()) r.fail("\"kernels\" is not a list");
    for (const Json& k : kernels) {
      KernelsRef ref;
      ref.manifest = r.value<std::string>(k, "manifest");
      ref.format = r.value<std::string>(k, "format");
      ref.targets = r.value<std::vector<std::string>>(k, "targets");
      ref.kernels = r.value<uint64_t>(k, "kernels");
      ref.notGenerated = r.value<uint64_t>(k, "not_generated");
      plan.kernels.push_back(std::move(ref));
    }
  }
  return plan;
}

void writePlan(const std::filesystem::path& path, const PlanBundle& plan) { writeFileAtomic(path, planToJson(plan)); }

PlanBundle readPlan(const std::filesystem::path& path) { return planFromJson(readFile(path), path.string()); }

}  // namespace lathe::plan
