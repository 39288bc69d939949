// `lathe-studio --screenshot` as users run it: a PNG of the right size showing the view asked for
// (its widget on show and drawn, the other tabs of its place hidden), a clear refusal of views that
// do not exist yet, and exit code 2 (with the picture) for damaged input.
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QTemporaryDir>
#include <QTest>

#include "studio_process.h"

using lathe::testing::distinctColours;
using lathe::testing::runStudio;
using lathe::testing::wrongView;
using Run = lathe::testing::StudioRun;

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void bundledExample();
  void exportedProgram();
  void everyView_data();
  void everyView();
  void offloadRunOfARunFolder();
  void inChinese();
  void compareWithAnotherCapture();
  void unknownViewIsRefused();
  void damagedInput();
};

void ScreenshotTest::bundledExample() {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("studio.png"));
  const Run run = runStudio({QStringLiteral("--screenshot"), png});
  QCOMPARE(run.exitCode, 0);
  const QImage image(png);
  QCOMPARE(image.size(), QSize(1600, 1000));
  QVERIFY(distinctColours(image) > 20);
  const QString wrong = wrongView(run, image, QStringLiteral("graph"));  // the default view
  QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
}

void ScreenshotTest::exportedProgram() {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("pt2.png"));
  const Run run = runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), QStringLiteral("graph"),
                             QString::fromUtf8(LATHE_SAMPLES_DIR "/pt2/gpt2_tiny.pt2")});
  QCOMPARE(run.exitCode, 0);
  const QImage image(png);
  QCOMPARE(image.size(), QSize(1600, 1000));
  const QString wrong = wrongView(run, image, QStringLiteral("graph"));
  QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
}

void ScreenshotTest::everyView_data() {
  QTest::addColumn<QString>("view");
  for (const char* view :
       {"graph", "nodes", "timeline", "budget", "pipeline", "gantt", "offload", "measured", "guards", "code"})
    QTest::newRow(view) << QString::fromLatin1(view);
}

// Each view on a capture that has everything: training graphs, guards and a recompile (no offload
// run, no profile: those views say so).
void ScreenshotTest::everyView() {
  QFETCH(QString, view);
  QTemporaryDir dir;
  const QString png = dir.filePath(view + QStringLiteral(".png"));
  const Run run = runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), view,
                             QString::fromUtf8(LATHE_SAMPLES_DIR "/captures/llama3_8b_2l_dyntrain.log.gz")});
  QCOMPARE(run.exitCode, 0);
  const QImage image(png);
  QCOMPARE(image.size(), QSize(1600, 1000));
  QVERIFY(distinctColours(image) > 20);
  const QString wrong = wrongView(run, image, view);
  QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
}

// The Offload run dock of a run folder that streamed weights (an H200 training run).
void ScreenshotTest::offloadRunOfARunFolder() {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("offload.png"));
  const Run run = runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), QStringLiteral("offload"),
                             QStringLiteral(LATHE_SOURCE_DIR "/tests/data/h200_weight_offload_run")});
  QCOMPARE(run.exitCode, 0);
  const QImage image(png);
  QCOMPARE(image.size(), QSize(1600, 1000));
  QVERIFY(distinctColours(image) > 20);
  const QString wrong = wrongView(run, image, QStringLiteral("offload"));
  QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
}

void ScreenshotTest::inChinese() {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("zh_CN.png"));
  const Run run = runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--language"), QStringLiteral("zh_CN")});
  QCOMPARE(run.exitCode, 0);
  const QImage image(png);
  QCOMPARE(image.size(), QSize(1600, 1000));
  const QString wrong = wrongView(run, image, QStringLiteral("graph"));
  QVERIFY2(wrong.isEmpty(), qPrintable(wrong));
  const Run unknown = runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--language"), QStringLiteral("xx")});
  QCOMPARE(unknown.exitCode, 1);
  QVERIFY(unknown.errors.contains(QStringLiteral("xx")));
}

// --compare opens B in the Compare tab once the plan is ready; a B that does not open writes no
// picture and exits 2 with the reason.
void ScreenshotTest::compareWithAnotherCapture() {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("compare.png"));
  const Run run = runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), QStringLiteral("compare"),
                             QStringLiteral("--compare"), QString::fromUtf8(LATHE_SAMPLES_DIR "/captures/llama3_8b_2l_dyntrain.log.gz"),
                             QString::fromUtf8(LATHE_SAMPLES_DIR "/captures/llama3_8b_2l_train.log.gz")});
  QCOMPARE(run.exitCode, 0);
  const QImage image(png);
  QCOMPARE(image.size(), QSize(1600, 1000));
  const QString wrong = wrongView(run, image, QStringLiteral("compare"));
  QVERIFY2(wrong.isEmpty(), qPrintable(wrong));

  const QString missing = dir.filePath(QStringLiteral("missing.png"));
  const Run refused = runStudio({QStringLiteral("--screenshot"), missing, QStringLiteral("--view"), QStringLiteral("compare"),
                                 QStringLiteral("--compare"), dir.filePath(QStringLiteral("no_such.log")),
                                 QString::fromUtf8(LATHE_SAMPLES_DIR "/captures/llama3_8b_2l_tiny_train.log.gz")});
  QCOMPARE(refused.exitCode, 2);
  QVERIFY(!QFileInfo::exists(missing));
  QVERIFY2(refused.errors.contains(QStringLiteral("could not compare with")), qPrintable(refused.errors));
}

void ScreenshotTest::unknownViewIsRefused() {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("flamegraph.png"));
  const Run run =
      runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), QStringLiteral("flamegraph")});
  QCOMPARE(run.exitCode, 1);
  QVERIFY(run.errors.contains(QStringLiteral("flamegraph")));
  QVERIFY(!QFile::exists(png));
}

void ScreenshotTest::damagedInput() {
  QTemporaryDir dir;
  const QString input = dir.filePath(QStringLiteral("garbage.pt2"));
  QFile file(input);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write("PK\x03\x04 this is not a zip archive");
  file.close();
  const QString png = dir.filePath(QStringLiteral("damaged.png"));
  const Run run = runStudio({QStringLiteral("--screenshot"), png, input});
  QCOMPARE(run.exitCode, 2);
  QCOMPARE(QImage(png).size(), QSize(1600, 1000));
}

QTEST_MAIN(ScreenshotTest)
#include "screenshot_test.moc"
