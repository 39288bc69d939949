// The Compare tab: the graph on show (A) against another graph (B) of the same artifact (another
// compile, another rank) or of another file (a capture, or a plan bundle with its capture), node by
// node (GraphDiffModel) with the calls per op category of both drawn side by side; and where B is a
// plan bundle and A has a plan on show, the two plans (plan::diffPlans: estimates, memory at the
// peak by category, saved sets, fusion, offload). Another file loads in the background with
// progress and Cancel; A follows the window.
#pragma once

#include <QString>
#include <QWidget>
#include <memory>
#include <optional>

#include "io/artifact.h"
#include "plan/plan_bundle.h"
#include "plan/plan_diff.h"
#include "views/job_tracker.h"

class QComboBox;
class QCustomPlot;
class QLabel;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSplitter;
class QTableView;
class QTableWidget;

namespace lathe::views {

class GraphDiffModel;
struct PlanRun;

class CompareView : public QWidget {
  Q_OBJECT

 public:
  explicit CompareView(QWidget* parent = nullptr);
  ~CompareView() override;

  // A: the graph on show. While B is A's artifact (nothing else opened), B's graphs follow it.
  void setA(std::shared_ptr<const io::Artifact> artifact, const QString& graphId, std::shared_ptr<const ir::Graph> graph);
  // A's plan on show (null: none), compared with B's plan when B is a plan bundle.
  void setPlanA(std::shared_ptr<const PlanRun> run);
  // B from a file: a capture, or a plan bundle (its capture and graph, and its plan). bLoaded says how
  // it went; a failure keeps the B on show.
  void openB(const QString& path);
  void cancelB();
  // B: a graph of B's artifact by id; false when there is none. The node table, summary and plot
  // follow A and B while the tab is on show (or once it is shown).
  bool selectGraphB(const QString& graphId);
  [[nodiscard]] QString graphIdB() const;
  [[nodiscard]] QString pathB() const { return pathB_; }  // "" while B is A's artifact

  [[nodiscard]] GraphDiffModel* model() const { return model_; }
  [[nodiscard]] QTableView* table() const { return table_; }
  [[nodiscard]] QTableWidget* planTable() const { return planTable_; }
  [[nodiscard]] QCustomPlot* plot() const { return plot_; }
  [[nodiscard]] QLabel* summary() const { return summary_; }
  // The plans' diff on show, none when B has no plan or A none on show.
  [[nodiscard]] const std::optional<plan::PlanDiff>& planDiff() const { return planDiff_; }
  // B on its way, or the plans being compared.
  [[nodiscard]] bool busy() const { return loads_.busy() || plans_.busy(); }

 signals:
  // A row's node in A (double-click): the window shows it.
  void nodeActivated(ir::NodeId node);
  void bLoaded(bool ok, const QString& error);
  // The Open B… button: the window asks for the file (File › Compare With…).
  void openBRequested();
  // The plans were compared (planDiff) or the comparison was dropped.
  void planDiffChanged();

 private:
  struct LoadedB;
  void showEvent(QShowEvent* event) override;
  void onBLoaded(const JobOutcome<std::shared_ptr<const LoadedB>>& outcome);
  // diffGraphs now when the tab is on show, else once it is: A moves with every graph the window
  // shows, and a diff of two large graphs is not free.
  void refreshDiff();
  // B's graph list from its artifact; selects `preferred`, else the graph most like A's.
  void fillGraphsB(const QString& preferred);
  void diffGraphs();
  void drawCategories();
  void comparePlans();
  void showPlanDiff();

  QLabel* sideA_;
  QLabel* sourceB_;
  QComboBox* graphB_;
  QPushButton* openB_;
  QProgressBar* progress_;
  QPushButton* cancel_;
  QLabel* summary_;
  QCustomPlot* plot_;
  QSplitter* top_;  // the plot beside the plans
  QTableWidget* planTable_;
  QLabel* planTitle_;
  QTableView* table_;
  QSortFilterProxyModel* proxy_;
  GraphDiffModel* model_;

  std::shared_ptr<const io::Artifact> artifactA_;
  QString graphIdA_;
  std::shared_ptr<const ir::Graph> graphA_;
  std::shared_ptr<const PlanRun> planA_;
  std::shared_ptr<const LoadedB> b_;  // null: B is A's artifact
  QString pathB_;
  QString openingB_;  // the file on its way to being B
  bool bPicked_ = false;  // B's graph chosen by the user (else it follows A)
  bool diffStale_ = false;  // A or B changed while the tab was hidden
  QString bNotOpened_;      // why the last file asked for as B did not open ("" when it did)
  std::vector<io::GraphListing> graphsB_;
  std::optional<plan::PlanDiff> planDiff_;
  JobTracker loads_, plans_;
};

}  // namespace lathe::views
