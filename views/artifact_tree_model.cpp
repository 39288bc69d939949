#include "views/artifact_tree_model.h"

#include <QFileInfo>
#include <algorithm>
#include <map>

#include "views/formatting.h"

namespace lathe::views {

struct ArtifactTreeModel::Item {
  ItemKind kind = ItemKind::Artifact;
  QString name, nodes, details, toolTip;
  QString graphId;         // graph items
  QString graphKind;       // graph items: the TORCH_TRACE event or artifact name
  int compile = -1;        // compile, guards and code items: index into the trace's compiles
  int64_t codeEvent = -1;  // code items
  QString codeGraphId;     // code items: the graph whose nodes the code names
  std::shared_ptr<const ir::Graph> graph;
  Item* parent = nullptr;
  int row = 0;
  std::vector<std::unique_ptr<Item>> children;

  Item* add(ItemKind childKind, QString childName) {
    auto child = std::make_unique<Item>();
    child->kind = childKind;
    child->name = std::move(childName);
    child->parent = this;
    child->row = static_cast<int>(children.size());
    children.push_back(std::move(child));
    return children.back().get();
  }
};

ArtifactTreeModel::ArtifactTreeModel(QObject* parent) : QAbstractItemModel(parent), root_(std::make_unique<Item>()) {}

ArtifactTreeModel::~ArtifactTreeModel() = default;

void ArtifactTreeModel::setArtifact(std::shared_ptr<const io::Artifact> artifact) {
  beginResetModel();
  artifact_ = std::move(artifact);
  build();
  endResetModel();
}

void ArtifactTreeModel::clear() {
  setArtifact(nullptr);
}

namespace {

QString compileDetails(const io::TraceCompile& compile) {
  QStringList parts{toQString(io::compileStatusName(compile.status))};
  if (!compile.failType.empty()) parts << toQString(compile.failType);
  if (compile.entireFrameCompileTimeS) parts << formatSeconds(*compile.entireFrameCompileTimeS);
  if (!compile.recompileReasons.empty()) {
    parts << ArtifactTreeModel::tr("%n recompile reason(s)", nullptr,
                                   static_cast<int>(compile.recompileReasons.size()));
  }
  return parts.join(QStringLiteral(" · "));
}

QString compileToolTip(const io::TraceCompile& compile) {
  QStringList lines;
  if (!compile.frameFile.empty()) {
    lines << ArtifactTreeModel::tr("%1:%2 in %3")
                 .arg(toQString(compile.frameFile))
                 .arg(compile.frameLine)
                 .arg(toQString(compile.frameName));
  }
  if (!compile.failReason.empty()) lines << toQString(compile.failReason);
  for (const auto& reason : compile.recompileReasons) lines << toQString(reason);
  return lines.join(QLatin1Char('\n'));
}

}  // namespace

void ArtifactTreeModel::build() {
  root_ = std::make_unique<Item>();
  graphItems_.clear();
  if (!artifact_) return;
  const io::Artifact& artifact = *artifact_;

  Item* top = root_->add(ItemKind::Artifact, QFileInfo(QString::fromStdString(artifact.path.string())).fileName());
  top->details = toQString(io::artifactKindName(artifact.kind));
  top->toolTip = QString::fromStdString(artifact.path.string());

  // Graph items by id, so that nested subgraphs (listed after their parent) go under it.
  std::map<std::string, Item*, std::less<>> graphsById;
  auto addGraph = [&](Item* group, const std::string& id, const std::string& kind, const std::string& parentId,
                      std::shared_ptr<const ir::Graph> graph) {
    Item* parentItem = group;
    if (auto found = graphsById.find(parentId); !parentId.empty() && found != graphsById.end()) {
      parentItem = found->second;
    }
    // A nested subgraph is named by its attribute, the last part of its id.
    const std::string shownName = parentId.empty() ? kind : id.substr(id.rfind('/') + 1);
    Item* item = parentItem->add(ItemKind::Graph, toQString(shownName));
    item->graphId = toQString(id);
    item->graphKind = toQString(kind);
    item->toolTip = item->graphId;
    if (graph) item->nodes = QString::number(graph->size());
    item->graph = std::move(graph);
    graphsById.emplace(id, item);
    graphItems_.push_back(item);
  };

  if (artifact.trace) {
    const io::TraceLog& log = *artifact.trace;
    for (size_t compileIndex = 0; compileIndex < log.compiles.size(); ++compileIndex) {
      const io::TraceCompile& compile = log.compiles[compileIndex];
      QString name = toQString(compile.id);
      if (log.multiRank) name = tr("rank %1 · %2").arg(compile.rank).arg(name);
      if (!compile.frameName.empty()) name += QStringLiteral(" · ") + toQString(compile.frameName);
      Item* group = top->add(ItemKind::Compile, name);
      group->details = compileDetails(compile);
      group->toolTip = compileToolTip(compile);
      group->compile = static_cast<int>(compileIndex);
      // Inductor logs one output code per graph it compiled, in the order of its post-grad graphs.
      std::vector<std::string> postGradGraphs;
      for (size_t graphIndex : compile.graphs) {
        const io::GraphEntry& entry = log.graphs[graphIndex];
        addGraph(group, entry.id, entry.kind, entry.parent, entry.graph);
        if (entry.kind == "inductor_post_grad_graph" && entry.parent.empty()) postGradGraphs.push_back(entry.id);
      }
      if (compile.guardFormat != io::GuardFormat::None || compile.guardCount) {
        Item* guards = group->add(ItemKind::Guards, tr("Guards"));
        guards->compile = group->compile;
        // Dynamo's metric, named as such: the Guards view counts the guards its tree prints.
        if (compile.guardCount) {
          guards->details = tr("Dynamo: %n guard(s)", nullptr, static_cast<int>(*compile.guardCount));
        }
      }
      const auto addCode = [&](QString label, size_t eventIndex) {
        const std::string& payload = log.events[eventIndex].payload;
        Item* code = group->add(ItemKind::Code, std::move(label));
        code->compile = group->compile;
        code->codeEvent = static_cast<int64_t>(eventIndex);
        code->details =
            tr("%n line(s)", nullptr, static_cast<int>(std::count(payload.begin(), payload.end(), '\n') + 1));
        return code;
      };
      if (compile.decompiledCodeEvent >= 0) {
        addCode(tr("Decompiled bytecode"), static_cast<size_t>(compile.decompiledCodeEvent));
      }
      for (size_t k = 0; k < compile.outputCodeEvents.size(); ++k) {
        // A MagiCompiler dump names each piece's code `submod_<k>/inductor_output.py`.
        const std::string_view eventName = log.events[compile.outputCodeEvents[k]].name;
        const size_t slash = eventName.find('/');
        Item* code = addCode(slash != std::string_view::npos
                                 ? tr("Inductor output code · %1").arg(toQString(eventName.substr(0, slash)))
                             : k == 0 ? tr("Inductor output code")
                                      : tr("Inductor output code #%1").arg(k + 1),
                             compile.outputCodeEvents[k]);
        if (k < postGradGraphs.size()) code->codeGraphId = toQString(postGradGraphs[k]);
        code->toolTip = code->codeGraphId;
      }
    }
    Item* outside = nullptr;
    for (const io::GraphEntry& entry : log.graphs) {
      if (entry.compile >= 0) continue;
      if (!outside) outside = top->add(ItemKind::Compile, tr("Outside any compile"));
      addGraph(outside, entry.id, entry.kind, entry.parent, entry.graph);
    }
  } else {
    // .pt2: one group per exported model.
    std::map<std::string, Item*, std::less<>> groups;
    for (io::GraphListing& listing : artifact.graphs()) {
      auto [group, inserted] = groups.try_emplace(listing.compileId, nullptr);
      if (inserted) {
        group->second = top->add(ItemKind::Compile, toQString(listing.compileId));
        group->second->details = tr("exported program");
      }
      addGraph(group->second, listing.id, listing.kind, listing.parent, std::move(listing.graph));
    }
  }
  if (artifact.snapshot) {
    Item* snapshot = top->add(ItemKind::Snapshot, tr("Memory snapshot"));
    snapshot->details = tr("%n segment(s)", nullptr, static_cast<int>(artifact.snapshot->segments.size()));
  }

  const Diagnostics& diagnostics = artifact.diagnostics();
  if (!diagnostics.empty()) {
    Item* item = top->add(ItemKind::Diagnostics, tr("Diagnostics"));
    item->details = tr("%1 errors, %2 warnings, %3 notes")
                        .arg(diagnostics.count(Severity::Error))
                        .arg(diagnostics.count(Severity::Warning))
                        .arg(diagnostics.count(Severity::Note));
  }
}

std::shared_ptr<const ir::Graph> ArtifactTreeModel::graphAt(const QModelIndex& index) const {
  const Item* item = itemAt(index);
  return item ? item->graph : nullptr;
}

QString ArtifactTreeModel::graphIdAt(const QModelIndex& index) const {
  const Item* item = itemAt(index);
  return item ? item->graphId : QString();
}

QModelIndex ArtifactTreeModel::indexOfGraph(const QString& graphId) const {
  for (const Item* item : graphItems_) {
    if (item->graphId == graphId) return indexOfItem(item);
  }
  return {};
}

QModelIndex ArtifactTreeModel::preferredGraphIndex() const {
  // A run folder's graph as the Lathe runtime planned it, then the first joint graph.
  for (const Item* item : graphItems_) {
    if (item->graph && item->graphKind == QLatin1String("lathe_joint_graph")) return indexOfItem(item);
  }
  for (const Item* item : graphItems_) {
    if (item->graph && item->graphKind.contains(QStringLiteral("joint"))) return indexOfItem(item);
  }
  for (const Item* item : graphItems_) {
    if (item->graph) return indexOfItem(item);
  }
  return {};
}

QModelIndex ArtifactTreeModel::firstIndexOf(ItemKind kind) const {
  std::vector<const Item*> pending{root_.get()};
  while (!pending.empty()) {
    const Item* item = pending.back();
    pending.pop_back();
    if (item != root_.get() && item->kind == kind) return indexOfItem(item);
    for (auto child = item->children.rbegin(); child != item->children.rend(); ++child) pending.push_back(child->get());
  }
  return {};
}

ArtifactTreeModel::Item* ArtifactTreeModel::itemAt(const QModelIndex& index) const {
  return index.isValid() ? static_cast<Item*>(index.internalPointer()) : nullptr;
}

QModelIndex ArtifactTreeModel::indexOfItem(const Item* item) const {
  if (!item || item == root_.get()) return {};
  return createIndex(item->row, 0, const_cast<Item*>(item));
}

QModelIndex ArtifactTreeModel::index(int row, int column, const QModelIndex& parent) const {
  if (!hasIndex(row, column, parent)) return {};
  const Item* parentItem = parent.isValid() ? itemAt(parent) : root_.get();
  return createIndex(row, column, parentItem->children[static_cast<size_t>(row)].get());
}

QModelIndex ArtifactTreeModel::parent(const QModelIndex& child) const {
  const Item* item = itemAt(child);
  return item ? indexOfItem(item->parent) : QModelIndex();
}

int ArtifactTreeModel::rowCount(const QModelIndex& parent) const {
  if (parent.column() > 0) return 0;
  const Item* item = parent.isValid() ? itemAt(parent) : root_.get();
  return static_cast<int>(item->children.size());
}

int ArtifactTreeModel::columnCount(const QModelIndex&) const {
  return ColumnCount;
}

QVariant ArtifactTreeModel::data(const QModelIndex& index, int role) const {
  const Item* item = itemAt(index);
  if (!item) return {};
  switch (role) {
    case Qt::DisplayRole:
      switch (index.column()) {
        case NameColumn: return item->name;
        case NodesColumn: return item->nodes;
        case DetailsColumn: return item->details;
        default: return {};
      }
    case Qt::ToolTipRole: return item->toolTip.isEmpty() ? QVariant() : QVariant(item->toolTip);
    case Qt::TextAlignmentRole:
      return index.column() == NodesColumn ? QVariant(int(Qt::AlignRight | Qt::AlignVCenter)) : QVariant();
    case kItemKindRole: return static_cast<int>(item->kind);
    case kGraphIdRole: return item->graphId.isEmpty() ? QVariant() : QVariant(item->graphId);
    case kCompileIndexRole: return item->compile < 0 ? QVariant() : QVariant(item->compile);
    case kCodeEventRole: return item->codeEvent < 0 ? QVariant() : QVariant(static_cast<qlonglong>(item->codeEvent));
    case kCodeGraphRole: return item->codeGraphId.isEmpty() ? QVariant() : QVariant(item->codeGraphId);
    default: return {};
  }
}

QVariant ArtifactTreeModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn: return tr("Name");
    case NodesColumn: return tr("Nodes");
    case DetailsColumn: return tr("Details");
    default: return {};
  }
}

}  // namespace lathe::views
