// Loads artifacts on a worker thread (a JobTracker) with progress and cancel, so that the GUI thread
// never blocks; or a plan bundle: the bundle, the capture it names, and the plan bound to its graph
// there, all before anything is shown; or a CUDA memory snapshot with its memory timeline, for the
// timeline view. A run folder of the Python runtime also brings its measured profile. Starting a
// new load cancels the one in flight; its result is dropped.
#pragma once

#include <QObject>
#include <QString>
#include <memory>

#include "analysis/snapshot_timeline.h"
#include "io/artifact.h"
#include "plan/profile.h"
#include "views/job_tracker.h"
#include "views/plan_file.h"

namespace lathe::views {

// What one load produced: the artifact, or the error that stopped it (cancelled, unreadable). A
// plan load has `planPath` set and, when it succeeded, the plan bound to the artifact's graph; when
// it failed (a bad bundle, a missing capture, a plan of another graph) there is no artifact.
struct LoadOutcome {
  std::shared_ptr<const io::Artifact> artifact;
  // A run folder's measured steps (lathe.profile.json beside its TORCH_TRACE log); null without one.
  std::shared_ptr<const plan::MeasuredProfile> profile;
  QString profileError;  // the profile could not be read: the capture still opens
  QString runPlanError;  // the run's plan could not be read or bound: capture and profile still open
  QString planPath;
  std::shared_ptr<const OpenedPlan> plan;
  // A snapshot's memory over time (loadSnapshot, or load of a snapshot); null for other artifacts.
  std::shared_ptr<const analysis::SnapshotTimeline> snapshotTimeline;
  QString error;
  QString errorLocation;
  bool cancelled = false;
};

class ArtifactLoader : public QObject {
  Q_OBJECT

 public:
  static constexpr int kProgressMaximum = JobTracker::kProgressMaximum;

  explicit ArtifactLoader(QObject* parent = nullptr);

  void load(const QString& path);
  // Reads the plan bundle, then loads the capture it names (plan::captureOf) and binds the plan to
  // its graph there (plan::bind); path() is the plan's.
  void loadPlan(const QString& planPath);
  // Loads a CUDA memory snapshot and builds its memory timeline (analysis::buildSnapshotTimeline);
  // any other artifact is refused.
  void loadSnapshot(const QString& path);
  void cancel();
  [[nodiscard]] bool busy() const { return loads_.busy(); }
  [[nodiscard]] const QString& path() const { return path_; }

 signals:
  void started(const QString& path);
  void progress(int permille);  // 0 .. kProgressMaximum
  void finished(const lathe::views::LoadOutcome& outcome);

 private:
  enum class Kind { Capture, Plan, Snapshot };
  void start(const QString& path, Kind kind);

  QString path_;
  JobTracker loads_;
};

}  // namespace lathe::views
