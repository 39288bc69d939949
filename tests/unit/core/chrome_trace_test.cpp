// torch.profiler Chrome traces: the real HolisticTraceAnalysis traces in samples/chrome_trace/, and
// small traces written here. Expected figures on the real files were counted from their JSON with
// Python's json module (events by "cat", sums of "dur"), never by this reader.
#include "io/trace/chrome_trace.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "temp_dir.h"
#include "util/diagnostics.h"

namespace fs = std::filesystem;
using namespace lathe;
using namespace lathe::io;

namespace {

const fs::path kTraces = fs::path(LATHE_SAMPLES_DIR) / "chrome_trace/HolisticTraceAnalysis";

size_t countKind(const ChromeTrace& trace, DeviceActivity kind) {
  size_t n = 0;
  for (const ChromeKernelEvent& kernel : trace.kernels) n += kernel.kind == kind;
  return n;
}

const ChromeKernelTotal* totalNamed(const std::vector<ChromeKernelTotal>& totals, std::string_view name) {
  for (const ChromeKernelTotal& total : totals)
    if (total.name == name) return &total;
  return nullptr;
}

// The message of the BadInput error `parse` throws; fails the test when it throws nothing else.
template <typename Parse>
std::string badInput(Parse parse) {
  try {
    parse();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

std::string parseError(const std::string& json) {
  return badInput([&] { (void)parseChromeTrace(json, "t.json"); });
}

// A Kineto-shaped trace around `events` (a comma-separated list of event objects).
std::string traceWith(const std::string& events) {
  return R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096}],
             "traceEvents": [)" +
         events + "]}";
}

std::string kernelEvent(const std::string& name, const std::string& ts, const std::string& dur, int stream = 7) {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "pid": 0, "tid": )" + std::to_string(stream) +
         R"(, "ts": )" + ts + R"(, "dur": )" + dur + R"(, "args": {"device": 0, "stream": )" + std::to_string(stream) +
         R"(, "correlation": 11}})";
}

std::string hostEvent(const std::string& category, const std::string& name, int tid, double ts, double dur) {
  return R"({"ph": "X", "cat": ")" + category + R"(", "name": ")" + name + R"(", "pid": 100, "tid": )" +
         std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + "}";
}

}  // namespace

TEST(ChromeTrace, ReadsTheKernelsCopiesAndFillsOfAnA100Trace) {
  const ChromeTrace trace = readChromeTrace(kTraces / "benchmark_result_493459_1694039959_trace.json.gz");
  EXPECT_EQ(trace.deviceName, "NVIDIA A100-PG509-200");
  EXPECT_EQ(trace.deviceMemoryBytes, 42297524224u);
  EXPECT_EQ(trace.rank, 0);
  // cat kernel 79, gpu_memcpy 16, gpu_memset 3.
  EXPECT_EQ(trace.kernels.size(), 98u);
  EXPECT_EQ(countKind(trace, DeviceActivity::Kernel), 79u);
  EXPECT_EQ(countKind(trace, DeviceActivity::Memcpy), 16u);
  EXPECT_EQ(countKind(trace, DeviceActivity::Memset), 3u);
  // First device event (a memcpy at 1694039994071305 us) to the last one's end.
  EXPECT_NEAR(trace.spanSeconds, 16.025575, 1e-9);
  size_t onStream7 = 0;
  for (size_t i = 0; i < trace.kernels.size(); ++i) {
    const ChromeKernelEvent& kernel = trace.kernels[i];
    EXPECT_EQ(kernel.device, 0);
    EXPECT_GE(kernel.correlation, 0);
    EXPECT_GE(kernel.start, 0);
    if (i > 0) {
      EXPECT_LE(trace.kernels[i - 1].start, kernel.start);
    }
    onStream7 += kernel.kind == DeviceActivity::Kernel && kernel.stream == 7;
  }
  EXPECT_EQ(onStream7, 73u);  // the other 6 kernels ran on stream 20

  const std::vector<ChromeKernelTotal> totals = trace.totals();
  ASSERT_FALSE(totals.empty());
  EXPECT_EQ(totals.front().name, "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(totals.front().calls, 16u);
  EXPECT_NEAR(totals.front().seconds, 39080e-6, 1e-12);
  for (size_t i = 1; i < totals.size(); ++i) EXPECT_GE(totals[i - 1].seconds, totals[i].seconds);
  const ChromeKernelTotal* sgemm = totalNamed(totals, "ampere_sgemm_32x32_sliced1x4_tn");
  ASSERT_NE(sgemm, nullptr);
  EXPECT_EQ(sgemm->calls, 6u);
  EXPECT_NEAR(sgemm->seconds, 2673e-6, 1e-12);

  // 359 cpu_op events on one thread; self time excludes nested operators and runtime calls.
  EXPECT_EQ(trace.cpuOps.size(), 359u);
  const std::vector<ChromeCpuOpTotal> ops = trace.cpuTotals();
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops.front().name, "aten::cudnn_convolution");
  EXPECT_EQ(ops.front().calls, 10u);
  EXPECT_NEAR(ops.front().seconds, 15.636562, 1e-9);
  EXPECT_NEAR(ops.front().selfSeconds, 2.891435, 1e-9);
}

TEST(ChromeTrace, ARangeProfilerTraceHasNoKernelTimesButItsOperators) {
  // CUPTI range-profiler run: its 77 cuda_profiler_range events time counter replays, not kernels.
  const ChromeTrace trace = readChromeTrace(kTraces / "benchmark_result_924719_1679055439_trace.json.gz");
  EXPECT_TRUE(trace.kernels.empty());
  EXPECT_EQ(trace.spanSeconds, 0);
  EXPECT_TRUE(trace.totals().empty());
  EXPECT_EQ(trace.deviceName, "NVIDIA A100-PG509-200");
  EXPECT_EQ(trace.deviceMemoryBytes, 42505273344u);
  EXPECT_EQ(trace.cpuOps.size(), 375u);
  const std::vector<ChromeCpuOpTotal> ops = trace.cpuTotals();
  ASSERT_FALSE(ops.empty());
  EXPECT_EQ(ops.front().name, "aten::uniform_");
  EXPECT_EQ(ops.front().calls, 17u);
  EXPECT_NEAR(ops.front().selfSeconds, 2.480861, 1e-9);
  EXPECT_EQ(trace.cpuOps.front().start, 0);  // the earliest operator is the origin
}

TEST(ChromeTrace, ReadsAnInductorTritonKernelWithFractionalMicroseconds) {
  const ChromeTrace trace = readChromeTrace(kTraces / "triton_example.json.gz");
  ASSERT_EQ(trace.kernels.size(), 1u);
  const ChromeKernelEvent& kernel = trace.kernels.front();
  EXPECT_EQ(kernel.name, "triton_poi_fused_add_cos_sin_0");
  EXPECT_EQ(kernel.kind, DeviceActivity::Kernel);
  EXPECT_NEAR(kernel.seconds, 1.76e-6, 1e-12);
  EXPECT_EQ(kernel.stream, 7);
  EXPECT_EQ(kernel.correlation, 35);
  EXPECT_NEAR(trace.spanSeconds, 1.76e-6, 1e-12);
  EXPECT_EQ(trace.rank, -1);
  // The kernel's start, 2413669097444.592 us, from the first cpu_op's, 2413669096100.149 us.
  EXPECT_NEAR(kernel.start, 1344.443e-6, 1e-9);
  ASSERT_EQ(trace.cpuOps.size(), 3u);
  const std::vector<ChromeCpuOpTotal> ops = trace.cpuTotals();
  EXPECT_EQ(ops.front().name, "Torch-Compiled Region: 0/0");
  EXPECT_NEAR(ops.front().seconds, 1352.964e-6, 1e-9);
  EXPECT_NEAR(ops.front().selfSeconds, 1257.152e-6, 1e-9);
}

TEST(ChromeTrace, RefusesTheRawMemoryTimelineWhichIsNoChromeTrace) {
  const fs::path path = kTraces / "memory_timeline.raw.gz";
  const std::string message = badInput([&] { (void)readChromeTrace(path); });
  EXPECT_EQ(message.rfind(path.string() + ": not a Chrome trace", 0), 0u) << message;
}

TEST(ChromeTrace, ReadsPlainJsonAndRefusesTruncatedGzip) {
  const lathe::testing::TempDir dir;
  const fs::path plain = dir.write("trace.json", traceWith(kernelEvent("k", "10", "2")));
  EXPECT_EQ(readChromeTrace(plain).kernels.size(), 1u);

  std::ifstream source(kTraces / "benchmark_result_493459_1694039959_trace.json.gz", std::ios::binary);
  const std::string compressed((std::istreambuf_iterator<char>(source)), std::istreambuf_iterator<char>());
  ASSERT_GT(compressed.size(), 1000u);
  const fs::path cut = dir.write("cut.json.gz", compressed.substr(0, compressed.size() / 2));
  const std::string message = badInput([&] { (void)readChromeTrace(cut); });
  EXPECT_EQ(message.rfind(cut.string() + ": ", 0), 0u) << message;

  const fs::path missing = dir.path() / "missing.json";
  EXPECT_NE(badInput([&] { (void)readChromeTrace(missing); }).find(missing.string()), std::string::npos);
}

TEST(ChromeTrace, OrdersDeviceEventsByStartAndMeasuresFromTheEarliestEvent) {
  const ChromeTrace trace = parseChromeTrace(
      traceWith(kernelEvent("late", "1000", "5") + "," + kernelEvent("early", "400", "50", 20) + "," +
                kernelEvent("same_time_stream_7", "400", "1", 7) + "," +
                R"j({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "ts": 900, "dur": 1, "args": {}})j"),
      "t.json");
  ASSERT_EQ(trace.kernels.size(), 4u);
  EXPECT_EQ(trace.kernels[0].name, "same_time_stream_7");
  EXPECT_EQ(trace.kernels[1].name, "early");
  EXPECT_EQ(trace.kernels[2].kind, DeviceActivity::Memset);
  EXPECT_EQ(trace.kernels[2].device, -1);  // not logged
  EXPECT_EQ(trace.kernels[3].name, "late");
  EXPECT_EQ(trace.originMicros, 400);
  EXPECT_NEAR(trace.kernels[3].start, 600e-6, 1e-15);
  EXPECT_NEAR(trace.spanSeconds, 605e-6, 1e-15);
  EXPECT_EQ(trace.deviceName, "NVIDIA H200");
}

TEST(ChromeTrace, SelfTimeLeavesOutDirectChildrenOnTheSameThreadOnly) {
  // parent [0, 100) holds child [10, 40) (which holds grandchild [20, 30)) and a runtime call
  // [50, 60); an operator of another thread at the same time is no child.
  const ChromeTrace trace = parseChromeTrace(
      traceWith(hostEvent("cpu_op", "aten::parent", 1, 0, 100) + "," + hostEvent("cpu_op", "aten::child", 1, 10, 30) +
                "," + hostEvent("cpu_op", "aten::grandchild", 1, 20, 10) + "," +
                hostEvent("cuda_runtime", "cudaLaunchKernel", 1, 50, 10) + "," +
                hostEvent("cpu_op", "aten::other_thread", 2, 5, 90)),
      "t.json");
  ASSERT_EQ(trace.cpuOps.size(), 4u);  // the runtime call only nests
  EXPECT_TRUE(trace.kernels.empty());
  EXPECT_EQ(trace.spanSeconds, 0);
  const std::vector<ChromeCpuOpTotal> ops = trace.cpuTotals();
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].name, "aten::other_thread");
  EXPECT_NEAR(ops[0].selfSeconds, 90e-6, 1e-12);
  EXPECT_EQ(ops[1].name, "aten::parent");
  EXPECT_NEAR(ops[1].selfSeconds, 60e-6, 1e-12);
  EXPECT_NEAR(ops[1].seconds, 100e-6, 1e-12);
  EXPECT_EQ(ops[2].name, "aten::child");
  EXPECT_NEAR(ops[2].selfSeconds, 20e-6, 1e-12);
  EXPECT_NEAR(ops[3].selfSeconds, 10e-6, 1e-12);
  EXPECT_EQ(trace.cpuOps[1].thread, 2);
}

TEST(ChromeTrace, LeavesEventsItDoesNotReadUninspected) {
  const ChromeTrace trace = parseChromeTrace(
      traceWith(R"({"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "python"}},)"
                R"({"ph": "f", "cat": "ac2g", "ts": "not a time"},)"
                R"({"ph": "B", "cat": "kernel", "name": "begin events are not Kineto's"},)"
                R"({"ph": "X", "cat": "cuda_profiler_range", "name": "k", "ts": -1},)"
                R"({"ph": "X", "name": "no category", "ts": null},)" +
                kernelEvent("k", "1", "1")),
      "t.json");
  EXPECT_EQ(trace.kernels.size(), 1u);
  EXPECT_TRUE(parseChromeTrace(R"({"traceEvents": []})", "t.json").kernels.empty());
  EXPECT_EQ(parseChromeTrace(R"({"traceEvents": []})", "t.json").deviceName, "");
}

TEST(ChromeTrace, RefusesWhatIsNoTraceOrABrokenEventWithTheSourceAndWhat) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "not valid JSON"},
      {R"({"traceEvents": [)", "not valid JSON"},
      {R"({"traceEvents": [{"ph": "X", "cat": "kernel", "ts": NaN}]})", "not valid JSON"},
      {"[1, 2]", "not a Chrome trace"},
      {R"({"events": []})", "no \"traceEvents\" list"},
      {R"({"traceEvents": {}})", "no \"traceEvents\" list"},
      {R"({"traceEvents": [7]})", "traceEvents[0]: not an object"},
      {traceWith(R"({"ph": "X", "cat": "kernel", "name": "k", "dur": 1})"), "traceEvents[0]: no \"ts\""},
      {traceWith(kernelEvent("k", "\"5\"", "1")), "\"ts\" is not a number"},
      {traceWith(kernelEvent("k", "-3", "1")), "\"ts\" is not a time"},
      {traceWith(kernelEvent("k", "1e300", "1")), "\"ts\" is not a time"},
      {traceWith(kernelEvent("k", "1", "1e999")), "number overflow"},
      {traceWith(kernelEvent("k", "1", "18446744073709551615")), "\"dur\" is not a time"},
      {traceWith(R"({"ph": "X", "cat": "kernel", "ts": 1, "dur": 1})"), "no \"name\" string"},
      {traceWith(R"({"ph": "X", "cat": "cpu_op", "name": 5, "ts": 1, "dur": 1})"), "no \"name\" string"},
      {traceWith(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": []})"), "\"args\" is not an object"},
      {traceWith(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"device": -1}})"), "args.device"},
      {traceWith(R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"device": 4294967296}})"),
       "args.device"},
      {traceWith(R"({"ph": "X", "cat": "gpu_memcpy", "name": "m", "ts": 1, "dur": 1, "args": {"stream": "7"}})"),
       "args.stream"},
      {R"({"deviceProperties": {}, "traceEvents": []})", "\"deviceProperties\" is not a list"},
      {R"({"deviceProperties": [{"id": 0}], "traceEvents": []})", "deviceProperties[0]: no \"name\" string"},
      {R"({"deviceProperties": [{"name": "x", "totalGlobalMem": -1}], "traceEvents": []})", "totalGlobalMem"},
      {R"({"distributedInfo": {"rank": 1e40}, "traceEvents": []})", "distributedInfo.rank"},
      {R"({"distributedInfo": [], "traceEvents": []})", "\"distributedInfo\" is not an object"},
      {std::string(100, '[') + std::string(100, ']'), "nested deeper"},
  };
  for (const auto& [json, expected] : cases) {
    SCOPED_TRACE(json.substr(0, 200));
    const std::string message = parseError(json);
    EXPECT_EQ(message.rfind("t.json: ", 0), 0u) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

namespace {

// A compiled training step profiled on an H100 (tests/data/h100_compiled_step): 328 kernels, each
// launched by a cuda_runtime or cuda_driver call of the same correlation (counted with Python's json
// module).
TEST(ChromeTrace, PutsEveryKernelUnderTheHostCallThatLaunchedIt) {
  const ChromeTrace trace =
      readChromeTrace(fs::path(LATHE_SOURCE_DIR) / "tests/data/h100_compiled_step/mixtral_2l_train.trace.json.gz");
  EXPECT_EQ(trace.deviceName, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(countKind(trace, DeviceActivity::Kernel), 328u);
  size_t launched = 0;
  for (const ChromeKernelEvent& kernel : trace.kernels) {
    if (kernel.kind != DeviceActivity::Kernel) continue;
    ASSERT_TRUE(kernel.launchStart) << kernel.name;
    ++launched;
    EXPECT_LE(*kernel.launchStart, kernel.start) << kernel.name << ": ran before it was launched";
    EXPECT_GE(kernel.launchThread, 0) << kernel.name;
  }
  EXPECT_EQ(launched, 328u);
  size_t compiledCalls = 0;
  for (const ChromeCpuOp& op : trace.cpuOps) compiledCalls += op.name.starts_with("## Call CompiledFxGraph");
  EXPECT_EQ(compiledCalls, 4u);  // forward and backward, two steps
}

}  // namespace
