#include "views/magi_timeline_model.h"

#include <QBrush>
#include <QColor>
#include <QFileInfo>
#include <nlohmann/json.hpp>

#include "views/formatting.h"

namespace lathe::views {

MagiTimelineModel::MagiTimelineModel(QObject* parent) : QAbstractTableModel(parent) {}

void MagiTimelineModel::setModel(std::shared_ptr<const io::Artifact> artifact, int modelIndex) {
  beginResetModel();
  artifact_ = std::move(artifact);
  model_ = nullptr;
  if (artifact_ && artifact_->magi && modelIndex >= 0 &&
      modelIndex < static_cast<int>(artifact_->magi->models.size())) {
    model_ = &artifact_->magi->models[static_cast<size_t>(modelIndex)];
  }
  details_.clear();
  if (model_) {
    for (const io::MagiTimelineEvent& e : model_->timeline) details_.push_back(details(e));
  }
  endResetModel();
}

const io::MagiTimelineEvent& MagiTimelineModel::eventAt(int row) const {
  return model_->timeline.at(static_cast<size_t>(row));
}

int MagiTimelineModel::rowOfEvent(int64_t index) const {
  if (!model_) return -1;
  for (size_t row = 0; row < model_->timeline.size(); ++row)
    if (model_->timeline[row].index == index) return static_cast<int>(row);
  return -1;
}

int MagiTimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !model_ ? 0 : static_cast<int>(model_->timeline.size());
}

int MagiTimelineModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QString MagiTimelineModel::details(const io::MagiTimelineEvent& event) {
  const nlohmann::json a = nlohmann::json::parse(event.attributes, nullptr, false);
  if (!a.is_object()) return {};
  const auto text = [&](const char* key) -> QString {
    const auto it = a.find(key);
    if (it == a.end() || it->is_null()) return {};
    return it->is_string() ? toQString(it->get_ref<const std::string&>()) : toQString(it->dump());
  };
  QStringList parts;
  if (!event.error.empty()) {
    const QString message = text("exception_message");
    parts << (message.isEmpty() ? toQString(event.error) : tr("%1: %2").arg(toQString(event.error), message));
  }
  if (const QString load = text("load_result"); !load.isEmpty()) {
    const QString reason = text("reason");
    parts << (reason.isEmpty() ? tr("cache %1").arg(load) : tr("cache %1 (%2)").arg(load, reason));
  }
  if (const QString result = text("compile_result"); !result.isEmpty()) parts << tr("compile %1").arg(result);
  if (const QString stored = text("store_result"); !stored.isEmpty()) parts << tr("cache store %1").arg(stored);
  if (const QString pieces = text("num_subgraphs"); !pieces.isEmpty()) parts << tr("%1 pieces").arg(pieces);
  if (const QString nodes = text("scheduler_node_count"); !nodes.isEmpty()) parts << tr("%1 scheduler nodes").arg(nodes);
  if (const QString shape = text("runtime_shape"); !shape.isEmpty()) parts << tr("shape %1").arg(shape);
  if (const QString restart = text("restart_reason"); !restart.isEmpty()) parts << tr("restart: %1").arg(restart);
  return parts.join(QStringLiteral(" · "));
}

QVariant MagiTimelineModel::data(const QModelIndex& index, int role) const {
  if (!model_ || !index.isValid() || index.row() >= rowCount()) return {};
  const io::MagiTimelineEvent& e = eventAt(index.row());
  const bool failed = e.phase == io::MagiPhase::Failed;
  if (role == Qt::ForegroundRole && failed) return QBrush(QColor(0xc0, 0x39, 0x2b));
  if (role == Qt::TextAlignmentRole && (index.column() == TimeColumn || index.column() == DurationColumn ||
                                        index.column() == IndexColumn)) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  if (role == Qt::ToolTipRole) {
    QStringList lines{toQString(e.name)};
    for (const auto& file : e.files) lines << QString::fromStdString(file.string());
    return lines.join(QLatin1Char('\n'));
  }
  if (role != Qt::DisplayRole && role != kSortRole) return {};
  const bool sort = role == kSortRole;
  switch (index.column()) {
    case IndexColumn: return QVariant::fromValue<qlonglong>(e.index);
    case TimeColumn: return sort ? QVariant(e.seconds) : QVariant(formatSeconds(e.seconds));
    case ScopeColumn: return toQString(e.scope);
    case PhaseColumn: {
      switch (e.phase) {
        case io::MagiPhase::Before: return tr("before");
        case io::MagiPhase::After: return tr("after");
        case io::MagiPhase::Failed: return tr("failed");
        case io::MagiPhase::Skipped: return tr("skipped");
        case io::MagiPhase::Mark: return tr("mark");
      }
      return {};
    }
    case LifecycleColumn: return toQString(e.lifecycle);
    case DurationColumn:
      if (!e.durationS) return sort ? QVariant(-1.0) : QVariant();
      return sort ? QVariant(*e.durationS) : QVariant(formatSeconds(*e.durationS));
    case DetailsColumn: return details_[static_cast<size_t>(index.row())];
    case FilesColumn: {
      QStringList names;
      for (const auto& file : e.files) names << QString::fromStdString(file.filename().string());
      return sort ? QVariant(static_cast<int>(e.files.size())) : QVariant(names.join(QStringLiteral(", ")));
    }
    default: return {};
  }
}

QVariant MagiTimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case IndexColumn: return tr("#");
    case TimeColumn: return tr("Time");
    case ScopeColumn: return tr("Graph");
    case PhaseColumn: return tr("Phase");
    case LifecycleColumn: return tr("Lifecycle");
    case DurationColumn: return tr("Duration");
    case DetailsColumn: return tr("Details");
    case FilesColumn: return tr("Files");
    default: return {};
  }
}

}  // namespace lathe::views
