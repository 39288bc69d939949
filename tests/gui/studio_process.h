// Runs the real lathe-studio executable as users do, and judges the pictures it writes.
#pragma once

#include <QImage>
#include <QProcess>
#include <QSet>
#include <QString>
#include <QStringList>

namespace lathe::testing {

struct StudioRun {
  int exitCode = -1;  // -1: it did not finish in time or crashed
  QString errors;     // its stderr
};

inline StudioRun runStudio(const QStringList& arguments, int timeoutMs = 180000) {
  QProcess process;
  process.start(QString::fromUtf8(LATHE_STUDIO_EXE), arguments);
  if (!process.waitForFinished(timeoutMs)) return {};
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromUtf8(process.readAllStandardError())};
}

// Distinct colours in a coarse sample of the image: a blank or one-colour picture has very few.
inline int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 7) {
    for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
  }
  return static_cast<int>(colours.size());
}

}  // namespace lathe::testing
