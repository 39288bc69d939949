// The studio's one background-job helper: the value and the progress come back on the tracker's
// thread; a new job cancels the one in flight and drops its outcome; cancel() still reports,
// abandon() does not; what the work throws arrives as a JobError; stage texts come from the current
// job only; the destructor cancels and waits for every job still running.
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <atomic>
#include <optional>
#include <stdexcept>

#include "util/diagnostics.h"
#include "views/job_tracker.h"

using lathe::Progress;
using lathe::views::JobOutcome;
using lathe::views::JobProgress;
using lathe::views::JobTracker;

namespace {

// Long work as the core does it: checks for a cancel as it goes and throws Error(Cancelled); gives
// up after a minute so that a broken tracker fails the test instead of hanging it.
struct LongWork {
  std::atomic<bool> started{false};
  std::atomic<bool> stopped{false};  // it saw the cancel and has ended
  int lingerMs = 0;                  // how long it goes on after seeing the cancel

  int run(const Progress& progress) {
    started = true;
    try {
      for (int i = 0; i < 60000; ++i) {
        progress.checkCancelled();
        QThread::msleep(1);
      }
    } catch (const lathe::Error&) {
      QThread::msleep(static_cast<unsigned long>(lingerMs));
      stopped = true;
      throw;
    }
    return -1;
  }
};

}  // namespace

class JobTrackerTest : public QObject {
  Q_OBJECT

 private slots:
  void deliversOnTheTrackersThread();
  void aNewJobDropsTheOneInFlight();
  void cancelReportsAndAbandonDoesNot();
  void whatTheWorkThrowsIsItsError();
  void stagesComeFromTheCurrentJobOnly();
  void destructorWaitsForEveryJob();
};

void JobTrackerTest::deliversOnTheTrackersThread() {
  JobTracker tracker;
  QSignalSpy progress(&tracker, &JobTracker::progress);
  std::optional<JobOutcome<int>> outcome;
  QThread* workThread = nullptr;
  QThread* doneThread = nullptr;
  tracker.start(
      [&](const Progress& reporting) {
        workThread = QThread::currentThread();
        reporting.update(1, 2);
        return 42;
      },
      [&](JobOutcome<int> finished) {
        doneThread = QThread::currentThread();
        QVERIFY(!tracker.busy());  // handed over: `done` may start the next job
        outcome = std::move(finished);
      });
  QVERIFY(tracker.busy());
  QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 60000);
  QCOMPARE(outcome->value, std::optional<int>(42));
  QVERIFY(workThread != QThread::currentThread());
  QCOMPARE(doneThread, QThread::currentThread());
  QVERIFY(!tracker.busy());
  QVERIFY(progress.contains(QList<QVariant>{JobTracker::kProgressMaximum / 2}));
}

void JobTrackerTest::aNewJobDropsTheOneInFlight() {
  JobTracker tracker;
  LongWork first;
  int firstOutcomes = 0;
  tracker.start([&first](const Progress& progress) { return first.run(progress); },
                [&](const JobOutcome<int>&) { ++firstOutcomes; });
  QTRY_VERIFY_WITH_TIMEOUT(first.started, 60000);
  std::optional<JobOutcome<int>> second;
  tracker.start([](const Progress&) { return 2; }, [&](JobOutcome<int> finished) { second = std::move(finished); });
  QTRY_VERIFY_WITH_TIMEOUT(second.has_value(), 60000);
  QCOMPARE(second->value, std::optional<int>(2));
  QTRY_VERIFY_WITH_TIMEOUT(first.stopped, 60000);  // cancelled
  QTest::qWait(50);
  QCOMPARE(firstOutcomes, 0);  // and never reported
}

void JobTrackerTest::cancelReportsAndAbandonDoesNot() {
  JobTracker tracker;
  LongWork cancelledWork;
  std::optional<JobOutcome<int>> cancelled;
  tracker.start([&cancelledWork](const Progress& progress) { return cancelledWork.run(progress); },
                [&](JobOutcome<int> finished) { cancelled = std::move(finished); });
  QTRY_VERIFY_WITH_TIMEOUT(cancelledWork.started, 60000);
  tracker.cancel();
  QTRY_VERIFY_WITH_TIMEOUT(cancelled.has_value(), 60000);
  QVERIFY(!cancelled->value);
  QVERIFY(cancelled->error.cancelled);

  LongWork abandonedWork;
  int abandonedOutcomes = 0;
  tracker.start([&abandonedWork](const Progress& progress) { return abandonedWork.run(progress); },
                [&](const JobOutcome<int>&) { ++abandonedOutcomes; });
  QTRY_VERIFY_WITH_TIMEOUT(abandonedWork.started, 60000);
  tracker.abandon();
  QVERIFY(!tracker.busy());
  QTRY_VERIFY_WITH_TIMEOUT(abandonedWork.stopped, 60000);
  QTest::qWait(50);
  QCOMPARE(abandonedOutcomes, 0);
}

void JobTrackerTest::whatTheWorkThrowsIsItsError() {
  JobTracker tracker;
  std::optional<JobOutcome<int>> outcome;
  tracker.start(
      [](const Progress&) -> int {
        throw lathe::Error(lathe::ErrorCode::BadInput, "a damaged record", {"trace.log", 7});
      },
      [&](JobOutcome<int> finished) { outcome = std::move(finished); });
  QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 60000);
  QVERIFY(!outcome->value);
  QVERIFY(outcome->error.message.contains(QStringLiteral("a damaged record")));
  QCOMPARE(outcome->error.location, QStringLiteral("trace.log:7"));
  QVERIFY(!outcome->error.cancelled);

  outcome.reset();
  tracker.start([](const Progress&) -> int { throw std::logic_error("a bug in the work"); },
                [&](JobOutcome<int> finished) { outcome = std::move(finished); });
  QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 60000);
  QCOMPARE(outcome->error.message, QStringLiteral("a bug in the work"));
  QVERIFY(outcome->error.location.isEmpty());
  QVERIFY(!outcome->error.cancelled);
}

void JobTrackerTest::stagesComeFromTheCurrentJobOnly() {
  JobTracker tracker;
  QSignalSpy stages(&tracker, &JobTracker::stageChanged);
  std::atomic<bool> goOn{false};
  std::atomic<bool> firstEnded{false};
  tracker.start(
      [&](const JobProgress& progress) {
        progress.enterStage(QStringLiteral("first"));
        while (!goOn) QThread::msleep(1);
        progress.onStage(QStringLiteral("late"));  // past its checks: replaced meanwhile
        firstEnded = true;
        return 1;
      },
      [](const JobOutcome<int>&) {});
  QTRY_COMPARE_WITH_TIMEOUT(stages.size(), 1, 60000);
  bool secondDone = false;
  tracker.start(
      [](const JobProgress& progress) {
        progress.enterStage(QStringLiteral("second"));
        return 2;
      },
      [&](const JobOutcome<int>&) { secondDone = true; });
  QTRY_VERIFY_WITH_TIMEOUT(secondDone, 60000);
  goOn = true;
  QTRY_VERIFY_WITH_TIMEOUT(firstEnded, 60000);
  QTest::qWait(50);
  QCOMPARE(stages.size(), 2);
  QCOMPARE(stages.at(0).first().toString(), QStringLiteral("first"));
  QCOMPARE(stages.at(1).first().toString(), QStringLiteral("second"));
}

void JobTrackerTest::destructorWaitsForEveryJob() {
  // Both still going when the tracker is destroyed: the one replaced, and the current one.
  LongWork replaced, current;
  replaced.lingerMs = current.lingerMs = 100;
  {
    JobTracker tracker;
    tracker.start([&replaced](const Progress& progress) { return replaced.run(progress); },
                  [](const JobOutcome<int>&) {});
    QTRY_VERIFY_WITH_TIMEOUT(replaced.started, 60000);
    tracker.start([&current](const Progress& progress) { return current.run(progress); },
                  [](const JobOutcome<int>&) {});
    QTRY_VERIFY_WITH_TIMEOUT(current.started, 60000);
  }
  QVERIFY(replaced.stopped);
  QVERIFY(current.stopped);
}

QTEST_MAIN(JobTrackerTest)
#include "job_tracker_test.moc"
