// Guards and recompiles of a TORCH_TRACE capture: the guard tree of one compile (searchable, with
// counts by guard type), the recompile reasons of later compiles of the same frame beside the
// guards they broke (highlighted in the tree), and the diff of two compiles' guards of a frame.
#pragma once

#include <QWidget>
#include <map>
#include <memory>
#include <vector>

#include "io/artifact.h"
#include "io/guards/guards.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QTreeView;

namespace lathe::views {

class GuardDiffModel;
class GuardTreeModel;

class GuardsView : public QWidget {
  Q_OBJECT

 public:
  explicit GuardsView(QWidget* parent = nullptr);
  ~GuardsView() override;

  // Shows the compile whose guards a later recompile broke (the first such), else the first with guards.
  void setArtifact(std::shared_ptr<const io::Artifact> artifact);
  // compile: index into the trace's compiles; false when it logged no guards.
  bool showCompile(int compile);
  [[nodiscard]] int shownCompile() const;
  // Diff of two compiles (indices into the trace's compiles) of the shown compile's frame.
  bool showDiff(int before, int after);
  void setFilterText(const QString& text);
  void focusSearch();

  [[nodiscard]] GuardTreeModel* model() const { return model_; }
  [[nodiscard]] QSortFilterProxyModel* filtered() const { return proxy_; }
  [[nodiscard]] QTreeView* treeView() const { return tree_; }
  [[nodiscard]] GuardDiffModel* diffModel() const { return diffModel_; }
  [[nodiscard]] QString countsText() const;
  [[nodiscard]] QString reasonsText() const;

 private:
  struct Reason {
    int compile = -1;  // the compile that recompiled
    io::RecompileReason reason;
    std::vector<uint32_t> brokenGuards;
  };

  [[nodiscard]] std::shared_ptr<const io::GuardTree> treeOf(int compile);
  [[nodiscard]] std::vector<Reason> reasonsAgainst(int compile);
  [[nodiscard]] std::vector<int> compilesOfFrame(int compile) const;
  void onCompileChosen();
  void onDiffChosen();
  void selectGuard(uint32_t guard);
  void showReasons(int compile, const std::vector<Reason>& later);

  std::shared_ptr<const io::Artifact> artifact_;
  std::vector<int> withGuards_;  // trace compiles that logged guards, in log order
  std::map<int, std::shared_ptr<const io::GuardTree>> trees_;

  QComboBox* compileCombo_;
  QLineEdit* search_;
  QLabel* counts_;
  QTreeView* tree_;
  GuardTreeModel* model_;
  QSortFilterProxyModel* proxy_;
  QTabWidget* bottomTabs_;
  QTextBrowser* reasons_;
  QComboBox* beforeCombo_;
  QComboBox* afterCombo_;
  QLabel* diffSummary_;
  QTableView* diffTable_;
  GuardDiffModel* diffModel_;
};

}  // namespace lathe::views
