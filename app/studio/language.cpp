#include "language.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QSettings>
#include <QTranslator>
#include <memory>

namespace lathe::studio {
namespace {

const QString kSettingsKey = QStringLiteral("ui/language");
const QString kSystem = QStringLiteral("system");
const QString kEnglish = QStringLiteral("en");

// The translators in effect; replaced as a whole when the language changes.
struct InstalledTranslators {
  std::unique_ptr<QTranslator> studio;
  std::unique_ptr<QTranslator> qt;  // Qt's own strings (standard dialogs) where the system has them
};

InstalledTranslators& installed() {
  static InstalledTranslators translators;
  return translators;
}

void removeInstalled() {
  InstalledTranslators& translators = installed();
  if (translators.studio) QCoreApplication::removeTranslator(translators.studio.get());
  if (translators.qt) QCoreApplication::removeTranslator(translators.qt.get());
  translators.studio.reset();
  translators.qt.reset();
}

// The shipped language for a locale: its exact name ("zh_CN"), else the first shipped one with its
// language ("zh_TW" has no translation of its own and reads the Simplified Chinese one).
QString shippedLanguageFor(const QLocale& locale) {
  QString fallback;
  for (const Language& language : availableLanguages()) {
    if (language.code == kSystem) continue;
    if (language.code == locale.name()) return language.code;
    if (fallback.isEmpty() && QLocale(language.code).language() == locale.language()) fallback = language.code;
  }
  return fallback.isEmpty() ? kEnglish : fallback;
}

}  // namespace

QList<Language> availableLanguages() {
  // Built on each call: "System language" is read in the language in effect.
  return {
      {kSystem, QCoreApplication::translate("lathe::studio::Language", "System language")},
      {kEnglish, QStringLiteral("English")},
      {QStringLiteral("zh_CN"), QStringLiteral("简体中文")},
  };
}

QString savedLanguage() {
  const QString code = QSettings().value(kSettingsKey, kSystem).toString();
  for (const Language& language : availableLanguages()) {
    if (language.code == code) return code;
  }
  return kSystem;
}

void saveLanguage(const QString& code) { QSettings().setValue(kSettingsKey, code); }

QString applyLanguage(const QString& code) {
  const QString language = code == kSystem ? shippedLanguageFor(QLocale::system()) : code;
  removeInstalled();
  InstalledTranslators& translators = installed();
  auto studio = std::make_unique<QTranslator>();
  if (studio->load(QStringLiteral(":/i18n/lathe_%1.qm").arg(language))) {
    QCoreApplication::installTranslator(studio.get());
    translators.studio = std::move(studio);
  }
  auto qt = std::make_unique<QTranslator>();
  if (language != kEnglish &&
      qt->load(QLocale(language), QStringLiteral("qtbase"), QStringLiteral("_"),
               QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
    QCoreApplication::installTranslator(qt.get());
    translators.qt = std::move(qt);
  }
  return translators.studio ? language : kEnglish;
}

}  // namespace lathe::studio
