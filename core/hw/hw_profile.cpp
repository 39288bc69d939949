#include "hw/hw_profile.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "util/diagnostics.h"
#include "util/input.h"
#include "util/json_limits.h"

namespace lathe::hw {
namespace {

using Json = nlohmann::json;

// A fused kernel may beat the measured copy a little (algorithms.md: RoPE at 103%); a larger value
// is a typo such as 80 for 0.8.
constexpr double kMaxEfficiency = 1.5;

// Reads one profile document, naming the file and field in every error.
class ProfileReader {
 public:
  ProfileReader(const Json& doc, const std::string& sourceName) : doc_(doc), sourceName_(sourceName) {}

  [[noreturn]] void fail(const std::string& message) const {
    throw Error(ErrorCode::BadInput, "hardware profile: " + message, {sourceName_});
  }

  std::string text(std::string_view key) {
    const Json* value = field(key);
    if (!value) fail("missing field '" + std::string(key) + "'");
    if (!value->is_string() || value->get_ref<const std::string&>().empty())
      fail("field '" + std::string(key) + "' must be a non-empty string");
    return value->get<std::string>();
  }

  // {"value": N, "source": "..."}; N > 0, or >= 0 when zero is allowed. The source is recorded.
  std::optional<double> number(std::string_view key, bool required, bool zeroAllowed = false) {
    const Json* entry = field(key);
    const std::string name(key);
    if (!entry) {
      if (required) fail("missing field '" + name + "'");
      return std::nullopt;
    }
    if (!entry->is_object() || !entry->contains("value") || !entry->contains("source"))
      fail("field '" + name + "' must be an object {\"value\": number, \"source\": \"where it came from\"}");
    for (const auto& item : entry->items())
      if (item.key() != "value" && item.key() != "source")
        fail("field '" + name + "' has an unknown key '" + item.key() + "'");
    const Json& value = (*entry)["value"];
    if (!value.is_number()) fail("field '" + name + "' value must be a number");
    const double v = value.get<double>();
    if (!std::isfinite(v) || v < 0 || (v == 0 && !zeroAllowed))
      fail("field '" + name + "' value must be " + (zeroAllowed ? "zero or positive" : "positive"));
    profileSources_[name] = source(*entry, name);
    return v;
  }

  // {"source": "...", "matmul": 0.8, ...}: fractions keyed by ir::categoryName.
  void efficiency(HwProfile& profile) {
    const Json* entry = field("efficiency");
    if (!entry) return;
    if (!entry->is_object()) fail("field 'efficiency' must be an object of category name -> fraction");
    if (!entry->contains("source")) fail("field 'efficiency' needs a \"source\"");
    profileSources_["efficiency"] = source(*entry, "efficiency");
    for (const auto& item : entry->items()) {
      if (item.key() == "source") continue;
      const auto category = ir::categoryFromName(item.key());
      if (!category) fail("efficiency for an unknown op category '" + item.key() + "' (matmul, pointwise, ...)");
      const double v = item.value().is_number() ? item.value().get<double>() : -1;
      if (!(v > 0 && v <= kMaxEfficiency))
        fail("efficiency '" + item.key() + "' must be a number in (0, 1.5], a fraction of the roofline");
      profile.efficiency[static_cast<size_t>(*category)] = v;
    }
  }

  // Free text for people reading the file.
  void notes() {
    if (const Json* value = field("notes"); value && !value->is_string()) fail("field 'notes' must be text");
  }

  // Every key of the document must have been read.
  void rejectUnknownKeys() const {
    for (const auto& item : doc_.items())
      if (!read_.contains(item.key())) fail("unknown field '" + item.key() + "'");
  }

  std::map<std::string, std::string> takeSources() { return std::move(profileSources_); }

 private:
  const Json* field(std::string_view key) {
    read_.emplace(key);
    const auto it = doc_.find(key);
    return it == doc_.end() ? nullptr : &*it;
  }
  std::string source(const Json& entry, const std::string& name) const {
    const Json& s = entry["source"];
    if (!s.is_string() || s.get_ref<const std::string&>().empty())
      fail("field '" + name + "' source must be a non-empty string");
    return s.get<std::string>();
  }

  const Json& doc_;
  const std::string& sourceName_;
  std::set<std::string, std::less<>> read_;
  std::map<std::string, std::string> profileSources_;
};

// {"value": N, "source": "..."} as parseHwProfile reads it.
Json numberEntry(double value, const HwProfile& profile, const std::string& key) {
  Json entry{{"value", value}};
  const auto it = profile.sources.find(key);
  entry["source"] = it == profile.sources.end() ? "" : it->second;
  return entry;
}

struct BuiltIn {
  std::string stem;
  HwProfile profile;
};

// Parsed once; the unit test keeps every embedded file valid.
const std::vector<BuiltIn>& builtIns() {
  static const std::vector<BuiltIn> all = [] {
    std::vector<BuiltIn> parsed;
    for (const auto& embedded : detail::embeddedHwProfiles()) {
      std::string stem(embedded.stem);
      HwProfile profile = parseHwProfile(embedded.json, "built-in " + stem + ".json");
      parsed.push_back({std::move(stem), std::move(profile)});
    }
    return parsed;
  }();
  return all;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

double HwProfile::flopsFor(ir::DType dtype) const {
  switch (dtype) {
    case ir::DType::BF16: return flopsBf16;
    case ir::DType::F16: return flopsFp16;
    case ir::DType::F8E4M3FN:
    case ir::DType::F8E5M2:
    case ir::DType::F8E4M3FNUZ:
    case ir::DType::F8E5M2FNUZ:
    case ir::DType::F8E8M0FNU: return flopsFp8 > 0 ? flopsFp8 : flopsBf16;
    default: return flopsFp32;
  }
}

// A profile is a flat object of small objects.
constexpr JsonLimits kProfileJsonLimits{.maxDepth = 8, .maxValues = 4096};

HwProfile parseHwProfile(std::string_view json, const std::string& sourceName) {
  Json doc;
  try {
    doc = parseJsonBounded<Json>(json, sourceName, kProfileJsonLimits);
  } catch (const Json::exception& e) {
    throw Error(ErrorCode::BadInput, std::string("hardware profile is not valid JSON: ") + e.what(), {sourceName});
  }
  if (!doc.is_object()) throw Error(ErrorCode::BadInput, "hardware profile must be a JSON object", {sourceName});

  ProfileReader reader(doc, sourceName);
  if (const std::string format = reader.text("format"); format != kHwFormat)
    reader.fail("format is '" + format + "', expected '" + std::string(kHwFormat) + "'");
  HwProfile p;
  p.id = reader.text("id");
  p.name = reader.text("name");
  p.arch = reader.text("arch");
  const double sms = *reader.number("sm_count", true);
  if (sms != std::floor(sms) || sms > 1e6) reader.fail("field 'sm_count' value must be a whole number");
  p.smCount = static_cast<int>(sms);
  p.flopsBf16 = *reader.number("flops_bf16", true);
  p.flopsFp16 = *reader.number("flops_fp16", true);
  p.flopsFp32 = *reader.number("flops_fp32", true);
  p.flopsFp8 = reader.number("flops_fp8", false).value_or(0.0);
  p.hbmBandwidth = *reader.number("hbm_bandwidth", true);
  const double capacity = *reader.number("hbm_capacity", true);
  if (capacity > 1e18) reader.fail("field 'hbm_capacity' value is not a plausible byte count");
  p.hbmCapacity = static_cast<uint64_t>(std::llround(capacity));
  p.h2dBandwidth = *reader.number("h2d_bandwidth", true);
  p.d2hBandwidth = *reader.number("d2h_bandwidth", true);
  p.launchOverhead = *reader.number("launch_overhead", true, /*zeroAllowed=*/true);
  p.hostSecondsPerKernel = reader.number("host_seconds_per_kernel", false, /*zeroAllowed=*/true).value_or(0.0);
  const std::optional<double> peerBandwidth = reader.number("peer_bandwidth", false);
  const std::optional<double> peerLatency = reader.number("peer_latency", false, /*zeroAllowed=*/true);
  if (peerBandwidth.has_value() != peerLatency.has_value())
    reader.fail("fields 'peer_bandwidth' and 'peer_latency' go together: the link is described by both or neither");
  p.peerBandwidth = peerBandwidth.value_or(0.0);
  p.peerLatency = peerLatency.value_or(0.0);
  reader.efficiency(p);
  reader.notes();
  reader.rejectUnknownKeys();
  p.sources = reader.takeSources();
  return p;
}

HwProfile loadHwProfile(const std::filesystem::path& path) {
  constexpr uint64_t kMaxProfileBytes = uint64_t{1} << 20;
  return parseHwProfile(readFile(path, kMaxProfileBytes), path.string());
}

Json hwProfileToJson(const HwProfile& p) {
  Json doc{{"format", kHwFormat}, {"id", p.id}, {"name", p.name}, {"arch", p.arch}};
  doc["sm_count"] = numberEntry(p.smCount, p, "sm_count");
  doc["flops_bf16"] = numberEntry(p.flopsBf16, p, "flops_bf16");
  doc["flops_fp16"] = numberEntry(p.flopsFp16, p, "flops_fp16");
  doc["flops_fp32"] = numberEntry(p.flopsFp32, p, "flops_fp32");
  if (p.flopsFp8 > 0) doc["flops_fp8"] = numberEntry(p.flopsFp8, p, "flops_fp8");
  doc["hbm_bandwidth"] = numberEntry(p.hbmBandwidth, p, "hbm_bandwidth");
  doc["hbm_capacity"] = numberEntry(static_cast<double>(p.hbmCapacity), p, "hbm_capacity");
  doc["h2d_bandwidth"] = numberEntry(p.h2dBandwidth, p, "h2d_bandwidth");
  doc["d2h_bandwidth"] = numberEntry(p.d2hBandwidth, p, "d2h_bandwidth");
  doc["launch_overhead"] = numberEntry(p.launchOverhead, p, "launch_overhead");
  if (p.hostSecondsPerKernel > 0) doc["host_seconds_per_kernel"] = numberEntry(p.hostSecondsPerKernel, p, "host_seconds_per_kernel");
  if (p.peerBandwidth > 0) {
    doc["peer_bandwidth"] = numberEntry(p.peerBandwidth, p, "peer_bandwidth");
    doc["peer_latency"] = numberEntry(p.peerLatency, p, "peer_latency");
  }
  Json efficiency = Json::object();
  for (size_t i = 0; i < p.efficiency.size(); ++i)
    if (p.efficiency[i] != 1.0)
      efficiency[std::string(ir::categoryName(static_cast<ir::OpCategory>(i)))] = p.efficiency[i];
  const auto source = p.sources.find("efficiency");
  if (!efficiency.empty() || source != p.sources.end()) {
    efficiency["source"] = source == p.sources.end() ? "" : source->second;
    doc["efficiency"] = std::move(efficiency);
  }
  return doc;
}

std::vector<std::string> builtInHwIds() {
  std::vector<std::string> ids;
  for (const auto& builtIn : builtIns()) ids.push_back(builtIn.profile.id);
  return ids;
}

HwProfile resolveHwProfile(std::string_view idOrPath) {
  const std::string key = lowercase(idOrPath);
  for (const auto& builtIn : builtIns())
    if (key == builtIn.stem || key == builtIn.profile.id) return builtIn.profile;
  const std::filesystem::path path(idOrPath);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    std::string known;
    for (const auto& builtIn : builtIns()) known += (known.empty() ? "" : ", ") + builtIn.profile.id;
    throw Error(ErrorCode::BadInput,
                "'" + std::string(idOrPath) + "' is neither a built-in hardware profile (" + known + ") nor a file");
  }
  return loadHwProfile(path);
}

}  // namespace lathe::hw
