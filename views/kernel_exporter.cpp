#include "views/kernel_exporter.h"

#include <filesystem>
#include <optional>

#include "kernels/cuda_codegen.h"
#include "kernels/export_bundle.h"
#include "kernels/toolchain.h"
#include "util/diagnostics.h"
#include "views/formatting.h"

namespace lathe::views {

namespace {

namespace fs = std::filesystem;

// nvcc where there is a CUDA toolkit, else NVRTC and the host compiler (`lathe export --compiler
// nvrtc`); the reasons for both when neither is there.
struct Compiler {
  std::optional<fs::path> nvcc;
  std::optional<kernels::Nvrtc> nvrtc;
  fs::path hostCompiler;
};

Compiler findCompiler() {
  Compiler compiler;
  compiler.nvcc = kernels::findNvcc();
  if (compiler.nvcc) return compiler;
  QString nvccMissing, nvrtcMissing;
  try {
    static_cast<void>(kernels::requireNvcc());
  } catch (const Error& error) {
    nvccMissing = QString::fromUtf8(error.what());
  }
  try {
    compiler.nvrtc.emplace(kernels::Nvrtc::load());
    compiler.hostCompiler = kernels::requireHostCompiler();
    return compiler;
  } catch (const Error& error) {
    nvrtcMissing = QString::fromUtf8(error.what());
  }
  throw Error(ErrorCode::BadInput,
              KernelExporter::tr("No CUDA compiler: exporting kernels needs a CUDA toolkit (nvcc), or libnvrtc "
                                 "and a host C++ compiler.\n\n%1\n\n%2")
                  .arg(nvccMissing, nvrtcMissing)
                  .toStdString());
}

KernelExportOutcome exportKernels(const KernelExportRequest& request, const JobProgress& progress) {
  KernelExportOutcome outcome;
  outcome.output = request.output;
  outcome.groups = request.state.groups.size();
  progress.enterStage(KernelExporter::tr("Looking for a CUDA compiler…"));
  Compiler compiler = findCompiler();
  outcome.compiler = compiler.nvcc ? toQString(compiler.nvcc->string())
                                   : KernelExporter::tr("NVRTC %1 (%2)")
                                         .arg(toQString(compiler.nvrtc->version()), toQString(compiler.nvrtc->location()));

  progress.enterStage(
      KernelExporter::tr("Generating kernels for %n fusion group(s)…", nullptr, static_cast<int>(outcome.groups)));
  const kernels::KernelSet set = kernels::generateKernels(*request.graph, request.state);
  outcome.kernels = set.kernels.size();
  for (const kernels::NotGenerated& skipped : set.notGenerated) ++outcome.notGenerated[skipped.reason];

  progress.enterStage(KernelExporter::tr("Compiling %n kernel(s) with %1…", nullptr, static_cast<int>(outcome.kernels))
                          .arg(compiler.nvcc ? QStringLiteral("nvcc") : QStringLiteral("NVRTC")));
  const kernels::ExportRequest exportRequest{request.output.toStdString(), request.targets,
                                             request.planName.toStdString(), request.graphId.toStdString(),
                                             outcome.groups};
  // The compiler run cannot be stopped; a cancel asked for meanwhile throws here, once the new
  // bundle is complete and before it replaces anything, so the folder stays as it was.
  const kernels::BundleCompanion stopWhenCancelled{[&] { progress.checkCancelled(); }, {}};
  const kernels::ExportResult result =
      compiler.nvcc ? kernels::writeExport(set, exportRequest, *compiler.nvcc, stopWhenCancelled)
                    : kernels::writeExport(set, exportRequest,
                                           kernels::NvrtcToolchain{*compiler.nvrtc, compiler.hostCompiler},
                                           stopWhenCancelled);
  outcome.manifest = toQString(result.manifest.string());
  return outcome;
}

}  // namespace

KernelExporter::KernelExporter(QObject* parent) : QObject(parent) {
  connect(&exports_, &JobTracker::stageChanged, this, &KernelExporter::stageChanged);
}

void KernelExporter::start(KernelExportRequest request) {
  const QString output = request.output;
  const size_t groups = request.state.groups.size();
  exports_.start([request = std::move(request)](const JobProgress& progress) { return exportKernels(request, progress); },
                 [this, output, groups](JobOutcome<KernelExportOutcome> exported) {
                   if (exported.value) {
                     emit finished(*exported.value);
                     return;
                   }
                   KernelExportOutcome failed;
                   failed.output = output;
                   failed.groups = groups;
                   failed.error = exported.error.message;
                   failed.cancelled = exported.error.cancelled;
                   emit finished(failed);
                 });
  emit started(output);
}

void KernelExporter::cancel() {
  exports_.cancel();
}

}  // namespace lathe::views
