// Weight offload planning: which weight units stay resident on the GPU and when the others are copied
// in, under a GPU weight-memory budget. It works on an abstract problem (segments in execution order,
// each with its compute time and the weight units it reads); the offload pass builds one from a graph.
//
// Model (algorithms.md §2.2, magicompiler.md §2):
// - One host-to-device copy stream, copies serial in deadline order (first use), each taking
//   bytes / h2dBandwidth + launchLatency. A segment starts when the previous one has ended and the
//   copies of the streamed units it reads have ended.
// - Loads: a streamed unit is copied once per run of uses, a run ending where a segment reads another
//   streamed unit before this one is read again (a training step copies a layer for its forward and
//   again for its backward; a layer split around a weightless attention segment is copied once).
//   A load holds its bytes from the start of its copy to the end of the last segment of its run.
// - Triggers: the copy of a load may start once the compute stream has reached its trigger segment
//   (every earlier segment has ended), as an event recorded on the compute stream before the segment
//   is launched. Prefetch::trigger <= deadline is a segment of the same step; trigger > deadline (only
//   when steps repeat) is a segment of the previous step: the wrap-around that overlaps the copy with
//   the previous step's tail. Copies are issued in trigger order.
// - Budget: resident bytes + bytes held by loads never exceed budgetBytes. Every policy delays a
//   trigger until the segments whose end releases enough memory have ended (the buffer it reuses);
//   a problem where even that does not fit is reported infeasible with Error(Usage).
// - Repeated steps are simulated from a cold start until the step time settles; the step reported
//   is the last simulated one (its wrapped copies start at negative times, in the previous step).
//
// Policies:
// - base: nothing resident; each load triggered at the segment before its first use, or two before
//   when that one reads no weights (MagiCompiler's BASE lookahead).
// - cost-effective: resident units by MagiCompiler's ratio (compute of the segments reading the unit
//   per byte, ascending) filled as a knapsack that skips what does not fit (not stop at the first
//   miss), up to residentFraction of all weight bytes or, without it, the budget; base triggers.
// - heuristic: MagiCompiler's just-in-time latest prefetch without its flaws: each copy triggered at
//   the latest segment that leaves its transfer time + margin before its deadline on the stall-free
//   timeline, the serial copy stream accounted for once (no double-counted weightless segments),
//   wrap-around for repeated steps, the budget never exceeded, and spare budget spent on keeping the
//   units with the highest stall risk resident (each kept when the simulated step does not get longer).
// - optimal: the resident set with the smallest simulated step time (ties: fewer resident bytes).
//   Up to 24 units: branch and bound, exact to within 0.1% of the step. The bound on a subtree is the
//   larger of compute and the copy time of what must be streamed: the undecided units that neither a
//   fractional knapsack nor a count of the units that fit can keep resident in the bytes left after
//   the buffers the streamed units need, each copied once per run of uses that cannot stay unsplit;
//   plus the compute of the segments reading streamed units where no two loads fit at once. More
//   units: greedy, largest transfer per compute first. Both start from the other policies' resident
//   sets and end with local improvement (add, drop or swap one unit). The search stops after
//   kOptimalEvaluations simulated sets (branch and bound gets three quarters of them, and 500k nodes):
//   on hard instances the result is the best found, not proven. Every set is simulated with the
//   earliest triggers the memory allows; the chosen one then gets as-late-as-possible triggers on its
//   simulated timeline (shorter buffer lifetimes, lower peak), kept when they do not slow the step.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/stream_sim.h"
#include "plan/plan_state.h"

namespace lathe::passes {

struct OffloadSegment {
  std::string name;
  double computeSeconds = 0;
  std::vector<int32_t> units;  // weight units read
};

struct OffloadProblem {
  std::vector<OffloadSegment> segments;  // execution order of one step (forward, then backward for training)
  std::vector<uint64_t> unitBytes;
  std::vector<std::string> unitNames;  // parallel to unitBytes, or empty
  double h2dBandwidth = 0;             // bytes/s, pinned
  double launchLatency = 0;            // seconds added per copy
  uint64_t budgetBytes = 0;            // GPU memory allowed for weights (resident + streaming buffers)
  bool repeated = true;                // steps repeat: prefetch for step k+1 may overlap the tail of step k
};

struct OffloadOptions {
  // Caps resident bytes at this fraction of all weight bytes (MagiCompiler's gpu_resident_weight_ratio);
  // the budget still bounds resident + streaming bytes.
  std::optional<double> residentFraction;
  double marginSeconds = 1e-4;  // slack kept between a copy's end and its deadline when timing copies late
};

inline constexpr std::string_view kOffloadPolicies[] = {"base", "cost-effective", "heuristic", "optimal"};

// Resident sets the optimal policy simulates at most before it settles for the best found.
inline constexpr int64_t kOptimalEvaluations = 2000;

// Plans and simulates; the decision's numbers describe the simulated step. Segments that read units
// of the same sizes, with compute times within 2% of the smallest of them, are planned and simulated at their
// mean: noise in measured times does not choose among equal layers. Throws Error(Usage) on an
// unknown policy, an inconsistent problem or options, and when the budget cannot hold the weights one
// segment needs together with what must stay loaded across it.
[[nodiscard]] plan::OffloadDecision planOffload(const OffloadProblem& problem, std::string_view policy,
                                                const OffloadOptions& options = {});

// The simulated steps behind a decision, for the Gantt view.
struct OffloadTimeline {
  analysis::SimResult sim;  // every simulated step back to back, from a cold start
  int32_t steps = 1;
  double stepStart = 0;  // where the reported (last) step begins in `sim`
};

// Simulates a decision's resident set and prefetches (copy-stream order, triggers, deadlines) and
// fills its step, compute, bubble, floor, peak and streamed numbers and each prefetch's start and
// end (relative to the step start). Throws Error(Usage) when the prefetches are not exactly one per
// load of the non-resident units, or a trigger is out of range.
OffloadTimeline simulateOffload(const OffloadProblem& problem, plan::OffloadDecision& decision);

// The task of each segment's compute in the reported (last) step of a timeline of `segments`
// segments per step (each stream runs its tasks in input order: the k-th compute task is segment
// k % segments of step k / segments).
[[nodiscard]] std::vector<analysis::TaskIndex> lastStepComputeTasks(const OffloadTimeline& timeline, size_t segments);

// r* = 1 - compute / transfer with nothing resident, clamped to [0, 1]: the least fraction of the
// streamed bytes that must stay resident for copies to hide behind compute.
[[nodiscard]] double residentFractionFloor(const OffloadProblem& problem);

}  // namespace lathe::passes
