#include "views/budget_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "passes/offload_pass.h"
#include "passes/recompute.h"
#include "views/formatting.h"
#include "util/diagnostics.h"
#include "views/plan_session.h"

namespace lathe::views {

namespace {

constexpr uint64_t kMiB = 1024ull * 1024ull;

// 16 TiB: more than any GPU holds, and a spin box no wider than it needs.
constexpr int kMaxBudgetMiB = 16 * 1024 * 1024;

// Budgets are whole MiB, rounded to the nearest.
int toMiB(uint64_t bytes) {
  return static_cast<int>(std::min<uint64_t>((bytes + kMiB / 2) / kMiB, kMaxBudgetMiB));
}

// The GPUs the combo offers, as built-in hardware ids, then "Custom JSON…".
struct Target {
  const char* id;
  const char* label;
};
constexpr Target kTargets[] = {
    {"h200", QT_TRANSLATE_NOOP("lathe::views::BudgetPanel", "NVIDIA H200")},
    {"h100", QT_TRANSLATE_NOOP("lathe::views::BudgetPanel", "NVIDIA H100 SXM")},
    {"rtx5090", QT_TRANSLATE_NOOP("lathe::views::BudgetPanel", "NVIDIA RTX 5090")},
    {"a100", QT_TRANSLATE_NOOP("lathe::views::BudgetPanel", "NVIDIA A100 80GB")},
    {"l40s", QT_TRANSLATE_NOOP("lathe::views::BudgetPanel", "NVIDIA L40S")},
};

}  // namespace

BudgetPanel::BudgetPanel(PlanSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      budgetSlider_(new QSlider(Qt::Horizontal, this)),
      budgetSpin_(new QSpinBox(this)),
      range_(new QLabel(this)),
      preview_(new QLabel(this)),
      offloadActivations_(new QCheckBox(tr("Offload activations to host memory"), this)),
      streamWeights_(new QCheckBox(tr("Stream weights"), this)),
      residentSlider_(new QSlider(Qt::Horizontal, this)),
      residentValue_(new QLabel(this)),
      hardware_(new QComboBox(this)),
      outcome_(new QLabel(this)),
      coalesce_(new QTimer(this)) {
  setObjectName(QStringLiteral("budgetPanel"));
  budgetSlider_->setObjectName(QStringLiteral("budgetSlider"));
  budgetSpin_->setObjectName(QStringLiteral("budgetSpin"));
  residentSlider_->setObjectName(QStringLiteral("residentSlider"));
  offloadActivations_->setObjectName(QStringLiteral("offloadActivations"));
  streamWeights_->setObjectName(QStringLiteral("streamWeights"));
  offloadActivations_->setToolTip(
      tr("Saved values whose copies to pinned host memory and back hide behind compute leave the GPU "
         "between forward and backward (recompute offload=true); the budget then recomputes less."));
  streamWeights_->setToolTip(
      tr("Keep only a share of the weights on the GPU and stream the others in just in time "
         "(offload policy heuristic). Costs step time where the copies do not hide."));
  hardware_->setObjectName(QStringLiteral("targetGpu"));
  outcome_->setObjectName(QStringLiteral("budgetOutcome"));

  // MiB, exact for small graphs too; the range label and the outcome say it in GiB.
  budgetSpin_->setSuffix(tr(" MiB"));
  budgetSpin_->setRange(1, kMaxBudgetMiB);
  budgetSpin_->setSingleStep(64);
  budgetSpin_->setGroupSeparatorShown(true);
  budgetSpin_->setKeyboardTracking(false);
  budgetSpin_->setToolTip(tr("Peak memory the step may use; below the slider's left end no saved set fits."));
  budgetSlider_->setToolTip(
      tr("Memory budget: from the least peak recompute can reach to the peak without recompute."));
  range_->setObjectName(QStringLiteral("budgetRange"));
  preview_->setObjectName(QStringLiteral("budgetPreview"));
  preview_->setWordWrap(true);
  preview_->hide();
  residentSlider_->setRange(0, 100);
  residentSlider_->setValue(30);
  residentSlider_->setToolTip(
      tr("Share of the weights kept resident on the GPU; the others are streamed in "
         "just in time (offload policy heuristic)."));
  residentValue_->setMinimumWidth(residentValue_->fontMetrics().horizontalAdvance(QStringLiteral("100 %")));
  for (const Target& target : kTargets) hardware_->addItem(tr(target.label), QString::fromLatin1(target.id));
  hardware_->addItem(tr("Custom JSON…"));
  outcome_->setWordWrap(true);
  outcome_->setTextFormat(Qt::RichText);
  outcome_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  outcome_->setMinimumHeight(outcome_->fontMetrics().height() * 6);
  coalesce_->setSingleShot(true);
  coalesce_->setInterval(kCoalesceMs);

  auto* layout = new QVBoxLayout(this);
  auto* form = new QFormLayout;
  auto* budgetRow = new QHBoxLayout;
  budgetRow->addWidget(budgetSlider_, 1);
  budgetRow->addWidget(budgetSpin_);
  form->addRow(tr("Memory budget"), budgetRow);
  form->addRow(QString(), range_);
  form->addRow(QString(), preview_);
  form->addRow(QString(), offloadActivations_);
  form->addRow(QString(), streamWeights_);
  auto* residentRow = new QHBoxLayout;
  residentRow->addWidget(residentSlider_, 1);
  residentRow->addWidget(residentValue_);
  form->addRow(tr("Resident weights"), residentRow);
  form->addRow(tr("Target GPU"), hardware_);
  layout->addLayout(form);
  layout->addWidget(outcome_);
  layout->addStretch(1);

  // Enough room for every line of the controls and the outcome, however the dock is shared.
  setMinimumHeight(sizeHint().height());

  connect(budgetSlider_, &QSlider::valueChanged, this, [this](int mib) {
    const QSignalBlocker blocker(budgetSpin_);
    budgetSpin_->setValue(mib);
    scheduleReplan();
  });
  connect(budgetSpin_, &QSpinBox::valueChanged, this, [this](int mib) {
    const QSignalBlocker blocker(budgetSlider_);
    budgetSlider_->setValue(mib);
    scheduleReplan();
  });
  connect(residentSlider_, &QSlider::valueChanged, this, [this](int percent) {
    residentValue_->setText(tr("%1 %").arg(percent));
    scheduleReplan();
  });
  residentValue_->setText(tr("%1 %").arg(residentSlider_->value()));
  connect(offloadActivations_, &QCheckBox::toggled, this, &BudgetPanel::scheduleReplan);
  connect(streamWeights_, &QCheckBox::toggled, this, [this](bool on) {
    residentSlider_->setEnabled(on && session_->hasGraph());
    scheduleReplan();
  });
  connect(hardware_, &QComboBox::activated, this, &BudgetPanel::onHardwarePicked);
  connect(session_, &PlanSession::hardwareChanged, this, &BudgetPanel::showHardware);
  connect(coalesce_, &QTimer::timeout, this, &BudgetPanel::replan);
  connect(session_, &PlanSession::graphChanged, this, &BudgetPanel::onGraphChanged);
  connect(session_, &PlanSession::frontierReady, this, &BudgetPanel::onFrontierReady);
  connect(session_, &PlanSession::started, this, [this] { outcome_->setText(tr("<i>Re-planning…</i>")); });
  connect(session_, &PlanSession::finished, this, &BudgetPanel::onPlanFinished);
  onGraphChanged();
}

void BudgetPanel::setBudgetBytes(uint64_t bytes) {
  budgetSpin_->setValue(toMiB(bytes));
  scheduleReplan();  // also when the value did not change: the user asked for this budget
}

uint64_t BudgetPanel::budgetBytes() const {
  return static_cast<uint64_t>(budgetSpin_->value()) * kMiB;
}

void BudgetPanel::setStreamWeights(bool on) {
  streamWeights_->setChecked(on);
  scheduleReplan();
}

bool BudgetPanel::streamWeights() const { return streamWeights_->isChecked(); }

void BudgetPanel::setOffloadActivations(bool on) {
  offloadActivations_->setChecked(on);
  scheduleReplan();
}

bool BudgetPanel::offloadActivations() const { return offloadActivations_->isChecked() && session_->jointGraph(); }

void BudgetPanel::setResidentRatio(double ratio) {
  streamWeights_->setChecked(true);
  residentSlider_->setValue(static_cast<int>(std::lround(std::clamp(ratio, 0.0, 1.0) * 100)));
}

double BudgetPanel::residentRatio() const {
  return residentSlider_->value() / 100.0;
}

void BudgetPanel::setHardware(const QString& idOrPath) {
  try {
    session_->setHardware(idOrPath);
  } catch (const Error& error) {
    // An unreadable profile changes nothing: the combo goes back to the target planned on.
    hardware_->setCurrentIndex(lastHardwareIndex_);
    outcome_->setText(tr("<span style='color:#c02020'>Cannot plan on %1: %2</span>")
                          .arg(QFileInfo(idOrPath).fileName().toHtmlEscaped(),
                               QString::fromUtf8(error.what()).toHtmlEscaped()));
    return;
  }
  showHardware(idOrPath);  // also when the session had it already: the combo may show "Custom JSON…"
  if (session_->jointGraph()) session_->requestFrontier();
  scheduleReplan();
}

void BudgetPanel::showHardware(const QString& idOrPath) {
  int index = hardware_->findData(idOrPath);
  if (index < 0) {
    hardware_->insertItem(hardware_->count() - 1, QFileInfo(idOrPath).fileName(), idOrPath);
    index = hardware_->count() - 2;
  }
  hardware_->setCurrentIndex(index);
  lastHardwareIndex_ = index;
}

void BudgetPanel::onHardwarePicked(int index) {
  if (index == hardware_->count() - 1) {  // Custom JSON…
    const QString path = QFileDialog::getOpenFileName(this, tr("Hardware profile"), {},
                                                      tr("Lathe hardware profiles (*.json);;All files (*)"));
    if (path.isEmpty()) {
      hardware_->setCurrentIndex(lastHardwareIndex_);
      return;
    }
    setHardware(path);
    return;
  }
  setHardware(hardware_->itemData(index).toString());
}

void BudgetPanel::onGraphChanged() {
  coalesce_->stop();
  const bool joint = session_->jointGraph();
  budgetSlider_->setEnabled(false);
  budgetSpin_->setEnabled(false);
  residentSlider_->setEnabled(session_->hasGraph() && streamWeights_->isChecked());
  streamWeights_->setEnabled(session_->hasGraph());
  offloadActivations_->setEnabled(joint);
  hardware_->setEnabled(session_->hasGraph());
  outcome_->clear();
  preview_->hide();
  if (!session_->hasGraph()) {
    range_->setText(tr("Select a graph to plan."));
  } else if (!joint) {
    range_->setText(tr("No recompute: not a joint (training) graph."));
    range_->setToolTip(
        tr("Memory budgets choose what a training step recomputes; this graph is planned with "
           "offload only."));
  } else {
    range_->setText(tr("Computing the recompute frontier…"));
    session_->requestFrontier();
  }
}

void BudgetPanel::onFrontierReady(bool ok, const QString& error) {
  if (!ok) {
    range_->setText(tr("The recompute frontier failed: %1").arg(error));
    return;
  }
  const auto& frontier = session_->frontier();
  if (!frontier || frontier->points.empty()) return;
  const uint64_t low = frontier->minimumPeak(), high = frontier->noRecomputePeak();
  const bool first = !budgetSlider_->isEnabled();
  {
    const QSignalBlocker sliderBlocker(budgetSlider_);
    const QSignalBlocker spinBlocker(budgetSpin_);
    // Whole MiB inside the reachable range: the slider's left end is a budget that can be met.
    budgetSlider_->setRange(static_cast<int>((low + kMiB - 1) / kMiB), static_cast<int>(std::max(low, high) / kMiB));
    budgetSlider_->setPageStep(std::max(1, (budgetSlider_->maximum() - budgetSlider_->minimum()) / 20));
    // A new graph starts at the peak of the plan on show, the default pipeline's.
    if (first) {
      const auto& run = session_->planRun();
      const uint64_t start = run && !run->planned.empty() ? run->planned.back().timeline.peakBytes : high;
      budgetSlider_->setValue(toMiB(std::clamp(start, low, high)));
      budgetSpin_->setValue(budgetSlider_->value());
    }
  }
  budgetSlider_->setEnabled(true);
  budgetSpin_->setEnabled(true);
  range_->setText(tr("Reachable: %1 to %2, %n frontier point(s)", nullptr, static_cast<int>(frontier->points.size()))
                      .arg(formatBytes(low), formatBytes(high)));
  range_->setToolTip(tr("%1 with the most recompute, %2 with none.").arg(formatBytes(low), formatBytes(high)));
}

void BudgetPanel::scheduleReplan() {
  if (!session_->hasGraph()) return;
  updatePreview();
  coalesce_->start();  // restarts: a burst of moves plans once, for where it ends
}

void BudgetPanel::updatePreview() {
  QStringList lines;
  const auto& frontier = session_->frontier();
  if (frontier && !frontier->points.empty() && budgetSlider_->isEnabled()) {
    // The point the budget policy will pick, and what the plan on show has, side by side.
    const passes::FrontierPoint& point = frontier->pick(budgetBytes());
    QString text = tr("This budget: peak %1, step %2 (recompute %3)")
                       .arg(formatBytes(point.peakBytes), formatSeconds(point.stepSeconds), formatSeconds(point.recomputeSeconds));
    if (const auto& run = session_->planRun(); run && !run->planned.empty()) {
      text += tr("; on show: peak %1, step %2").arg(formatBytes(run->planned.back().timeline.peakBytes),
                                                     formatSeconds(run->stepEstimateSeconds()));
    }
    if (streamWeights() || offloadActivations()) text += tr(", before offload");
    lines << text;
  }
  if (streamWeights()) {
    if (const QString weights = weightPreview(); !weights.isEmpty()) lines << weights;
  }
  preview_->setText(lines.join(QLatin1Char('\n')));
  preview_->setVisible(!lines.isEmpty());
}

QString BudgetPanel::weightPreview() {
  const std::shared_ptr<const PlanRun>& run = session_->planRun();
  if (!run || !run->target) return {};
  if (weightProblemRun_.lock() != run) {
    weightProblemRun_ = run;
    weightProblem_.reset();
    const plan::PlanState& state = run->run.finalState();
    if (!state.units.empty()) weightProblem_ = passes::offloadProblem(run->target->context(), state);
  }
  if (!weightProblem_) return {};
  // The re-plan's own offload step on the same problem: the same resident units, copies and step.
  const passes::PipelineStep step = offloadStep(BudgetRequest{.residentRatio = residentRatio()});
  try {
    const plan::OffloadDecision decision = passes::planOffloadWith(*weightProblem_, step.options);
    return tr("Resident %1 %: weights on the GPU at most %2 of %3, step %4 (stalls %5)")
        .arg(residentSlider_->value())
        .arg(formatBytes(decision.peakWeightBytes), formatBytes(decision.budgetBytes), formatSeconds(decision.stepSeconds),
             formatSeconds(decision.bubbleSeconds));
  } catch (const Error& error) {
    return tr("Resident %1 %: %2").arg(residentSlider_->value()).arg(QString::fromUtf8(error.what()));
  }
}

void BudgetPanel::replan() {
  session_->runBudget({budgetBytes(), streamWeights() ? std::optional<double>(residentRatio()) : std::nullopt,
                       offloadActivations()});
}

void BudgetPanel::onPlanFinished(bool ok, const QString& error) {
  if (!ok) {
    // A cancelled run is followed by the one that replaced it.
    if (!session_->busy()) outcome_->setText(tr("<b>Planning failed:</b> %1").arg(error.toHtmlEscaped()));
    return;
  }
  const auto& run = session_->planRun();
  if (!run || run->planned.empty()) return;
  if (!preview_->isHidden()) updatePreview();  // "on show" is now this plan
  const uint64_t peak = run->planned.back().timeline.peakBytes;
  QStringList lines;
  if (!run->profile) {
    lines << tr("<b>Peak %1</b> · step estimate <b>%2</b> on %3")
                 .arg(formatBytes(peak), formatSeconds(run->stepEstimateSeconds()), run->hardware.toHtmlEscaped());
  } else if (run->modelStepSeconds) {
    lines << tr("<b>Peak %1</b> · step <b>%2</b> measured · %3 estimated on %4")
                 .arg(formatBytes(peak), formatSeconds(run->stepEstimateSeconds()), formatSeconds(*run->modelStepSeconds),
                      run->hardware.toHtmlEscaped());
  } else {
    lines << tr("<b>Peak %1</b> · step <b>%2</b> measured on %3")
                 .arg(formatBytes(peak), formatSeconds(run->stepEstimateSeconds()), run->hardware.toHtmlEscaped());
  }
  if (run->target && run->target->capturedOnCpu()) {
    lines << tr("<span style='color:#a15c00'>Captured on the CPU: times and memory are estimated as if it ran on %1.</span>")
                 .arg(run->hardware.toHtmlEscaped());
  }
  outcome_->setToolTip(run->profile ? tr("Measured: the plan's step with each node at the time %1 measured (the "
                                         "others at the model's estimate). Estimated: the same step as the model "
                                         "alone prices it.")
                                          .arg(toQString(run->profile->calibration.source))
                                    : QString());
  if (const passes::PipelineRecord* recompute = run->recordOf("recompute")) {
    lines << tr("Recompute %1 (policy %2), %3 saved")
                 .arg(formatSeconds(recompute->result.stat(passes::RecomputePass::kRecomputeSeconds).value_or(0)),
                      toQString(recompute->step.options.text(passes::RecomputePass::kPolicy)),
                      formatBytes(static_cast<uint64_t>(
                          recompute->result.stat(passes::RecomputePass::kSavedBytes).value_or(0))));
  }
  if (const auto& activations = run->run.finalState().activationOffload) {
    lines << tr("Activations: %n value(s), %1 held in host memory", nullptr, static_cast<int>(activations->tensors.size()))
                 .arg(formatBytes(activations->bytes));
  }
  if (const passes::PipelineRecord* offload = run->recordOf("offload")) {
    lines << tr("Offload: %1 streamed per step, stalls %2")
                 .arg(formatBytes(static_cast<uint64_t>(
                          offload->result.stat(passes::OffloadPass::kStreamedBytes).value_or(0))),
                      formatSeconds(offload->result.stat(passes::OffloadPass::kBubbleSeconds).value_or(0)));
  }
  if (run->budget && !run->budgetMet()) {
    lines << tr("<span style='color:#c02020'><b>Budget %1 cannot be met:</b> no saved set brings the peak below "
                "%2; the plan shown is the one with the least peak.</span>")
                 .arg(formatBytes(run->budget->budgetBytes),
                      formatBytes(session_->frontier() ? session_->frontier()->minimumPeak() : peak));
  } else if (run->budget) {
    lines
        << tr("<span style='color:#2e7d32'>Within the budget of %1.</span>").arg(formatBytes(run->budget->budgetBytes));
  }
  if (run->target && peak > run->target->hardware().hbmCapacity) {
    lines << tr("<span style='color:#c02020'>The peak is more than the %1 of %2.</span>")
                 .arg(formatBytes(run->target->hardware().hbmCapacity), run->hardware.toHtmlEscaped());
  }
  const QString change = changeSincePrevious(*run);
  if (!change.isEmpty()) lines << change;
  previous_ = run;
  outcome_->setText(lines.join(QStringLiteral("<br>")));
}

QString BudgetPanel::changeSincePrevious(const PlanRun& run) const {
  if (!previous_ || previous_->graph != run.graph || previous_.get() == &run) return {};
  const auto& before = previous_->run.finalState().recompute;
  const auto& after = run.run.finalState().recompute;
  if (!before || !after) return {};
  // Both saved lists are in program order.
  std::vector<ir::NodeId> added, dropped;
  std::set_difference(after->saved.begin(), after->saved.end(), before->saved.begin(), before->saved.end(),
                      std::back_inserter(added));
  std::set_difference(before->saved.begin(), before->saved.end(), after->saved.begin(), after->saved.end(),
                      std::back_inserter(dropped));
  const auto peakBefore = static_cast<int64_t>(previous_->planned.back().timeline.peakBytes);
  const auto peakAfter = static_cast<int64_t>(run.planned.back().timeline.peakBytes);
  const int64_t delta = peakAfter - peakBefore;
  const QString peakChange = delta == 0  ? tr("peak unchanged")
                             : delta > 0 ? tr("peak +%1").arg(formatBytes(static_cast<uint64_t>(delta)))
                                         : tr("peak −%1").arg(formatBytes(static_cast<uint64_t>(-delta)));
  return tr("<i>Since the last plan: %1, %2 value(s) newly saved, %3 now recomputed.</i>")
      .arg(peakChange)
      .arg(added.size())
      .arg(dropped.size());
}

}  // namespace lathe::views
