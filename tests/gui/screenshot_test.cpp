// `lathe-studio --screenshot` as users run it: a PNG of the right size with real content, a clear
// refusal of views that do not exist yet, and exit code 2 (with the picture) for damaged input.
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
  int exitCode = -1;
  QString errors;
};

Run runStudio(const QStringList& arguments) {
  QProcess process;
  process.start(QString::fromUtf8(LATHE_STUDIO_EXE), arguments);
  if (!process.waitForFinished(120000)) return {};
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromUtf8(process.readAllStandardError())};
}

// Distinct colours in a coarse sample of the image: a blank or one-colour picture has very few.
int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 7) {
    for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
  }
  return static_cast<int>(colours.size());
}

}  // namespace

class ScreenshotTest : public QObject {
  Q_OBJECT

 private slots:
  void bundledExample();
  void exportedProgram();
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
}

void ScreenshotTest::exportedProgram() {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("pt2.png"));
  const Run run = runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), QStringLiteral("graph"),
                             QString::fromUtf8(LATHE_SAMPLES_DIR "/pt2/gpt2_tiny.pt2")});
  QCOMPARE(run.exitCode, 0);
  QCOMPARE(QImage(png).size(), QSize(1600, 1000));
}

void ScreenshotTest::unknownViewIsRefused() {
  QTemporaryDir dir;
  const QString png = dir.filePath(QStringLiteral("gantt.png"));
  const Run run =
      runStudio({QStringLiteral("--screenshot"), png, QStringLiteral("--view"), QStringLiteral("gantt")});
  QCOMPARE(run.exitCode, 1);
  QVERIFY(run.errors.contains(QStringLiteral("gantt")));
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
