#include "io/trace/chrome_trace.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>
#include <utility>

#include "util/diagnostics.h"
#include "util/input.h"
#include "util/json_limits.h"

namespace lathe::io {
namespace {

using nlohmann::json;

// A trace nests five levels (document, traceEvents, event, args, grid); its size is bounded by
// kMaxChromeTraceBytes, so the default value count stands.
constexpr JsonLimits kChromeTraceLimits{.maxDepth = 32};
// Times past 2^53 microseconds (285 years) are no longer exact integers in a double: refused.
constexpr double kMaxMicros = 9007199254740992.0;
constexpr double kSecondsPerMicro = 1e-6;

// Host events that nest on a thread: what a cpu_op's self time excludes (torch's self CPU time).
bool isHostCategory(std::string_view category) {
  return category == "cpu_op" || category == "user_annotation" || category == "cuda_runtime" ||
         category == "cuda_driver" || category == "python_function";
}

std::optional<DeviceActivity> deviceCategory(std::string_view category) {
  // "cuda_profiler_range" (CUPTI range-profiler runs) names kernels too, but its durations are
  // those of replayed counter-collection ranges, not of the kernels: not read as device time.
  if (category == "kernel") return DeviceActivity::Kernel;
  if (category == "gpu_memcpy") return DeviceActivity::Memcpy;
  if (category == "gpu_memset") return DeviceActivity::Memset;
  return std::nullopt;
}

struct HostSpan {
  double begin = 0, end = 0;  // microseconds as in the file
  int64_t cpuOp = -1;         // index into ChromeTrace::cpuOps, -1 for the other host categories
};

class TraceReader {
 public:
  explicit TraceReader(const std::string& source) : source_(source) {}

  ChromeTrace read(std::string_view text) {
    json doc;
    try {
      doc = parseJsonBounded<json>(text, source_, kChromeTraceLimits);
    } catch (const json::exception& e) {
      fail(std::string("not valid JSON: ") + e.what());
    }
    // torch writes the object form; a bare list (the Chrome format's other form, and also what
    // export_memory_timeline_raw writes) is not a torch.profiler trace.
    if (!doc.is_object()) fail("not a Chrome trace: expected a JSON object with \"traceEvents\"");
    const auto events = doc.find("traceEvents");
    if (events == doc.end() || !events->is_array()) fail("not a Chrome trace: no \"traceEvents\" list");

    for (size_t i = 0; i < events->size(); ++i) readEvent((*events)[i], i);
    finishCpuOps();
    finishKernels();
    readDevice(doc);
    readRank(doc);
    return std::move(trace_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw Error(ErrorCode::BadInput, what, {source_}); }
  [[noreturn]] void failEvent(size_t index, const std::string& what) const {
    fail("traceEvents[" + std::to_string(index) + "]: " + what);
  }

  void readEvent(const json& event, size_t index) {
    if (!event.is_object()) failEvent(index, "not an object");
    const auto category = event.find("cat");
    const auto phase = event.find("ph");
    // Metadata ("M"), instants and flows carry no category read here, or are not complete events:
    // Kineto writes device activity and host operators as complete ("X") events only.
    if (category == event.end() || !category->is_string() || phase == event.end() || *phase != "X") return;
    const std::string& cat = category->get_ref<const std::string&>();
    const std::optional<DeviceActivity> device = deviceCategory(cat);
    if (!device && !isHostCategory(cat)) return;

    const double begin = micros(event, "ts", index);
    const double duration = micros(event, "dur", index);
    // Times (and `seconds`) stay in microseconds as written until finishCpuOps / finishKernels,
    // once the origin is known.
    if (device) {
      earliest_ = std::min(earliest_, begin);
      const json* args = argsOf(event, index);
      ChromeKernelEvent kernel;
      kernel.name = nameOf(event, index);
      kernel.kind = *device;
      kernel.start = begin;
      kernel.seconds = duration;
      kernel.device = static_cast<int32_t>(integerArg(args, "device", std::numeric_limits<int32_t>::max(), index));
      kernel.stream = integerArg(args, "stream", std::numeric_limits<int64_t>::max(), index);
      kernel.correlation = integerArg(args, "correlation", std::numeric_limits<int64_t>::max(), index);
      trace_.kernels.push_back(std::move(kernel));
      return;
    }
    HostSpan span{begin, begin + duration, -1};
    if (cat == "cuda_runtime" || cat == "cuda_driver") {
      const int64_t correlation = integerArg(argsOf(event, index), "correlation", std::numeric_limits<int64_t>::max(), index);
      const auto tid = event.find("tid");
      if (correlation >= 0) launches_[correlation] = {begin, tid == event.end() ? -1 : int64Of(*tid).value_or(-1)};
    }
    if (cat == "cpu_op") {
      earliest_ = std::min(earliest_, begin);
      ChromeCpuOp op;
      op.name = nameOf(event, index);
      op.start = begin;
      op.seconds = duration;
      op.selfSeconds = duration;
      const auto tid = event.find("tid");
      if (tid != event.end()) op.thread = int64Of(*tid).value_or(-1);
      span.cpuOp = static_cast<int64_t>(trace_.cpuOps.size());
      trace_.cpuOps.push_back(std::move(op));
    }
    threads_[threadKey(event)].push_back(span);
  }

  static std::optional<int64_t> int64Of(const json& value) {
    if (value.is_number_unsigned())
      return value.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
                 ? std::optional<int64_t>(static_cast<int64_t>(value.get<uint64_t>()))
                 : std::nullopt;
    if (value.is_number_integer()) return value.get<int64_t>();
    return std::nullopt;
  }

  double micros(const json& event, const char* key, size_t index) const {
    const auto it = event.find(key);
    if (it == event.end()) failEvent(index, std::string("no \"") + key + "\"");
    if (!it->is_number()) failEvent(index, std::string("\"") + key + "\" is not a number");
    const double value = it->get<double>();
    if (!(value >= 0 && value <= kMaxMicros))
      failEvent(index, std::string("\"") + key + "\" is not a time in microseconds between 0 and 2^53");
    return value;
  }

  static std::string threadKey(const json& event) {
    const auto pid = event.find("pid"), tid = event.find("tid");
    return (pid == event.end() ? std::string() : pid->dump()) + ' ' + (tid == event.end() ? std::string() : tid->dump());
  }

  const std::string& nameOf(const json& event, size_t index) const {
    const auto it = event.find("name");
    if (it == event.end() || !it->is_string()) failEvent(index, "no \"name\" string");
    return it->get_ref<const std::string&>();
  }

  const json* argsOf(const json& event, size_t index) const {
    const auto it = event.find("args");
    if (it == event.end()) return nullptr;
    if (!it->is_object()) failEvent(index, "\"args\" is not an object");
    return &*it;
  }

  // A non-negative integer argument up to `max`; -1 when absent.
  int64_t integerArg(const json* args, const char* key, int64_t max, size_t index) const {
    if (!args) return -1;
    const auto it = args->find(key);
    if (it == args->end()) return -1;
    const bool inRange = it->is_number_unsigned() && it->get<uint64_t>() <= static_cast<uint64_t>(max);
    if (!inRange) failEvent(index, std::string("args.") + key + " is not an integer between 0 and " + std::to_string(max));
    return static_cast<int64_t>(it->get<uint64_t>());
  }

  // Self time: each host span's duration less its direct children's on the same thread.
  void finishCpuOps() {
    for (auto& [thread, spans] : threads_) {
      std::stable_sort(spans.begin(), spans.end(), [](const HostSpan& a, const HostSpan& b) {
        return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;  // a parent before its children
      });
      std::vector<const HostSpan*> open;
      for (const HostSpan& span : spans) {
        while (!open.empty() && open.back()->end <= span.begin) open.pop_back();
        if (!open.empty() && open.back()->cpuOp >= 0) {
          // A child overrunning its parent (clock skew) is counted up to the parent's end only.
          ChromeCpuOp& parent = trace_.cpuOps[static_cast<size_t>(open.back()->cpuOp)];
          parent.selfSeconds -= std::min(span.end, open.back()->end) - span.begin;
        }
        open.push_back(&span);
      }
    }
    threads_.clear();
    for (ChromeCpuOp& op : trace_.cpuOps) {
      op.start = (op.start - earliest_) * kSecondsPerMicro;
      op.seconds *= kSecondsPerMicro;
      op.selfSeconds = std::max(0.0, op.selfSeconds) * kSecondsPerMicro;
    }
    std::stable_sort(trace_.cpuOps.begin(), trace_.cpuOps.end(),
                     [](const ChromeCpuOp& a, const ChromeCpuOp& b) { return a.start < b.start; });
  }

  void finishKernels() {
    auto& kernels = trace_.kernels;
    if (kernels.empty() && trace_.cpuOps.empty()) return;
    trace_.originMicros = earliest_;
    if (kernels.empty()) return;
    std::stable_sort(kernels.begin(), kernels.end(), [](const ChromeKernelEvent& a, const ChromeKernelEvent& b) {
      return a.start != b.start ? a.start < b.start : a.stream < b.stream;
    });
    // Offsets from the first start before adding durations: absolute microseconds with fractions
    // (2413669097444.592) keep only a fraction of a nanosecond.
    double span = 0;
    for (const ChromeKernelEvent& kernel : kernels)
      span = std::max(span, (kernel.start - kernels.front().start) + kernel.seconds);
    trace_.spanSeconds = span * kSecondsPerMicro;
    for (ChromeKernelEvent& kernel : kernels) {
      kernel.start = (kernel.start - earliest_) * kSecondsPerMicro;
      kernel.seconds *= kSecondsPerMicro;
      const auto launch = kernel.correlation >= 0 ? launches_.find(kernel.correlation) : launches_.end();
      if (launch != launches_.end()) {
        kernel.launchStart = (launch->second.first - earliest_) * kSecondsPerMicro;
        kernel.launchThread = launch->second.second;
      }
    }
    launches_.clear();
  }

  void readDevice(const json& doc) {
    const auto properties = doc.find("deviceProperties");
    if (properties == doc.end()) return;
    if (!properties->is_array()) fail("\"deviceProperties\" is not a list");
    const int32_t wanted = trace_.kernels.empty() ? -1 : trace_.kernels.front().device;
    for (size_t i = 0; i < properties->size(); ++i) {
      const json& device = (*properties)[i];
      const std::string at = "deviceProperties[" + std::to_string(i) + "]: ";
      if (!device.is_object()) fail(at + "not an object");
      const auto name = device.find("name"), id = device.find("id"), memory = device.find("totalGlobalMem");
      if (name == device.end() || !name->is_string()) fail(at + "no \"name\" string");
      if (id != device.end() && !id->is_number_integer()) fail(at + "\"id\" is not an integer");
      if (memory != device.end() && !memory->is_number_unsigned()) fail(at + "\"totalGlobalMem\" is not a byte count");
      const bool isWanted = id != device.end() && wanted >= 0 && *id == wanted;
      if (i == 0 || isWanted) {
        trace_.deviceName = name->get<std::string>();
        trace_.deviceMemoryBytes = memory == device.end() ? 0 : memory->get<uint64_t>();
      }
      if (isWanted) break;
    }
  }

  void readRank(const json& doc) {
    const auto info = doc.find("distributedInfo");
    if (info == doc.end()) return;
    if (!info->is_object()) fail("\"distributedInfo\" is not an object");
    const auto rank = info->find("rank");
    if (rank == info->end()) return;
    if (!rank->is_number_unsigned() || rank->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int32_t>::max()))
      fail("\"distributedInfo.rank\" is not a rank");
    trace_.rank = static_cast<int32_t>(rank->get<uint64_t>());
  }

  const std::string& source_;
  ChromeTrace trace_;
  double earliest_ = kMaxMicros;
  std::unordered_map<std::string, std::vector<HostSpan>> threads_;  // by "pid tid"
  std::unordered_map<int64_t, std::pair<double, int64_t>> launches_;  // correlation -> (start µs, tid)
};

}  // namespace

std::string_view deviceActivityName(DeviceActivity kind) {
  switch (kind) {
    case DeviceActivity::Kernel: return "kernel";
    case DeviceActivity::Memcpy: return "memcpy";
    case DeviceActivity::Memset: return "memset";
  }
  return "kernel";
}

std::vector<ChromeKernelTotal> ChromeTrace::totals() const {
  std::vector<ChromeKernelTotal> out;
  std::unordered_map<std::string_view, size_t> byName;
  for (const ChromeKernelEvent& kernel : kernels) {
    const auto [it, added] = byName.try_emplace(kernel.name, out.size());
    if (added) out.push_back({kernel.name, 0, 0});
    ChromeKernelTotal& total = out[it->second];
    ++total.calls;
    total.seconds += kernel.seconds;
  }
  std::sort(out.begin(), out.end(), [](const ChromeKernelTotal& a, const ChromeKernelTotal& b) {
    return a.seconds != b.seconds ? a.seconds > b.seconds : a.name < b.name;
  });
  return out;
}

std::vector<ChromeCpuOpTotal> ChromeTrace::cpuTotals() const {
  std::vector<ChromeCpuOpTotal> out;
  std::unordered_map<std::string_view, size_t> byName;
  for (const ChromeCpuOp& op : cpuOps) {
    const auto [it, added] = byName.try_emplace(op.name, out.size());
    if (added) out.push_back({op.name, 0, 0, 0});
    ChromeCpuOpTotal& total = out[it->second];
    ++total.calls;
    total.seconds += op.seconds;
    total.selfSeconds += op.selfSeconds;
  }
  std::sort(out.begin(), out.end(), [](const ChromeCpuOpTotal& a, const ChromeCpuOpTotal& b) {
    return a.selfSeconds != b.selfSeconds ? a.selfSeconds > b.selfSeconds : a.name < b.name;
  });
  return out;
}

ChromeTrace parseChromeTrace(std::string_view json, const std::string& sourceName) {
  return TraceReader(sourceName).read(json);
}

ChromeTrace readChromeTrace(const std::filesystem::path& path) {
  return parseChromeTrace(readFile(path, kMaxChromeTraceBytes), path.string());
}

}  // namespace lathe::io
