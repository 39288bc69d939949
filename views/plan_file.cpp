#include "views/plan_file.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <QRegularExpression>
#include <algorithm>

namespace lathe::views {

namespace {

bool samePieces(const plan::PlanState& a, const plan::PlanState& b) {
  return a.pieceCount == b.pieceCount && a.piece == b.piece && a.boundary == b.boundary;
}

bool sameUnits(const plan::PlanState& a, const plan::PlanState& b) {
  return a.unit == b.unit && std::equal(a.units.begin(), a.units.end(), b.units.begin(), b.units.end(),
                                        [](const plan::LayerUnit& x, const plan::LayerUnit& y) {
                                          return x.id == y.id && x.name == y.name && x.weights == y.weights;
                                        });
}

bool sameGroups(const plan::PlanState& a, const plan::PlanState& b) {
  return a.group == b.group && std::equal(a.groups.begin(), a.groups.end(), b.groups.begin(), b.groups.end(),
                                          [](const plan::FusionGroup& x, const plan::FusionGroup& y) {
                                            return x.id == y.id && x.kind == y.kind && x.nodes == y.nodes &&
                                                   x.anchor == y.anchor;
                                          });
}

bool sameRecompute(const plan::PlanState& a, const plan::PlanState& b) {
  if (a.recompute.has_value() != b.recompute.has_value()) return false;
  return !a.recompute || (a.recompute->policy == b.recompute->policy && a.recompute->saved == b.recompute->saved &&
                          a.recompute->recomputed == b.recompute->recomputed);
}

bool sameOffload(const plan::PlanState& a, const plan::PlanState& b) {
  if (a.offload.has_value() != b.offload.has_value()) return false;
  if (!a.offload) return true;
  const plan::OffloadDecision &x = *a.offload, &y = *b.offload;
  return x.policy == y.policy && x.budgetBytes == y.budgetBytes && x.resident == y.resident &&
         std::equal(x.prefetches.begin(), x.prefetches.end(), y.prefetches.begin(), y.prefetches.end(),
                    [](const plan::Prefetch& p, const plan::Prefetch& q) {
                      return p.unit == q.unit && p.trigger == q.trigger && p.deadline == q.deadline;
                    });
}

}  // namespace

bool isPlanPath(const QString& path) {
  return path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) && !QFileInfo(path).isDir();
}

QString defaultPlanFileName(const QString& graphId) {
  static const QRegularExpression unsafe(QStringLiteral("[^A-Za-z0-9_.-]+"));
  return QString(graphId).replace(unsafe, QStringLiteral("_")) + QStringLiteral(".plan.json");
}

QStringList differingDecisions(const plan::PlanState& a, const plan::PlanState& b) {
  QStringList differing;
  if (!samePieces(a, b)) differing << QCoreApplication::translate("lathe::views::PlanFile", "pieces");
  if (!sameUnits(a, b)) differing << QCoreApplication::translate("lathe::views::PlanFile", "layer units");
  if (!sameGroups(a, b)) differing << QCoreApplication::translate("lathe::views::PlanFile", "fusion groups");
  if (!sameRecompute(a, b)) differing << QCoreApplication::translate("lathe::views::PlanFile", "recompute");
  if (!sameOffload(a, b)) differing << QCoreApplication::translate("lathe::views::PlanFile", "offload");
  return differing;
}

}  // namespace lathe::views
