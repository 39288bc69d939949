// The shipped translations: complete, in step with the sources' tr() strings, faithful to their
// placeholders, and loaded by the language switch.
#include <QMenuBar>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include "language.h"
#include "main_window.h"
#include "io/artifact.h"
#include "passes/pipeline.h"
#include "passes/plan_target.h"
#include "views/formatting.h"

namespace {

struct Message {
  QString context;
  QString source;
  QStringList translations;  // one, or one per plural form
  bool finished = true;      // no type="unfinished" / "vanished" / "obsolete"
};

QList<Message> readTs(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    qWarning("cannot open %s", qPrintable(path));
    return {};
  }
  QList<Message> messages;
  QXmlStreamReader xml(&file);
  QString context;
  Message message;
  while (!xml.atEnd()) {
    xml.readNext();
    if (!xml.isStartElement()) continue;
    const auto name = xml.name();
    if (name == QStringLiteral("name")) {
      context = xml.readElementText();
    } else if (name == QStringLiteral("message")) {
      message = Message{.context = context};
    } else if (name == QStringLiteral("source")) {
      message.source = xml.readElementText();
    } else if (name == QStringLiteral("translation")) {
      if (!xml.attributes().value(QStringLiteral("type")).isEmpty()) message.finished = false;
      // Plural messages hold <numerusform> children; plain ones hold the text.
      QString text;
      while (!(xml.isEndElement() && xml.name() == QStringLiteral("translation")) && !xml.atEnd()) {
        xml.readNext();
        if (xml.isCharacters()) text += xml.text();
        if (xml.isStartElement() && xml.name() == QStringLiteral("numerusform"))
          message.translations << xml.readElementText();
      }
      if (message.translations.isEmpty()) message.translations << text;
      messages << message;
    }
  }
  if (xml.hasError()) qWarning("%s: %s", qPrintable(path), qPrintable(xml.errorString()));
  return messages;
}

QString tsPath(const QString& language) {
  return QStringLiteral(LATHE_SOURCE_DIR "/translations/lathe_%1.ts").arg(language);
}

QSet<QString> placeholders(const QString& text) {
  static const QRegularExpression pattern(QStringLiteral("%(\\d+|n)"));
  QSet<QString> found;
  for (auto it = pattern.globalMatch(text); it.hasNext();) found.insert(it.next().captured(0));
  return found;
}

}  // namespace

class TranslationsTest : public QObject {
  Q_OBJECT

 private slots:
  void everyMessageIsTranslated_data() {
    QTest::addColumn<QString>("language");
    QTest::newRow("en") << QStringLiteral("en");
    QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
  }

  void everyMessageIsTranslated() {
    QFETCH(QString, language);
    const QList<Message> messages = readTs(tsPath(language));
    QVERIFY(messages.size() > 100);
    for (const Message& message : messages) {
      const QString where = message.context + QStringLiteral(": ") + message.source;
      QVERIFY2(message.finished, qPrintable(where));
      for (const QString& translation : message.translations) {
        QVERIFY2(!translation.trimmed().isEmpty(), qPrintable(where));
        // Every placeholder of the source is kept; a plural form may spell the count out.
        QSet<QString> wanted = placeholders(message.source);
        if (message.translations.size() > 1) wanted.remove(QStringLiteral("%n"));
        QVERIFY2(placeholders(translation).contains(wanted), qPrintable(where + QStringLiteral(" → ") + translation));
      }
    }
  }

  // The committed .ts files hold exactly the strings the sources ask for (run the
  // update_translations target after changing a tr() string).
  void translationsMatchSources() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString fresh = dir.filePath(QStringLiteral("fresh.ts"));
    QProcess lupdate;
    lupdate.start(QStringLiteral(LATHE_LUPDATE),
                  {QStringLiteral("-silent"), QStringLiteral("-no-obsolete"), QStringLiteral("-locations"),
                   QStringLiteral("none"), QStringLiteral("-I"), QStringLiteral(LATHE_SOURCE_DIR),
                   QStringLiteral("-I"), QStringLiteral(LATHE_SOURCE_DIR "/core"),
                   QStringLiteral("-tr-function-alias"),
                   QStringLiteral("QT_TRANSLATE_NOOP+=LATHE_TEXT,QT_TRANSLATE_N_NOOP+=LATHE_TEXT_N"),
                   QStringLiteral(LATHE_SOURCE_DIR "/views"), QStringLiteral(LATHE_SOURCE_DIR "/app/studio"),
                   QStringLiteral(LATHE_SOURCE_DIR "/passes"),
                   QStringLiteral("-ts"), fresh});
    QVERIFY(lupdate.waitForFinished(120000));
    QCOMPARE(lupdate.exitCode(), 0);
    auto keys = [](const QList<Message>& messages) {
      QSet<QString> set;
      for (const Message& message : messages) set.insert(message.context + QChar(0) + message.source);
      return set;
    };
    const QSet<QString> wanted = keys(readTs(fresh));
    QVERIFY(!wanted.isEmpty());
    for (const QString& language : {QStringLiteral("en"), QStringLiteral("zh_CN")}) {
      const QSet<QString> shipped = keys(readTs(tsPath(language)));
      for (const QString& key : wanted - shipped)
        QFAIL(qPrintable(QStringLiteral("%1 lacks: %2").arg(language, QString(key).replace(QChar(0), QStringLiteral(": ")))));
      for (const QString& key : shipped - wanted)
        QFAIL(qPrintable(QStringLiteral("%1 has a string no source uses: %2")
                             .arg(language, QString(key).replace(QChar(0), QStringLiteral(": ")))));
    }
  }

  // Pass statistics are shown under a label of their own, translated, not under their key: every
  // statistic a pass declares has one (a new statistic without one fails here).
  void everyPassStatisticIsTranslated() {
    QCOMPARE(lathe::studio::applyLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
    static const QRegularExpression han(QStringLiteral("[\\x{4e00}-\\x{9fff}]"));
    int checked = 0;
    for (const lathe::passes::Pass* pass : lathe::passes::registeredPasses()) {
      for (const lathe::passes::StatKey& key : pass->info().statistics) {
        const lathe::views::StatText text = lathe::views::passStatText(pass->name(), key.name, key.help);
        const QString what = QStringLiteral("%1.%2: %3 / %4").arg(QString::fromUtf8(pass->name().data(), static_cast<qsizetype>(pass->name().size())),
                                                             QString::fromUtf8(key.name.data(), static_cast<qsizetype>(key.name.size())),
                                                             text.label, text.help);
        QVERIFY2(text.label.contains(han) && text.help.contains(han), qPrintable(what));
        ++checked;
      }
    }
    QVERIFY(checked >= 25);
    // The two budgets are told apart.
    QVERIFY(lathe::views::passStatText("recompute", "budget_bytes").label !=
            lathe::views::passStatText("offload", "budget_bytes").label);
    QCOMPARE(lathe::studio::applyLanguage(QStringLiteral("en")), QStringLiteral("en"));
    QCOMPARE(lathe::views::passStatText("recompute", "saved_values").label, QStringLiteral("saved values"));
    // In English the help is what the pass declares: the table's copy cannot drift from it.
    for (const lathe::passes::Pass* pass : lathe::passes::registeredPasses()) {
      for (const lathe::passes::StatKey& key : pass->info().statistics) {
        QCOMPARE(lathe::views::passStatText(pass->name(), key.name).help,
                 QString::fromUtf8(key.help.data(), static_cast<qsizetype>(key.help.size())));
      }
    }
  }

  // What the passes changed (the Pipeline dock's diff, the saved ledger's reasons) is said in the
  // interface language: every pattern the passes use on a real capture has a Chinese translation,
  // and in English the studio says exactly what the CLI and the plan file say.
  void everyPassDiffLineIsTranslated() {
    const auto artifact = std::make_shared<const lathe::io::Artifact>(
        lathe::io::loadArtifact(LATHE_SAMPLES_DIR "/captures/mixtral_2l_train.log.gz"));
    const lathe::passes::PlanTarget target(*artifact, "", lathe::hw::resolveHwProfile("h200"));
    std::vector<lathe::Message> lines;
    for (const char* pipeline :
         {"split,fusion,recompute(policy=heuristic,offload=true,offload_min=0),offload(policy=heuristic,resident=0.3)",
          "recompute(policy=torch)", "recompute(policy=budget)", "recompute(policy=budget,memory=1MiB,offload=true)"}) {
      const lathe::passes::PipelineRun run = lathe::passes::runPipeline(target.context(), lathe::passes::parsePipeline(pipeline));
      for (const lathe::passes::PipelineRecord& record : run.history) {
        lines.insert(lines.end(), record.result.diff.begin(), record.result.diff.end());
        if (record.result.state.recompute) {
          const auto& reasons = record.result.state.recompute->savedReasons;
          lines.insert(lines.end(), reasons.begin(), reasons.end());
        }
      }
    }
    QSet<QString> patterns;
    std::function<void(const lathe::Message&)> collect = [&](const lathe::Message& message) {
      if (message.translatable()) patterns.insert(QString::fromUtf8(message.pattern.text));
      for (const lathe::Message& arg : message.args) collect(arg);
    };
    for (const lathe::Message& line : lines) collect(line);
    for (const char* expected : {"+ piece %1: %2", "+ unit %1: %2, %3", "+ group %1 (%2): %3", "= resident %1 (%2)",
                                 "+ saved %1  (%2)", "+ offloaded %1  (%2; on host from %3 to %4)", "min cut",
                                 "compute sensitive: %1", "%n node(s)",
                                 "! budget %1 is below the smallest peak found, %2; the plan with that peak is kept"}) {
      QVERIFY2(patterns.contains(QString::fromUtf8(expected)), expected);
    }

    QCOMPARE(lathe::studio::applyLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
    static const QRegularExpression han(QStringLiteral("[\\x{4e00}-\\x{9fff}]"));
    std::function<void(const lathe::Message&)> check = [&](const lathe::Message& message) {
      if (message.translatable()) {
        const QString zh = QCoreApplication::translate(message.pattern.context, message.pattern.text, nullptr,
                                                       message.count ? static_cast<int>(*message.count) : -1);
        QVERIFY2(zh.contains(han), message.pattern.text);
      }
      for (const lathe::Message& arg : message.args) check(arg);
    };
    for (const lathe::Message& line : lines) check(line);
    const QString saved = lathe::views::translated(lines.front());
    QVERIFY2(saved.contains(han), qPrintable(saved));

    QCOMPARE(lathe::studio::applyLanguage(QStringLiteral("en")), QStringLiteral("en"));
    for (const lathe::Message& line : lines) QCOMPARE(lathe::views::translated(line), QString::fromStdString(lathe::toEnglish(line)));
  }

  void switchingLanguageTranslatesTheWindow() {
    QCOMPARE(lathe::studio::applyLanguage(QStringLiteral("zh_CN")), QStringLiteral("zh_CN"));
    {
      lathe::studio::MainWindow window(lathe::studio::MainWindow::Options{.useSettings = false});
      const QString fileMenu = window.menuBar()->actions().first()->text();
      QVERIFY2(fileMenu != QStringLiteral("&File"), qPrintable(fileMenu));
      QVERIFY2(fileMenu.contains(QStringLiteral("文件")), qPrintable(fileMenu));
    }
    QCOMPARE(lathe::studio::applyLanguage(QStringLiteral("en")), QStringLiteral("en"));
    lathe::studio::MainWindow window(lathe::studio::MainWindow::Options{.useSettings = false});
    QCOMPARE(window.menuBar()->actions().first()->text(), QStringLiteral("&File"));
  }
};

QTEST_MAIN(TranslationsTest)
#include "translations_test.moc"
