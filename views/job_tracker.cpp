#include "views/job_tracker.h"

#include <QPromise>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <atomic>

#include "util/diagnostics.h"
#include "views/formatting.h"

namespace lathe::views {

struct JobTracker::Job {
  std::atomic<bool> cancel{false};
  std::optional<JobError> error;  // what the work threw; written by the worker before it finishes
  std::function<void(std::optional<JobError>)> deliver;
  QFuture<void> future;
};

void JobProgress::enterStage(const QString& text) const {
  checkCancelled();
  if (onStage) onStage(text);
}

JobTracker::JobTracker(QObject* parent) : QObject(parent) {
  connect(&watcher_, &QFutureWatcherBase::progressValueChanged, this, &JobTracker::progress);
  connect(&watcher_, &QFutureWatcherBase::finished, this, &JobTracker::onFinished);
}

JobTracker::~JobTracker() {
  for (const std::shared_ptr<Job>& job : running_) job->cancel.store(true);
  for (const std::shared_ptr<Job>& job : running_) job->future.waitForFinished();
}

void JobTracker::launch(std::function<void(const JobProgress&)> run,
                        std::function<void(std::optional<JobError>)> deliver) {
  if (current_) current_->cancel.store(true);
  std::erase_if(running_, [](const std::shared_ptr<Job>& job) { return job->future.isFinished(); });
  auto job = std::make_shared<Job>();
  job->deliver = std::move(deliver);
  // Queued to this thread, and shown only while the job is the current one. (QFutureWatcher's
  // progress text would do, but it drops updates that come close together, and a stage can be that
  // short.)
  auto stage = [this, weak = std::weak_ptr<Job>(job)](const QString& text) {
    QMetaObject::invokeMethod(
        this,
        [this, weak, text] {
          const std::shared_ptr<Job> stillWanted = weak.lock();
          if (stillWanted && stillWanted == current_ && !stillWanted->cancel.load()) emit stageChanged(text);
        },
        Qt::QueuedConnection);
  };
  job->future = QtConcurrent::run([job, run = std::move(run), stage](QPromise<void>& promise) {
    promise.setProgressRange(0, kProgressMaximum);
    JobProgress progress;
    progress.cancel = &job->cancel;
    progress.report = [&promise](uint64_t done, uint64_t total) {
      if (total == 0) return;
      const double fraction = std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
      promise.setProgressValue(static_cast<int>(fraction * kProgressMaximum));
    };
    progress.onStage = stage;
    try {
      run(progress);
    } catch (const Error& error) {
      job->error = JobError{QString::fromUtf8(error.what()),
                            error.where().file.empty() ? QString() : toQString(error.where().str()),
                            error.code() == ErrorCode::Cancelled};
    } catch (const std::exception& error) {
      // A bug in the work: the window shows it instead of going down with it.
      job->error = JobError{QString::fromUtf8(error.what()), {}, false};
    }
  });
  running_.push_back(job);
  current_ = job;
  watcher_.setFuture(job->future);
}

void JobTracker::onFinished() {
  // Also emitted for a future the watcher no longer follows, or for a job that was abandoned.
  if (!current_ || !current_->future.isFinished()) return;
  const std::shared_ptr<Job> job = std::exchange(current_, nullptr);
  // `done` may start the next job: busy() is false by now.
  job->deliver(std::move(job->error));
}

void JobTracker::cancel() {
  if (current_) current_->cancel.store(true);
}

void JobTracker::abandon() {
  if (current_) current_->cancel.store(true);
  current_.reset();
}

}  // namespace lathe::views
