// The toolchain driver and the export bundle: targets parsing, the fatbin reader on a container
// built by hand and on damaged bytes, the manifest contract, the plan's reference to an export,
// and (where nvcc is installed) every kernel generated for the llama / mixtral / gpt2 captures
// compiled for sm_90a and sm_120, the fatbin holding machine code for both; how a bundle is
// installed: the umask's mode, symlinks written through, the companion (the plan) committed with
// the bundle or not at all, concurrent exports into one folder taking turns.
#include "kernels/export_bundle.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "hw/hw_profile.h"
#include "ir/op_info.h"
#include "passes/fusion.h"
#include "passes/split.h"
#include "plan/plan_bundle.h"
#include "sample_graphs.h"
#include "temp_dir.h"
#include "util/diagnostics.h"
#include "passes/plan_target.h"

using namespace lathe;
namespace fs = std::filesystem;

namespace {

TEST(Targets, ParsesArchitecturesAndRefusesTheRest) {
  EXPECT_EQ(kernels::parseTargets(kernels::kDefaultTargets), (std::vector<std::string>{"sm_90a", "sm_120"}));
  EXPECT_EQ(kernels::parseTargets("sm_100f"), (std::vector<std::string>{"sm_100f"}));
  for (const char* bad : {"", "sm_", "sm90", "compute_90", "sm_90b", "sm_90a,,sm_120", "sm_90,sm_90"}) {
    EXPECT_THROW((void)kernels::parseTargets(bad), Error) << bad;
  }
}

// A fatbin container as nvcc writes it: header, then per entry a 64-byte header and its payload.
std::vector<std::byte> container(const std::vector<std::tuple<uint16_t, uint32_t, uint64_t>>& entries) {
  std::vector<std::byte> out(16);
  auto put = [&](size_t at, uint64_t value, size_t bytes) {
    for (size_t k = 0; k < bytes; ++k) out[at + k] = static_cast<std::byte>((value >> (8 * k)) & 0xff);
  };
  for (const auto& [kind, arch, flags] : entries) {
    const size_t at = out.size();
    out.resize(at + 64 + 32);
    put(at, kind, 2);
    put(at + 2, 0x0101, 2);
    put(at + 4, 64, 4);
    put(at + 8, 32, 8);
    put(at + 28, arch, 4);
    put(at + 40, flags, 8);
  }
  put(0, 0xBA55ED50, 4);
  put(4, 1, 2);
  put(6, 16, 2);
  put(8, out.size() - 16, 8);
  return out;
}

TEST(Fatbin, ReadsEntryKindsAndArchitectures) {
  const std::vector<std::byte> bytes =
      container({{2, 90, 0x100011}, {2, 120, 0x1000011}, {1, 90, 0x108011}, {2, 100, 0x1200011}});
  const std::vector<kernels::FatbinEntry> entries = kernels::readFatbin(bytes, "test");
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].arch, "sm_90a");
  EXPECT_EQ(entries[0].kind, kernels::FatbinEntry::Kind::Elf);
  EXPECT_EQ(entries[0].bytes, 32u);
  EXPECT_EQ(entries[1].arch, "sm_120");
  EXPECT_EQ(entries[2].arch, "compute_90a");
  EXPECT_EQ(entries[2].kind, kernels::FatbinEntry::Kind::Ptx);
  EXPECT_EQ(entries[3].arch, "sm_100f");
}

TEST(Fatbin, RefusesOtherDataAndCutContainers) {
  std::vector<std::byte> bytes = container({{2, 90, 0x100011}});
  std::vector<std::byte> cut(bytes.begin(), bytes.end() - 8);
  EXPECT_THROW((void)kernels::readFatbin(cut, "cut"), Error);
  std::vector<std::byte> other(bytes.size(), std::byte{0x7f});
  EXPECT_THROW((void)kernels::readFatbin(other, "other"), Error);
  EXPECT_THROW((void)kernels::readFatbin(std::span<const std::byte>(bytes.data(), 8), "short"), Error);
  bytes[16 + 4] = std::byte{0xff};  // the entry's header size beyond the container
  EXPECT_THROW((void)kernels::readFatbin(bytes, "entry"), Error);
}

struct Exported {
  std::shared_ptr<const ir::Graph> graph;
  kernels::KernelSet set;
  plan::PlanState state;
};

Exported generate(const std::string& sample, const std::string& graphId) {
  const lathe::testing::SampleGraph g = lathe::testing::loadSampleGraph(sample, graphId);
  const hw::HwProfile hw;
  const passes::PlanTarget target{g.graph, "test", g.inputs, hw};
  const passes::PassContext context = target.context();
  const passes::PassResult split = passes::SplitPass().run(context, plan::PlanState::empty(g.graph->size()), {});
  Exported out;
  out.graph = g.graph;
  out.state = passes::FusionPass().run(context, split.state, passes::PassOptions()).state;
  out.set = kernels::generateKernels(*g.graph, out.state);
  return out;
}

TEST(Manifest, FollowsTheKernelsContract) {
  const Exported e = generate("captures/llama3_8b_2l_train.log.gz", "0/0:aot_joint_graph");
  const kernels::ExportRequest request{
      "out", {"sm_90a", "sm_120"}, "llama.plan.json", "0/0:aot_joint_graph", e.state.groups.size()};
  const nlohmann::json m = nlohmann::json::parse(kernels::manifestJson(e.set, request));
  EXPECT_EQ(m["format"], "lathe.kernels/1");
  EXPECT_EQ(m["targets"], (std::vector<std::string>{"sm_90a", "sm_120"}));
  EXPECT_EQ(m["library"], "liblathe_kernels.so");
  EXPECT_EQ(m["fatbin"], "kernels.fatbin");
  EXPECT_EQ(m["plan"], "llama.plan.json");
  EXPECT_EQ(m["graph"], "0/0:aot_joint_graph");
  EXPECT_TRUE(m["symbols"].is_array());
  EXPECT_EQ(m["kernels"].size() + m["not_generated"].size(), e.state.groups.size());
  const std::set<std::string> dtypes{"bfloat16", "float16", "float32", "int64", "bool"};
  std::set<std::string> producers;
  for (const nlohmann::json& k : m["kernels"]) {
    // Each input names the op that makes it (the harness draws positive values for exp's outputs).
    for (const nlohmann::json& t : k["inputs"]) {
      const ir::NodeId node = e.graph->find(t["name"].get<std::string>());
      ASSERT_NE(node, ir::kNoNode) << t["name"];
      const ir::Node& made = e.graph->node(node);
      const std::string expected = made.kind == ir::NodeKind::CallFunction ? ir::canonicalOpName(e.graph->target(node))
                                                                           : std::string(ir::nodeKindName(made.kind));
      EXPECT_EQ(t["producer"], expected) << t["name"];
      producers.insert(t["producer"].get<std::string>());
    }
    for (const char* key :
         {"name", "launch", "group", "kind", "source", "inputs", "outputs", "fx", "bytes", "launch_config"}) {
      EXPECT_TRUE(k.contains(key)) << key;
    }
    EXPECT_EQ(k["source"], "src/" + k["name"].get<std::string>() + ".cu");
    EXPECT_TRUE(k["launch_config"].contains("grid") && k["launch_config"].contains("block"));
    for (const char* side : {"inputs", "outputs"}) {
      for (const nlohmann::json& t : k[side]) {
        EXPECT_TRUE(dtypes.contains(t["dtype"].get<std::string>())) << t["dtype"];
        EXPECT_EQ(t["sizes"].size(), t["strides"].size());
      }
    }
  }
  for (const char* op : {"placeholder", "aten.view.default", "aten.exp.default", "aten.rsqrt.default"}) {
    EXPECT_TRUE(producers.contains(op)) << op;  // llama: weights, projections, cross-entropy's exp, RMSNorm
  }
  for (const nlohmann::json& n : m["not_generated"]) {
    EXPECT_TRUE(n["group"].is_number_integer());
    EXPECT_FALSE(n["reason"].get<std::string>().empty());
  }
}

TEST(PlanReference, KernelsReferenceRoundTripsAndIsReadStrictly) {
  plan::PlanBundle bundle;
  bundle.artifact = "capture.log";
  bundle.graphId = "0/0:aot_joint_graph";
  bundle.hardware = hw::resolveHwProfile("h200");
  bundle.kernels.push_back({"bundle/manifest.json", "lathe.kernels/1", {"sm_90a", "sm_120"}, 42, 8});
  const std::string text = plan::planToJson(bundle);
  const plan::PlanBundle back = plan::planFromJson(text, "plan.json");
  EXPECT_EQ(back.kernels, bundle.kernels);
  nlohmann::json j = nlohmann::json::parse(text);
  j["kernels"][0]["kernels"] = 4.5;
  EXPECT_THROW((void)plan::planFromJson(j.dump(), "plan.json"), Error);
  j["kernels"][0].erase("kernels");
  EXPECT_THROW((void)plan::planFromJson(j.dump(), "plan.json"), Error);
  j["kernels"] = "bundle";
  EXPECT_THROW((void)plan::planFromJson(j.dump(), "plan.json"), Error);
}

using lathe::testing::TempDir;

TEST(Export, RefusesToReplaceADirectoryThatIsNotABundle) {
  const TempDir temp;
  const fs::path dir = temp.path() / "mine";
  fs::create_directories(dir);
  std::ofstream(dir / "notes.txt") << "keep me";
  const kernels::ExportRequest request{dir, {"sm_90a"}, "p.json", "g", 0};
  try {
    (void)kernels::writeExport({}, request, "/nonexistent/nvcc");
    FAIL() << "replaced a directory that is not a bundle";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Usage);
  }
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  EXPECT_EQ(std::distance(fs::directory_iterator(temp.path()), fs::directory_iterator()), 1);
}

TEST(Export, FailedCompileLeavesNothingBehind) {
  const TempDir temp;
  const kernels::ExportRequest request{temp.path() / "bundle", {"sm_90a"}, "p.json", "g", 0};
  EXPECT_THROW((void)kernels::writeExport({}, request, "/nonexistent/nvcc"), Error);
  EXPECT_TRUE(fs::is_empty(temp.path()));
}

TEST(Export, RefusesAFifoWithoutOpeningIt) {
  const TempDir temp;
  const fs::path fifo = temp.path() / "bundle";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  const kernels::ExportRequest request{fifo, {"sm_90a"}, "p.json", "g", 0};
  try {
    (void)kernels::writeExport({}, request, "/nonexistent/nvcc");
    FAIL() << "wrote over a FIFO";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    EXPECT_NE(std::string(e.what()).find("FIFO"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::status(fifo).type(), fs::file_type::fifo);
  EXPECT_EQ(std::distance(fs::directory_iterator(temp.path()), fs::directory_iterator()), 1);
}

// Exports of the empty kernel set (one short nvcc run each), where nvcc is installed.
class ExportWithNvcc : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::optional<fs::path> found = kernels::findNvcc();
    if (!found) GTEST_SKIP() << "no CUDA toolkit (nvcc) on this machine";
    nvcc_ = *found;
  }
  // Exports into `dir`, the manifest naming `graph`.
  void exportInto(const fs::path& dir, const std::string& graph, const kernels::BundleCompanion& companion = {}) {
    (void)kernels::writeExport({}, {dir, {"sm_90a"}, "p.json", graph, 0}, nvcc_, companion);
  }
  static std::string graphOf(const fs::path& dir) {
    return nlohmann::json::parse(std::ifstream(dir / "manifest.json")).at("graph").get<std::string>();
  }
  // Names in `folder`, sorted.
  static std::vector<std::string> namesIn(const fs::path& folder) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path nvcc_;
};

TEST_F(ExportWithNvcc, BundleFolderFollowsTheUmask) {
  const TempDir temp;
  for (const auto& [mask, mode] : {std::pair<mode_t, mode_t>{022, 0755}, {077, 0700}}) {
    const mode_t previous = umask(mask);
    exportInto(temp.path() / "bundle", "g");
    umask(previous);
    EXPECT_EQ(static_cast<mode_t>(fs::status(temp.path() / "bundle").permissions()), mode) << std::oct << mask;
    EXPECT_EQ(static_cast<mode_t>(fs::status(temp.path() / "bundle" / "src").permissions()), mode);
  }
}

TEST_F(ExportWithNvcc, CompanionThatCannotPrepareChangesNothing) {
  const TempDir temp;
  const fs::path dir = temp.path() / "bundle";
  exportInto(dir, "old");
  kernels::BundleCompanion failing;
  failing.prepare = [] { throw Error(ErrorCode::BadInput, "plan.json: cannot write: No space left on device"); };
  failing.commit = [] { ADD_FAILURE() << "committed after a failed prepare"; };
  EXPECT_THROW(exportInto(dir, "new", failing), Error);
  EXPECT_EQ(graphOf(dir), "old");
  EXPECT_EQ(namesIn(temp.path()), std::vector<std::string>{"bundle"});
}

TEST_F(ExportWithNvcc, CompanionThatCannotCommitPutsTheOldBundleBack) {
  const TempDir temp;
  const fs::path dir = temp.path() / "bundle";
  exportInto(dir, "old");
  kernels::BundleCompanion failing;
  bool prepared = false;
  failing.prepare = [&] { prepared = true; };
  failing.commit = [&] {
    EXPECT_EQ(graphOf(dir), "new") << "commit runs once the new bundle is in place";
    throw Error(ErrorCode::BadInput, "plan.json: cannot write: Read-only file system");
  };
  try {
    exportInto(dir, "new", failing);
    FAIL() << "the commit's failure was swallowed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Read-only file system"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(prepared);
  EXPECT_EQ(graphOf(dir), "old");
  EXPECT_EQ(namesIn(temp.path()), std::vector<std::string>{"bundle"});
}

TEST_F(ExportWithNvcc, SymlinkedFolderIsWrittenThrough) {
  const TempDir temp;
  fs::create_directory(temp.path() / "real");
  fs::create_directory_symlink("real", temp.path() / "link");
  exportInto(temp.path() / "link", "g");
  EXPECT_TRUE(fs::is_symlink(temp.path() / "link"));
  EXPECT_EQ(graphOf(temp.path() / "real"), "g");
  EXPECT_EQ(namesIn(temp.path()), (std::vector<std::string>{"link", "real"}));
}

TEST_F(ExportWithNvcc, ConcurrentExportsIntoOneFolderTakeTurns) {
  const TempDir temp;
  const fs::path dir = temp.path() / "bundle";
  std::atomic<int> between{0};  // exports between prepare and commit
  std::atomic<bool> overlapped{false};
  std::mutex failuresMutex;
  std::vector<std::string> failures;
  std::vector<std::thread> exports;
  for (int e = 0; e < 3; ++e) {
    exports.emplace_back([&, e] {
      kernels::BundleCompanion companion;
      companion.prepare = [&] {
        ++between;
        // A window for another export to enter: without the lock, the others' compiles end within it.
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (!overlapped && std::chrono::steady_clock::now() < until) {
          if (between > 1) overlapped = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      };
      companion.commit = [&] { --between; };
      try {
        exportInto(dir, "export " + std::to_string(e), companion);
      } catch (const Error& error) {
        const std::lock_guard<std::mutex> lock(failuresMutex);
        failures.emplace_back(error.what());
      }
    });
  }
  for (std::thread& t : exports) t.join();
  EXPECT_TRUE(failures.empty()) << failures.front();
  EXPECT_FALSE(overlapped) << "two exports were installing into one folder at once";
  EXPECT_TRUE(graphOf(dir).starts_with("export "));
  EXPECT_EQ(namesIn(temp.path()), std::vector<std::string>{"bundle"});
}

// Every kernel generated for the samples, through nvcc for both targets: the build CI runs.
class CompileSamples : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(CompileSamples, EveryKernelCompilesForSm90aAndSm120) {
  const std::optional<fs::path> nvcc = kernels::findNvcc();
  if (!nvcc) GTEST_SKIP() << "no CUDA toolkit (nvcc) on this machine";
  const Exported e = generate(GetParam().first, GetParam().second);
  ASSERT_FALSE(e.set.kernels.empty());
  const TempDir temp;
  const kernels::ExportRequest request{
      temp.path() / "bundle", {"sm_90a", "sm_120"}, "p.json", GetParam().second, e.state.groups.size()};
  const kernels::ExportResult result = kernels::writeExport(e.set, request, *nvcc);
  std::set<std::string> elf;
  for (const kernels::FatbinEntry& entry : result.fatbin) {
    if (entry.kind == kernels::FatbinEntry::Kind::Elf) elf.insert(entry.arch);
  }
  EXPECT_EQ(elf, (std::set<std::string>{"sm_90a", "sm_120"}));
  for (const kernels::GeneratedKernel& k : e.set.kernels)
    EXPECT_TRUE(fs::exists(request.output / "src" / (k.name + ".cu")));
  EXPECT_TRUE(fs::exists(request.output / "liblathe_kernels.so"));
  EXPECT_TRUE(fs::exists(request.output / "manifest.json"));
  EXPECT_FALSE(fs::exists(request.output / "build"));
}

INSTANTIATE_TEST_SUITE_P(Captures, CompileSamples, ::testing::ValuesIn(lathe::testing::kKernelSampleGraphs));

}  // namespace
