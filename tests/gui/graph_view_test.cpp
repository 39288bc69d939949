// The graph view on real samples: the clustered layout of every graph of a capture and of a .pt2,
// opened all the way (one box per node but the output, finite coordinates, nodes inside their
// cluster's frame, an edge per input relation), one node selection shared by the graph view, the
// node table and the inspector, and --view screenshots.
#include "gui_support.h"
#include "views/graph_minimap.h"
#include "views/graph_view.h"

#include <QElapsedTimer>
#include <QImage>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "io/artifact.h"
#include "main_window.h"
#include "studio_process.h"
#include "hw/hw_profile.h"
#include "passes/plan_target.h"
#include "views/logic/graph_clusters.h"
#include "views/graph_nodes_model.h"
#include "views/node_inspector.h"

using lathe::ir::NodeId;
using lathe::studio::MainWindow;

namespace {

using lathe::testing::sample;

bool finite(const lathe::views::LayoutRect& rect) {
  return std::isfinite(rect.x) && std::isfinite(rect.y) && std::isfinite(rect.width) && std::isfinite(rect.height) &&
         rect.width > 0 && rect.height > 0;
}

// Lays out every graph of an artifact with every cluster open and every fold unfolded, and checks
// the drawing against the graph: one box per node but the output, inside the bounds, and one edge
// per input relation.
void checkEveryGraph(const QString& path) {
  const auto artifact = lathe::io::loadArtifact(path.toStdString());
  const auto listings = artifact.graphs();
  QVERIFY(!listings.empty());
  for (const auto& listing : listings) {
    const lathe::ir::Graph& graph = *listing.graph;
    QElapsedTimer timer;
    timer.start();
    const lathe::views::ClusterTree tree = lathe::views::buildClusterTree(
        lathe::passes::PlanTarget(artifact, listing.id, lathe::hw::resolveHwProfile(lathe::passes::kDefaultHardware)));
    lathe::views::ExpansionState open;
    open.expanded.assign(tree.clusters.size(), 1);
    open.unfolded.assign(tree.folds.size(), 1);
    lathe::views::LevelCache levels;
    const lathe::views::SceneLayout layout = lathe::views::composeLayout(graph, tree, open, levels);
    qInfo("%s: %zu nodes in %zu clusters laid out in %lld ms", listing.id.c_str(), graph.size(), tree.clusters.size(),
          timer.elapsed());
    QCOMPARE(layout.boxes.size(), size_t{0});
    QCOMPARE(layout.levelsLaidOut, levels.size());

    std::set<NodeId> boxed;
    for (const auto& [node, rect] : layout.nodes) {
      QVERIFY(graph.node(node).kind != lathe::ir::NodeKind::Output);
      QVERIFY(finite(rect));
      QVERIFY(rect.x >= -1 && rect.x + rect.width <= layout.bounds.width + 1);
      QVERIFY(rect.y >= -1 && rect.y + rect.height <= layout.bounds.height + 1);
      QVERIFY(boxed.insert(node).second);
    }
    for (const auto& frame : layout.frames) {
      QVERIFY(finite(frame.rect));
      // A node of the cluster lies inside the cluster's frame.
      const auto& members = tree.clusters[static_cast<size_t>(frame.cluster)].subtree;
      const NodeId member = members.front();
      const auto found = std::find_if(layout.nodes.begin(), layout.nodes.end(),
                                      [&](const auto& entry) { return entry.first == member; });
      QVERIFY(found != layout.nodes.end());
      QVERIFY(found->second.x >= frame.rect.x && found->second.y >= frame.rect.y);
      QVERIFY(found->second.x + found->second.width <= frame.rect.x + frame.rect.width + 0.01);
      QVERIFY(found->second.y + found->second.height <= frame.rect.y + frame.rect.height + 0.01);
    }
    size_t nonOutput = 0;
    std::set<std::pair<NodeId, NodeId>> relations;
    for (NodeId id = 0; id < graph.size(); ++id) {
      if (graph.node(id).kind == lathe::ir::NodeKind::Output) continue;
      ++nonOutput;
      for (const NodeId input : graph.inputs(id)) relations.emplace(input, id);
    }
    QCOMPARE(layout.nodes.size(), nonOutput);
    std::set<std::pair<NodeId, NodeId>> drawn;
    for (const auto& edge : layout.edges) {
      QVERIFY(edge.from.kind == lathe::views::Shown::Kind::Node && edge.to.kind == lathe::views::Shown::Kind::Node);
      QVERIFY(std::isfinite(edge.start.x) && std::isfinite(edge.start.y));
      QVERIFY(std::isfinite(edge.end.x) && std::isfinite(edge.end.y));
      drawn.emplace(edge.from.index, edge.to.index);
    }
    QCOMPARE(drawn, relations);
  }
}

}  // namespace

class GraphViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void layoutOfEveryCaptureGraph() { checkEveryGraph(sample("captures/llama3_8b_2l_tiny_train.log.gz")); }
  void layoutOfExportedProgram() { checkEveryGraph(sample("pt2/gpt2_tiny.pt2")); }
  void selectionIsShared();
  void graphScreenshotDiffersFromNodes();
  void minimapShowsAndMovesTheView();
};

void GraphViewTest::selectionIsShared() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  lathe::views::GraphView* view = window.graphView();
  QSignalSpy shown(view, &lathe::views::GraphView::layoutShown);
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  window.openPath(sample("pt2/gpt2_tiny.pt2"));
  QVERIFY(loaded.wait(60000));
  QVERIFY(loaded.first().first().toBool());
  if (view->isLayingOut()) QVERIFY(shown.wait(120000));
  QVERIFY(view->layout() != nullptr);

  auto* table = window.findChild<QTableView*>(QStringLiteral("nodesTable"));
  auto* proxy = qobject_cast<QSortFilterProxyModel*>(table->model());
  auto* nodes = qobject_cast<lathe::views::GraphNodesModel*>(proxy->sourceModel());
  auto* inspector = window.findChild<lathe::views::NodeInspector*>();
  auto tableNode = [&] { return nodes->nodeAt(proxy->mapToSource(table->currentIndex())); };
  // The preferred node chosen at load is selected in all three.
  QVERIFY(tableNode() != lathe::ir::kNoNode);
  QCOMPARE(view->selectedNode(), tableNode());
  QCOMPARE(inspector->node(), tableNode());

  // A click on a box in the view selects that node in the table and the inspector.
  NodeId clicked = lathe::ir::kNoNode;
  for (auto it = view->layout()->nodes.rbegin(); it != view->layout()->nodes.rend() && clicked == lathe::ir::kNoNode; ++it)
    if (it->first != tableNode()) clicked = it->first;
  QVERIFY(clicked != lathe::ir::kNoNode);
  view->centerOn(view->nodeCentre(clicked));
  QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->mapFromScene(view->nodeCentre(clicked)));
  QCOMPARE(view->selectedNode(), clicked);
  QCOMPARE(tableNode(), clicked);
  QCOMPARE(inspector->node(), clicked);

  // Selecting a row selects and centres the box.
  const NodeId chosen = view->layout()->nodes.front().first;
  table->setCurrentIndex(proxy->mapFromSource(nodes->indexOfNode(chosen)));
  QCOMPARE(view->selectedNode(), chosen);
  QCOMPARE(inspector->node(), chosen);
  const QPoint centre = view->mapFromScene(view->nodeCentre(chosen));
  QVERIFY(view->viewport()->rect().contains(centre));
  QCOMPARE(view->scene()->selectedItems().size(), 1);

  // Following a link in the inspector moves the selection in the view too.
  const auto& graph = *nodes->graph();
  NodeId withUser = lathe::ir::kNoNode;
  for (NodeId id = 0; id < graph.size() && withUser == lathe::ir::kNoNode; ++id) {
    if (id != chosen && !graph.users(id).empty()) withUser = id;
  }
  QVERIFY(withUser != lathe::ir::kNoNode);
  emit inspector->nodeActivated(withUser);
  QCOMPARE(view->selectedNode(), withUser);
  QCOMPARE(tableNode(), withUser);
}

void GraphViewTest::graphScreenshotDiffersFromNodes() {
  QTemporaryDir dir;
  std::map<QString, QImage> pictures;
  for (const QString& view : {QStringLiteral("graph"), QStringLiteral("nodes")}) {
    const QString png = dir.filePath(view + QStringLiteral(".png"));
    const lathe::testing::StudioRun run =
        lathe::testing::runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), view}, 120000);
    QCOMPARE(run.exitCode, 0);
    const QImage image(png);
    QCOMPARE(image.size(), QSize(1600, 1000));
    const QString wrong = lathe::testing::wrongView(run, image, view);
    QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
    pictures[view] = image;
  }
  QVERIFY(lathe::testing::distinctColours(pictures[QStringLiteral("graph")]) > 20);
  QVERIFY(pictures[QStringLiteral("graph")] != pictures[QStringLiteral("nodes")]);
}

// gpt2's joint graph (2605 nodes) does not fit the window at a readable zoom: the minimap shows the
// whole of it with the part on show framed, a click on it moves the view there, and it goes away
// once everything is in view.
void GraphViewTest::minimapShowsAndMovesTheView() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.resize(1600, 1000);
  window.show();
  lathe::views::GraphView* view = window.graphView();
  QSignalSpy shown(view, &lathe::views::GraphView::layoutShown);
  QSignalSpy loaded(&window, &MainWindow::loadFinished);
  window.openPath(sample("captures/gpt2_train.log.gz"));
  QVERIFY(loaded.wait(60000) && loaded.first().first().toBool());
  QVERIFY(window.selectGraph(QStringLiteral("1/0_1:aot_joint_graph")));
  window.showCentralView(MainWindow::CentralView::Graph);
  QVERIFY(lathe::testing::waitUntil([&] { return !view->isLayingOut() && view->layout() != nullptr; }));
  view->fitToWindow();
  lathe::views::GraphMinimap* minimap = view->minimap();
  QTRY_VERIFY(minimap->isVisible());
  QVERIFY(minimap->width() <= lathe::views::GraphMinimap::kMaxWidth + 2 && minimap->height() <= lathe::views::GraphMinimap::kMaxHeight + 2);
  const QRectF before = minimap->shownSceneRect();
  QCOMPARE(before, view->mapToScene(view->viewport()->rect()).boundingRect());

  // A click near the map's bottom brings the end of the graph (the backward) into view.
  const QRectF scene = view->scene()->itemsBoundingRect();
  const QPointF target(scene.center().x(), scene.bottom() - scene.height() * 0.1);
  QTest::mouseClick(minimap, Qt::LeftButton, {}, minimap->mapFromScene(target).toPoint());
  const QPointF centre = view->mapToScene(view->viewport()->rect().center());
  const QRectF after = minimap->shownSceneRect();
  QVERIFY2(after.center().y() > before.center().y() + scene.height() * 0.5,
           qPrintable(QStringLiteral("%1 -> %2 of %3").arg(before.center().y()).arg(after.center().y()).arg(scene.height())));
  QVERIFY2(std::abs(centre.y() - target.y()) < after.height() / 2 + 1, qPrintable(QStringLiteral("%1 %2").arg(centre.y()).arg(target.y())));

  // All of it in view: no map.
  view->resetTransform();
  view->scale(0.01, 0.01);
  view->centerOn(scene.center());
  const QRectF all = minimap->shownSceneRect();
  QVERIFY(all.contains(scene));
  QTRY_VERIFY(!minimap->isVisible());
}

QTEST_MAIN(GraphViewTest)
#include "graph_view_test.moc"
