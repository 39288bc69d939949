// The graph view's clusters on real samples and on a 100k-node synthetic decoder: the four layers
// of llama3_8b_4l_train's joint graph fold into one "× 4" box (forward and backward), expanding a
// cluster lays out only the levels around it, a search jump opens the layer that hides its match,
// every overlay colours every drawn node with a colour its legend lists, exported SVG and PNG
// files read back, and a graph without module paths is cut into runs that open one at a time.
#include "gui_support.h"
#include "views/logic/graph_clusters.h"

#include <QImage>
#include <QPainter>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "../../bench/gui/synthetic_graph.h"
#include "hw/hw_profile.h"
#include "io/artifact.h"
#include "main_window.h"
#include "passes/plan_target.h"
#include "studio_process.h"
#include "views/graph_view.h"
#include "views/plan_session.h"

using lathe::ir::NodeId;
using lathe::views::GraphView;
using lathe::views::Shown;

namespace {

using lathe::testing::sample;

constexpr int kLayoutTimeoutMs = 120000;

// Clusters read no hardware; the targets here are on the studio's default one.
std::shared_ptr<const lathe::passes::PlanTarget> targetOf(std::shared_ptr<const lathe::ir::Graph> graph) {
  return std::make_shared<const lathe::passes::PlanTarget>(std::move(graph), "synthetic",
                                                           lathe::hw::resolveHwProfile(lathe::passes::kDefaultHardware));
}

struct JointSample {
  std::shared_ptr<const lathe::passes::PlanTarget> target;
  std::shared_ptr<const lathe::ir::Graph> graph;
};

// The 4-layer Llama capture's joint graph.
JointSample llamaJoint() {
  JointSample joint;
  joint.target = std::make_shared<const lathe::passes::PlanTarget>(
      lathe::io::loadArtifact(sample("captures/llama3_8b_4l_train.log.gz").toStdString()), "0/0:aot_joint_graph",
      lathe::hw::resolveHwProfile(lathe::passes::kDefaultHardware));
  joint.graph = joint.target->sharedGraph();
  return joint;
}

// Waits until the view shows a layout for the state it holds now.
bool waitForLayout(GraphView& view) {
  QSignalSpy shown(&view, &GraphView::layoutShown);
  while (view.isLayingOut()) {
    if (!shown.wait(kLayoutTimeoutMs)) return false;
  }
  return view.layout() != nullptr;
}

const lathe::views::ClusterBox* boxTitled(const lathe::views::SceneLayout& layout, const std::string& title) {
  for (const auto& box : layout.boxes) {
    if (box.title == title) return &box;
  }
  return nullptr;
}

bool drawn(const GraphView& view, NodeId node) {
  const auto& nodes = view.layout()->nodes;
  return std::any_of(nodes.begin(), nodes.end(), [&](const auto& entry) { return entry.first == node; });
}

}  // namespace

class GraphClustersTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void llamaLayersFoldIntoOneBox();
  void expandAndCollapse();
  void searchJumpOpensTheLayer();
  void overlaysColourEveryDrawnNode();
  void exportWritesReadableFiles();
  void syntheticHundredThousandNodesLayOut();
  void flatGraphIsCutIntoRuns();
};

void GraphClustersTest::llamaLayersFoldIntoOneBox() {
  const JointSample joint = llamaJoint();
  QVERIFY(joint.graph);
  const lathe::views::ClusterTree tree = lathe::views::buildClusterTree(*joint.target);
  // The Dynamo graph's names make the AOT primals parameters (the joint graph alone says user input).
  QCOMPARE(static_cast<int>(std::count(tree.role.begin(), tree.role.end(), lathe::ir::Role::Parameter)), 39);
  // One fold of the four layers in the forward, one in the backward cluster.
  QCOMPARE(tree.folds.size(), size_t{2});
  for (const auto& fold : tree.folds) {
    QCOMPARE(fold.title, std::string("model.layers \u00d7 4"));
    QCOMPARE(fold.members.size(), size_t{4});
    std::set<std::string> paths;
    for (const int member : fold.members) paths.insert(tree.clusters[static_cast<size_t>(member)].path);
    QCOMPARE(paths, (std::set<std::string>{"model.layers.0", "model.layers.1", "model.layers.2", "model.layers.3"}));
  }
  QVERIFY(tree.folds[0].parent != tree.folds[1].parent);

  // Folded by default: the drawing has both fold boxes and far fewer boxes than the graph nodes.
  const lathe::views::ExpansionState state = lathe::views::defaultExpansion(tree);
  lathe::views::LevelCache levels;
  const lathe::views::SceneLayout layout = lathe::views::composeLayout(*joint.graph, tree, state, levels);
  size_t folds = 0;
  for (const auto& box : layout.boxes) folds += box.what.kind == Shown::Kind::Fold ? 1 : 0;
  QCOMPARE(folds, size_t{2});
  QVERIFY(layout.nodes.size() < joint.graph->size() / 3);
  QVERIFY(boxTitled(layout, "model.layers \u00d7 4") != nullptr);
}

void GraphClustersTest::expandAndCollapse() {
  const JointSample joint = llamaJoint();
  GraphView view;
  view.resize(1400, 900);
  view.show();
  view.setGraph(joint.target);
  QVERIFY(waitForLayout(view));
  const lathe::views::ClusterTree& tree = *view.clusters();
  const size_t nodesFolded = view.layout()->nodes.size();

  // Double-click on the first fold box unfolds it: its four layers appear as boxes.
  const auto* foldBox = boxTitled(*view.layout(), "model.layers \u00d7 4");
  QVERIFY(foldBox);
  const int fold = static_cast<int>(foldBox->what.index);
  const QPointF foldCentre(foldBox->rect.x + 10, foldBox->rect.y + 10);
  view.centerOn(foldCentre);
  QTest::mouseDClick(view.viewport(), Qt::LeftButton, {}, view.mapFromScene(foldCentre));
  QVERIFY(view.expansion().unfolded[static_cast<size_t>(fold)]);
  QVERIFY(waitForLayout(view));
  const int layer = tree.folds[static_cast<size_t>(fold)].members[2];
  QVERIFY(boxTitled(*view.layout(), "model.layers.2") != nullptr);
  QVERIFY(boxTitled(*view.layout(), "model.layers \u00d7 4") != nullptr);  // the backward's fold stays

  // Expanding one layer draws its nodes and lays out only its own level and those around it.
  view.toggleCluster(layer);
  QVERIFY(waitForLayout(view));
  const NodeId inside = tree.clusters[static_cast<size_t>(layer)].subtree.front();
  QVERIFY(drawn(view, inside));
  QVERIFY(view.layout()->nodes.size() > nodesFolded);
  QVERIFY(view.layout()->levelsLaidOut <= static_cast<size_t>(tree.clusters[static_cast<size_t>(layer)].depth) + 1);
  const auto& frames = view.layout()->frames;
  QVERIFY(std::any_of(frames.begin(), frames.end(), [&](const auto& frame) { return frame.cluster == layer; }));

  // Expanding a second layer keeps the first one's level: only the enclosing level is laid out anew.
  const int other = tree.folds[static_cast<size_t>(fold)].members[1];
  view.toggleCluster(other);
  QVERIFY(waitForLayout(view));
  QVERIFY(drawn(view, inside));
  QVERIFY(drawn(view, tree.clusters[static_cast<size_t>(other)].subtree.front()));
  QCOMPARE(view.layout()->levelsLaidOut, size_t{2});  // the second layer's inside and the top level

  // Closing both: the layer disappears into its box, and closing the last open layer folds them again.
  view.toggleCluster(layer);
  QVERIFY(waitForLayout(view));
  QVERIFY(!drawn(view, inside));
  QVERIFY(boxTitled(*view.layout(), "model.layers.2") != nullptr);
  view.toggleCluster(other);
  QVERIFY(waitForLayout(view));
  QVERIFY(!view.expansion().unfolded[static_cast<size_t>(fold)]);
  QVERIFY(boxTitled(*view.layout(), "model.layers.2") == nullptr);

  // "Fold all" restores the default drawing.
  view.resetExpansion();
  QVERIFY(waitForLayout(view));
  QCOMPARE(view.layout()->nodes.size(), nodesFolded);
}

void GraphClustersTest::searchJumpOpensTheLayer() {
  const JointSample joint = llamaJoint();
  GraphView view;
  view.resize(1400, 900);
  view.show();
  QSignalSpy selected(&view, &GraphView::nodeSelected);
  view.setGraph(joint.target);
  QVERIFY(waitForLayout(view));
  const lathe::views::ClusterTree& tree = *view.clusters();
  // An mm of layer 3, hidden in the fold.
  NodeId target = lathe::ir::kNoNode;
  for (const NodeId id : tree.clusters[static_cast<size_t>(tree.folds[0].members[3])].subtree) {
    if (joint.graph->target(id) == "torch.ops.aten.mm.default") {
      target = id;
      break;
    }
  }
  QVERIFY(target != lathe::ir::kNoNode);
  QVERIFY(!drawn(view, target));

  view.setSearchText(QString::fromUtf8(joint.graph->name(target)));
  QVERIFY(!view.searchMatches().empty());
  const auto position = std::find(view.searchMatches().begin(), view.searchMatches().end(), target);
  QVERIFY(position != view.searchMatches().end());
  const int wanted = static_cast<int>(position - view.searchMatches().begin());
  for (int jump = 0; jump <= wanted; ++jump) view.findNext();
  QCOMPARE(view.currentMatch(), wanted);
  QCOMPARE(view.searchStatus(), QStringLiteral("%1 / %2").arg(wanted + 1).arg(view.searchMatches().size()));
  QVERIFY(waitForLayout(view));
  QCOMPARE(view.selectedNode(), target);
  QVERIFY(drawn(view, target));
  QVERIFY(view.expansion().expanded[static_cast<size_t>(tree.clusterOf[target])]);
  QCOMPARE(selected.last().first().value<NodeId>(), target);
  // Centred: its box is in the viewport.
  QVERIFY(view.viewport()->rect().contains(view.mapFromScene(view.nodeCentre(target))));
  QCOMPARE(view.scene()->selectedItems().size(), 1);

  // F3 moves on, Shift+F3 comes back.
  view.setSearchText(QStringLiteral("mm"));
  QVERIFY(view.searchMatches().size() > 2);
  view.findNext();
  view.findNext();
  QCOMPARE(view.currentMatch(), 1);
  view.findPrevious();
  QCOMPARE(view.currentMatch(), 0);
  view.findPrevious();
  QCOMPARE(view.currentMatch(), static_cast<int>(view.searchMatches().size()) - 1);
  view.setSearchText(QStringLiteral("no node is called this"));
  QCOMPARE(view.searchStatus(), QStringLiteral("no match"));
}

void GraphClustersTest::overlaysColourEveryDrawnNode() {
  lathe::studio::MainWindow window(lathe::studio::MainWindow::Options{.useSettings = false});
  window.show();
  GraphView* view = window.graphView();
  QSignalSpy loaded(&window, &lathe::studio::MainWindow::loadFinished);
  QSignalSpy planned(window.planSession(), &lathe::views::PlanSession::finished);
  window.openPath(sample("captures/llama3_8b_2l_tiny_train.log.gz"));
  QVERIFY(loaded.wait(60000));
  QVERIFY(waitForLayout(*view));
  if (planned.isEmpty()) QVERIFY(planned.wait(kLayoutTimeoutMs));
  while (window.planSession()->busy()) QVERIFY(planned.wait(kLayoutTimeoutMs));
  QVERIFY(window.planSession()->planRun() != nullptr);
  // Open everything so that the plan's saved and recomputed nodes are drawn too.
  for (size_t fold = 0; fold < view->clusters()->folds.size(); ++fold) {
    if (!view->expansion().unfolded[fold]) view->toggleFold(static_cast<int>(fold));
  }
  for (size_t cluster = 1; cluster < view->clusters()->clusters.size(); ++cluster) {
    if (!view->expansion().expanded[cluster]) view->toggleCluster(static_cast<int>(cluster));
  }
  QVERIFY(waitForLayout(*view));
  QVERIFY(view->layout()->boxes.empty());

  using Overlay = GraphView::Overlay;
  for (const Overlay overlay : {Overlay::Category, Overlay::Role, Overlay::FusionGroup, Overlay::Recompute,
                                Overlay::OffloadUnit, Overlay::Size, Overlay::Time}) {
    view->setOverlay(overlay);
    std::set<QRgb> colours;
    for (const auto& [node, rect] : view->layout()->nodes) {
      const QColor fill = view->nodeFill(node);
      QVERIFY(fill.isValid());
      colours.insert(fill.rgb());
    }
    QVERIFY2(colours.size() >= 3, qPrintable(QStringLiteral("overlay %1").arg(static_cast<int>(overlay))));
    QVERIFY(!view->legendEntries().empty());
    // Discrete overlays: every colour on screen is in the legend.
    if (overlay != Overlay::Size && overlay != Overlay::Time && overlay != Overlay::FusionGroup &&
        overlay != Overlay::OffloadUnit) {
      std::set<QRgb> legend;
      for (const auto& entry : view->legendEntries()) legend.insert(entry.first.rgb());
      for (const QRgb colour : colours) QVERIFY(legend.contains(colour));
    }
  }
}

void GraphClustersTest::exportWritesReadableFiles() {
  const JointSample joint = llamaJoint();
  GraphView view;
  view.resize(1400, 900);
  view.show();
  view.setGraph(joint.target);
  QVERIFY(waitForLayout(view));
  QTemporaryDir dir;
  const QString svgPath = dir.filePath(QStringLiteral("graph.svg"));
  QString error;
  QVERIFY2(view.exportView(svgPath, &error), qPrintable(error));
  QSvgRenderer svg(svgPath);
  QVERIFY(svg.isValid());
  QImage rendered(400, 800, QImage::Format_ARGB32);
  rendered.fill(Qt::transparent);
  {
    QPainter painter(&rendered);
    svg.render(&painter);
  }
  QSet<QRgb> svgColours;
  for (int y = 0; y < rendered.height(); y += 5) {
    for (int x = 0; x < rendered.width(); x += 5) svgColours.insert(rendered.pixel(x, y));
  }
  QVERIFY(svgColours.size() > 10);

  const QString pngPath = dir.filePath(QStringLiteral("graph.png"));
  QVERIFY2(view.exportView(pngPath, &error), qPrintable(error));
  const QImage png(pngPath);
  QVERIFY(!png.isNull());
  const QSizeF scene = view.scene()->sceneRect().size();
  QVERIFY(std::abs(png.width() - scene.width()) <= 1 && std::abs(png.height() - scene.height()) <= 1);
  QVERIFY(lathe::testing::distinctColours(png) > 10);
  QVERIFY(!view.exportView(dir.filePath(QStringLiteral("graph.bmp")), &error));
  QVERIFY(!error.isEmpty());
}

void GraphClustersTest::syntheticHundredThousandNodesLayOut() {
  const auto graph = lathe::bench::SyntheticDecoder::build(99, 64);
  QVERIFY(graph->size() >= 100000);
  GraphView view;
  view.resize(1400, 900);
  view.show();
  view.setGraph(targetOf(graph));
  QVERIFY(waitForLayout(view));
  const lathe::views::ClusterTree& tree = *view.clusters();
  QVERIFY(boxTitled(*view.layout(), "model.layers \u00d7 99") != nullptr);
  QVERIFY(view.layout()->nodes.size() < 300);
  // Inside a layer, the 64 experts fold too.
  QCOMPARE(tree.folds.front().members.size(), size_t{99});
  const bool expertsFold = std::any_of(tree.folds.begin(), tree.folds.end(), [](const auto& fold) {
    return fold.members.size() == 64 && fold.title.ends_with("experts \u00d7 64");
  });
  QVERIFY(expertsFold);
}

void GraphClustersTest::flatGraphIsCutIntoRuns() {
  // A chain of 4000 adds with no module path: eight runs of 500 nodes, drawn as eight boxes.
  const auto built = std::make_shared<lathe::ir::Graph>();
  lathe::ir::Graph& graph = *built;
  lathe::ir::Node input;
  input.kind = lathe::ir::NodeKind::Placeholder;
  input.name = graph.intern("x");
  NodeId last = graph.addNode(std::move(input));
  for (int i = 0; i < 3999; ++i) {
    lathe::ir::Node add;
    add.name = graph.intern("add_" + std::to_string(i));
    add.target = graph.intern("torch.ops.aten.add.Tensor");
    add.args = {lathe::ir::Arg::ofNode(last), lathe::ir::Arg::ofNode(last)};
    last = graph.addNode(std::move(add));
  }
  lathe::ir::Node output;
  output.kind = lathe::ir::NodeKind::Output;
  output.name = graph.intern("output");
  output.args = {lathe::ir::Arg::ofNode(last)};
  graph.addNode(std::move(output));
  graph.finalize();

  const lathe::views::ClusterTree tree =
      lathe::views::buildClusterTree(*targetOf(built));
  QCOMPARE(tree.clusters.size(), size_t{9});
  QVERIFY(tree.clusters[lathe::views::kRootCluster].nodes.empty());
  QCOMPARE(tree.clusters[1].title, std::string("x \u2026 add_498"));
  QVERIFY(tree.folds.empty());
  lathe::views::ExpansionState state = lathe::views::defaultExpansion(tree);
  lathe::views::LevelCache levels;
  lathe::views::SceneLayout layout = lathe::views::composeLayout(graph, tree, state, levels);
  QCOMPARE(layout.boxes.size(), size_t{8});
  QCOMPARE(layout.edges.size(), size_t{7});
  // Opening one run draws its 500 nodes, joined to the runs before and after it.
  state.expanded[3] = 1;
  lathe::views::invalidateAround(tree, 3, levels);
  layout = lathe::views::composeLayout(graph, tree, state, levels);
  QCOMPARE(layout.nodes.size(), size_t{500});
  QCOMPARE(layout.levelsLaidOut, size_t{2});
  QCOMPARE(layout.edges.size(), size_t{5 + 2 + 499});
}

QTEST_MAIN(GraphClustersTest)
#include "graph_clusters_test.moc"
