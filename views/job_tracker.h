// One background job at a time for a view or a session, so that none of them re-implements the
// watcher, the cancel flag and the "is this result still wanted" check. The work runs on
// QtConcurrent's pool with a lathe::Progress (fraction done, cancel); starting the next job cancels
// the one in flight and drops its result; progress, stage texts and the result come back on the
// tracker's thread, only from the current job; the destructor cancels and waits for every job still
// running, whose threads must not outlive the application. What the work throws is its error: a
// lathe::Error(Cancelled) is a cancel, anything else a message (with the input's file:line when the
// error names one).
#pragma once

#include <QFuture>
#include <QFutureWatcher>
#include <QObject>
#include <QString>
#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "util/progress.h"

namespace lathe::views {

// Why a job gave no value.
struct JobError {
  QString message;
  QString location;  // file:line of the input, "" when the error names none
  bool cancelled = false;
};

template <typename T>
struct JobOutcome {
  std::optional<T> value;  // absent when the job threw
  JobError error;
};

// What the work is given: lathe::Progress for the core's long work, and the stage it is in.
struct JobProgress : Progress {
  std::function<void(const QString&)> onStage;
  // Stops here when the job was cancelled (Error(Cancelled)); else reports the stage's text.
  void enterStage(const QString& text) const;
};

class JobTracker : public QObject {
  Q_OBJECT

 public:
  static constexpr int kProgressMaximum = 1000;

  explicit JobTracker(QObject* parent = nullptr);
  ~JobTracker() override;

  // Runs `work(const JobProgress&)` on the pool after cancelling the job in flight, and calls
  // `done(JobOutcome<T>)` on this object's thread with what it returned (T) or threw, unless another
  // job started or abandon() came first.
  template <typename Work, typename Done>
  void start(Work work, Done done);
  // Asks the current job to stop; `done` still gets its outcome (cancelled, or its value when the
  // work had passed its last check).
  void cancel();
  // Cancels the current job and drops its outcome: its `done` is not called.
  void abandon();
  // From start() until the outcome is handed to `done` or dropped.
  [[nodiscard]] bool busy() const { return current_ != nullptr; }

 signals:
  void progress(int permille);  // 0 .. kProgressMaximum
  void stageChanged(const QString& text);

 private:
  struct Job;
  // Starts `run` as the current job; `deliver` gets what it threw (nothing when it returned).
  void launch(std::function<void(const JobProgress&)> run, std::function<void(std::optional<JobError>)> deliver);
  void onFinished();

  QFutureWatcher<void> watcher_;  // the current job's: its progress, its end
  std::shared_ptr<Job> current_;
  std::vector<std::shared_ptr<Job>> running_;  // every job not known to be finished, the dropped ones too
};

template <typename Work, typename Done>
void JobTracker::start(Work work, Done done) {
  using Value = std::invoke_result_t<Work&, const JobProgress&>;
  // Written by the worker, read here once its future has finished.
  auto value = std::make_shared<std::optional<Value>>();
  launch([work = std::move(work), value](const JobProgress& progress) mutable { value->emplace(work(progress)); },
         [value, done = std::move(done)](std::optional<JobError> error) mutable {
           JobOutcome<Value> outcome;
           if (error) {
             outcome.error = std::move(*error);
           } else {
             outcome.value = std::move(*value);
           }
           done(std::move(outcome));
         });
}

}  // namespace lathe::views
