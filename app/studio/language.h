// The studio's user-interface language: English (the source strings) or Simplified Chinese, from
// translations/*.ts compiled by lrelease into the :/i18n resource at build time. The choice is kept
// in QSettings; "system" follows the system locale.
#pragma once

#include <QList>
#include <QString>

namespace lathe::studio {

struct Language {
  QString code;        // "system", "en", "zh_CN"
  QString nativeName;  // shown in the Language menu in its own language
};

// "system" first, then every language the studio ships.
[[nodiscard]] QList<Language> availableLanguages();

// The language code saved by the user, "system" when none.
[[nodiscard]] QString savedLanguage();
void saveLanguage(const QString& code);

// Installs the translators for `code` ("system": the system locale's language when shipped, else
// English) on the application, replacing any installed before; returns the language in effect.
QString applyLanguage(const QString& code);

}  // namespace lathe::studio
