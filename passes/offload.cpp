#include "passes/offload.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <utility>

#include "util/diagnostics.h"

namespace lathe::passes {

namespace {

using analysis::Edge;
using analysis::SimInput;
using analysis::SimResult;
using analysis::SimTask;
using analysis::Stream;
using analysis::TaskIndex;

constexpr size_t kExactUnitLimit = 24;  // units the optimal policy branches and bounds over
// Branch and bound drops a subtree whose bound is within this fraction of the best step found, and
// leaves the last quarter of the simulations to local improvement when it runs out of them.
constexpr double kOptimalityGap = 1e-3;
constexpr int64_t kBranchEvaluations = kOptimalEvaluations * 3 / 4;
constexpr int64_t kBranchNodes = 500000;  // about a third of a second
constexpr double kTolerance = 1e-9;  // relative, when comparing simulated times
constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Steps simulated for repeated schedules, tried in turn until the step time settles.
constexpr int32_t kStepCounts[] = {8, 32, 128};

std::string bytesText(uint64_t bytes) { return std::to_string(bytes) + " bytes"; }

bool sameTime(double a, double b) {
  return std::abs(a - b) <= kTolerance * std::max({std::abs(a), std::abs(b), 1e-12});
}

// One copy of a streamed unit and the run of segments it serves.
struct Load {
  int32_t unit = plan::kNone;
  int32_t deadline = 0;  // first segment of the run
  int32_t release = 0;   // last segment of the run: its end frees the bytes
  uint64_t bytes = 0;
};

// A resident set with its simulated step (infinite: the budget cannot hold it).
struct Outcome {
  std::vector<bool> resident;
  double stepSeconds = kInfinity;
  uint64_t residentBytes = 0;
};

// A shorter step, or the same step with fewer resident bytes: the smallest set that reaches a step.
bool better(const Outcome& a, const Outcome& b) {
  if (!std::isfinite(a.stepSeconds)) return false;
  if (!std::isfinite(b.stepSeconds) || !sameTime(a.stepSeconds, b.stepSeconds)) return a.stepSeconds < b.stepSeconds;
  return a.residentBytes < b.residentBytes;
}

// Triggers are global segment positions: 0..n-1 this step, negative the previous step.
struct Schedule {
  std::vector<bool> resident;
  uint64_t residentBytes = 0;
  std::vector<Load> loads;        // deadline order, which is also copy-stream order
  std::vector<int32_t> triggers;  // per load
};

// The simulated steady step of a schedule. Times are relative to the step's start (the end of the
// previous step's last segment; 0 without repetition).
struct Evaluation {
  double stepSeconds = 0;
  uint64_t peakBytes = 0;
  int32_t steps = 1;
  double stepStart = 0;  // absolute, in `sim`
  std::vector<double> segmentStart, segmentEnd, previousSegmentEnd;
  std::vector<double> copyStart, copyEnd;  // per load, copy-stream order
  SimResult sim;
};

// Measured compute times carry noise: eight identical layers measured 0.971-0.986 ms in one step
// on an H200, and which two of them stayed resident followed it (five different pairs in six
// attaches, docs/benchmarks.md). Segments that read units of the same sizes, with times within
// kLikeTimes of the smallest of them, are planned at their mean: equal layers tie, and every
// policy breaks a tie by unit order. Segments that differ by more keep their own times.
constexpr double kLikeTimes = 0.02;

OffloadProblem settledTimes(const OffloadProblem& problem) {
  OffloadProblem settled = problem;
  std::map<std::vector<uint64_t>, std::vector<size_t>> alike;  // sizes of the units read -> segments
  for (size_t j = 0; j < problem.segments.size(); ++j) {
    std::vector<uint64_t> sizes;
    for (const int32_t unit : problem.segments[j].units) {
      if (unit >= 0 && static_cast<size_t>(unit) < problem.unitBytes.size()) {
        sizes.push_back(problem.unitBytes[static_cast<size_t>(unit)]);
      }
    }
    if (!sizes.empty()) alike[std::move(sizes)].push_back(j);
  }
  const auto seconds = [&](size_t j) { return problem.segments[j].computeSeconds; };
  for (auto& [sizes, segments] : alike) {
    std::stable_sort(segments.begin(), segments.end(), [&](size_t a, size_t b) { return seconds(a) < seconds(b); });
    for (size_t begin = 0; begin < segments.size();) {
      const double limit = seconds(segments[begin]) * (1 + kLikeTimes);
      double sum = 0;
      size_t end = begin;
      for (; end < segments.size() && seconds(segments[end]) <= limit; ++end) sum += seconds(segments[end]);
      if (end == begin) end = begin + 1;  // a time no other compares with (not a number)
      for (size_t k = begin; k < end && end - begin > 1; ++k) {
        settled.segments[segments[k]].computeSeconds = sum / static_cast<double>(end - begin);
      }
      begin = end;
    }
  }
  return settled;
}

enum class Timing : uint8_t { Lookahead, JustInTime, Earliest };

class Planner {
 public:
  Planner(const OffloadProblem& problem, const OffloadOptions& options);

  [[nodiscard]] plan::OffloadDecision plan(std::string_view policy) const;
  [[nodiscard]] OffloadTimeline simulate(plan::OffloadDecision& decision) const;
  [[nodiscard]] double residentFractionFloor() const;

 private:
  [[nodiscard]] std::vector<Load> loadsFor(const std::vector<bool>& resident) const;
  [[nodiscard]] uint64_t residentBytes(const std::vector<bool>& resident) const;
  [[nodiscard]] double transferSeconds(uint64_t bytes) const {
    return static_cast<double>(bytes) / problem_.h2dBandwidth + problem_.launchLatency;
  }
  [[nodiscard]] int32_t earliest(int32_t deadline) const { return problem_.repeated ? deadline - n_ + 1 : 0; }
  [[nodiscard]] double nominalStart(int32_t position) const {
    return position >= 0 ? nominalStart_[static_cast<size_t>(position)]
                         : nominalStart_[static_cast<size_t>(position + n_)] - period_;
  }
  [[nodiscard]] std::string unitName(int32_t unit) const;

  [[nodiscard]] std::optional<std::vector<int32_t>> memoryTriggers(const std::vector<Load>& loads, uint64_t resident,
                                                                   std::string* why) const;
  void orderTriggers(std::vector<int32_t>& triggers) const;
  [[nodiscard]] std::vector<int32_t> lookaheadTriggers(const std::vector<Load>& loads) const;
  [[nodiscard]] std::vector<int32_t> latestTriggers(const std::vector<Load>& loads,
                                                    const std::function<double(size_t)>& deadlineTime,
                                                    const std::function<double(int32_t)>& fireTime,
                                                    const std::vector<double>& notBefore, double period) const;
  [[nodiscard]] std::optional<Schedule> schedule(const std::vector<bool>& resident, Timing timing,
                                                 std::string* why = nullptr) const;
  [[nodiscard]] Evaluation evaluate(uint64_t resident, const std::vector<Load>& loads,
                                    const std::vector<int32_t>& positions, bool named) const;
  [[nodiscard]] Evaluation evaluate(const Schedule& s) const {
    return evaluate(s.residentBytes, s.loads, s.triggers, false);
  }
  void fill(plan::OffloadDecision& decision, const std::vector<Load>& loads, const Evaluation& evaluation) const;

  [[nodiscard]] std::optional<std::vector<bool>> costEffectiveSet(std::string* why) const;
  [[nodiscard]] std::optional<std::vector<bool>> heuristicSet(std::string* why) const;
  [[nodiscard]] Outcome optimalSet() const;
  void branchAndBound(const std::vector<int32_t>& order, Outcome& best, int64_t& evaluations) const;
  void improveLocally(const std::vector<int32_t>& order, Outcome& best, int64_t& evaluations) const;
  [[nodiscard]] Outcome score(const std::vector<bool>& resident, int64_t& evaluations) const;
  [[nodiscard]] Schedule latestTimed(const Schedule& earliestSchedule, const Evaluation& earliestRun) const;

  const OffloadProblem problem_;  // as given, its like segments' times settled (settledTimes)
  OffloadOptions options_;
  int32_t n_ = 0;
  double period_ = 0;                 // compute of one step
  std::vector<double> nominalStart_;  // per segment and one past the end, without stalls
  std::vector<std::vector<int32_t>> segmentUnits_;  // distinct units per segment, in order
  std::vector<bool> segmentReadsWeights_;
  std::vector<double> unitCompute_;  // compute of the segments reading each unit
  std::vector<int32_t> candidates_;  // units with bytes that some segment reads
  uint64_t residentCap_ = 0;  // resident bytes allowed: the budget, or less with a resident fraction
};

Planner::Planner(const OffloadProblem& given, const OffloadOptions& options)
    : problem_(settledTimes(given)), options_(options) {
  const OffloadProblem& problem = problem_;
  const size_t unitCount = problem.unitBytes.size();
  if (!problem.unitNames.empty() && problem.unitNames.size() != unitCount) {
    throw Error(ErrorCode::Usage, "offload: " + std::to_string(problem.unitNames.size()) + " unit names for " +
                                      std::to_string(unitCount) + " units");
  }
  if (problem.segments.size() > static_cast<size_t>(INT32_MAX / 4) || unitCount > static_cast<size_t>(INT32_MAX)) {
    throw Error(ErrorCode::Usage, "offload: too many segments or units");
  }
  if (!std::isfinite(problem.launchLatency) || problem.launchLatency < 0) {
    throw Error(ErrorCode::Usage, "offload: launch latency must be a finite number of seconds >= 0");
  }
  if (options.residentFraction &&
      (!std::isfinite(*options.residentFraction) || *options.residentFraction < 0 || *options.residentFraction > 1)) {
    throw Error(ErrorCode::Usage, "offload: resident fraction must lie in [0, 1], got " +
                                      std::to_string(*options.residentFraction));
  }
  if (!std::isfinite(options.marginSeconds) || options.marginSeconds < 0) {
    throw Error(ErrorCode::Usage, "offload: margin must be a finite number of seconds >= 0");
  }
  n_ = static_cast<int32_t>(problem.segments.size());
  nominalStart_.assign(problem.segments.size() + 1, 0);
  segmentUnits_.resize(problem.segments.size());
  segmentReadsWeights_.assign(problem.segments.size(), false);
  unitCompute_.assign(unitCount, 0);
  std::vector<int32_t> seenAt(unitCount, -1);
  for (int32_t j = 0; j < n_; ++j) {
    const OffloadSegment& segment = problem.segments[static_cast<size_t>(j)];
    if (!std::isfinite(segment.computeSeconds) || segment.computeSeconds < 0) {
      throw Error(ErrorCode::Usage, "offload: segment '" + segment.name + "' has compute time " +
                                        std::to_string(segment.computeSeconds) + " s");
    }
    nominalStart_[static_cast<size_t>(j) + 1] = nominalStart_[static_cast<size_t>(j)] + segment.computeSeconds;
    for (const int32_t unit : segment.units) {
      if (unit < 0 || static_cast<size_t>(unit) >= unitCount) {
        throw Error(ErrorCode::Usage, "offload: segment '" + segment.name + "' reads unit " + std::to_string(unit) +
                                          ", which does not exist");
      }
      const auto u = static_cast<size_t>(unit);
      if (seenAt[u] == j) continue;
      seenAt[u] = j;
      segmentUnits_[static_cast<size_t>(j)].push_back(unit);
      unitCompute_[u] += segment.computeSeconds;
      if (problem.unitBytes[u] > 0) segmentReadsWeights_[static_cast<size_t>(j)] = true;
    }
  }
  period_ = nominalStart_.back();
  uint64_t totalBytes = 0;
  for (size_t u = 0; u < unitCount; ++u) {
    totalBytes += problem.unitBytes[u];
    if (seenAt[u] >= 0 && problem.unitBytes[u] > 0) candidates_.push_back(static_cast<int32_t>(u));
  }
  if (!candidates_.empty() && (!std::isfinite(problem.h2dBandwidth) || problem.h2dBandwidth <= 0)) {
    throw Error(ErrorCode::Usage, "offload: host-to-device bandwidth must be a finite number of bytes/s > 0");
  }
  residentCap_ = problem.budgetBytes;
  if (options.residentFraction) {
    const double fractionBytes = std::floor(*options.residentFraction * static_cast<double>(totalBytes));
    residentCap_ = std::min(residentCap_, static_cast<uint64_t>(fractionBytes));
  }
}

std::string Planner::unitName(int32_t unit) const {
  const auto u = static_cast<size_t>(unit);
  return u < problem_.unitNames.size() ? problem_.unitNames[u] : "unit " + std::to_string(unit);
}

uint64_t Planner::residentBytes(const std::vector<bool>& resident) const {
  uint64_t bytes = 0;
  for (size_t u = 0; u < resident.size(); ++u) {
    if (resident[u]) bytes += problem_.unitBytes[u];
  }
  return bytes;
}

std::vector<Load> Planner::loadsFor(const std::vector<bool>& resident) const {
  const size_t unitCount = problem_.unitBytes.size();
  const auto streamed = [&](int32_t unit) {
    const auto u = static_cast<size_t>(unit);
    return !resident[u] && problem_.unitBytes[u] > 0;
  };
  // readers[k]: segments before k that read a streamed unit; a run of uses ends where one lies between.
  std::vector<int32_t> readers(static_cast<size_t>(n_) + 1, 0);
  for (int32_t j = 0; j < n_; ++j) {
    const auto& units = segmentUnits_[static_cast<size_t>(j)];
    const bool reads = std::any_of(units.begin(), units.end(), streamed);
    readers[static_cast<size_t>(j) + 1] = readers[static_cast<size_t>(j)] + (reads ? 1 : 0);
  }
  std::vector<Load> loads;
  std::vector<int32_t> lastUse(unitCount, -1);
  std::vector<int32_t> openLoad(unitCount, -1);
  for (int32_t j = 0; j < n_; ++j) {
    for (const int32_t unit : segmentUnits_[static_cast<size_t>(j)]) {
      if (!streamed(unit)) continue;
      const auto u = static_cast<size_t>(unit);
      const bool continues =
          openLoad[u] >= 0 &&
          readers[static_cast<size_t>(j)] == readers[static_cast<size_t>(lastUse[u]) + 1];
      if (continues) {
        loads[static_cast<size_t>(openLoad[u])].release = j;
      } else {
        openLoad[u] = static_cast<int32_t>(loads.size());
        loads.push_back({unit, j, j, problem_.unitBytes[u]});
      }
      lastUse[u] = j;
    }
  }
  return loads;
}

// The earliest trigger of each load that keeps resident + loaded bytes within the budget. Copies run
// in deadline order, so when the copy of load i starts every earlier load has been copied, and the
// ones whose run ends before the trigger segment have been freed: trigger t is safe when
// resident + bytes_i + (earlier loads released at or after t) <= budget. Earlier loads include the
// whole previous step when steps repeat.
std::optional<std::vector<int32_t>> Planner::memoryTriggers(const std::vector<Load>& loads, uint64_t resident,
                                                            std::string* why) const {
  const uint64_t budget = problem_.budgetBytes;
  // releasedAt[p + n]: bytes of earlier loads freed at the end of global position p, p in [-n, n).
  std::vector<uint64_t> releasedAt(2 * static_cast<size_t>(n_), 0);
  if (problem_.repeated) {
    for (const Load& load : loads) releasedAt[static_cast<size_t>(load.release)] += load.bytes;
  }
  std::vector<int32_t> triggers(loads.size());
  for (size_t i = 0; i < loads.size(); ++i) {
    const Load& load = loads[i];
    const int32_t lo = earliest(load.deadline);
    const uint64_t need = resident + load.bytes;
    int32_t trigger = lo;
    uint64_t held = need;
    if (need > budget) {
      trigger = load.deadline + 1;
    } else {
      for (int32_t p = n_ - 1; p >= lo; --p) {
        held += releasedAt[static_cast<size_t>(p + n_)];
        if (held > budget) {
          trigger = p + 1;
          break;
        }
      }
    }
    if (trigger > load.deadline) {
      if (why) {
        uint64_t atDeadline = need;
        for (int32_t p = load.deadline; p < n_; ++p) atDeadline += releasedAt[static_cast<size_t>(p + n_)];
        *why = "the weight budget of " + bytesText(budget) + " cannot hold the " + bytesText(atDeadline) +
               " needed when segment '" + problem_.segments[static_cast<size_t>(load.deadline)].name +
               "' starts (" + bytesText(resident) + " resident, " + bytesText(load.bytes) + " of " +
               "'" + unitName(load.unit) + "' and loads still in use)";
      }
      return std::nullopt;
    }
    triggers[i] = trigger;
    releasedAt[static_cast<size_t>(load.release + n_)] += load.bytes;
  }
  return triggers;
}

// Copies are issued in trigger order, so triggers must not decrease along the deadline order (a
// trigger earlier than its predecessor's gains nothing: the copy would wait in the stream anyway),
// nor, around the repeated step, exceed the next step's first trigger.
void Planner::orderTriggers(std::vector<int32_t>& triggers) const {
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 1; i < triggers.size(); ++i) triggers[i] = std::max(triggers[i], triggers[i - 1]);
    if (!problem_.repeated || triggers.empty() || triggers.back() - n_ <= triggers.front()) break;
    triggers.front() = triggers.back() - n_;
  }
}

std::vector<int32_t> Planner::lookaheadTriggers(const std::vector<Load>& loads) const {
  std::vector<int32_t> triggers(loads.size());
  for (size_t i = 0; i < loads.size(); ++i) {
    const int32_t deadline = loads[i].deadline;
    int32_t trigger = deadline - 1;
    if (!segmentReadsWeights_[static_cast<size_t>((trigger + n_) % n_)]) --trigger;
    triggers[i] = std::max(trigger, earliest(deadline));
  }
  return triggers;
}

// As-late-as-possible timing (algorithms.md §2.2) on the serial copy stream: walking back from the
// last load, a copy ends by its deadline - margin and before the next copy starts (around the step
// when steps repeat); it is triggered at the latest segment that has been reached by then, never
// later than `notBefore` requires.
std::vector<int32_t> Planner::latestTriggers(const std::vector<Load>& loads,
                                             const std::function<double(size_t)>& deadlineTime,
                                             const std::function<double(int32_t)>& fireTime,
                                             const std::vector<double>& notBefore, double period) const {
  const size_t count = loads.size();
  std::vector<double> latestStart(count, 0);
  const int rounds = problem_.repeated ? 2 : 1;
  for (int round = 0; round < rounds; ++round) {
    double next = round == 0 || count == 0 ? kInfinity : latestStart.front() + period;
    for (size_t i = count; i-- > 0;) {
      const double end = std::min(deadlineTime(i) - options_.marginSeconds, next);
      latestStart[i] = end - transferSeconds(loads[i].bytes);
      next = latestStart[i];
    }
  }
  std::vector<int32_t> triggers(count);
  for (size_t i = 0; i < count; ++i) {
    const double target = std::max(latestStart[i], notBefore[i]);
    const double slack = kTolerance * std::max({period, std::abs(target), 1e-12});
    const int32_t lo = earliest(loads[i].deadline);
    int32_t trigger = lo;
    for (int32_t p = loads[i].deadline; p >= lo; --p) {
      if (fireTime(p) <= target + slack) {
        trigger = p;
        break;
      }
    }
    triggers[i] = trigger;
  }
  return triggers;
}

std::optional<Schedule> Planner::schedule(const std::vector<bool>& resident, Timing timing, std::string* why) const {
  Schedule s;
  s.resident = resident;
  s.residentBytes = residentBytes(resident);
  s.loads = loadsFor(resident);
  auto memory = memoryTriggers(s.loads, s.residentBytes, why);
  if (!memory) return std::nullopt;
  std::vector<int32_t> wanted;
  switch (timing) {
    case Timing::Earliest: wanted = *memory; break;
    case Timing::Lookahead: wanted = lookaheadTriggers(s.loads); break;
    case Timing::JustInTime:
      wanted = latestTriggers(
          s.loads, [&](size_t i) { return nominalStart(s.loads[i].deadline); },
          [&](int32_t p) { return nominalStart(p); }, std::vector<double>(s.loads.size(), -kInfinity), period_);
      break;
  }
  s.triggers.resize(s.loads.size());
  for (size_t i = 0; i < s.loads.size(); ++i) s.triggers[i] = std::max(wanted[i], (*memory)[i]);
  orderTriggers(s.triggers);
  return s;
}

Evaluation Planner::evaluate(uint64_t resident, const std::vector<Load>& loads, const std::vector<int32_t>& positions,
                             bool named) const {
  const auto n = static_cast<size_t>(n_);
  const size_t m = loads.size();
  std::vector<std::vector<size_t>> loadsBySegment(n);
  for (size_t i = 0; i < m; ++i) loadsBySegment[static_cast<size_t>(loads[i].deadline)].push_back(i);
  const size_t block = n + m;
  const auto computeTask = [&](size_t step, size_t segment) { return static_cast<TaskIndex>(step * block + segment); };
  const auto copyTask = [&](size_t step, size_t load) { return static_cast<TaskIndex>(step * block + n + load); };

  Evaluation result;
  std::vector<double> stepEnd;
  size_t steps = 1;
  for (const int32_t attempt : kStepCounts) {
    steps = problem_.repeated ? static_cast<size_t>(attempt) : 1;
    SimInput input;
    input.baseBytes = resident;
    input.tasks.resize(steps * block);
    for (size_t s = 0; s < steps; ++s) {
      for (size_t j = 0; j < n; ++j) {
        SimTask& task = input.tasks[static_cast<size_t>(computeTask(s, j))];
        if (named) task.name = problem_.segments[j].name;
        task.seconds = problem_.segments[j].computeSeconds;
        for (const size_t i : loadsBySegment[j]) task.after.push_back({copyTask(s, i), Edge::End});
      }
      for (size_t i = 0; i < m; ++i) {
        SimTask& task = input.tasks[static_cast<size_t>(copyTask(s, i))];
        if (named) task.name = "h2d " + unitName(loads[i].unit);
        task.stream = Stream::HostToDevice;
        task.seconds = transferSeconds(loads[i].bytes);
        task.bytes = loads[i].bytes;
        task.freedBy = computeTask(s, static_cast<size_t>(loads[i].release));
        // Triggered once the segment before the trigger position has ended.
        const int64_t before = static_cast<int64_t>(s) * n_ + positions[i] - 1;
        if (before >= 0) {
          const TaskIndex trigger = computeTask(static_cast<size_t>(before / n_), static_cast<size_t>(before % n_));
          task.after.push_back({trigger, Edge::End});
        }
      }
    }
    result.sim = analysis::simulateStreams(input);
    stepEnd.assign(steps, 0);
    for (size_t s = 0; s < steps; ++s) stepEnd[s] = result.sim.tasks[static_cast<size_t>(computeTask(s, n - 1))].end;
    if (!problem_.repeated) break;
    // Settled when the last two pairs of steps take equally long (a pair also covers schedules that
    // alternate between two step lengths); otherwise more steps, and at the last attempt the average
    // over the second half.
    const double lastPair = stepEnd[steps - 1] - stepEnd[steps - 3];
    const double pairBefore = stepEnd[steps - 3] - stepEnd[steps - 5];
    if (sameTime(lastPair, pairBefore)) break;
  }
  if (problem_.repeated) {
    const size_t half = steps / 2;
    result.stepSeconds = (stepEnd[steps - 1] - stepEnd[steps - 1 - half]) / static_cast<double>(half);
    result.stepStart = stepEnd[steps - 2];
  } else {
    result.stepSeconds = stepEnd[0];
  }
  result.steps = static_cast<int32_t>(steps);
  result.peakBytes = result.sim.peakBytes;
  const size_t last = steps - 1;
  const auto at = [&](TaskIndex task) -> const analysis::TaskRecord& {
    return result.sim.tasks[static_cast<size_t>(task)];
  };
  for (size_t j = 0; j < n; ++j) {
    result.segmentStart.push_back(at(computeTask(last, j)).start - result.stepStart);
    result.segmentEnd.push_back(at(computeTask(last, j)).end - result.stepStart);
    if (last > 0) result.previousSegmentEnd.push_back(at(computeTask(last - 1, j)).end - result.stepStart);
  }
  for (size_t i = 0; i < m; ++i) {
    result.copyStart.push_back(at(copyTask(last, i)).start - result.stepStart);
    result.copyEnd.push_back(at(copyTask(last, i)).end - result.stepStart);
  }
  return result;
}

void Planner::fill(plan::OffloadDecision& decision, const std::vector<Load>& loads,
                   const Evaluation& evaluation) const {
  decision.budgetBytes = problem_.budgetBytes;
  decision.computeSeconds = period_;
  decision.stepSeconds = evaluation.stepSeconds;
  decision.bubbleSeconds = std::max(0.0, evaluation.stepSeconds - period_);
  decision.streamedBytes = 0;
  for (const Load& load : loads) decision.streamedBytes += load.bytes;
  const double transfer =
      decision.streamedBytes > 0 ? static_cast<double>(decision.streamedBytes) / problem_.h2dBandwidth : 0;
  decision.floorSeconds = std::max(period_, transfer);
  decision.peakWeightBytes = evaluation.peakBytes;
  for (size_t i = 0; i < decision.prefetches.size(); ++i) {
    decision.prefetches[i].start = evaluation.copyStart[i];
    decision.prefetches[i].end = evaluation.copyEnd[i];
  }
}

std::optional<std::vector<bool>> Planner::costEffectiveSet(std::string* why) const {
  std::vector<int32_t> order = candidates_;
  // MagiCompiler's ratio: compute per byte, ascending (transfer-heavy, compute-light first).
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto ua = static_cast<size_t>(a);
    const auto ub = static_cast<size_t>(b);
    return unitCompute_[ua] / static_cast<double>(problem_.unitBytes[ua]) <
           unitCompute_[ub] / static_cast<double>(problem_.unitBytes[ub]);
  });
  std::vector<bool> resident(problem_.unitBytes.size(), false);
  uint64_t kept = 0;
  for (const int32_t unit : order) {
    const uint64_t bytes = problem_.unitBytes[static_cast<size_t>(unit)];
    if (kept + bytes > residentCap_) continue;
    resident[static_cast<size_t>(unit)] = true;
    if (schedule(resident, Timing::Lookahead)) {
      kept += bytes;
    } else {
      resident[static_cast<size_t>(unit)] = false;
    }
  }
  if (!schedule(resident, Timing::Lookahead, why)) return std::nullopt;
  return resident;
}

std::optional<std::vector<bool>> Planner::heuristicSet(std::string* why) const {
  std::vector<bool> resident(problem_.unitBytes.size(), false);
  std::optional<Schedule> current = schedule(resident, Timing::JustInTime, why);
  if (!current) return std::nullopt;
  Evaluation run = evaluate(*current);
  uint64_t kept = 0;
  // A unit tried and turned down is not tried again: at most one simulation per unit.
  std::vector<bool> tried(problem_.unitBytes.size(), false);
  for (;;) {
    // Stall risk of each streamed unit on the simulated plan: the compute stall its copies cause,
    // then how little slack they leave before their deadlines.
    struct Risk {
      int32_t unit;
      double stall = 0;
      double slack = kInfinity;
    };
    std::map<int32_t, Risk> risks;
    for (size_t i = 0; i < current->loads.size(); ++i) {
      const Load& load = current->loads[i];
      const auto d = static_cast<size_t>(load.deadline);
      Risk& risk = risks.try_emplace(load.unit, Risk{load.unit}).first->second;
      const double start = run.segmentStart[d];
      const double free = d > 0 ? run.segmentEnd[d - 1] : 0;
      if (start > free && sameTime(start, run.copyEnd[i])) risk.stall += start - free;
      risk.slack = std::min(risk.slack, start - run.copyEnd[i]);
    }
    std::vector<Risk> ranked;
    for (const auto& [unit, risk] : risks) {
      const auto u = static_cast<size_t>(unit);
      if (!tried[u] && kept + problem_.unitBytes[u] <= residentCap_) ranked.push_back(risk);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [&](const Risk& a, const Risk& b) {
      if (a.stall != b.stall) return a.stall > b.stall;
      if (a.slack != b.slack) return a.slack < b.slack;
      return problem_.unitBytes[static_cast<size_t>(a.unit)] > problem_.unitBytes[static_cast<size_t>(b.unit)];
    });
    bool added = false;
    for (const Risk& risk : ranked) {
      const auto u = static_cast<size_t>(risk.unit);
      tried[u] = true;
      resident[u] = true;
      // Spare budget only: the unit stays resident when the plan still fits and is no slower.
      if (std::optional<Schedule> trial = schedule(resident, Timing::JustInTime)) {
        Evaluation trialRun = evaluate(*trial);
        if (trialRun.stepSeconds <= run.stepSeconds || sameTime(trialRun.stepSeconds, run.stepSeconds)) {
          kept += problem_.unitBytes[u];
          current = std::move(trial);
          run = std::move(trialRun);
          added = true;
          break;
        }
      }
      resident[u] = false;
    }
    if (!added) return resident;
  }
}

Outcome Planner::score(const std::vector<bool>& resident, int64_t& evaluations) const {
  ++evaluations;
  Outcome outcome{resident, kInfinity, residentBytes(resident)};
  if (std::optional<Schedule> s = schedule(resident, Timing::Earliest)) outcome.stepSeconds = evaluate(*s).stepSeconds;
  return outcome;
}

// Depth-first over the units in `order`, resident branch first. The bound on any completion is
// max(compute, copy time of what must be streamed): decided streamed units with their loads counted
// as if every undecided unit stayed resident (more streamed units only split runs further), plus
// the undecided units that a fractional knapsack cannot fit into the resident bytes left.
void Planner::branchAndBound(const std::vector<int32_t>& order, Outcome& best, int64_t& evaluations) const {
  const size_t count = order.size();
  std::vector<size_t> bitOf(problem_.unitBytes.size(), 0);
  for (size_t a = 0; a < count; ++a) bitOf[static_cast<size_t>(order[a])] = a;
  // gapMasks[a]: per gap between consecutive uses of unit a, the units read inside it.
  std::vector<std::vector<uint32_t>> gapMasks(count);
  std::vector<uint32_t> segmentMask(static_cast<size_t>(n_), 0);
  std::vector<bool> candidate(problem_.unitBytes.size(), false);
  for (const int32_t unit : order) candidate[static_cast<size_t>(unit)] = true;
  for (size_t j = 0; j < segmentMask.size(); ++j) {
    for (const int32_t unit : segmentUnits_[j]) {
      if (candidate[static_cast<size_t>(unit)]) segmentMask[j] |= 1U << bitOf[static_cast<size_t>(unit)];
    }
  }
  for (size_t a = 0; a < count; ++a) {
    int32_t previous = -1;
    for (int32_t j = 0; j < n_; ++j) {
      if (!(segmentMask[static_cast<size_t>(j)] & (1U << a))) continue;
      if (previous >= 0) {
        uint32_t mask = 0;
        for (int32_t k = previous + 1; k < j; ++k) mask |= segmentMask[static_cast<size_t>(k)];
        gapMasks[a].push_back(mask);
      }
      previous = j;
    }
  }
  // Copy time of unit a when streamed: one copy per run of uses. A gap splits the run when it holds a
  // streamed unit, or more undecided units than can still be kept resident (`fitting`).
  const auto copySeconds = [&](size_t a, uint32_t streamedMask, uint32_t undecidedMask, uint64_t fitting) {
    double runs = 1;
    const uint32_t others = ~(1U << a);
    for (const uint32_t mask : gapMasks[a]) {
      const bool split = (mask & streamedMask & others) != 0 ||
                         static_cast<uint64_t>(__builtin_popcount(mask & undecidedMask & others)) > fitting;
      runs += split ? 1 : 0;
    }
    return runs * transferSeconds(problem_.unitBytes[static_cast<size_t>(order[a])]);
  };
  const uint64_t budget = problem_.budgetBytes;
  const uint64_t cap = std::min(residentCap_, budget);
  const auto unitBytes = [&](size_t a) { return problem_.unitBytes[static_cast<size_t>(order[a])]; };
  std::vector<bool> resident(problem_.unitBytes.size(), false);
  std::vector<size_t> undecided;
  std::vector<double> undecidedCosts;
  std::vector<double> costOf(count, 0);
  int64_t nodes = 0;
  const std::function<void(size_t, uint64_t, uint32_t)> visit = [&](size_t a, uint64_t kept, uint32_t streamedMask) {
    if (evaluations >= kBranchEvaluations || ++nodes > kBranchNodes) return;
    // Each segment holds the streamed units it reads: the resident bytes must leave room for the
    // largest such need, and segments reading streamed units are known.
    uint64_t need = 0;
    double streamedCompute = 0;
    for (size_t j = 0; j < segmentMask.size(); ++j) {
      uint64_t bytes = 0;
      for (uint32_t bits = segmentMask[j] & streamedMask; bits != 0; bits &= bits - 1) {
        bytes += unitBytes(static_cast<size_t>(__builtin_ctz(bits)));
      }
      need = std::max(need, bytes);
      if (bytes > 0) streamedCompute += problem_.segments[j].computeSeconds;
    }
    if (kept + need > budget) return;
    // Units decided streamed cost their copies; of the undecided, the ones a knapsack cannot keep
    // resident in the bytes left are streamed too.
    const uint64_t room = std::min(cap, budget - need) - kept;
    const uint32_t undecidedMask = static_cast<uint32_t>(((uint64_t{1} << count) - 1) & ~((uint64_t{1} << a) - 1));
    uint64_t smallestUndecided = UINT64_MAX;
    uint64_t smallest = UINT64_MAX;  // of the units that may be streamed
    for (size_t b = 0; b < count; ++b) {
      if (b >= a) smallestUndecided = std::min(smallestUndecided, unitBytes(b));
      if (b >= a || (streamedMask & (1U << b))) smallest = std::min(smallest, unitBytes(b));
    }
    const auto copiesWithin = [&](uint64_t bytesLeft) {
      // At most `fitting` undecided units can still become resident.
      const uint64_t fitting = a < count ? bytesLeft / smallestUndecided : 0;
      double transfer = 0;
      for (size_t b = 0; b < a; ++b) {
        if (streamedMask & (1U << b)) transfer += copySeconds(b, streamedMask, undecidedMask, fitting);
      }
      undecided.clear();
      undecidedCosts.clear();
      double undecidedCost = 0;
      for (size_t b = a; b < count; ++b) {
        undecided.push_back(b);
        costOf[b] = copySeconds(b, streamedMask | (1U << b), undecidedMask, fitting);
        undecidedCosts.push_back(costOf[b]);
        undecidedCost += costOf[b];
      }
      std::sort(undecided.begin(), undecided.end(), [&](size_t x, size_t y) {
        return costOf[x] / static_cast<double>(unitBytes(x)) > costOf[y] / static_cast<double>(unitBytes(y));
      });
      std::sort(undecidedCosts.begin(), undecidedCosts.end(), std::greater<>());
      // Saved by keeping undecided units: at most what a fractional knapsack saves, and at most the
      // costliest `fitting` units.
      double left = static_cast<double>(bytesLeft);
      double fractional = 0;
      for (const size_t b : undecided) {
        if (left <= 0) break;
        const double bytes = static_cast<double>(unitBytes(b));
        const double share = std::min(1.0, left / bytes);
        fractional += share * costOf[b];
        left -= share * bytes;
      }
      double costliest = 0;
      for (size_t k = 0; k < undecidedCosts.size() && k < fitting; ++k) costliest += undecidedCosts[k];
      return transfer + std::max(0.0, undecidedCost - std::min(fractional, costliest));
    };
    const auto boundWith = [&](uint64_t roomLeft) {
      const auto copies = copiesWithin;
      if (streamedMask == 0 || smallest > budget / 2) return std::max(period_, copies(roomLeft));
      // Completions that leave room for two loads beside the resident bytes, and the others: there no
      // copy runs while a streamed unit is in use.
      const uint64_t twoLoads = 2 * smallest;
      double lowest = kInfinity;
      if (kept + twoLoads <= budget) lowest = copies(std::min(roomLeft, budget - twoLoads - kept));
      if (kept + roomLeft + twoLoads > budget) lowest = std::min(lowest, copies(roomLeft) + streamedCompute);
      return std::max(period_, lowest);
    };
    // A completion wins with a step more than the gap shorter, or the same step and fewer resident bytes.
    if (boundWith(room) >= best.stepSeconds * (1 - kOptimalityGap)) {
      if (kept >= best.residentBytes) return;
      const double fewer = boundWith(std::min(room, best.residentBytes - 1 - kept));
      if (fewer > best.stepSeconds && !sameTime(fewer, best.stepSeconds)) return;
    }
    if (a == count) {
      Outcome outcome = score(resident, evaluations);
      if (better(outcome, best)) best = std::move(outcome);
      return;
    }
    const auto unit = static_cast<size_t>(order[a]);
    if (kept + problem_.unitBytes[unit] <= cap) {
      resident[unit] = true;
      visit(a + 1, kept + problem_.unitBytes[unit], streamedMask);
      resident[unit] = false;
    }
    visit(a + 1, kept, streamedMask | (1U << a));
  };
  visit(0, 0, 0);
}

// Adds, drops or swaps one unit while that improves the outcome.
void Planner::improveLocally(const std::vector<int32_t>& order, Outcome& best, int64_t& evaluations) const {
  const uint64_t cap = std::min(residentCap_, problem_.budgetBytes);
  const auto tryMove = [&](std::vector<bool> resident) {
    if (residentBytes(resident) > cap || evaluations >= kOptimalEvaluations) return false;
    Outcome outcome = score(resident, evaluations);
    if (!better(outcome, best)) return false;
    best = std::move(outcome);
    return true;
  };
  bool improved = true;
  while (improved && evaluations < kOptimalEvaluations) {
    improved = false;
    for (const int32_t unit : order) {
      std::vector<bool> resident = best.resident;
      resident[static_cast<size_t>(unit)] = !resident[static_cast<size_t>(unit)];
      if (tryMove(std::move(resident))) improved = true;
    }
    for (const int32_t out : order) {
      if (!best.resident[static_cast<size_t>(out)]) continue;
      for (const int32_t in : order) {
        if (best.resident[static_cast<size_t>(in)] || !best.resident[static_cast<size_t>(out)]) continue;
        std::vector<bool> resident = best.resident;
        resident[static_cast<size_t>(out)] = false;
        resident[static_cast<size_t>(in)] = true;
        if (tryMove(std::move(resident))) improved = true;
      }
    }
  }
}

Outcome Planner::optimalSet() const {
  int64_t evaluations = 0;
  const std::vector<bool> none(problem_.unitBytes.size(), false);
  Outcome best = score(none, evaluations);
  for (auto seed : {costEffectiveSet(nullptr), heuristicSet(nullptr)}) {
    if (!seed) continue;
    Outcome outcome = score(*seed, evaluations);
    if (better(outcome, best)) best = std::move(outcome);
  }
  // Largest transfer per compute first: the LP relaxation's order (algorithms.md §2.2).
  std::vector<int32_t> order = candidates_;
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto ua = static_cast<size_t>(a);
    const auto ub = static_cast<size_t>(b);
    return static_cast<double>(problem_.unitBytes[ua]) * unitCompute_[ub] >
           static_cast<double>(problem_.unitBytes[ub]) * unitCompute_[ua];
  });
  if (order.size() <= kExactUnitLimit) {
    branchAndBound(order, best, evaluations);
  } else {
    const uint64_t cap = std::min(residentCap_, problem_.budgetBytes);
    Outcome greedy = score(none, evaluations);
    uint64_t kept = 0;
    for (const int32_t unit : order) {
      const uint64_t bytes = problem_.unitBytes[static_cast<size_t>(unit)];
      if (kept + bytes > cap || evaluations >= kBranchEvaluations) continue;
      std::vector<bool> resident = greedy.resident;
      resident[static_cast<size_t>(unit)] = true;
      Outcome outcome = score(resident, evaluations);
      if (better(outcome, greedy)) {
        greedy = std::move(outcome);
        kept += bytes;
      }
    }
    if (better(greedy, best)) best = std::move(greedy);
  }
  // Finds nothing after a complete branch and bound; improves on one that ran out of simulations.
  improveLocally(order, best, evaluations);
  return best;
}

// Moves each copy of an earliest-timed schedule as late as its simulated timeline allows: same step,
// shorter buffer lifetimes.
Schedule Planner::latestTimed(const Schedule& earliestSchedule, const Evaluation& earliestRun) const {
  Schedule s = earliestSchedule;
  const auto fire = [&](int32_t p) {
    if (p > 0) return earliestRun.segmentEnd[static_cast<size_t>(p - 1)];
    if (p == 0) return 0.0;
    return earliestRun.previousSegmentEnd[static_cast<size_t>(p - 1 + n_)];
  };
  s.triggers = latestTriggers(
      s.loads, [&](size_t i) { return earliestRun.segmentStart[static_cast<size_t>(s.loads[i].deadline)]; }, fire,
      earliestRun.copyStart, earliestRun.stepSeconds);
  for (size_t i = 0; i < s.triggers.size(); ++i) s.triggers[i] = std::max(s.triggers[i], earliestSchedule.triggers[i]);
  orderTriggers(s.triggers);
  return s;
}

plan::OffloadDecision Planner::plan(std::string_view policy) const {
  const std::vector<bool> none(problem_.unitBytes.size(), false);
  if (n_ == 0) {
    plan::OffloadDecision decision;
    decision.policy = std::string(policy);
    decision.resident = none;
    fill(decision, {}, Evaluation{});
    return decision;
  }
  std::string why;
  std::optional<Schedule> chosen;
  std::optional<Evaluation> run;
  if (policy == "base") {
    chosen = schedule(none, Timing::Lookahead, &why);
  } else if (policy == "cost-effective") {
    if (auto resident = costEffectiveSet(&why)) chosen = schedule(*resident, Timing::Lookahead, &why);
  } else if (policy == "heuristic") {
    if (auto resident = heuristicSet(&why)) chosen = schedule(*resident, Timing::JustInTime, &why);
  } else if (policy == "optimal") {
    const Outcome best = optimalSet();
    if (std::isfinite(best.stepSeconds)) {
      chosen = schedule(best.resident, Timing::Earliest, &why);
      run = evaluate(*chosen);
      Schedule late = latestTimed(*chosen, *run);
      Evaluation lateRun = evaluate(late);
      if (lateRun.stepSeconds <= run->stepSeconds || sameTime(lateRun.stepSeconds, run->stepSeconds)) {
        chosen = std::move(late);
        run = std::move(lateRun);
      }
    } else {
      (void)schedule(none, Timing::Earliest, &why);
    }
  }
  if (!chosen) throw Error(ErrorCode::Usage, "offload(policy=" + std::string(policy) + "): " + why);
  if (!run) run = evaluate(*chosen);

  plan::OffloadDecision decision;
  decision.policy = std::string(policy);
  decision.resident = chosen->resident;
  for (size_t i = 0; i < chosen->loads.size(); ++i) {
    const int32_t trigger = chosen->triggers[i];
    decision.prefetches.push_back(
        {chosen->loads[i].unit, trigger >= 0 ? trigger : trigger + n_, chosen->loads[i].deadline, 0, 0});
  }
  fill(decision, chosen->loads, *run);
  if (decision.peakWeightBytes > problem_.budgetBytes) {
    throw Error(ErrorCode::Internal, "offload(policy=" + decision.policy + "): planned " +
                                         bytesText(decision.peakWeightBytes) + " of weights for a budget of " +
                                         bytesText(problem_.budgetBytes));
  }
  return decision;
}

OffloadTimeline Planner::simulate(plan::OffloadDecision& decision) const {
  if (decision.resident.size() != problem_.unitBytes.size()) {
    throw Error(ErrorCode::Usage, "offload: the decision has " + std::to_string(decision.resident.size()) +
                                      " resident flags for " + std::to_string(problem_.unitBytes.size()) + " units");
  }
  const std::vector<Load> loads = loadsFor(decision.resident);
  std::map<std::pair<int32_t, int32_t>, size_t> loadAt;  // (unit, deadline) -> load
  for (size_t i = 0; i < loads.size(); ++i) loadAt[{loads[i].unit, loads[i].deadline}] = i;
  std::vector<bool> covered(loads.size(), false);
  std::vector<Load> fifo;
  std::vector<int32_t> positions;
  for (const plan::Prefetch& prefetch : decision.prefetches) {
    const auto found = loadAt.find({prefetch.unit, prefetch.deadline});
    if (found == loadAt.end() || covered[found->second]) {
      throw Error(ErrorCode::Usage, "offload: the prefetch of unit " + std::to_string(prefetch.unit) + " for segment " +
                                        std::to_string(prefetch.deadline) +
                                        (found == loadAt.end() ? " starts no run of uses of a streamed unit"
                                                               : " appears twice"));
    }
    const bool wraps = prefetch.trigger > prefetch.deadline;
    if (prefetch.trigger < 0 || prefetch.trigger >= n_ || (wraps && !problem_.repeated)) {
      throw Error(ErrorCode::Usage, "offload: the prefetch of unit " + std::to_string(prefetch.unit) +
                                        " has trigger " + std::to_string(prefetch.trigger) + " for deadline " +
                                        std::to_string(prefetch.deadline));
    }
    covered[found->second] = true;
    fifo.push_back(loads[found->second]);
    positions.push_back(wraps ? prefetch.trigger - n_ : prefetch.trigger);
  }
  for (size_t i = 0; i < loads.size(); ++i) {
    if (!covered[i]) {
      throw Error(ErrorCode::Usage, "offload: '" + unitName(loads[i].unit) + "' is read by segment '" +
                                        problem_.segments[static_cast<size_t>(loads[i].deadline)].name +
                                        "' but is neither resident nor prefetched");
    }
  }
  OffloadTimeline timeline;
  if (n_ == 0) {
    fill(decision, fifo, Evaluation{});
    return timeline;
  }
  Evaluation run = evaluate(residentBytes(decision.resident), fifo, positions, true);
  fill(decision, fifo, run);
  timeline.steps = run.steps;
  timeline.stepStart = run.stepStart;
  timeline.sim = std::move(run.sim);
  return timeline;
}

double Planner::residentFractionFloor() const {
  uint64_t streamed = 0;
  for (const Load& load : loadsFor(std::vector<bool>(problem_.unitBytes.size(), false))) streamed += load.bytes;
  if (streamed == 0) return 0;
  const double transfer = static_cast<double>(streamed) / problem_.h2dBandwidth;
  return std::clamp(1 - period_ / transfer, 0.0, 1.0);
}

}  // namespace

plan::OffloadDecision planOffload(const OffloadProblem& problem, std::string_view policy,
                                  const OffloadOptions& options) {
  if (std::find(std::begin(kOffloadPolicies), std::end(kOffloadPolicies), policy) == std::end(kOffloadPolicies)) {
    throw Error(ErrorCode::Usage, "offload: unknown policy '" + std::string(policy) +
                                      "' (base, cost-effective, heuristic, optimal)");
  }
  return Planner(problem, options).plan(policy);
}

OffloadTimeline simulateOffload(const OffloadProblem& problem, plan::OffloadDecision& decision) {
  return Planner(problem, {}).simulate(decision);
}

double residentFractionFloor(const OffloadProblem& problem) { return Planner(problem, {}).residentFractionFloor(); }

std::vector<analysis::TaskIndex> lastStepComputeTasks(const OffloadTimeline& timeline, size_t segments) {
  std::vector<analysis::TaskIndex> tasks;
  if (segments == 0) return tasks;
  const auto lastStep = static_cast<size_t>(timeline.steps - 1);
  size_t computeSeen = 0;
  for (size_t t = 0; t < timeline.sim.tasks.size(); ++t) {
    if (timeline.sim.tasks[t].stream != analysis::Stream::Compute) continue;
    if (computeSeen / segments == lastStep) tasks.push_back(static_cast<analysis::TaskIndex>(t));
    ++computeSeen;
  }
  return tasks;
}

}  // namespace lathe::passes
