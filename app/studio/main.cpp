// lathe-studio: opens an artifact (or the bundled example) in the main window, or renders the
// window headless to a PNG (--screenshot) for docs and `make run` without a display.
#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QImage>
#include <QTextStream>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>

#include "language.h"
#include "main_window.h"
#include "views/graph_view.h"
#include "views/plan_file.h"
#include "views/compare_view.h"
#include "views/plan_session.h"

namespace {

// Exit codes as the CLI's: 0 ok, 1 usage, 2 bad input, 3 internal.
constexpr int kExitUsage = 1;
constexpr int kExitBadInput = 2;
constexpr int kExitInternal = 3;

const QSize kScreenshotSize(1600, 1000);

// Views that --view accepts.
const QStringList kAvailableViews{QStringLiteral("graph"),  QStringLiteral("nodes"),    QStringLiteral("timeline"),
                                  QStringLiteral("budget"), QStringLiteral("pipeline"), QStringLiteral("gantt"),
                                  QStringLiteral("guards"), QStringLiteral("code"),     QStringLiteral("offload"),
                                  QStringLiteral("measured"), QStringLiteral("snapshot"), QStringLiteral("compiles"),
                                  QStringLiteral("lifecycle"), QStringLiteral("compare")};

// The views' widgets (by objectName) that a screenshot reports when they are on show: every --view's,
// and those that share a place with one (tabs of the same area).
const QStringList kReportedWidgets{
    QStringLiteral("graphView"),     QStringLiteral("nodesTable"),       QStringLiteral("guardsView"),
    QStringLiteral("codeView"),      QStringLiteral("memoryTimeline"),   QStringLiteral("ganttView"),
    QStringLiteral("offloadRunView"), QStringLiteral("savedTensorTable"), QStringLiteral("paretoView"),
    QStringLiteral("budgetPanel"),   QStringLiteral("nodeInspectorText"), QStringLiteral("pipelinePanel"),
    QStringLiteral("calibrationView"), QStringLiteral("snapshotView"), QStringLiteral("compilesView"),
    QStringLiteral("magiTimelineView"), QStringLiteral("compareView")};

// The centre tab a view shows; the plan views share the window with the node table.
lathe::studio::MainWindow::CentralView centralViewFor(const QString& view, bool planView) {
  using CentralView = lathe::studio::MainWindow::CentralView;
  if (view == QStringLiteral("guards")) return CentralView::Guards;
  if (view == QStringLiteral("code")) return CentralView::Code;
  if (view == QStringLiteral("snapshot")) return CentralView::Snapshot;
  if (view == QStringLiteral("compiles")) return CentralView::Compiles;
  if (view == QStringLiteral("lifecycle")) return CentralView::Lifecycle;
  if (view == QStringLiteral("compare")) return CentralView::Compare;
  return view == QStringLiteral("nodes") || planView ? CentralView::Nodes : CentralView::Graph;
}

bool wantsScreenshot(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--screenshot") == 0 || std::strncmp(argv[i], "--screenshot=", 13) == 0) return true;
  }
  return false;
}

// --help and --version print and exit: they need no window.
bool onlyPrints(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    for (const char* flag : {"-h", "--help", "--help-all", "-v", "--version"}) {
      if (std::strcmp(argv[i], flag) == 0) return true;
    }
  }
  return false;
}

// Whether Qt has a display to open (X11 or Wayland), or was told which platform to use.
bool hasDisplay() {
#ifdef __linux__
  return std::getenv("QT_QPA_PLATFORM") != nullptr || std::getenv("DISPLAY") != nullptr ||
         std::getenv("WAYLAND_DISPLAY") != nullptr;
#else
  return true;
#endif
}

QStringList languageCodes() {
  QStringList codes;
  for (const lathe::studio::Language& shipped : lathe::studio::availableLanguages()) codes << shipped.code;
  return codes;
}

void printError(const QString& message) {
  QTextStream(stderr) << QStringLiteral("lathe-studio: ") << message << Qt::endl;
}

// What the picture shows, read from the widget tree (not from --view): a line "shown NAME X Y WIDTH
// HEIGHT" on stdout for each reported widget on show, with the bounds of its visible part in the
// picture's pixels. After the grab: the picture is of that state.
void reportShownWidgets(const QWidget& window) {
  QTextStream out(stdout);
  for (const QString& name : kReportedWidgets) {
    const auto* widget = window.findChild<QWidget*>(name);
    if (!widget || !widget->isVisible()) continue;
    // Its rectangle as its ancestors clip it (visibleRegion() would leave out what its own children cover).
    QRect shown = window.rect();
    for (const QWidget* clip = widget; clip && clip != &window; clip = clip->parentWidget())
      shown &= QRect(clip->mapTo(&window, QPoint(0, 0)), clip->size());
    if (shown.isEmpty()) continue;
    out << "shown " << name << ' ' << shown.x() << ' ' << shown.y() << ' ' << shown.width() << ' ' << shown.height()
        << Qt::endl;
  }
}

// `profile`: a lathe.profile/1 file to price the plan with ("" for none); one that is not applied
// writes no picture and exits 2. `compare`: a capture or plan opened as B of the Compare tab once
// the plan on show is ready ("" for none); one that does not open exits 2.
int takeScreenshot(const QString& output, const QString& path, const QString& view, const QString& profile,
                   const QString& compare) {
  using lathe::studio::MainWindow;
  MainWindow window(MainWindow::Options{.useSettings = false});
  window.resize(kScreenshotSize);
  // The plan views share the window with the node table, which is ready as soon as the graph is.
  const bool planView = view == QStringLiteral("timeline") || view == QStringLiteral("budget") ||
                        view == QStringLiteral("pipeline") || view == QStringLiteral("gantt") ||
                        view == QStringLiteral("offload") || view == QStringLiteral("measured");
  auto showAskedView = [&] {
    window.showCentralView(centralViewFor(view, planView));
    if (!planView) return;
    // "budget": the budget panel beside the timeline it moves.
    if (view == QStringLiteral("budget")) window.showPlanView(MainWindow::PlanView::Timeline);
    window.showPlanView(view == QStringLiteral("timeline") ? MainWindow::PlanView::Timeline
                        : view == QStringLiteral("budget") ? MainWindow::PlanView::Budget
                        : view == QStringLiteral("gantt")  ? MainWindow::PlanView::Gantt
                        : view == QStringLiteral("offload") ? MainWindow::PlanView::OffloadRun
                        : view == QStringLiteral("measured") ? MainWindow::PlanView::Measured
                                                           : MainWindow::PlanView::Pipeline);
  };
  window.show();
  showAskedView();
  int exitCode = 0;
  // A profile that is not applied leaves no plan to picture, as a refused plan does.
  bool profileRefused = false;
  QObject::connect(window.planSession(), &lathe::views::PlanSession::profileApplied, &window,
                   [&](bool ok, const QString& error) {
                     if (ok) return;
                     profileRefused = true;
                     printError(QCoreApplication::translate("main", "could not apply the profile %1: %2")
                                    .arg(profile, error));
                     QCoreApplication::exit(kExitBadInput);
                   });
  auto grab = [&] {
    // Again: what was opened may have hidden it (the Offload run dock goes with a capture that
    // streamed no weights; asked for, it says so).
    showAskedView();
    // Let the views lay out and paint the new content before grabbing.
    QTimer::singleShot(0, &window, [&] {
      if (profileRefused) return;
      const QImage image = window.grab().toImage();
      reportShownWidgets(window);
      if (!image.save(output, "PNG")) {
        printError(QCoreApplication::translate("main", "cannot write %1").arg(output));
        exitCode = kExitInternal;
      }
      QCoreApplication::exit(exitCode);
    });
  };
  // The plan views show the pipeline run and the recompute frontier (Pareto, budget range) once both
  // come back from their workers, and a profile once it is applied (and planned with).
  std::function<void()> grabWhenPlanned = [&] {
    lathe::views::PlanSession* session = window.planSession();
    if (profileRefused) return;
    if (session->profileBusy()) {
      QObject::connect(
          session, &lathe::views::PlanSession::profileApplied, &window,
          [&](bool ok) {
            if (ok) grabWhenPlanned();
          },
          Qt::SingleShotConnection);
    } else if (session->busy()) {
      QObject::connect(session, &lathe::views::PlanSession::finished, &window, [&] { grabWhenPlanned(); },
                       Qt::SingleShotConnection);
    } else if (session->frontierBusy()) {
      QObject::connect(session, &lathe::views::PlanSession::frontierReady, &window, [&] { grabWhenPlanned(); },
                       Qt::SingleShotConnection);
    } else if (!compare.isEmpty() && window.compareView()->pathB().isEmpty()) {
      QObject::connect(
          window.compareView(), &lathe::views::CompareView::bLoaded, &window,
          [&](bool ok, const QString& error) {
            if (ok) {
              grabWhenPlanned();
              return;
            }
            printError(QCoreApplication::translate("main", "could not compare with %1: %2").arg(compare, error));
            QCoreApplication::exit(kExitBadInput);
          },
          Qt::SingleShotConnection);
      window.compareWith(compare);
    } else if (window.compareView()->busy()) {
      QObject::connect(window.compareView(), &lathe::views::CompareView::planDiffChanged, &window, [&] { grabWhenPlanned(); },
                       Qt::SingleShotConnection);
    } else {
      grab();
    }
  };
  // An opened plan is on show once its pipeline run has come back (and been checked) too, and so is a
  // plan priced with a profile.
  const bool planPath = lathe::views::isPlanPath(path);
  const bool waitsForPlan = planPath || !profile.isEmpty() || !compare.isEmpty();
  lathe::views::GraphView* graphView = window.graphView();
  QObject::connect(&window, &MainWindow::loadFinished, &window, [&](bool ok) {
    if (!ok) {
      printError(QCoreApplication::translate("main", "could not open %1: %2").arg(path, window.lastOpenError()));
      exitCode = kExitBadInput;
      // A plan refused leaves nothing to show; a capture that does not read shows why.
      if (planPath) {
        QCoreApplication::exit(exitCode);
        return;
      }
    }
    if (ok && view == QStringLiteral("graph") && graphView->isLayingOut()) {
      // The graph is drawn once its layout (or its failure) comes back from the worker.
      auto next = waitsForPlan ? grabWhenPlanned : std::function<void()>(grab);
      QObject::connect(graphView, &lathe::views::GraphView::layoutShown, &window, next, Qt::SingleShotConnection);
      QObject::connect(graphView, &lathe::views::GraphView::layoutFailed, &window, next, Qt::SingleShotConnection);
      return;
    }
    if (ok && (planView || waitsForPlan)) {
      grabWhenPlanned();
      return;
    }
    grab();
  });
  QObject::connect(&window, &MainWindow::planOpened, &window, [&](bool ok) {
    if (ok) return;
    printError(QCoreApplication::translate("main", "could not show the plan %1: %2").arg(path, window.lastOpenError()));
    exitCode = kExitBadInput;
  });
  window.openPath(path);
  if (!profile.isEmpty()) window.loadProfile(profile);
  return QApplication::exec();
}

}  // namespace

int main(int argc, char** argv) {
  // Headless rendering and printing need no display: default to the offscreen platform unless one
  // is chosen. Without a display, opening the window would abort inside Qt: say so instead.
  if ((wantsScreenshot(argc, argv) || onlyPrints(argc, argv)) && std::getenv("QT_QPA_PLATFORM") == nullptr)
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
  if (!hasDisplay()) {
    std::fprintf(stderr,
                 "lathe-studio: no display (DISPLAY and WAYLAND_DISPLAY are unset): run it in a desktop session, "
                 "or render a view headless with --screenshot out.png\n");
    return kExitUsage;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("Lathe"));
  QApplication::setApplicationName(QStringLiteral("lathe-studio"));
  QApplication::setApplicationVersion(QStringLiteral(LATHE_VERSION));
  // Before any string is read: --help and the window speak the chosen language.
  lathe::studio::applyLanguage(lathe::studio::savedLanguage());

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QCoreApplication::translate("main",
                                  "Workbench for PyTorch compiler artifacts: TORCH_TRACE logs (files or "
                                  "folders of ranks), torch.export .pt2 archives, CUDA memory snapshots."));
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption screenshot(
      QStringLiteral("screenshot"),
      QCoreApplication::translate("main", "Render the window headless at %1x%2 to <png> and exit.")
          .arg(kScreenshotSize.width())
          .arg(kScreenshotSize.height()),
      QCoreApplication::translate("main", "png"));
  const QCommandLineOption view(QStringLiteral("view"),
                                QCoreApplication::translate("main", "View to show in the screenshot: %1.")
                                    .arg(kAvailableViews.join(QStringLiteral(", "))),
                                QCoreApplication::translate("main", "name"), kAvailableViews.first());
  const QCommandLineOption language(
      QStringLiteral("language"),
      QCoreApplication::translate("main", "Interface language for this run: %1 (default: the one chosen in the "
                                          "Language menu, else the system's).")
          .arg(languageCodes().join(QStringLiteral(", "))),
      QCoreApplication::translate("main", "code"));
  const QCommandLineOption profile(
      QStringLiteral("profile"),
      QCoreApplication::translate("main", "Price the plan with a lathe.profile/1 file (lathe measure -o), as File › "
                                          "Load Profile… does."),
      QCoreApplication::translate("main", "file"));
  const QCommandLineOption compare(
      QStringLiteral("compare"),
      QCoreApplication::translate("main", "Compare the graph on show with a capture or plan bundle (.json), as File › "
                                          "Compare With… does, and show the Compare tab."),
      QCoreApplication::translate("main", "path"));
  parser.addOption(screenshot);
  parser.addOption(view);
  parser.addOption(compare);
  parser.addOption(profile);
  parser.addOption(language);
  parser.addPositionalArgument(QStringLiteral("path"),
                               QCoreApplication::translate(
                                   "main", "Artifact or plan bundle (.json) to open (default: the bundled example)."),
                               QStringLiteral("[path]"));
  parser.process(app);
  if (parser.isSet(language)) {
    if (!languageCodes().contains(parser.value(language))) {
      printError(QCoreApplication::translate("main", "unknown language '%1'; available: %2")
                     .arg(parser.value(language), languageCodes().join(QStringLiteral(", "))));
      return kExitUsage;
    }
    lathe::studio::applyLanguage(parser.value(language));
  }

  const QStringList positional = parser.positionalArguments();
  if (positional.size() > 1) {
    printError(QCoreApplication::translate("main", "expected at most one path, got %1").arg(positional.size()));
    return kExitUsage;
  }
  if (!kAvailableViews.contains(parser.value(view))) {
    printError(QCoreApplication::translate("main", "view '%1' is not available yet; available: %2")
                   .arg(parser.value(view), kAvailableViews.join(QStringLiteral(", "))));
    return kExitUsage;
  }
  const QString path = positional.isEmpty() ? lathe::studio::MainWindow::exampleArtifactPath() : positional.first();
  if (path.isEmpty()) {
    printError(QCoreApplication::translate("main", "no path given and the bundled example is missing"));
    return kExitUsage;
  }

  if (parser.isSet(screenshot))
    return takeScreenshot(parser.value(screenshot), path, parser.value(view), parser.value(profile), parser.value(compare));

  // A language change rebuilds the window, so that every string is read again, on the same capture
  // and profile and with the same layout (the old window saves it as it closes; the new one restores it).
  using lathe::studio::MainWindow;
  std::unique_ptr<MainWindow> window;
  std::function<void(const QString&, const QString&)> openWindow = [&](const QString& openedPath,
                                                                      const QString& openedProfile) {
    auto next = std::make_unique<MainWindow>(MainWindow::Options{});
    QObject::connect(next.get(), &MainWindow::languageChanged, next.get(), [&] {
      QTimer::singleShot(0, [&] { openWindow(window->currentPath(), window->profilePath()); });
    });
    next->show();
    if (window) window->close();
    next->openPath(openedPath);
    if (!openedProfile.isEmpty()) next->loadProfile(openedProfile);
    window = std::move(next);
  };
  openWindow(path, parser.value(profile));
  if (parser.isSet(compare)) window->compareWith(parser.value(compare));
  return QApplication::exec();
}
