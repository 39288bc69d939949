// Exports CUDA kernels for the fusion groups of a plan, as `lathe export` does (kernels/): finds a
// compiler (nvcc, else NVRTC with the host C++ compiler), generates one kernel per group, compiles
// them and writes the bundle with its manifest, on a worker thread that reports its stage and can
// be cancelled (a JobTracker). The bundle is written as `lathe export` writes it (kernels/export_bundle.h): beside
// the folder, then moved in whole. A compiler run cannot be interrupted, so a cancel that comes
// during one takes effect when it ends, before anything is moved: the folder is its old self or
// the whole new bundle, never part of one.
#pragma once

#include <QObject>
#include <QString>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "plan/plan_state.h"
#include "views/job_tracker.h"

namespace lathe::views {

struct KernelExportRequest {
  std::shared_ptr<const ir::Graph> graph;
  plan::PlanState state;  // node ids of `graph`
  QString graphId;
  QString planName;  // the plan file's name, for the manifest; "" when the plan is in no file
  QString output;    // the bundle's folder: new, empty, or an earlier export
  std::vector<std::string> targets;
};

struct KernelExportOutcome {
  QString output;
  QString manifest;  // output/manifest.json
  QString compiler;  // what compiled the kernels: nvcc's path, or NVRTC's version and library
  size_t groups = 0;
  size_t kernels = 0;
  std::map<std::string, size_t> notGenerated;  // why groups got no kernel -> how many
  QString error;
  bool cancelled = false;
  [[nodiscard]] bool ok() const { return error.isEmpty() && !cancelled; }
};

class KernelExporter : public QObject {
  Q_OBJECT

 public:
  // Destroyed, it cancels the export in flight and waits for it: its compiler run must not outlive
  // the application.
  explicit KernelExporter(QObject* parent = nullptr);

  void start(KernelExportRequest request);
  // The export stops at its next stage; a compiler run in progress ends first, and what it made is
  // thrown away.
  void cancel();
  [[nodiscard]] bool busy() const { return exports_.busy(); }

 signals:
  void started(const QString& output);
  void stageChanged(const QString& text);
  void finished(const lathe::views::KernelExportOutcome& outcome);

 private:
  JobTracker exports_;
};

}  // namespace lathe::views
