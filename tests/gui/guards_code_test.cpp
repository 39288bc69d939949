// The guards view, the code view and the one selection across graph stages, on real captures: guard
// models under QAbstractItemModelTester for every capture with guards, search that keeps ancestors,
// recompile reasons that highlight the guard they broke, the diff against io's, selection that
// follows a switch from the joint to the forward graph, go-to-node from output code, and the
// --view guards screenshot.
#include <QAbstractItemModelTester>
#include <QDir>
#include <QImage>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextLayout>
#include <QTreeView>
#include <QUrl>
#include <functional>

#include "gui_support.h"
#include "io/artifact.h"
#include "io/guards/guards.h"
#include "main_window.h"
#include "studio_process.h"
#include "views/artifact_tree_model.h"
#include "views/code_view.h"
#include "views/guard_diff_model.h"
#include "views/guard_tree_model.h"
#include "views/guards_view.h"
#include "views/node_inspector.h"

using lathe::studio::MainWindow;
using lathe::views::ArtifactTreeModel;
using lathe::views::GuardsView;
using lathe::views::GuardTreeModel;

namespace {

using lathe::testing::sample;

std::shared_ptr<const lathe::io::Artifact> load(const QString& path) {
  return std::make_shared<const lathe::io::Artifact>(lathe::io::loadArtifact(path.toStdString()));
}

int compileIndex(const lathe::io::Artifact& artifact, const char* id) {
  const lathe::io::TraceCompile* compile = artifact.trace->findCompile(id);
  return compile ? static_cast<int>(compile - artifact.trace->compiles.data()) : -1;
}

lathe::io::GuardTree parseGuards(const lathe::io::Artifact& artifact, const char* id) {
  const lathe::io::TraceLog& log = *artifact.trace;
  lathe::Diagnostics ignored;
  return lathe::io::parseCppGuards(log.guards(*log.findCompile(id)), {}, ignored);
}

// Rows under `parent`, all depths.
int countRows(const QAbstractItemModel& model, const QModelIndex& parent = {}) {
  int rows = 0;
  for (int row = 0; row < model.rowCount(parent); ++row) rows += 1 + countRows(model, model.index(row, 0, parent));
  return rows;
}

bool rowMatches(const QAbstractItemModel& model, const QModelIndex& index, const QString& text) {
  for (int column = 0; column < model.columnCount(index.parent()); ++column) {
    if (model.index(index.row(), column, index.parent()).data().toString().contains(text, Qt::CaseInsensitive))
      return true;
  }
  return false;
}

// Whether every row shown matches or has a shown descendant that does (so it is there as an ancestor).
bool everyRowMatchesOrHoldsAMatch(const QAbstractItemModel& model, const QString& text, const QModelIndex& parent,
                                  int& ancestorsKept) {
  bool all = true;
  for (int row = 0; row < model.rowCount(parent); ++row) {
    const QModelIndex index = model.index(row, 0, parent);
    if (rowMatches(model, index, text)) continue;
    if (model.rowCount(index) == 0) all = false;
    ++ancestorsKept;
    all = everyRowMatchesOrHoldsAMatch(model, text, index, ancestorsKept) && all;
  }
  return all;
}

bool openAndWait(MainWindow& window, const QString& path) {
  QSignalSpy spy(&window, &MainWindow::loadFinished);
  window.openPath(path);
  if (!spy.wait(60000)) return false;
  return spy.first().first().toBool();
}

QString selectedName(MainWindow& window, const lathe::ir::Graph& graph) {
  const lathe::ir::NodeId node = window.selectedNode();
  return node < graph.size() ? QString::fromStdString(std::string(graph.name(node))) : QString();
}

std::shared_ptr<const lathe::ir::Graph> graphOf(MainWindow& window, const QString& id) {
  auto* tree = window.findChild<QTreeView*>(QStringLiteral("artifactTree"));
  auto* model = qobject_cast<ArtifactTreeModel*>(tree->model());
  return model->graphAt(model->indexOfGraph(id));
}

}  // namespace

class GuardsCodeTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void guardModelOnEveryCapture_data();
  void guardModelOnEveryCapture();
  void searchKeepsAncestors();
  void recompileReasonHighlightsTheGuard();
  void diffMatchesIo();
  void selectionFollowsTheStage();
  void inspectorLinksSwitchGraph();
  void outputCodeGoesToNode();
  void fxTextGoesToNodeAndSearches();
  void highlightsPythonAndCpp();
  void guardsScreenshot();
};

void GuardsCodeTest::guardModelOnEveryCapture_data() {
  QTest::addColumn<QString>("path");
  // Our captures and the third-party tlparse logs (files, and folders of rank logs).
  for (const char* folder : {"captures", "tlparse"}) {
    const QDir dir(sample(folder));
    for (const QFileInfo& entry : dir.entryInfoList(QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
      if (entry.suffix() == QStringLiteral("md")) continue;
      QTest::newRow(qPrintable(QStringLiteral("%1/%2").arg(QLatin1String(folder), entry.fileName())))
          << entry.filePath();
    }
  }
}

void GuardsCodeTest::guardModelOnEveryCapture() {
  QFETCH(QString, path);
  std::shared_ptr<const lathe::io::Artifact> artifact;
  // Every entry of these folders is a TORCH_TRACE log Lathe reads: a load error is a failure.
  try {
    artifact = load(path);
  } catch (const lathe::Error& error) {
    QFAIL(error.what());
  }
  QVERIFY2(artifact->trace, "not read as a TORCH_TRACE log");
  GuardsView view;
  QAbstractItemModelTester tester(view.model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  QAbstractItemModelTester proxyTester(view.filtered(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  view.setArtifact(artifact);
  int withGuards = 0;
  for (size_t compile = 0; compile < artifact->trace->compiles.size(); ++compile) {
    if (artifact->trace->compiles[compile].guardFormat == lathe::io::GuardFormat::None) continue;
    QVERIFY(view.showCompile(static_cast<int>(compile)));
    QVERIFY(view.model()->tree());
    // Every guard of the tree is one row of the model.
    QCOMPARE(countRows(*view.model()), static_cast<int>(view.model()->tree()->size()));
    // The counts line leads with the number of guards and names the most frequent type.
    const lathe::io::GuardTree& tree = *view.model()->tree();
    QVERIFY(view.countsText().startsWith(QString::number(tree.leafCount())));
    if (tree.leafCount() > 0) {
      const std::string top = lathe::io::countGuardsByType(tree).front().type;
      QVERIFY(view.countsText().contains(QString::fromStdString(top)));
    }
    ++withGuards;
  }
  if (withGuards == 0) {
    QVERIFY2(!path.contains(QStringLiteral("/captures/")), "every capture of ours logged guards");
    QSKIP("no compile logged guards");
  }
}

void GuardsCodeTest::searchKeepsAncestors() {
  GuardsView view;
  view.setArtifact(load(sample("captures/llama3_8b_2l_tiny_infer.log.gz")));
  const int all = countRows(*view.filtered());
  const QString text = QStringLiteral("input_ids");
  view.setFilterText(text);
  const int shown = countRows(*view.filtered());
  QVERIFY(shown > 0);
  QVERIFY(shown < all / 4);
  int ancestorsKept = 0;
  QVERIFY(everyRowMatchesOrHoldsAMatch(*view.filtered(), text, {}, ancestorsKept));
  QVERIFY(ancestorsKept > 0);  // the root manager, which names no input_ids, stays above its matches
  view.setFilterText({});
  QCOMPARE(countRows(*view.filtered()), all);
}

void GuardsCodeTest::recompileReasonHighlightsTheGuard() {
  GuardsView view;
  const auto artifact = load(sample("captures/llama3_8b_2l_tiny_infer.log.gz"));
  view.setArtifact(artifact);
  // The view opens on the compile whose guards the recompile broke.
  QCOMPARE(view.shownCompile(), compileIndex(*artifact, "0/0"));
  const auto& broken = view.model()->brokenGuards();
  QCOMPARE(broken.size(), size_t{1});
  const uint32_t guard = broken.begin()->first;
  const lathe::io::GuardTree& tree = *view.model()->tree();
  QCOMPARE(tree.text(tree.node(guard).type), std::string_view("TENSOR_MATCH"));
  QVERIFY(tree.text(tree.node(guard).code).find("input_ids") != std::string_view::npos);
  const QModelIndex index = view.model()->indexOfGuard(guard);
  QVERIFY(index.data(GuardTreeModel::kRecompileReasonRole).toString().contains(QStringLiteral("size mismatch")));
  QVERIFY(index.data(Qt::BackgroundRole).isValid());
  QVERIFY(!view.model()->indexOfGuard(0).data(Qt::BackgroundRole).isValid());
  // It is in sight: its managers are expanded.
  QVERIFY(view.treeView()->isExpanded(view.filtered()->mapFromSource(index.parent())));
  QVERIFY(view.reasonsText().contains(QStringLiteral("0/1")));
  QVERIFY(view.reasonsText().contains(QStringLiteral("expected 32, actual 48")));
  // The recompile itself broke nothing, and says why it exists.
  QVERIFY(view.showCompile(compileIndex(*artifact, "0/1")));
  QVERIFY(view.model()->brokenGuards().empty());
  QVERIFY(view.reasonsText().contains(QStringLiteral("0/0")));
}

void GuardsCodeTest::diffMatchesIo() {
  GuardsView view;
  const auto artifact = load(sample("captures/llama3_8b_2l_dyntrain.log.gz"));
  view.setArtifact(artifact);
  QVERIFY(view.showDiff(compileIndex(*artifact, "0/0"), compileIndex(*artifact, "0/1")));
  const lathe::io::GuardTree before = parseGuards(*artifact, "0/0");
  const lathe::io::GuardTree after = parseGuards(*artifact, "0/1");
  const lathe::io::GuardDiff expected = lathe::io::diffGuards(before, after);
  const lathe::views::GuardDiffModel& model = *view.diffModel();
  QAbstractItemModelTester tester(view.diffModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
  QVERIFY(!expected.entries.empty());
  QCOMPARE(model.rowCount(), static_cast<int>(expected.entries.size()));
  QCOMPARE(model.diff().unchanged, expected.unchanged);
  for (int row = 0; row < model.rowCount(); ++row) {
    const lathe::io::GuardDiffEntry& entry = expected.entries[static_cast<size_t>(row)];
    QCOMPARE(model.index(row, lathe::views::GuardDiffModel::PathColumn).data().toString().toStdString(),
             std::string(entry.path));
    QCOMPARE(model.diff().entries[static_cast<size_t>(row)].change, entry.change);
    QVERIFY(model.index(row, 0).data(Qt::BackgroundRole).isValid());
  }
}

void GuardsCodeTest::selectionFollowsTheStage() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, sample("captures/llama3_8b_2l_tiny_train.log.gz")));
  const QString joint = QStringLiteral("0/0:aot_joint_graph");
  const QString forward = QStringLiteral("0/0:aot_forward_graph");
  const QString dynamo = QStringLiteral("0/0:dynamo_output_graph");
  QVERIFY(window.selectGraphNode(joint, graphOf(window, joint)->find("mm_3")));
  // "Also in: Dynamo graph, ... as attn_output_3 (the o_proj linear); forward graph, ... as mm_3; ..."
  const QString alsoIn = window.inspector()->plainText();
  QVERIFY(alsoIn.contains(QRegularExpression(QStringLiteral("forward graph[^;]* as mm_3"))));
  QVERIFY(alsoIn.contains(QRegularExpression(QStringLiteral("Dynamo graph[^;]* as attn_output_3"))));

  QVERIFY(window.selectGraph(forward));
  QCOMPARE(window.shownGraphId(), forward);
  QCOMPARE(selectedName(window, *graphOf(window, forward)), QStringLiteral("mm_3"));
  // Back to the Dynamo graph: the linear call of the same source line and layer.
  QVERIFY(window.selectGraph(dynamo));
  const auto dynamoGraph = graphOf(window, dynamo);
  QVERIFY(dynamoGraph->target(window.selectedNode()).ends_with("linear"));
  // And forward again: the same mm.
  QVERIFY(window.selectGraph(forward));
  QCOMPARE(selectedName(window, *graphOf(window, forward)), QStringLiteral("mm_3"));
}

void GuardsCodeTest::inspectorLinksSwitchGraph() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, sample("captures/llama3_8b_2l_tiny_train.log.gz")));
  const QString joint = QStringLiteral("0/0:aot_joint_graph");
  QVERIFY(window.selectGraphNode(joint, graphOf(window, joint)->find("mm_3")));
  auto* browser = window.inspector()->findChild<QTextBrowser*>(QStringLiteral("nodeInspectorText"));
  QVERIFY(browser);
  // The first link goes to the first stage that has the node: the Dynamo graph.
  emit browser->anchorClicked(QUrl(QStringLiteral("stage:0")));
  QCOMPARE(window.shownGraphId(), QStringLiteral("0/0:dynamo_output_graph"));
  QVERIFY(graphOf(window, window.shownGraphId())->target(window.selectedNode()).ends_with("linear"));
}

void GuardsCodeTest::outputCodeGoesToNode() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, sample("captures/llama3_8b_2l_tiny_train.log.gz")));
  auto* tree = window.findChild<QTreeView*>(QStringLiteral("artifactTree"));
  auto* model = qobject_cast<ArtifactTreeModel*>(tree->model());
  const QModelIndex code = model->firstIndexOf(ArtifactTreeModel::ItemKind::Code);
  QVERIFY(code.isValid());
  tree->setCurrentIndex(code);
  lathe::views::CodeView* view = window.codeView();
  QVERIFY(view->title().contains(QStringLiteral("Inductor output code")));
  // The q_proj matmul of the first layer: its source-nodes line ends with the Dynamo linear.
  const QTextDocument* document = view->editor()->document();
  const QTextBlock block = document->find(QStringLiteral("hidden_states_2, linear], Original ATen")).block();
  QVERIFY(block.isValid());
  view->activate(block.position());  // a click at the start of the line, on no name
  QCOMPARE(window.shownGraphId(), QStringLiteral("0/0:dynamo_output_graph"));
  QCOMPARE(selectedName(window, *graphOf(window, window.shownGraphId())), QStringLiteral("linear"));
  QVERIFY(view->title().contains(QStringLiteral("Inductor output code")));  // the code stays
  // A click on a name picks that name.
  const QTextCursor name = document->find(QStringLiteral("hidden_states_1"), block.position());
  view->activate(name.selectionStart() + 1);
  QCOMPARE(selectedName(window, *graphOf(window, window.shownGraphId())), QStringLiteral("hidden_states_1"));
}

void GuardsCodeTest::fxTextGoesToNodeAndSearches() {
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.show();
  QVERIFY(openAndWait(window, sample("captures/llama3_8b_2l_tiny_train.log.gz")));
  const QString forward = QStringLiteral("0/0:aot_forward_graph");
  QVERIFY(window.selectGraph(forward));
  window.showCentralView(MainWindow::CentralView::Code);
  lathe::views::CodeView* view = window.codeView();
  QVERIFY(view->title().contains(forward));
  const QTextDocument* document = view->editor()->document();
  const QTextBlock block = document->find(QStringLiteral("mm_3: \"")).block();
  QVERIFY(block.isValid());
  view->activate(block.position() + block.text().indexOf(QStringLiteral("torch.ops")));
  QCOMPARE(selectedName(window, *graphOf(window, forward)), QStringLiteral("mm_3"));

  QVERIFY(view->revealDefinition(QStringLiteral("mm_3")));
  QVERIFY(view->editor()->textCursor().block().text().trimmed().startsWith(QStringLiteral("mm_3: ")));

  QVERIFY(view->find(QStringLiteral("aten.mm.default")));
  QVERIFY(view->editor()->textCursor().selectedText() == QStringLiteral("aten.mm.default"));
  QVERIFY(!view->find(QStringLiteral("no such text in any graph")));
  view->editor()->setFocus();
  QTest::keyClick(view->editor(), Qt::Key_F, Qt::ControlModifier);
  auto* findField = view->findChild<QLineEdit*>(QStringLiteral("codeFind"));
  QVERIFY(findField && findField->isVisible());
}

namespace {

// Whether the characters [start, start + length) of a block carry a format with this property.
bool formatted(const QTextBlock& block, int start, int length,
               const std::function<bool(const QTextCharFormat&)>& test) {
  for (const QTextLayout::FormatRange& range : block.layout()->formats()) {
    if (range.start <= start && range.start + range.length >= start + length && test(range.format)) return true;
  }
  return false;
}

}  // namespace

void GuardsCodeTest::highlightsPythonAndCpp() {
  lathe::views::CodeView view;
  auto italic = [](const QTextCharFormat& f) { return f.fontItalic(); };
  auto bold = [](const QTextCharFormat& f) { return f.fontWeight() == QFont::Bold; };
  view.setCode(QStringLiteral("python"), QStringLiteral("def call(args):  # run 'the' kernels\n    return None\n"),
               lathe::views::CodeLanguage::Python, {});
  const QTextDocument* python = view.editor()->document();
  QVERIFY(formatted(python->findBlockByNumber(0), 0, 3, bold));      // def
  QVERIFY(formatted(python->findBlockByNumber(0), 17, 19, italic));  // the comment, quotes and all
  QVERIFY(!formatted(python->findBlockByNumber(0), 9, 4, italic));   // args
  QVERIFY(formatted(python->findBlockByNumber(1), 4, 6, bold));      // return

  view.setCode(QStringLiteral("cuda"),
               QStringLiteral("/* a block\n comment */ int x = 1; // note\n__global__ void k() {}\n"),
               lathe::views::CodeLanguage::Cpp, {});
  const QTextDocument* cpp = view.editor()->document();
  QVERIFY(formatted(cpp->findBlockByNumber(0), 0, 10, italic));
  QVERIFY(formatted(cpp->findBlockByNumber(1), 0, 11, italic));   // the comment's end
  QVERIFY(!formatted(cpp->findBlockByNumber(1), 12, 3, italic));  // int, after it
  QVERIFY(formatted(cpp->findBlockByNumber(1), 12, 3, bold));
  QVERIFY(formatted(cpp->findBlockByNumber(1), 23, 7, italic));  // // note
  QVERIFY(formatted(cpp->findBlockByNumber(2), 0, 10, bold));    // __global__
}

void GuardsCodeTest::guardsScreenshot() {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("guards.png"));
  const lathe::testing::StudioRun run =
      lathe::testing::runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"),
                                 QStringLiteral("guards"), sample("captures/llama3_8b_2l_tiny_infer.log.gz")});
  QCOMPARE(run.exitCode, 0);
  const QImage image(png);
  QCOMPARE(image.size(), QSize(1600, 1000));
  QVERIFY(lathe::testing::distinctColours(image) > 20);
  const QString wrong = lathe::testing::wrongView(run, image, QStringLiteral("guards"));
  QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
}

QTEST_MAIN(GuardsCodeTest)
#include "guards_code_test.moc"
