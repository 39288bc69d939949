// The "Pipeline" dock: the pipeline text with Run, the steps of the last run (the initial state,
// then one per pass), and the selected step's statistics and diff. Selecting a step, or stepping
// with Back and Forward, makes it the current plan state of the other plan views.
#pragma once

#include <QWidget>

class QLabel;
class QLineEdit;
class QListWidget;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

namespace lathe::views {

class PlanSession;

class PipelinePanel : public QWidget {
  Q_OBJECT

 public:
  explicit PipelinePanel(PlanSession* session, QWidget* parent = nullptr);

  // Shows a pipeline in the line edit without running it.
  void setPipelineText(const QString& text);
  // Says where the run on show came from (an opened plan bundle, and whether it reproduced the
  // bundle's decisions) until the next run starts; `warning` draws it as one.
  void setRunOrigin(const QString& text, bool warning);
  [[nodiscard]] QString runOrigin() const;
  [[nodiscard]] QString pipelineText() const;
  [[nodiscard]] QListWidget* stepList() const { return steps_; }

 private:
  void runPipeline();
  void onStarted();
  void onFinished(bool ok, const QString& error);
  void showStep(int step);
  void updateButtons();

  PlanSession* session_;
  QLineEdit* pipeline_;
  QPushButton* runButton_;
  QLabel* status_;
  QLabel* origin_;
  QListWidget* steps_;
  QPushButton* backButton_;
  QPushButton* forwardButton_;
  QTableWidget* stats_;
  QPlainTextEdit* diff_;
};

}  // namespace lathe::views
