// The artifact tree: artifact -> compiles (id, status) -> graphs (kind, nodes; nested subgraphs
// under their parent) and guards, plus the loader's diagnostics. Works for TORCH_TRACE logs (one
// or many ranks), .pt2 archives and memory snapshots.
#pragma once

#include <QAbstractItemModel>
#include <memory>
#include <vector>

#include "io/artifact.h"

namespace lathe::views {

class ArtifactTreeModel : public QAbstractItemModel {
  Q_OBJECT

 public:
  enum class ItemKind { Artifact, Compile, Graph, Guards, Diagnostics, Snapshot, Code };
  enum Column { NameColumn, NodesColumn, DetailsColumn, ColumnCount };
  static constexpr int kItemKindRole = Qt::UserRole;  // int(ItemKind)
  static constexpr int kGraphIdRole = Qt::UserRole + 1;
  // Compile, guards and code items: index into the trace's compiles.
  static constexpr int kCompileIndexRole = Qt::UserRole + 2;
  // Code items: index into the trace's events of the event whose payload is the code.
  static constexpr int kCodeEventRole = Qt::UserRole + 3;
  // Code items: id of the graph whose nodes the code names (the post-grad graph Inductor compiled).
  static constexpr int kCodeGraphRole = Qt::UserRole + 4;

  explicit ArtifactTreeModel(QObject* parent = nullptr);
  ~ArtifactTreeModel() override;

  void setArtifact(std::shared_ptr<const io::Artifact> artifact);
  void clear();
  [[nodiscard]] const std::shared_ptr<const io::Artifact>& artifact() const { return artifact_; }

  // The graph of a graph item, nullptr for other items.
  [[nodiscard]] std::shared_ptr<const ir::Graph> graphAt(const QModelIndex& index) const;
  [[nodiscard]] QString graphIdAt(const QModelIndex& index) const;
  [[nodiscard]] QModelIndex indexOfGraph(const QString& graphId) const;
  // The first item of a kind, depth first; invalid when there is none.
  [[nodiscard]] QModelIndex firstIndexOf(ItemKind kind) const;
  // What a user most likely looks at first: a run folder's lathe_joint_graph (the graph the runtime
  // planned), else the first joint graph, else the first graph.
  [[nodiscard]] QModelIndex preferredGraphIndex() const;
  [[nodiscard]] int graphCount() const { return static_cast<int>(graphItems_.size()); }

  [[nodiscard]] QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
  [[nodiscard]] QModelIndex parent(const QModelIndex& child) const override;
  [[nodiscard]] int rowCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] int columnCount(const QModelIndex& parent = {}) const override;
  [[nodiscard]] QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  [[nodiscard]] QVariant headerData(int section, Qt::Orientation orientation,
                                    int role = Qt::DisplayRole) const override;

 private:
  struct Item;
  void build();
  Item* itemAt(const QModelIndex& index) const;
  QModelIndex indexOfItem(const Item* item) const;

  std::shared_ptr<const io::Artifact> artifact_;
  std::unique_ptr<Item> root_;
  std::vector<const Item*> graphItems_;  // in artifact order
};

}  // namespace lathe::views
