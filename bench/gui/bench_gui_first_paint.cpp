// Time to first paint of the graph view: from handing it a graph to the laid out graph painted in
// its window (clusters built, folds found, the drawn levels laid out, the scene built and the
// viewport rendered). Loading the file is not counted (bench/load measures it). Prints one line per
// graph: name<TAB>milliseconds<TAB>goal_ms.
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>
#include <cstdio>
#include <exception>
#include <string>

#include "sample_joint_graph.h"
#include "synthetic_graph.h"
#include "hw/hw_profile.h"
#include "passes/plan_target.h"
#include "views/graph_view.h"

namespace {

constexpr int kTimeoutMs = 120000;

// Milliseconds from setGraph to the first full paint; -1 when the layout failed or timed out.
double firstPaintMs(const std::shared_ptr<const lathe::passes::PlanTarget>& target) {
  lathe::views::GraphView view;
  view.resize(1600, 1000);
  view.show();
  QCoreApplication::processEvents();
  QEventLoop loop;
  bool shown = false;
  QObject::connect(&view, &lathe::views::GraphView::layoutShown, &loop, [&] {
    shown = true;
    loop.quit();
  });
  QObject::connect(&view, &lathe::views::GraphView::layoutFailed, &loop, &QEventLoop::quit);
  QTimer::singleShot(kTimeoutMs, &loop, &QEventLoop::quit);
  QElapsedTimer timer;
  timer.start();
  view.setGraph(target);
  if (!view.layout()) loop.exec();
  if (!shown && !view.layout()) return -1;
  view.viewport()->repaint();  // paints now, as the first frame the user sees
  return static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  try {
    const lathe::bench::SampleJointGraph sample = lathe::bench::loadSampleJointGraph();
    const lathe::hw::HwProfile hardware = lathe::hw::resolveHwProfile(lathe::passes::kDefaultHardware);
    std::printf("first_paint_llama3_8b_4l_train_joint\t%.1f\t1000\n",
                firstPaintMs(std::make_shared<const lathe::passes::PlanTarget>(*sample.artifact,
                                                                             sample.id.toStdString(), hardware)));
    std::fflush(stdout);
    const auto synthetic = lathe::bench::SyntheticDecoder::build(99, 64);
    std::fprintf(stderr, "synthetic graph: %zu nodes\n", synthetic->size());
    std::printf("first_paint_synthetic_100k\t%.1f\t5000\n",
                firstPaintMs(std::make_shared<const lathe::passes::PlanTarget>(synthetic, "synthetic", hardware)));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "bench_gui_first_paint: %s\n", error.what());
    return 1;
  }
  return 0;
}
