#include "views/artifact_loader.h"

#include <filesystem>

#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

#include "plan/plan_bind.h"
#include "views/formatting.h"

namespace lathe::views {

namespace {

// The capture of a plan load, or the artifact itself.
void loadInto(QPromise<LoadOutcome>& promise, const QString& path, bool plan,
              const std::shared_ptr<std::atomic<bool>>& cancel) {
  promise.setProgressRange(0, ArtifactLoader::kProgressMaximum);
  Progress progress;
  progress.cancel = cancel.get();
  progress.report = [&promise](uint64_t done, uint64_t total) {
    if (total == 0) return;
    const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
    promise.setProgressValue(static_cast<int>(fraction * ArtifactLoader::kProgressMaximum));
  };
  LoadOutcome outcome;
  if (plan) outcome.planPath = path;
  try {
    if (plan) {
      auto opened = std::make_shared<OpenedPlan>();
      opened->path = path;
      opened->bundle = plan::readPlan(path.toStdString());
      opened->capturePath = QString::fromStdString(plan::captureOf(opened->bundle, path.toStdString()));
      auto artifact = std::make_shared<const io::Artifact>(io::loadArtifact(opened->capturePath.toStdString(), progress));
      progress.checkCancelled();
      opened->state = plan::bind(opened->bundle, *artifact, path.toStdString()).state;
      outcome.artifact = std::move(artifact);
      outcome.plan = std::move(opened);
    } else {
      outcome.artifact = std::make_shared<const io::Artifact>(io::loadArtifact(path.toStdString(), progress));
      const std::filesystem::path profilePath = std::filesystem::path(path.toStdString()) / "lathe.profile.json";
      std::error_code ec;
      if (std::filesystem::is_directory(path.toStdString(), ec) && std::filesystem::exists(profilePath, ec)) {
        try {
          outcome.profile = std::make_shared<const plan::MeasuredProfile>(plan::readProfile(profilePath));
          // The run's own plan of its first graph opens with it, as a plan file would: the studio
          // shows what the runtime ran, not a plan of its own.
          for (const plan::ProfiledGraph& graph : outcome.profile->graphs) {
            if (graph.plan.empty()) continue;
            const std::filesystem::path planPath = std::filesystem::path(path.toStdString()) / graph.plan;
            try {
              auto opened = std::make_shared<OpenedPlan>();
              opened->path = toQString(planPath.string());
              opened->capturePath = path;
              opened->bundle = plan::readPlan(planPath.string());
              opened->state = plan::bind(opened->bundle, *outcome.artifact, planPath.string()).state;
              outcome.plan = std::move(opened);
            } catch (const Error& error) {
              if (error.code() == ErrorCode::Cancelled) throw;
              outcome.runPlanError = QString::fromUtf8(error.what());
            }
            break;
          }
        } catch (const Error& error) {
          if (error.code() == ErrorCode::Cancelled) throw;
          outcome.profileError = QString::fromUtf8(error.what());
        }
      }
    }
  } catch (const Error& error) {
    outcome.cancelled = error.code() == ErrorCode::Cancelled;
    outcome.error = QString::fromUtf8(error.what());
    if (!error.where().file.empty()) outcome.errorLocation = toQString(error.where().str());
  } catch (const std::exception& error) {
    // Anything else is a bug in a loader; the window shows it instead of going down with it.
    outcome.error = QString::fromUtf8(error.what());
  }
  promise.addResult(std::move(outcome));
}

}  // namespace

ArtifactLoader::ArtifactLoader(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcherBase::progressValueChanged, this, &ArtifactLoader::progress);
  connect(&watcher_, &QFutureWatcherBase::finished, this, [this] {
    const QFuture<LoadOutcome> future = watcher_.future();
    if (future.resultCount() > 0) emit finished(future.result());
  });
}

ArtifactLoader::~ArtifactLoader() {
  if (cancel_) cancel_->store(true);
  for (QFuture<LoadOutcome>& future : running_) future.waitForFinished();
}

void ArtifactLoader::load(const QString& path) {
  start(path, false);
}

void ArtifactLoader::loadPlan(const QString& planPath) {
  start(planPath, true);
}

void ArtifactLoader::start(const QString& path, bool plan) {
  // Cancel the load in flight; it keeps its own flag, so the new one starts clean.
  if (cancel_) cancel_->store(true);
  std::erase_if(running_, [](const QFuture<LoadOutcome>& future) { return future.isFinished(); });
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  path_ = path;
  QFuture<LoadOutcome> future = QtConcurrent::run(loadInto, path, plan, cancel_);
  running_.push_back(future);
  watcher_.setFuture(future);
  emit started(path);
}

void ArtifactLoader::cancel() {
  if (cancel_) cancel_->store(true);
}

}  // namespace lathe::views
