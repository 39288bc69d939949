// The "Measured" dock: how far the model's estimates were from a profile the session applied
// (PlanSession::loadProfile) — a summary of the whole graph, then the error per op category
// (CalibrationModel), longest measured first. Says how to load a profile while none is applied.
#pragma once

#include <QWidget>

class QLabel;
class QSortFilterProxyModel;
class QTableView;

namespace lathe::views {

class CalibrationModel;
class PlanSession;
struct AppliedProfile;

class CalibrationView : public QWidget {
  Q_OBJECT

 public:
  explicit CalibrationView(PlanSession* session, QWidget* parent = nullptr);

  // "Priced with lathe_runtime cpu on cpu (661 nodes measured): the model was −98% off, …", and
  // where the profile was measured on another device than the one planned for, a sentence saying so.
  [[nodiscard]] static QString summary(const AppliedProfile& profile);
  [[nodiscard]] static QString deviceNote(const AppliedProfile& profile);

  [[nodiscard]] CalibrationModel* model() const { return model_; }
  [[nodiscard]] QTableView* table() const { return table_; }
  [[nodiscard]] QString summaryText() const;

 private:
  void showProfile();

  PlanSession* session_;
  QLabel* summary_;
  CalibrationModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
};

}  // namespace lathe::views
