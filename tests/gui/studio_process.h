// Runs the real lathe-studio executable as users do, and judges the pictures it writes.
#pragma once

#include <QImage>
#include <QMap>
#include <QProcess>
#include <QRect>
#include <QSet>
#include <QString>
#include <QStringList>

namespace lathe::testing {

struct StudioRun {
  int exitCode = -1;  // -1: it did not finish in time or crashed
  QString errors;     // its stderr
  QString output;     // its stdout
};

inline StudioRun runStudio(const QStringList& arguments, int timeoutMs = 180000) {
  QProcess process;
  process.start(QString::fromUtf8(LATHE_STUDIO_EXE), arguments);
  if (!process.waitForFinished(timeoutMs)) return {};
  return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1,
          QString::fromUtf8(process.readAllStandardError()), QString::fromUtf8(process.readAllStandardOutput())};
}

// Distinct colours in a coarse sample of the image: a blank or one-colour picture has very few.
inline int distinctColours(const QImage& image) {
  QSet<QRgb> colours;
  for (int y = 0; y < image.height(); y += 7) {
    for (int x = 0; x < image.width(); x += 7) colours.insert(image.pixel(x, y));
  }
  return static_cast<int>(colours.size());
}

// The widgets a --screenshot run had on show, by objectName, with where the picture shows them (its
// stdout lines "shown NAME X Y WIDTH HEIGHT").
inline QMap<QString, QRect> shownWidgets(const StudioRun& run) {
  QMap<QString, QRect> shown;
  for (const QString& line : run.output.split(QLatin1Char('\n'))) {
    const QStringList fields = line.split(QLatin1Char(' '));
    if (fields.size() != 6 || fields[0] != QStringLiteral("shown")) continue;
    shown.insert(fields[1], QRect(fields[2].toInt(), fields[3].toInt(), fields[4].toInt(), fields[5].toInt()));
  }
  return shown;
}

// The widget a --view shows, and the others in its place (tabs of the same area), hidden then.
struct ViewPlace {
  QString widget;
  QStringList others;
};

inline ViewPlace placeOf(const QString& view) {
  const QStringList centre{QStringLiteral("graphView"), QStringLiteral("nodesTable"), QStringLiteral("guardsView"),
                           QStringLiteral("codeView"),  QStringLiteral("compilesView"), QStringLiteral("compareView")};
  const QStringList bottom{QStringLiteral("memoryTimeline"), QStringLiteral("ganttView"),
                           QStringLiteral("offloadRunView"), QStringLiteral("savedTensorTable"),
                           QStringLiteral("calibrationView")};
  const QStringList side{QStringLiteral("nodeInspectorText"), QStringLiteral("budgetPanel")};
  const QMap<QString, QString> widgets{
      {QStringLiteral("graph"), QStringLiteral("graphView")},       {QStringLiteral("nodes"), QStringLiteral("nodesTable")},
      {QStringLiteral("guards"), QStringLiteral("guardsView")},     {QStringLiteral("code"), QStringLiteral("codeView")},
      {QStringLiteral("timeline"), QStringLiteral("memoryTimeline")}, {QStringLiteral("gantt"), QStringLiteral("ganttView")},
      {QStringLiteral("offload"), QStringLiteral("offloadRunView")}, {QStringLiteral("budget"), QStringLiteral("budgetPanel")},
      {QStringLiteral("pipeline"), QStringLiteral("pipelinePanel")},
      {QStringLiteral("measured"), QStringLiteral("calibrationView")},
      {QStringLiteral("compiles"), QStringLiteral("compilesView")},   {QStringLiteral("compare"), QStringLiteral("compareView")}};
  ViewPlace place{widgets.value(view), {}};
  for (const QStringList& area : {centre, bottom, side}) {
    if (!area.contains(place.widget)) continue;
    place.others = area;
    place.others.removeAll(place.widget);
  }
  return place;
}

// Why `image`, the picture of `run`, does not show `view`; "" when it does: the view's widget on
// show and large, the other tabs of its place hidden, and the picture drawn where the widget is.
inline QString wrongView(const StudioRun& run, const QImage& image, const QString& view) {
  const QMap<QString, QRect> shown = shownWidgets(run);
  const ViewPlace place = placeOf(view);
  QStringList listed;
  for (auto it = shown.begin(); it != shown.end(); ++it) listed << it.key();
  const QString context = QStringLiteral(" (--view %1; shown: %2)").arg(view, listed.join(QStringLiteral(", ")));
  if (!shown.contains(place.widget)) return place.widget + QStringLiteral(" is not on show") + context;
  const QRect where = shown.value(place.widget);
  if (where.width() < 300 || where.height() < 150)
    return QStringLiteral("%1 is only %2x%3").arg(place.widget).arg(where.width()).arg(where.height()) + context;
  for (const QString& other : place.others) {
    if (shown.contains(other)) return other + QStringLiteral(" is on show in its place") + context;
  }
  if (distinctColours(image.copy(where)) <= 8) return place.widget + QStringLiteral("'s part of the picture is blank") + context;
  return {};
}

}  // namespace lathe::testing
