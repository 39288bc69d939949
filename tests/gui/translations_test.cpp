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
#include "passes/pipeline.h"
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
                   QStringLiteral(LATHE_SOURCE_DIR "/views"), QStringLiteral(LATHE_SOURCE_DIR "/app/studio"),
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
