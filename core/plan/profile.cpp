#include "plan/profile.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "plan/json_reader.h"
#include "util/atomic_write.h"
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

}  // namespace

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

std::string profileToJson(const MeasuredProfile& profile) {
  Json j = {{"format", kProfileFormat},
            {"device", {{"name", profile.device}, {"memory_bytes", profile.deviceMemoryBytes}}},
            {"torch", profile.torchVersion}};
  Json graphs = Json::array();
  for (const ProfiledGraph& g : profile.graphs) {
    graphs.push_back({{"graph", g.graphId},
                      {"fingerprint", g.fingerprint},
                      {"plan", g.plan},
                      {"predicted_peak_bytes", g.predictedPeakBytes},
                      {"predicted_step_seconds", g.predictedStepSeconds}});
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
  return profile;
}

void writeProfile(const std::filesystem::path& path, const MeasuredProfile& profile) {
  writeFileAtomic(path, profileToJson(profile));
}

MeasuredProfile readProfile(const std::filesystem::path& path) {
  return profileFromJson(readFile(path, kMaxProfileBytes), path.string());
}

}  // namespace lathe::plan
