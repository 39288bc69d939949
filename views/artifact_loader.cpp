#include "views/artifact_loader.h"

#include <filesystem>

#include "plan/plan_bind.h"
#include "views/formatting.h"

namespace lathe::views {

namespace {

// A snapshot's memory over time, built on the load's job: the timeline's own progress would run the
// bar back to zero, so it reports none.
std::shared_ptr<const analysis::SnapshotTimeline> snapshotTimelineOf(const io::Artifact& artifact,
                                                                    const Progress& progress) {
  Progress cancelOnly;
  cancelOnly.cancel = progress.cancel;
  return std::make_shared<const analysis::SnapshotTimeline>(
      analysis::buildSnapshotTimeline(*artifact.snapshot, {}, cancelOnly));
}

LoadOutcome loadCapture(const QString& path, const Progress& progress) {
  LoadOutcome outcome;
  outcome.artifact = std::make_shared<const io::Artifact>(io::loadArtifact(path.toStdString(), progress));
  if (outcome.artifact->snapshot) {  // opened on its own: the Snapshot view shows it
    outcome.snapshotTimeline = snapshotTimelineOf(*outcome.artifact, progress);
    return outcome;
  }
  const std::filesystem::path profilePath = std::filesystem::path(path.toStdString()) / "lathe.profile.json";
  std::error_code ec;
  if (!std::filesystem::is_directory(path.toStdString(), ec) || !std::filesystem::exists(profilePath, ec)) return outcome;
  try {
    outcome.profile = std::make_shared<const plan::MeasuredProfile>(plan::readProfile(profilePath));
    // The run's own plan of its first graph opens with it, as a plan file would: the studio shows
    // what the runtime ran, not a plan of its own.
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
  return outcome;
}

LoadOutcome loadPlanAndCapture(const QString& planPath, const Progress& progress) {
  LoadOutcome outcome;
  outcome.planPath = planPath;
  auto opened = std::make_shared<OpenedPlan>();
  opened->path = planPath;
  opened->bundle = plan::readPlan(planPath.toStdString());
  opened->capturePath = QString::fromStdString(plan::captureOf(opened->bundle, planPath.toStdString()));
  auto artifact = std::make_shared<const io::Artifact>(io::loadArtifact(opened->capturePath.toStdString(), progress));
  progress.checkCancelled();
  opened->state = plan::bind(opened->bundle, *artifact, planPath.toStdString()).state;
  outcome.artifact = std::move(artifact);
  outcome.plan = std::move(opened);
  return outcome;
}

LoadOutcome loadSnapshotTimeline(const QString& path, const Progress& progress) {
  // Sniffed first: a large capture is refused before it is read. A file of no known kind is left
  // to the loader, whose error says what it expected.
  const io::ArtifactKind kind = io::detectArtifactKind(path.toStdString());
  if (kind != io::ArtifactKind::MemorySnapshot && kind != io::ArtifactKind::Unknown) {
    throw Error(ErrorCode::BadInput,
                ArtifactLoader::tr("%1 is not a CUDA memory snapshot (torch.cuda.memory._dump_snapshot); open "
                                   "captures and .pt2 archives with File › Open.")
                    .arg(path)
                    .toStdString());
  }
  LoadOutcome outcome;
  auto artifact = std::make_shared<const io::Artifact>(io::loadArtifact(path.toStdString(), progress));
  outcome.snapshotTimeline = snapshotTimelineOf(*artifact, progress);
  outcome.artifact = std::move(artifact);
  return outcome;
}

}  // namespace

ArtifactLoader::ArtifactLoader(QObject* parent) : QObject(parent) {
  connect(&loads_, &JobTracker::progress, this, &ArtifactLoader::progress);
}

void ArtifactLoader::load(const QString& path) {
  start(path, Kind::Capture);
}

void ArtifactLoader::loadPlan(const QString& planPath) {
  start(planPath, Kind::Plan);
}

void ArtifactLoader::loadSnapshot(const QString& path) {
  start(path, Kind::Snapshot);
}

void ArtifactLoader::start(const QString& path, Kind kind) {
  path_ = path;
  loads_.start(
      [path, kind](const Progress& progress) {
        switch (kind) {
          case Kind::Plan: return loadPlanAndCapture(path, progress);
          case Kind::Snapshot: return loadSnapshotTimeline(path, progress);
          case Kind::Capture: break;
        }
        return loadCapture(path, progress);
      },
      [this, path, kind](JobOutcome<LoadOutcome> loaded) {
        if (loaded.value) {
          emit finished(*loaded.value);
          return;
        }
        LoadOutcome failed;
        if (kind == Kind::Plan) failed.planPath = path;
        failed.error = loaded.error.message;
        failed.errorLocation = loaded.error.location;
        failed.cancelled = loaded.error.cancelled;
        emit finished(failed);
      });
  emit started(path);
}

void ArtifactLoader::cancel() {
  loads_.cancel();
}

}  // namespace lathe::views
