#include "views/calibration_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include "views/calibration_model.h"
#include "views/formatting.h"
#include "views/plan_session.h"

namespace lathe::views {

CalibrationView::CalibrationView(PlanSession* session, QWidget* parent)
    : QWidget(parent),
      session_(session),
      summary_(new QLabel(this)),
      model_(new CalibrationModel(this)),
      proxy_(new QSortFilterProxyModel(this)),
      table_(new QTableView(this)) {
  setObjectName(QStringLiteral("calibrationView"));
  summary_->setObjectName(QStringLiteral("calibrationSummary"));
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  summary_->setContentsMargins(6, 4, 6, 2);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(CalibrationModel::kSortRole);
  table_->setObjectName(QStringLiteral("calibrationTable"));
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(CalibrationModel::MeasuredColumn, Qt::DescendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setAlternatingRowColors(true);
  table_->setWordWrap(false);
  table_->verticalHeader()->hide();
  table_->verticalHeader()->setDefaultSectionSize(table_->fontMetrics().height() + 6);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(summary_);
  layout->addWidget(table_, 1);
  connect(session_, &PlanSession::profileChanged, this, &CalibrationView::showProfile);
  showProfile();
}

QString CalibrationView::summary(const AppliedProfile& profile) {
  const passes::CategoryTimes all = profile.total();
  return tr("Priced with %1 (%n node(s) measured): the model was %2 off, %3 estimated against %4 measured.", nullptr,
            static_cast<int>(all.nodes))
      .arg(toQString(profile.calibration.source), formatModelError(all.estimated, all.measured),
           formatSeconds(all.estimated), formatSeconds(all.measured));
}

QString CalibrationView::deviceNote(const AppliedProfile& profile) {
  const passes::Calibration& calibration = profile.calibration;
  if (calibration.device == calibration.target.hardware().name) return {};
  return tr("Measured on %1, planned for %2: the plan takes the measured device's time for every node it timed.")
      .arg(toQString(calibration.device), toQString(calibration.target.hardware().name));
}

QString CalibrationView::summaryText() const {
  return summary_->text();
}

void CalibrationView::showProfile() {
  const auto& profile = session_->profile();
  if (!profile) {
    summary_->setText(tr("No profile applied. File › Load Profile… reads a lathe.profile/1 file (lathe measure "
                         "CAPTURE -o profile.json) and prices the graph on show as it was measured."));
    summary_->setToolTip({});
    model_->setCategories({});
    return;
  }
  const QString note = deviceNote(*profile);
  summary_->setText(note.isEmpty() ? summary(*profile) : summary(*profile) + QLatin1Char(' ') + note);
  summary_->setToolTip(profile->path);
  model_->setCategories(profile->calibration.byCategory);
  table_->resizeColumnsToContents();
}

}  // namespace lathe::views
