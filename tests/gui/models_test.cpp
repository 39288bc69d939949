// Item models under QAbstractItemModelTester on every capture and .pt2 sample, plus what they must
// show: one tree item per graph, one row per node, byte sizes that sort as numbers.
#include <QAbstractItemModelTester>
#include <QDir>
#include <QDirIterator>
#include <QSortFilterProxyModel>
#include <QTest>

#include "io/artifact.h"
#include "views/artifact_tree_model.h"
#include "views/diagnostics_model.h"
#include "views/graph_nodes_model.h"

using lathe::views::ArtifactTreeModel;
using lathe::views::GraphNodesModel;

namespace {

QString samplesDir() {
  return QString::fromUtf8(LATHE_SAMPLES_DIR);
}

// Every graph item of the tree, depth first.
void collectGraphItems(const ArtifactTreeModel& model, const QModelIndex& parent, QModelIndexList& out) {
  for (int row = 0; row < model.rowCount(parent); ++row) {
    const QModelIndex index = model.index(row, 0, parent);
    if (model.data(index, ArtifactTreeModel::kItemKindRole).toInt() ==
        static_cast<int>(ArtifactTreeModel::ItemKind::Graph)) {
      out << index;
    }
    collectGraphItems(model, index, out);
  }
}

}  // namespace

class ModelsTest : public QObject {
  Q_OBJECT

 private slots:
  void samples_data();
  void samples();
  void diagnostics();
};

void ModelsTest::samples_data() {
  QTest::addColumn<QString>("path");
  const QDir captures(samplesDir() + QStringLiteral("/captures"));
  // Each capture: the .gz files and the directory of FSDP rank logs.
  for (const QFileInfo& entry : captures.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
    QTest::newRow(qPrintable(entry.fileName())) << entry.filePath();
  }
  QDirIterator pt2(samplesDir() + QStringLiteral("/pt2"), {QStringLiteral("*.pt2")}, QDir::Files,
                   QDirIterator::Subdirectories);
  while (pt2.hasNext()) {
    const QString path = pt2.next();
    QTest::newRow(qPrintable(QDir(samplesDir()).relativeFilePath(path))) << path;
  }
}

void ModelsTest::samples() {
  QFETCH(QString, path);
  auto artifact = std::make_shared<const lathe::io::Artifact>(lathe::io::loadArtifact(path.toStdString()));
  const std::vector<lathe::io::GraphListing> listings = artifact->graphs();
  QVERIFY(!listings.empty());

  ArtifactTreeModel tree;
  QAbstractItemModelTester treeTester(&tree, QAbstractItemModelTester::FailureReportingMode::QtTest);
  tree.setArtifact(artifact);
  QCOMPARE(tree.graphCount(), static_cast<int>(listings.size()));

  QModelIndexList graphItems;
  collectGraphItems(tree, {}, graphItems);
  QCOMPARE(graphItems.size(), static_cast<qsizetype>(listings.size()));
  for (const QModelIndex& index : graphItems) {
    const QString id = tree.graphIdAt(index);
    QCOMPARE(tree.indexOfGraph(id), index);
    QCOMPARE(tree.data(index, ArtifactTreeModel::kGraphIdRole).toString(), id);
  }
  // Nested subgraphs sit under their parent graph.
  for (const auto& listing : listings) {
    if (listing.parent.empty()) continue;
    const QModelIndex index = tree.indexOfGraph(QString::fromStdString(listing.id));
    QCOMPARE(tree.graphIdAt(index.parent()), QString::fromStdString(listing.parent));
  }
  const bool hasJoint = std::any_of(listings.begin(), listings.end(), [](const auto& listing) {
    return listing.kind.find("joint") != std::string::npos;
  });
  const QModelIndex preferred = tree.preferredGraphIndex();
  QVERIFY(preferred.isValid());
  QCOMPARE(tree.graphIdAt(preferred).contains(QStringLiteral("joint")), hasJoint);

  GraphNodesModel nodes;
  QAbstractItemModelTester nodesTester(&nodes, QAbstractItemModelTester::FailureReportingMode::QtTest);
  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&nodes);
  proxy.setSortRole(GraphNodesModel::kSortRole);
  proxy.setFilterKeyColumn(-1);
  QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
  for (const auto& listing : listings) {
    const lathe::ir::Graph& graph = *listing.graph;
    nodes.setGraph(listing.graph, QString::fromStdString(listing.id));
    QCOMPARE(nodes.rowCount(), static_cast<int>(graph.size()));
    uint64_t largest = 0;
    for (lathe::ir::NodeId id = 0; id < graph.size(); ++id) {
      const auto& meta = graph.node(id).meta;
      if (meta.isTensor()) largest = std::max(largest, meta.storageBytes());
    }
    proxy.setFilterFixedString({});
    proxy.sort(GraphNodesModel::BytesColumn, Qt::DescendingOrder);
    QCOMPARE(proxy.data(proxy.index(0, GraphNodesModel::BytesColumn), GraphNodesModel::kSortRole).toULongLong(),
             largest);
    // Filtering by a node's name keeps that node.
    const lathe::ir::NodeId last = static_cast<lathe::ir::NodeId>(graph.size() - 1);
    proxy.setFilterFixedString(QString::fromUtf8(graph.name(last).data(), graph.name(last).size()));
    QVERIFY(proxy.mapFromSource(nodes.indexOfNode(last)).isValid());
    QVERIFY(proxy.rowCount() <= nodes.rowCount());
  }
}

void ModelsTest::diagnostics() {
  lathe::views::DiagnosticsModel model;
  QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
  const QString path = samplesDir() + QStringLiteral("/tlparse/simple_corrupted_json.log");
  const auto artifact = lathe::io::loadArtifact(path.toStdString());
  const lathe::Diagnostics& diagnostics = artifact.diagnostics();
  QVERIFY(!diagnostics.empty());
  model.setDiagnostics(diagnostics);
  QCOMPARE(model.rowCount(), static_cast<int>(diagnostics.size()));
  QCOMPARE(model.count(lathe::Severity::Warning), diagnostics.count(lathe::Severity::Warning));
  QVERIFY(model.data(model.index(0, lathe::views::DiagnosticsModel::LocationColumn))
              .toString()
              .contains(QStringLiteral("simple_corrupted_json.log:")));
  model.setLoadError(QStringLiteral("unreadable"), {});
  QCOMPARE(model.rowCount(), 1);
  QCOMPARE(model.count(lathe::Severity::Error), size_t{1});
}

QTEST_MAIN(ModelsTest)
#include "models_test.moc"
