// MagiCompiler's introspection dumps (magi_depyf, reference/magicompiler.md §4): a run folder
// `magi_depyf/run_<time>/model_<idx>_<name>_rank_<r>/` per compiled model, or the folder
// `explain_compilation(dir)` writes, each with
//   timeline_events/timeline.jsonl (+ files/<index>_<name>/[submod_<k>/]...): the compile's lifecycle;
//   compiled_functions/<fn>/entry_<k>/: Dynamo's cache entries, with decompiled code, guards.txt,
//     compiled_fns/<fn>.py (the captured graph), <fn>_split_graph.py and <fn>/submod_<k>/ (the
//     pieces: graph_module.py, inductor_output.py, README.txt naming splitting ops), resume_fns/.
//
// The compiled functions load as a TORCH_TRACE log would hold them: one compile per cache entry,
// its graphs, guards and code, so that every view and command of trace logs reads a dump too; the
// timeline, which trace logs do not have, comes beside it. Damage (a JSON line that does not parse,
// a graph file that is not one) is a diagnostic with file:line and loading goes on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/trace/trace_log.h"
#include "util/progress.h"

namespace lathe::io {

enum class MagiPhase : uint8_t { Before, After, Failed, Skipped, Mark };

// One line of timeline.jsonl.
struct MagiTimelineEvent {
  int64_t index = 0;
  std::string name;       // as logged: "subgraph_0_after_postcleanuppass"
  std::string scope;      // "fullgraph", or the piece ("submod_0") an event of one piece is about
  std::string lifecycle;  // "compiler_compile", "PostCleanupPass", "inductor_schedule"
  MagiPhase phase = MagiPhase::Mark;
  double seconds = 0;                // since the timeline's first event
  // After/failed events: the lifecycle's duration as logged, else the time since its before event.
  std::optional<double> durationS;
  std::string attributes;            // the attributes object as JSON text
  std::string error;                 // attributes.exception_type (failed events), else empty
  std::vector<std::filesystem::path> files;  // the event's files that exist, in the order listed
  uint64_t line = 0;                 // in timeline.jsonl
};

// One compiled model (one folder with timeline_events/ or compiled_functions/).
struct MagiModel {
  std::string name;  // "TwoLayers" for model_1_TwoLayers_rank_0, else the folder's name
  std::filesystem::path folder;
  int32_t rank = -1;
  std::filesystem::path timelineFile;  // empty when the model has no timeline
  std::vector<MagiTimelineEvent> timeline;
  std::vector<std::string> compiles;  // ids of its compiles in the log
};

// Time per lifecycle over a model's timeline: the durations of its after and failed events, most
// time first. Lifecycles nest (compiler_compile runs inside piecewise_compile), so totals overlap.
struct MagiLifecycleTotal {
  std::string lifecycle;
  size_t runs = 0;    // after and failed events
  size_t failed = 0;  // failed events
  size_t timed = 0;   // runs with a duration (logged, or from their before event); marks have none
  double seconds = 0;
  std::string lastError;  // exception_type of the last failure
};
[[nodiscard]] std::vector<MagiLifecycleTotal> magiLifecycleTotals(const MagiModel& model);

struct MagiDump {
  std::filesystem::path root;
  std::vector<MagiModel> models;
};

struct MagiDumpLoad {
  MagiDump dump;
  TraceLog log;  // the compiled functions as a trace log holds compiles (diagnostics of both here)
};

// Whether `path` is (or holds, a few folders down) a magi_depyf dump.
[[nodiscard]] bool isMagiDump(const std::filesystem::path& path);

// Loads every model of a dump folder (a run folder, a model folder, the cache root above
// magi_depyf/, or an explain_compilation folder). Progress counts files read; cancellation throws
// Error(Cancelled). Throws Error(BadInput) when the path holds no dump.
[[nodiscard]] MagiDumpLoad loadMagiDump(const std::filesystem::path& path, const Progress& progress = {});

}  // namespace lathe::io
