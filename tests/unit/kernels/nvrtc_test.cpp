// The NVRTC path of `lathe export` (kernels/toolchain.h): the fatbin writer against the reader and
// against CUDA's own `fatbinary` (where nvcc is installed), finding libnvrtc and the errors when it
// is absent or a source does not compile, and every kernel generated for the llama / mixtral /
// gpt2 captures compiled by NVRTC for sm_90a and sm_120 into a bundle whose library loads without
// the CUDA runtime. libnvrtc comes from the nvidia-cuda-nvrtc wheel in the source tree's .venv
// (scripts/requirements.txt) or the usual places; tests that compile skip where there is none.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>

#include "hw/hw_profile.h"
#include "ir/op_info.h"
#include "kernels/export_bundle.h"
#include "kernels/toolchain.h"
#include "passes/fusion.h"
#include "passes/split.h"
#include "sample_graphs.h"
#include "temp_dir.h"
#include "util/diagnostics.h"
#include "util/input.h"
#include "passes/plan_target.h"

using namespace lathe;
namespace fs = std::filesystem;

namespace {

// Sets an environment variable for the life of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

using lathe::testing::TempDir;

// The folder of the nvidia-cuda-nvrtc wheel in the source tree's .venv, where it is installed.
std::optional<fs::path> venvNvrtcDir() {
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(LATHE_SOURCE_DIR) / ".venv" / "lib", ec), end; !ec && it != end;
       it.increment(ec)) {
    for (const char* package : {"cu13", "cuda_nvrtc"}) {
      const fs::path lib = it->path() / "site-packages" / "nvidia" / package / "lib";
      if (fs::exists(lib / "libnvrtc.so.13", ec) || fs::exists(lib / "libnvrtc.so.12", ec)) return lib;
    }
  }
  return std::nullopt;
}

// libnvrtc: the wheel in .venv first, else wherever Nvrtc::load finds one.
std::optional<kernels::Nvrtc> loadNvrtc() {
  const std::optional<fs::path> venv = venvNvrtcDir();
  const ScopedEnv chosen("LATHE_NVRTC", venv ? std::optional<std::string>(venv->string()) : std::nullopt);
  try {
    return kernels::Nvrtc::load();
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::vector<std::byte> bytesOf(const fs::path& path) {
  const std::string text = readFile(path);
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  return {data, data + text.size()};
}

template <typename T>
T le(const std::vector<std::byte>& data, size_t at) {
  T value = 0;
  for (size_t k = 0; k < sizeof(T); ++k) value |= static_cast<T>(std::to_integer<uint8_t>(data[at + k])) << (8 * k);
  return value;
}

// A minimal ELF64 file with the sections given (name, contents), as a cubin's container.
std::vector<std::byte> elfWith(const std::vector<std::pair<std::string, std::string>>& sections) {
  std::string names(1, '\0');
  std::vector<size_t> nameAt;
  for (const auto& [name, bytes] : sections) {
    nameAt.push_back(names.size());
    names += name + '\0';
  }
  nameAt.push_back(names.size());
  names += std::string(".shstrtab") + '\0';
  std::string body;
  std::vector<std::pair<size_t, size_t>> placed;  // offset, size
  for (const auto& [name, bytes] : sections) {
    placed.emplace_back(64 + body.size(), bytes.size());
    body += bytes;
  }
  placed.emplace_back(64 + body.size(), names.size());
  body += names;
  body.resize((body.size() + 7) / 8 * 8);
  const size_t count = sections.size() + 2;  // the null section first, the names last
  std::vector<std::byte> out(64 + body.size() + count * 64);
  auto put = [&](size_t at, uint64_t value, size_t size) {
    for (size_t k = 0; k < size; ++k) out[at + k] = static_cast<std::byte>((value >> (8 * k)) & 0xff);
  };
  const char ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
  for (size_t k = 0; k < sizeof ident; ++k) out[k] = static_cast<std::byte>(ident[k]);
  put(0x28, 64 + body.size(), 8);
  put(0x3a, 64, 2);
  put(0x3c, count, 2);
  put(0x3e, count - 1, 2);
  std::memcpy(out.data() + 64, body.data(), body.size());
  for (size_t k = 0; k + 1 < count; ++k) {
    const size_t header = 64 + body.size() + (k + 1) * 64;
    put(header, nameAt[k], 4);
    put(header + 24, placed[k].first, 8);
    put(header + 32, placed[k].second, 8);
  }
  return out;
}

TEST(FatbinWriter, WritesOneElfEntryPerCubinThatTheReaderReadsBack) {
  const std::string compat("\x02\x09\x00\x00\x02\x02\x02\x00", 8);
  const std::vector<kernels::Cubin> cubins{{"sm_90a", elfWith({{".nv.compat", compat}, {".text.k", "code"}})},
                                           {"sm_120", elfWith({{".nv.compat", compat}, {".text.k", "code!"}})},
                                           {"sm_100f", elfWith({{".text.k", "c"}})}};
  const std::vector<std::byte> fatbin = kernels::writeFatbin(cubins);
  const std::vector<kernels::FatbinEntry> entries = kernels::readFatbin(fatbin, "written");
  ASSERT_EQ(entries.size(), 3u);
  for (size_t k = 0; k < entries.size(); ++k) {
    EXPECT_EQ(entries[k].kind, kernels::FatbinEntry::Kind::Elf);
    EXPECT_EQ(entries[k].arch, cubins[k].arch);
    EXPECT_EQ(entries[k].bytes, (cubins[k].elf.size() + 7) / 8 * 8);  // payloads padded to 8 bytes
    EXPECT_FALSE(entries[k].compressed);
  }
  // Entry headers: sm_90a's is 64 bytes; sm_120's carries the cubin's compatibility attributes
  // (tag, size, a zero byte, the section) as fatbinary writes them from sm_100 on.
  EXPECT_EQ(le<uint32_t>(fatbin, 16 + 4), 64u);
  const size_t second = 16 + 64 + entries[0].bytes;
  EXPECT_EQ(le<uint32_t>(fatbin, second + 4), 64u + 24u);
  EXPECT_EQ(le<uint32_t>(fatbin, second + 64), 0x48u);
  EXPECT_EQ(le<uint32_t>(fatbin, second + 68), compat.size());
  EXPECT_EQ(std::memcmp(fatbin.data() + second + 73, compat.data(), compat.size()), 0);
  EXPECT_EQ(le<uint64_t>(fatbin, second + 40) & 0x1000000u, 0x1000000u);
  const size_t third = second + 64 + 24 + entries[1].bytes;
  EXPECT_EQ(le<uint32_t>(fatbin, third + 4), 64u);  // no .nv.compat section: no attributes
}

TEST(FatbinWriter, RefusesACubinThatIsNotElf) {
  EXPECT_THROW((void)kernels::writeFatbin({{"sm_120", std::vector<std::byte>(80, std::byte{1})}}), Error);
}

// The writer's bytes are CUDA's: `fatbinary --create` of the same nvcc-made cubins.
TEST(FatbinWriter, MatchesFatbinaryByteForByte) {
  const std::optional<fs::path> nvcc = kernels::findNvcc();
  if (!nvcc) GTEST_SKIP() << "no CUDA toolkit (nvcc, fatbinary) on this machine";
  std::optional<fs::path> fatbinary;
  for (const fs::path& dir : {fs::canonical(*nvcc).parent_path(), fs::path("/usr/local/cuda/bin")}) {
    if (!fatbinary && fs::exists(dir / "fatbinary")) fatbinary = dir / "fatbinary";
  }
  if (!fatbinary) GTEST_SKIP() << "no fatbinary beside " << fs::canonical(*nvcc) << " nor in /usr/local/cuda/bin";
  const TempDir temp;
  std::ofstream(temp.path() / "k.cu") << "#include <cuda_bf16.h>\n"
                                         "extern \"C\" __global__ void k(const __nv_bfloat16* a, float* b) {\n"
                                         "  b[threadIdx.x] = __bfloat162float(a[threadIdx.x]) * 2.0f;\n}\n";
  std::vector<kernels::Cubin> cubins;
  std::string images;
  for (const std::string arch : {"sm_90a", "sm_120", "sm_100f"}) {
    const fs::path cubin = temp.path() / (arch + ".cubin");
    const std::string compile = nvcc->string() + " -cubin -arch=" + arch + " " + (temp.path() / "k.cu").string() +
                                " -o " + cubin.string() + " 2>&1";
    ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
    cubins.push_back({arch, bytesOf(cubin)});
    images += " --image3=kind=elf,sm=" + arch.substr(3) + ",file=" + cubin.string();
  }
  const fs::path reference = temp.path() / "reference.fatbin";
  const std::string create = fatbinary->string() + " --create=" + reference.string() + " -64" + images + " 2>&1";
  ASSERT_EQ(std::system(create.c_str()), 0) << create;
  EXPECT_EQ(kernels::writeFatbin(cubins), bytesOf(reference));
}

TEST(Nvrtc, AChosenLibraryThatIsNotThereIsABadInputNamingIt) {
  const ScopedEnv chosen("LATHE_NVRTC", "/nonexistent/libnvrtc.so.13");
  try {
    (void)kernels::Nvrtc::load();
    FAIL() << "loaded a library that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    EXPECT_NE(std::string(e.what()).find("$LATHE_NVRTC is /nonexistent/libnvrtc.so.13"), std::string::npos) << e.what();
  }
}

TEST(Nvrtc, WithoutAHostCompilerTheErrorSaysWhatIsMissing) {
  const ScopedEnv cxx("CXX", std::nullopt);
  const ScopedEnv path("PATH", "/nonexistent");
  try {
    (void)kernels::requireHostCompiler();
    FAIL() << "found a host compiler on an empty PATH";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    EXPECT_NE(std::string(e.what()).find("no host C++ compiler"), std::string::npos) << e.what();
  }
}

TEST(Nvrtc, ACompileErrorCarriesNvrtcsMessage) {
  const std::optional<kernels::Nvrtc> nvrtc = loadNvrtc();
  if (!nvrtc) GTEST_SKIP() << "no libnvrtc on this machine";
  EXPECT_FALSE(nvrtc->version().empty());
  try {
    (void)nvrtc->compile("broken.cu",
                         "#include \"helper.h\"\nextern \"C\" __global__ void k() { undeclared_name(); }\n",
                         {{"helper.h", "#pragma once\n"}}, "sm_90a");
    FAIL() << "a source that does not compile compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::BadInput);
    const std::string message = e.what();
    EXPECT_NE(message.find("NVRTC failed to compile broken.cu for sm_90a"), std::string::npos) << message;
    EXPECT_NE(message.find("undeclared_name"), std::string::npos) << message;
  }
  // The in-memory header is found; the architecture is NVRTC's to refuse.
  const kernels::Cubin cubin = nvrtc->compile("fine.cu", "#include \"helper.h\"\nextern \"C\" __global__ void k() {}\n",
                                              {{"helper.h", "#pragma once\n"}}, "sm_120");
  EXPECT_EQ(cubin.arch, "sm_120");
  ASSERT_GT(cubin.elf.size(), 4u);
  EXPECT_EQ(std::to_integer<char>(cubin.elf[1]), 'E');
  EXPECT_THROW((void)nvrtc->compile("fine.cu", "extern \"C\" __global__ void k() {}\n", {}, "sm_1"), Error);
}

// The names of the ELF sections of the fatbin's entry for `arch` that hold kernel code (.text.<kernel>).
std::set<std::string> kernelsInFatbin(const std::vector<std::byte>& fatbin, const std::string& arch) {
  std::set<std::string> out;
  size_t entry = 16;
  const size_t end = 16 + le<uint64_t>(fatbin, 8);
  for (const kernels::FatbinEntry& e : kernels::readFatbin(fatbin, "fatbin")) {
    const size_t elf = entry + le<uint32_t>(fatbin, entry + 4);
    if (e.arch == arch) {
      const uint64_t sections = elf + le<uint64_t>(fatbin, elf + 0x28);
      const uint16_t count = le<uint16_t>(fatbin, elf + 0x3c), namesIndex = le<uint16_t>(fatbin, elf + 0x3e);
      const size_t names = elf + le<uint64_t>(fatbin, sections + namesIndex * 64 + 24);
      for (size_t k = 0; k < count; ++k) {
        const std::string name(reinterpret_cast<const char*>(fatbin.data()) + names +
                               le<uint32_t>(fatbin, sections + k * 64));
        if (name.starts_with(".text.")) out.insert(name.substr(6));
      }
    }
    entry = elf + e.bytes;
  }
  EXPECT_EQ(entry, end);
  return out;
}

struct Generated {
  kernels::KernelSet set;
  size_t groups = 0;
};

Generated generate(const std::string& sample, const std::string& graphId) {
  const lathe::testing::SampleGraph g = lathe::testing::loadSampleGraph(sample, graphId);
  const hw::HwProfile hw;
  const passes::PlanTarget target{g.graph, "test", g.inputs, hw};
  const passes::PassContext context = target.context();
  const passes::PassResult split = passes::SplitPass().run(context, plan::PlanState::empty(g.graph->size()), {});
  const plan::PlanState state = passes::FusionPass().run(context, split.state, passes::PassOptions()).state;
  return {kernels::generateKernels(*g.graph, state), state.groups.size()};
}

class NvrtcSamples : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

// Every kernel generated for the samples, through NVRTC for both targets: the fatbin holds each
// kernel the sources declare for both, the library exports every launch function, needs no CUDA
// runtime, and where the driver is absent (CI) a launch says so (CUDA_ERROR_NO_DEVICE).
TEST_P(NvrtcSamples, EveryKernelCompilesForSm90aAndSm120) {
  const std::optional<kernels::Nvrtc> nvrtc = loadNvrtc();
  if (!nvrtc) GTEST_SKIP() << "no libnvrtc on this machine";
  const Generated g = generate(GetParam().first, GetParam().second);
  ASSERT_FALSE(g.set.kernels.empty());
  const TempDir temp;
  const kernels::ExportRequest request{
      temp.path() / "bundle", {"sm_90a", "sm_120"}, "p.json", GetParam().second, g.groups};
  const kernels::ExportResult result =
      kernels::writeExport(g.set, request, kernels::NvrtcToolchain{*nvrtc, kernels::requireHostCompiler()});
  std::set<std::string> elf;
  for (const kernels::FatbinEntry& entry : result.fatbin) {
    if (entry.kind == kernels::FatbinEntry::Kind::Elf) elf.insert(entry.arch);
  }
  EXPECT_EQ(elf, (std::set<std::string>{"sm_90a", "sm_120"}));

  std::set<std::string> declared;
  const std::regex kernel(R"(extern "C" __global__ void __launch_bounds__\(\d+\) (\w+)\()");
  for (const kernels::GeneratedKernel& k : g.set.kernels) {
    for (std::sregex_iterator it(k.source.begin(), k.source.end(), kernel), end; it != end; ++it)
      declared.insert((*it)[1]);
  }
  const std::vector<std::byte> fatbin = bytesOf(request.output / "kernels.fatbin");
  EXPECT_EQ(kernelsInFatbin(fatbin, "sm_90a"), declared);
  EXPECT_EQ(kernelsInFatbin(fatbin, "sm_120"), declared);

  const fs::path library = request.output / "liblathe_kernels.so";
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  using Launch = int (*)(void* const*, const void* const*, const int64_t*, void*);
  for (const kernels::GeneratedKernel& k : g.set.kernels)
    EXPECT_NE(dlsym(handle, k.launch.c_str()), nullptr) << k.launch;
  EXPECT_EQ(dlsym(handle, "lathe_fatbin"), nullptr);  // only the launch functions are exported
  if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(driver);
  } else {
    const auto& first = g.set.kernels.front();
    std::vector<int64_t> hints;
    for (const kernels::Symbol& s : g.set.symbols) hints.push_back(s.hint);
    hints.push_back(0);
    const std::vector<void*> pointers(first.inputs.size() + first.outputs.size() + 1, nullptr);
    const auto launch = reinterpret_cast<Launch>(dlsym(handle, first.launch.c_str()));
    EXPECT_EQ(launch(pointers.data(), pointers.data(), hints.data(), nullptr), 100) << "CUDA_ERROR_NO_DEVICE";
  }
  dlclose(handle);
  const std::string readme = readFile(request.output / "README.md");
  EXPECT_NE(readme.find("built with NVRTC"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Captures, NvrtcSamples, ::testing::ValuesIn(lathe::testing::kKernelSampleGraphs));

}  // namespace
