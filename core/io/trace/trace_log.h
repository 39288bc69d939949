// TORCH_TRACE structured logs (formats.md §1): one file, a .gz, or a directory of rank files,
// read as a stream of records (glog-style header line + TAB-led payload lines, md5-checked),
// grouped into compiles the way tlparse does, with every graph payload parsed into an ir::Graph.
//
// Damage (md5 mismatch, bad JSON, stray lines, a graph that does not parse, truncated gzip) is a
// warning with file:line and loading goes on; only an unreadable input throws Error(BadInput).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "io/trace/trace_event.h"
#include "ir/graph.h"
#include "util/diagnostics.h"
#include "util/progress.h"

namespace lathe::io {

// One input file (a directory holds one per rank).
struct TraceFile {
  std::filesystem::path path;
  // Envelope `rank` (first one seen), else from the file name, else -1. A file claiming the rank of
  // an earlier one (copied logs) takes the rank in its name instead, with a "rank_conflict" note.
  int32_t rank = -1;
  uint64_t bytes = 0;  // size on disk (compressed size for .gz)
  // Interned paths defined by `{"str": [path, id]}` records of this file; stack frames refer to them.
  std::unordered_map<int64_t, std::string> strings;
};

struct StackFrame {
  std::string file;  // resolved through the file's string table; "<unknown #N>" when N is undefined
  int64_t line = 0;
  std::string function;
  std::string code;  // `loc`: the source line, when logged
};

enum class CompileStatus : uint8_t { Ok, Failed, Unknown };
[[nodiscard]] std::string_view compileStatusName(CompileStatus status);  // "ok", "failed", "unknown"

// dynamo_cpp_guards_str text / dynamo_guards JSON / MagiCompiler's guards.txt (io/magi/magi_dump.h)
enum class GuardFormat : uint8_t { None, CppTree, Json, MagiTree };

// One compile attempt: everything logged under one compile id (frame/frame_compile_id/attempt,
// compiled autograd id) in one file, i.e. by one process.
struct TraceCompile {
  std::string id;     // "0/1", "0/1_1" (attempt 1), "!3/0/1" (compiled autograd), "!3"
  int32_t rank = -1;  // rank of its file
  std::optional<int64_t> compiledAutogradId, frameId, frameCompileId;
  int64_t attempt = 0;

  // The compiled frame: from compilation_metrics co_name/co_filename/co_firstlineno, else the
  // innermost frame of the dynamo_start stack.
  std::string frameName, frameFile;
  int64_t frameLine = 0;
  std::vector<StackFrame> stack;  // dynamo_start user stack, outermost first

  CompileStatus status = CompileStatus::Unknown;  // Unknown: no compilation_metrics
  std::string failType, failReason;
  std::optional<int64_t> guardCount;
  std::optional<double> entireFrameCompileTimeS;
  std::vector<std::string> recompileReasons;  // artifact recompile_reasons, metrics recompile_reason
  std::vector<std::string> restartReasons;    // metrics restart_reasons (graph-break restarts)
  std::string metrics;                        // the compilation_metrics object as JSON text, "" when none
  // bwd_compilation_metrics as JSON text (a backward Inductor compiled at its first call), "" when none
  std::string backwardMetrics;

  int64_t guardsEvent = -1;  // event holding the guards payload (see TraceLog::guards), -1 when none
  GuardFormat guardFormat = GuardFormat::None;
  std::vector<size_t> outputCodeEvents;  // inductor_output_code events; their payload is the code
  // A MagiCompiler dump's decompiled Dynamo bytecode of this cache entry (magi_dump.h), -1 when none.
  int64_t decompiledCodeEvent = -1;

  std::vector<size_t> events;  // indices into TraceLog::events, in log order
  std::vector<size_t> graphs;  // indices into TraceLog::graphs
};

// A graph found in the log. Nested higher-order-op subgraphs are entries of their own.
struct GraphEntry {
  // "<compile>:<kind>" ("0/1:aot_forward_graph"), "#2", "#3" appended when the kind repeats within
  // the compile, "/<attr>" appended for nested subgraphs, prefix "rank<R>:" when the input holds
  // more than one rank. Graphs outside any compile use compile id "-".
  std::string id;
  std::string compileId;
  std::string kind;    // event kind, or the artifact name for artifacts ("after_post_grad_graph")
  std::string parent;  // id of the enclosing graph for nested subgraphs, else empty
  int32_t rank = -1;
  size_t event = 0;  // index into TraceLog::events
  int32_t compile = -1;
  std::shared_ptr<const ir::Graph> graph;
};

struct TraceLog {
  std::vector<TraceFile> files;
  std::vector<TraceLogEvent> events;
  std::vector<TraceCompile> compiles;
  std::vector<GraphEntry> graphs;
  Diagnostics diagnostics;
  bool multiRank = false;  // the files belong to more than one rank (graph ids then carry "rank<R>:")

  // By compile id text; with a rank, only that rank's compile. nullptr when absent.
  [[nodiscard]] const TraceCompile* findCompile(std::string_view id, std::optional<int32_t> rank = {}) const;
  [[nodiscard]] const GraphEntry* findGraph(std::string_view id) const;
  // Raw guard payload of a compile (format in compile.guardFormat), empty when none was logged.
  [[nodiscard]] std::string_view guards(const TraceCompile& compile) const;
  // Stack frames as logged in `event` (a JSON list of {line, name, filename, loc?}), file names
  // resolved through the string table of the event's file.
  [[nodiscard]] std::vector<StackFrame> resolveStack(const TraceLogEvent& event, const nlohmann::json& frames) const;
};

// Loads a log file (plain or gzip) or a directory of `dedicated_log_torch_trace_*.log[.gz]` rank
// files. Progress is reported in bytes of the input files (compressed bytes for gzip); cancellation
// throws Error(Cancelled). Throws Error(BadInput) when the path cannot be read; in a directory, a
// rank file that cannot be opened (unreadable, a FIFO, a dangling symlink) is an
// "unreadable_rank_file" error diagnostic naming it and why, and the others load.
[[nodiscard]] TraceLog loadTraceLog(const std::filesystem::path& fileOrDirectory, const Progress& progress = {});

// The same loader over text in memory (tests, fuzzing); `name` is used in diagnostics.
[[nodiscard]] TraceLog loadTraceLogFromString(std::string_view text, std::string_view name = "<memory>",
                                              const Progress& progress = {});

}  // namespace lathe::io
