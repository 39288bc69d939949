#include "views/pipeline_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include "views/formatting.h"
#include "views/plan_session.h"

namespace lathe::views {

PipelinePanel::PipelinePanel(PlanSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      pipeline_(new QLineEdit(this)),
      runButton_(new QPushButton(tr("Run"), this)),
      status_(new QLabel(this)),
      origin_(new QLabel(this)),
      steps_(new QListWidget(this)),
      backButton_(new QPushButton(tr("◀ Back"), this)),
      forwardButton_(new QPushButton(tr("Forward ▶"), this)),
      stats_(new QTableWidget(0, 2, this)),
      diff_(new QPlainTextEdit(this)) {
  setObjectName(QStringLiteral("pipelinePanel"));
  pipeline_->setObjectName(QStringLiteral("pipelineText"));
  pipeline_->setPlaceholderText(toQString(passes::kDefaultTrainingPipeline));  // pipeline syntax, not prose
  runButton_->setObjectName(QStringLiteral("runPipeline"));
  steps_->setObjectName(QStringLiteral("pipelineSteps"));
  backButton_->setObjectName(QStringLiteral("stepBack"));
  forwardButton_->setObjectName(QStringLiteral("stepForward"));
  stats_->setObjectName(QStringLiteral("stepStats"));
  diff_->setObjectName(QStringLiteral("stepDiff"));
  status_->setWordWrap(true);
  origin_->setObjectName(QStringLiteral("runOrigin"));
  origin_->setWordWrap(true);
  origin_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  origin_->hide();

  auto* layout = new QVBoxLayout(this);
  auto* runRow = new QHBoxLayout;
  runRow->addWidget(pipeline_, 1);
  runRow->addWidget(runButton_);
  layout->addLayout(runRow);
  layout->addWidget(status_);
  layout->addWidget(origin_);
  auto* stepRow = new QHBoxLayout;
  stepRow->addWidget(backButton_);
  stepRow->addWidget(forwardButton_);
  layout->addLayout(stepRow);

  stats_->setHorizontalHeaderLabels({tr("Statistic"), tr("Value")});
  stats_->verticalHeader()->hide();
  stats_->horizontalHeader()->setStretchLastSection(true);
  stats_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  stats_->verticalHeader()->setDefaultSectionSize(stats_->fontMetrics().height() + 6);
  diff_->setReadOnly(true);
  diff_->setLineWrapMode(QPlainTextEdit::NoWrap);
  diff_->setPlaceholderText(tr("The selected step's changes"));
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(steps_);
  splitter->addWidget(stats_);
  splitter->addWidget(diff_);
  splitter->setSizes({140, 220, 200});
  layout->addWidget(splitter, 1);

  connect(runButton_, &QPushButton::clicked, this, &PipelinePanel::runPipeline);
  connect(pipeline_, &QLineEdit::returnPressed, this, &PipelinePanel::runPipeline);
  connect(backButton_, &QPushButton::clicked, this, [this] { session_->setCurrentStep(session_->currentStep() - 1); });
  connect(forwardButton_, &QPushButton::clicked, this,
          [this] { session_->setCurrentStep(session_->currentStep() + 1); });
  connect(steps_, &QListWidget::currentRowChanged, session_, &PlanSession::setCurrentStep);
  connect(session_, &PlanSession::started, this, &PipelinePanel::onStarted);
  connect(session_, &PlanSession::finished, this, &PipelinePanel::onFinished);
  connect(session_, &PlanSession::currentStepChanged, this, &PipelinePanel::showStep);
  updateButtons();
}

void PipelinePanel::setPipelineText(const QString& text) {
  pipeline_->setText(text);
  pipeline_->setCursorPosition(0);  // a long pipeline shows its first passes, not its last options
}

QString PipelinePanel::pipelineText() const {
  return pipeline_->text();
}

void PipelinePanel::setRunOrigin(const QString& text, bool warning) {
  origin_->setText(text);
  // The budget panel's colours for a budget missed and met.
  origin_->setStyleSheet(warning ? QStringLiteral("color: #c02020;") : QStringLiteral("color: #2e7d32;"));
  origin_->setVisible(!text.isEmpty());
}

QString PipelinePanel::runOrigin() const {
  return origin_->isVisible() ? origin_->text() : QString();
}

void PipelinePanel::runPipeline() {
  session_->run(pipeline_->text().trimmed().isEmpty() ? session_->defaultPipeline() : pipeline_->text().trimmed());
}

void PipelinePanel::onStarted() {
  status_->setText(tr("Running…"));
  setRunOrigin({}, false);
  steps_->clear();
  stats_->setRowCount(0);
  diff_->clear();
  updateButtons();
}

void PipelinePanel::onFinished(bool ok, const QString& error) {
  steps_->clear();
  if (!ok) {
    status_->setText(tr("Pipeline failed: %1").arg(error));
    updateButtons();
    return;
  }
  const PlanRun& run = *session_->planRun();
  setPipelineText(run.pipeline);         // budget runs make their pipeline from the budget panel
  const QSignalBlocker blocker(steps_);  // the session picks the current step itself
  steps_->addItem(tr("0. initial"));
  double seconds = 0;
  for (size_t i = 0; i < run.run.history.size(); ++i) {
    const passes::PipelineRecord& record = run.run.history[i];
    steps_->addItem(tr("%1. %2").arg(i + 1).arg(toQString(passes::formatStep(record.step))));
    seconds += record.seconds;
  }
  status_->setText(tr("%n step(s) on %1 in %2", nullptr, run.stepCount()).arg(run.graphId, formatSeconds(seconds)));
  status_->setToolTip(run.pipeline);
  updateButtons();
}

void PipelinePanel::showStep(int step) {
  const auto& run = session_->planRun();
  stats_->setRowCount(0);
  diff_->clear();
  if (!run || step < 0) {
    if (!run) steps_->clear();
    updateButtons();
    return;
  }
  {
    const QSignalBlocker blocker(steps_);
    steps_->setCurrentRow(step);
  }
  struct Row {
    QString name, value, help;
  };
  std::vector<Row> rows;
  const passes::PlannedStep& planned = run->planned[static_cast<size_t>(step)];
  const QString plannedPeak = formatBytes(planned.timeline.peakBytes);
  // Where weights stream, the step is the simulated one (it waits for copies), as the bundle's estimate.
  const plan::PlanState& state = run->stateAt(step);
  const QString plannedStep = formatSeconds(state.offload ? state.offload->stepSeconds : planned.stepSeconds);
  rows.push_back({tr("planned peak"), plannedPeak, {}});
  rows.push_back({tr("planned step time"), plannedStep, {}});
  if (step > 0) {
    const passes::PipelineRecord& record = run->run.history[static_cast<size_t>(step - 1)];
    // In the interface language, with what each counts on hover (the key's name for scripts).
    for (const passes::PassStat& stat : record.result.stats) {
      const StatText text = passStatText(record.step.pass, stat.key.name, stat.key.help);
      const QString value = formatPassStat(stat);
      // One number, one name: a pass's step time or peak that is the planned one is not repeated.
      const bool repeatsPlanned = (stat.key.name == "step_seconds" && value == plannedStep) ||
                                  (stat.key.name == "peak_bytes" && value == plannedPeak);
      if (!repeatsPlanned) rows.push_back({text.label, value, QStringLiteral("%1 (%2)").arg(text.help, toQString(stat.key.name))});
    }
    rows.push_back({tr("pass time"), formatSeconds(record.seconds), {}});
    QStringList lines;
    for (const Message& line : record.result.diff) lines << translated(line);
    diff_->setPlainText(lines.isEmpty() ? tr("(no change)") : lines.join(QLatin1Char('\n')));
  } else {
    diff_->setPlainText(tr("(the graph before any pass)"));
  }
  stats_->setRowCount(static_cast<int>(rows.size()));
  for (int row = 0; row < static_cast<int>(rows.size()); ++row) {
    const Row& r = rows[static_cast<size_t>(row)];
    auto* name = new QTableWidgetItem(r.name);
    name->setToolTip(r.help);
    stats_->setItem(row, 0, name);
    stats_->setItem(row, 1, new QTableWidgetItem(r.value));
  }
  stats_->resizeColumnToContents(0);
  updateButtons();
}

void PipelinePanel::updateButtons() {
  const auto& run = session_->planRun();
  const int step = session_->currentStep();
  backButton_->setEnabled(run && step > 0);
  forwardButton_->setEnabled(run && step + 1 < run->stepCount());
}

}  // namespace lathe::views
