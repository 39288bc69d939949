// `lathe export PLAN -o DIR`: CUDA kernels for the fusion groups of a plan bundle, compiled into a
// fatbin and a shared library with a C ABI, with a manifest (kernels/export_bundle.h). The plan
// gets a reference to the manifest.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "commands.h"
#include "kernels/cuda_codegen.h"
#include "kernels/export_bundle.h"
#include "kernels/toolchain.h"
#include "output.h"
#include "plan/plan_bind.h"
#include "plan/plan_bundle.h"
#include "util/atomic_write.h"
#include "util/diagnostics.h"

namespace lathe::cli {

namespace {

namespace fs = std::filesystem;

struct ExportOptions {
  std::string plan, output, capture, targets{kernels::kDefaultTargets}, compiler{"nvcc"};
  bool keepPlan = false, json = false;
};

ExportOptions& exportOptions() {
  static ExportOptions o;
  return o;
}

int runExport(const GlobalOptions& global) {
  const ExportOptions& o = exportOptions();
  const std::vector<std::string> targets = kernels::parseTargets(o.targets);
  plan::PlanBundle bundle = plan::readPlan(o.plan);
  // The tools first: without them nothing is loaded or written.
  std::optional<fs::path> nvcc;
  std::optional<kernels::Nvrtc> nvrtc;
  fs::path hostCompiler;
  if (o.compiler == "nvrtc") {
    nvrtc.emplace(kernels::Nvrtc::load());
    hostCompiler = kernels::requireHostCompiler();
  } else {
    nvcc = kernels::requireNvcc();
  }
  std::string capture = o.capture;
  if (capture.empty()) {
    try {
      capture = plan::captureOf(bundle, o.plan);
    } catch (const Error& e) {
      throw Error(ErrorCode::BadInput, std::string(e.what()) + " (give it with --capture)");
    }
  }
  const io::Artifact artifact = load(capture, global);
  const plan::BoundPlan bound = plan::bind(bundle, artifact, o.plan);
  const kernels::KernelSet set = kernels::generateKernels(*bound.graph, bound.state);
  kernels::ExportRequest request{o.output, targets, fs::path(o.plan).filename().string(), bundle.graphId,
                                 bundle.state.groups.size()};
  // The plan records the export together with the bundle or not at all: once the bundle is built,
  // the new plan is written beside the plan (under the plan's lock, so that exports of this plan
  // into other folders keep their records), and renamed into place right after the bundle.
  std::optional<PathLock> planLock;
  std::optional<StagedFile> stagedPlan;
  kernels::BundleCompanion recordInPlan;
  if (!o.keepPlan) {
    recordInPlan.prepare = [&] {
      planLock.emplace(o.plan);
      plan::PlanBundle current = plan::readPlan(o.plan);
      if (current.graphId != bundle.graphId || current.fingerprint != bundle.fingerprint)
        throw Error(ErrorCode::BadInput,
                    o.plan + " was replaced by a plan of another graph during the export; the bundle is not installed");
      plan::KernelsRef ref{(fs::path(o.output) / std::string(kernels::kManifestName)).lexically_normal().string(),
                           std::string(kernels::kKernelsFormat), targets, set.kernels.size(), set.notGenerated.size()};
      std::erase_if(current.kernels, [&](const plan::KernelsRef& k) { return k.manifest == ref.manifest; });
      current.kernels.push_back(std::move(ref));
      stagedPlan.emplace(o.plan, plan::planToJson(current));
    };
    recordInPlan.commit = [&] { stagedPlan->commit(); };
  }
  const kernels::ExportResult result =
      nvrtc ? kernels::writeExport(set, request, kernels::NvrtcToolchain{*nvrtc, hostCompiler}, recordInPlan)
            : kernels::writeExport(set, request, *nvcc, recordInPlan);
  planLock.reset();
  const std::string compiledWith =
      nvrtc ? "NVRTC " + nvrtc->version() + " (" + nvrtc->location() + ")" : nvcc->string();

  std::map<std::string, std::pair<size_t, size_t>> byKind;  // generated, total
  for (const plan::FusionGroup& group : bundle.state.groups) ++byKind[group.kind].second;
  for (const kernels::GeneratedKernel& k : set.kernels) ++byKind[k.kind].first;
  std::map<std::string, size_t> reasons;
  for (const kernels::NotGenerated& n : set.notGenerated) ++reasons[n.reason];
  if (o.json) {
    nlohmann::json kinds = nlohmann::json::object();
    for (const auto& [kind, counts] : byKind) kinds[kind] = {{"generated", counts.first}, {"groups", counts.second}};
    nlohmann::json entries = nlohmann::json::array();
    for (const kernels::FatbinEntry& e : result.fatbin) {
      entries.push_back({{"kind", e.kind == kernels::FatbinEntry::Kind::Elf   ? "elf"
                                  : e.kind == kernels::FatbinEntry::Kind::Ptx ? "ptx"
                                                                              : "other"},
                         {"arch", e.arch},
                         {"bytes", e.bytes}});
    }
    std::cout << nlohmann::json{{"manifest", result.manifest.string()},
                                {"compiler", compiledWith},
                                {"groups", bundle.state.groups.size()},
                                {"kernels", set.kernels.size()},
                                {"not_generated", set.notGenerated.size()},
                                {"by_kind", kinds},
                                {"fatbin", entries}}
                     .dump(2)
              << '\n';
    return 0;
  }
  std::cout << fmt::format("{}  graph {}: {} of {} fusion groups generated\n", o.plan, bundle.graphId,
                           set.kernels.size(), bundle.state.groups.size());
  Table table({"kind", "generated", "groups"});
  for (const auto& [kind, counts] : byKind)
    table.add({kind, std::to_string(counts.first), std::to_string(counts.second)});
  table.print(std::cout, "  ");
  if (!reasons.empty()) {
    std::cout << "not generated:\n";
    Table why({"groups", "reason"});
    for (const auto& [reason, count] : reasons) why.add({std::to_string(count), reason});
    why.print(std::cout, "  ");
  }
  std::map<std::string, size_t> archs;
  for (const kernels::FatbinEntry& e : result.fatbin) {
    if (e.kind == kernels::FatbinEntry::Kind::Elf) ++archs[e.arch];
  }
  std::string held;
  for (const auto& [arch, count] : archs) held += fmt::format("{}{} ({} ELF)", held.empty() ? "" : ", ", arch, count);
  std::cout << fmt::format("fatbin: {}\ncompiled with {}\nbundle written to {}\n",
                           held.empty() ? "no machine code" : held, compiledWith, o.output);
  return 0;
}

}  // namespace

void registerExportCommand(CLI::App& app) {
  ExportOptions& o = exportOptions();
  auto* cmd = app.add_subcommand("export", "Generate, compile and bundle CUDA kernels for the fusion groups of a plan");
  cmd->add_option("plan", o.plan, "Plan bundle written by `lathe plan -o`")->required();
  addOutputOption(cmd, o.output, "Bundle directory to write (new, empty, or an earlier export)")->required();
  cmd->add_option("--targets", o.targets, "GPU architectures, comma-separated")->capture_default_str();
  cmd->add_option("--compiler", o.compiler,
                  "nvcc (a CUDA toolkit), or nvrtc: libnvrtc (as pip's nvidia-cuda-nvrtc installs it; $LATHE_NVRTC "
                  "to choose one) and a host C++ compiler, the library launching through the CUDA driver")
      ->check(CLI::IsMember({"nvcc", "nvrtc"}))
      ->capture_default_str();
  cmd->add_option("--capture", o.capture, "The capture the plan was made from, where it has moved since");
  cmd->add_flag("--keep-plan", o.keepPlan, "Do not record the export in the plan bundle");
  cmd->add_flag("--json", o.json, "Print a JSON summary");
}

std::optional<int> runExportCommand(CLI::App& app, const GlobalOptions& global) {
  if (app.got_subcommand("export")) return runExport(global);
  return std::nullopt;
}

}  // namespace lathe::cli
