// What the GUI tests share: sample paths and waiting on the event loop.
#pragma once

#include <QElapsedTimer>
#include <QString>
#include <QtTest/QTest>

namespace lathe::testing {

// A file of the shared samples folder, by its path inside it.
inline QString sample(const char* relative) {
  return QString::fromUtf8(LATHE_SAMPLES_DIR) + QLatin1Char('/') + QString::fromUtf8(relative);
}

// Runs the event loop until `done` holds; false after `timeoutMs`.
template <typename Done>
bool waitUntil(Done done, int timeoutMs = 120000) {
  QElapsedTimer timer;
  timer.start();
  while (!done()) {
    if (timer.elapsed() > timeoutMs) return false;
    QTest::qWait(10);
  }
  return true;
}

}  // namespace lathe::testing
