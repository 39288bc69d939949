// The "Budget" dock: the memory budget (whole MiB; the slider spans the graph's least reachable peak to
// its peak without recompute), activation offload, weight streaming with the share of weights kept
// resident (off until asked for), and the target GPU. Moving a
// control re-plans in the background: moves are coalesced, the run in flight is cancelled, the
// GUI never waits. What a budget gives (the frontier point it picks: peak, step, recompute) shows
// as the controls move; the outcome (peak, recompute time, step estimate, whether the budget is
// met) when the plan comes back.
#pragma once

#include <QWidget>
#include <cstdint>
#include <memory>
#include <optional>

#include "passes/offload.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;
class QSpinBox;
class QTimer;

namespace lathe::views {

class PlanSession;
struct PlanRun;

class BudgetPanel : public QWidget {
  Q_OBJECT

 public:
  // How long the controls must rest before a re-plan starts.
  static constexpr int kCoalesceMs = 40;

  explicit BudgetPanel(PlanSession* session, QWidget* parent = nullptr);

  // Sets the budget as if the user had moved to it (re-plans).
  void setBudgetBytes(uint64_t bytes);
  [[nodiscard]] uint64_t budgetBytes() const;
  // 0..1, as if the user had turned weight streaming on and moved the slider (re-plans).
  void setResidentRatio(double ratio);
  [[nodiscard]] double residentRatio() const;
  // Weight streaming (offload) on or off, as if toggled (re-plans).
  void setStreamWeights(bool on);
  [[nodiscard]] bool streamWeights() const;
  // Activation offload on or off, as if toggled (re-plans; training graphs only).
  void setOffloadActivations(bool on);
  [[nodiscard]] bool offloadActivations() const;
  // A built-in hardware id ("h100") or a lathe.hw/1 JSON file, as if picked (re-plans). The combo
  // follows the session's target however it was set (an opened plan sets it without re-planning).
  void setHardware(const QString& idOrPath);
  [[nodiscard]] QSlider* budgetSlider() const { return budgetSlider_; }
  [[nodiscard]] QLabel* outcomeLabel() const { return outcome_; }
  // What the controls will give, before the re-plan comes back: the budget's frontier point, and
  // with weights streaming, the offload plan of the resident share on the plan on show's saved set.
  [[nodiscard]] QLabel* previewLabel() const { return preview_; }

 private:
  void onGraphChanged();
  void onFrontierReady(bool ok, const QString& error);
  void onPlanFinished(bool ok, const QString& error);
  void onHardwarePicked(int index);
  void showHardware(const QString& idOrPath);
  void scheduleReplan();
  void replan();
  void updatePreview();
  // The weight-streaming line of the preview; empty where the plan on show has no layer units.
  [[nodiscard]] QString weightPreview();
  // What changed from the plan shown before (same graph): peak and saved values.
  [[nodiscard]] QString changeSincePrevious(const PlanRun& run) const;

  PlanSession* session_;
  QSlider* budgetSlider_;
  QSpinBox* budgetSpin_;
  QLabel* range_;
  QLabel* preview_;
  QCheckBox* offloadActivations_;
  QCheckBox* streamWeights_;
  QSlider* residentSlider_;
  QLabel* residentValue_;
  QComboBox* hardware_;
  QLabel* outcome_;
  QTimer* coalesce_;
  int lastHardwareIndex_ = 0;
  std::shared_ptr<const PlanRun> previous_;
  // The weights' offload problem of the plan on show, made on the first preview that needs it.
  std::weak_ptr<const PlanRun> weightProblemRun_;
  std::optional<passes::OffloadProblem> weightProblem_;
};

}  // namespace lathe::views
