#include "views/kernel_exporter.h"

#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <filesystem>
#include <functional>
#include <optional>

#include "kernels/cuda_codegen.h"
#include "kernels/export_bundle.h"
#include "kernels/toolchain.h"
#include "util/diagnostics.h"
#include "util/progress.h"
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

// `stage` is called from the worker with each stage's text as it begins.
void exportInto(QPromise<KernelExportOutcome>& promise, const KernelExportRequest& request,
                const std::shared_ptr<std::atomic<bool>>& cancel, const std::function<void(const QString&)>& stage) {
  Progress progress;
  progress.cancel = cancel.get();
  KernelExportOutcome outcome;
  outcome.output = request.output;
  outcome.groups = request.state.groups.size();
  auto enter = [&](const QString& text) {
    progress.checkCancelled();
    stage(text);
  };
  try {
    enter(KernelExporter::tr("Looking for a CUDA compiler…"));
    Compiler compiler = findCompiler();
    outcome.compiler = compiler.nvcc ? toQString(compiler.nvcc->string())
                                     : KernelExporter::tr("NVRTC %1 (%2)")
                                           .arg(toQString(compiler.nvrtc->version()), toQString(compiler.nvrtc->location()));

    enter(KernelExporter::tr("Generating kernels for %n fusion group(s)…", nullptr, static_cast<int>(outcome.groups)));
    const kernels::KernelSet set = kernels::generateKernels(*request.graph, request.state);
    outcome.kernels = set.kernels.size();
    for (const kernels::NotGenerated& skipped : set.notGenerated) ++outcome.notGenerated[skipped.reason];

    enter(KernelExporter::tr("Compiling %n kernel(s) with %1…", nullptr, static_cast<int>(outcome.kernels))
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
  } catch (const Error& error) {
    outcome.cancelled = error.code() == ErrorCode::Cancelled;
    outcome.error = QString::fromUtf8(error.what());
  } catch (const std::exception& error) {
    // A bug in the generator or a file system failure the kernels library did not expect.
    outcome.error = QString::fromUtf8(error.what());
  }
  promise.addResult(std::move(outcome));
}

}  // namespace

KernelExporter::KernelExporter(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcherBase::finished, this, [this] {
    const QFuture<KernelExportOutcome> future = watcher_.future();
    if (future.resultCount() > 0) emit finished(future.result());
  });
}

KernelExporter::~KernelExporter() {
  if (cancel_) cancel_->store(true);
  for (QFuture<KernelExportOutcome>& future : running_) future.waitForFinished();
}

void KernelExporter::start(KernelExportRequest request) {
  if (cancel_) cancel_->store(true);
  std::erase_if(running_, [](const QFuture<KernelExportOutcome>& future) { return future.isFinished(); });
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  const QString output = request.output;
  // Queued to this thread, and only while the export is the current one (QFutureWatcher's progress
  // text would do, but it drops updates that come close together, and a stage can be that short).
  auto stage = [this, flag = cancel_](const QString& text) {
    QMetaObject::invokeMethod(
        this, [this, flag, text] {
          if (flag == cancel_ && !flag->load()) emit stageChanged(text);
        },
        Qt::QueuedConnection);
  };
  QFuture<KernelExportOutcome> future =
      QtConcurrent::run(exportInto, std::move(request), cancel_, std::function<void(const QString&)>(stage));
  running_.push_back(future);
  watcher_.setFuture(future);
  emit started(output);
}

void KernelExporter::cancel() {
  if (cancel_) cancel_->store(true);
}

}  // namespace lathe::views
