#include "io/trace/trace_log.h"

#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <compare>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "io/fx/fx_text.h"
#include "io/trace/detail/trace_record.h"
#include "util/input.h"
#include "util/json_fields.h"

namespace lathe::io {
namespace {

using nlohmann::json;

// Event kinds whose payload is an FX graph (formats.md §1 event catalogue).
constexpr std::array<std::string_view, 11> kGraphEvents = {
    "dynamo_output_graph",      "aot_joint_graph",          "aot_forward_graph",        "aot_backward_graph",
    "aot_inference_graph",      "inductor_pre_grad_graph",  "inductor_post_grad_graph", "compiled_autograd_graph",
    "optimize_ddp_split_graph", "optimize_ddp_split_child", "exported_program",
};

// String artifacts known to hold graphs. Other `*_graph` artifacts are tried and kept when they parse.
constexpr std::array<std::string_view, 11> kGraphArtifacts = {
    "before_pre_grad_graph",    "after_pre_grad_graph",       "before_joint_graph",        "after_joint_graph",
    "before_post_grad_graph",   "after_post_grad_graph",      "inductor_post_grad_graph",  "before_recompile_pre_grad",
    "after_recompile_pre_grad", "before_recompile_post_grad", "after_recompile_post_grad",
};

template <size_t N>
bool isOneOf(std::string_view s, const std::array<std::string_view, N>& set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}

std::string dumpJson(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

constexpr std::string_view kRankLogPrefix = "dedicated_log_torch_trace_rank_";

// dedicated_log_torch_trace_rank_<R>_<random>.log or dedicated_log_torch_trace_rank_<R>.log
std::optional<int32_t> rankFromFileName(std::string_view name) {
  if (!name.starts_with(kRankLogPrefix)) return std::nullopt;
  int32_t rank = 0;
  size_t i = kRankLogPrefix.size();
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && i < kRankLogPrefix.size() + 9; ++i)
    rank = rank * 10 + (name[i] - '0');
  if (i == kRankLogPrefix.size() || i == name.size() || (name[i] != '_' && name[i] != '.')) return std::nullopt;
  return rank;
}

bool isRankLogName(std::string_view name) {
  return name.starts_with("dedicated_log_torch_trace_") && (name.ends_with(".log") || name.ends_with(".log.gz"));
}

struct CompileKey {
  uint32_t file = 0;  // one file = one process, whatever ranks its records claim
  std::optional<int64_t> autogradId, frameId, frameCompileId;
  int64_t attempt = 0;
  auto operator<=>(const CompileKey&) const = default;
};

// torch's CompileId / TraceId text: "0/1", "!3/0/1", "!3", attempt suffix "_N".
std::string compileIdText(const CompileKey& key) {
  std::string id;
  if (key.autogradId) id = "!" + std::to_string(*key.autogradId);
  if (key.frameId) {
    if (!id.empty()) id += '/';
    id += std::to_string(*key.frameId) + "/" + std::to_string(*key.frameCompileId);
  }
  if (key.attempt != 0) id += "_" + std::to_string(key.attempt);
  return id;
}

// Appends value unless empty or already listed (`seen` mirrors `list` so that a hostile log with
// millions of reasons stays linear).
void addUnique(std::vector<std::string>& list, std::unordered_set<std::string>& seen, std::string value) {
  if (!value.empty() && seen.insert(value).second) list.push_back(std::move(value));
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

class TraceLoader {
 public:
  TraceLoader(const Progress& progress, uint64_t totalBytes) : progress_(progress), totalBytes_(totalBytes) {}

  void loadFile(InputFile& input) {
    const std::filesystem::path& path = input.path();
    const auto fileIndex = beginFile(path, rankFromFileName(path.filename().string()), input.fileSize());
    trace::FileLineSource lines(input, kMaxTraceLineBytes);
    read(lines, fileIndex);
    if (input.damaged())
      log_.diagnostics.warn("truncated_input",
                            "input ends early (" + input.damage() + "); the records read before are kept",
                            {fileName_, lines.lineNumber()});
    endFile(input.fileSize());
  }

  // A rank file of a folder that could not be opened: the other ranks load without it.
  void skipFile(const std::filesystem::path& path, const std::string& problem) {
    log_.diagnostics.error("unreadable_rank_file", "rank log not loaded: " + problem, {path.string()});
  }

  void loadString(std::string_view text, std::string_view name) {
    const auto fileIndex = beginFile(std::filesystem::path(name), std::nullopt, text.size());
    trace::StringLineSource lines(text, kMaxTraceLineBytes);
    read(lines, fileIndex);
    endFile(text.size());
  }

  TraceLog finish() {
    for (const auto& file : log_.files) {
      if (file.rank != log_.files.front().rank) {
        log_.multiRank = true;
        break;
      }
    }
    assignGraphIds();
    progress_.update(totalBytes_, totalBytes_);
    return std::move(log_);
  }

 private:
  struct FileState {
    std::optional<int32_t> nameRank, envelopeRank;
    size_t firstEvent = 0, firstCompile = 0, firstGraph = 0;
    std::vector<size_t> rankless;  // events without an envelope rank: they take the file's
  };
  // Loader-only data of a compile.
  struct CompileState {
    std::unordered_map<std::string, int64_t> symbols;  // create_symbol hints of this compile
    std::unordered_set<std::string> recompileReasons, restartReasons;
    bool frameFromMetrics = false;
  };
  // How a graph entry's id is formed (see GraphEntry::id).
  struct GraphSlot {
    int64_t parent = -1;
    std::string attr;
  };

  uint32_t beginFile(const std::filesystem::path& path, std::optional<int32_t> nameRank, uint64_t bytes) {
    TraceFile file;
    file.path = path;
    file.bytes = bytes;
    log_.files.push_back(std::move(file));
    fileName_ = path.string();
    file_ = FileState{};
    file_.nameRank = nameRank;
    file_.firstEvent = log_.events.size();
    file_.firstCompile = log_.compiles.size();
    file_.firstGraph = log_.graphs.size();
    return static_cast<uint32_t>(log_.files.size() - 1);
  }

  void read(trace::LineSource& lines, uint32_t fileIndex) {
    trace::readRecords(
        lines, fileName_, fileIndex, log_.diagnostics,
        [this](TraceLogEvent&& event, json&& envelope) { onRecord(std::move(event), envelope); },
        [this, &lines] { tick(lines.position()); });
  }

  void tick(uint64_t position) {
    progress_.update(std::min(doneBytes_ + position, totalBytes_), totalBytes_);
    progress_.checkCancelled();
  }

  void endFile(uint64_t bytes) {
    // A file's rank is its first envelope rank (files can be misnamed: `…rank_5.log` holding
    // rank 1), else the one in its name. Records without one (the string table, compiles before
    // torch.distributed was up) and the file's compiles take it.
    TraceFile& file = log_.files.back();
    file.rank = file_.envelopeRank.value_or(file_.nameRank.value_or(-1));
    resolveRankConflict(file);
    for (size_t index : file_.rankless) log_.events[index].rank = file.rank;
    for (size_t c = file_.firstCompile; c < log_.compiles.size(); ++c) log_.compiles[c].rank = file.rank;
    for (size_t g = file_.firstGraph; g < log_.graphs.size(); ++g) {
      GraphEntry& entry = log_.graphs[g];
      entry.rank = entry.compile >= 0 ? file.rank : log_.events[entry.event].rank;
    }
    doneBytes_ += bytes;
    tick(0);
  }

  // Two files claiming the same rank (copied or mislabelled logs) would read as one process; the
  // later file then takes the rank in its name when that one is free.
  void resolveRankConflict(TraceFile& file) {
    const auto taken = [&](int32_t rank) {
      return std::any_of(log_.files.begin(), log_.files.end() - 1, [&](const TraceFile& f) { return f.rank == rank; });
    };
    if (!taken(file.rank) || !file_.nameRank || taken(*file_.nameRank)) return;
    log_.diagnostics.note("rank_conflict",
                          "records say rank " + std::to_string(file.rank) + ", as an earlier file does; using rank " +
                              std::to_string(*file_.nameRank) + " from the file name",
                          {fileName_, 0});
    const int32_t from = file.rank, to = *file_.nameRank;
    for (size_t e = file_.firstEvent; e < log_.events.size(); ++e)
      if (log_.events[e].rank == from) log_.events[e].rank = to;
    file.rank = to;
  }

  SourceLocation at(const TraceLogEvent& event) const { return {fileName_, event.line}; }

  void onRecord(TraceLogEvent&& event, const json& envelope) {
    const size_t index = log_.events.size();
    const auto rank = intField(envelope, "rank");
    if (rank && *rank >= 0 && *rank <= std::numeric_limits<int32_t>::max()) {
      event.rank = static_cast<int32_t>(*rank);
      if (!file_.envelopeRank) file_.envelopeRank = event.rank;
    } else {
      file_.rankless.push_back(index);
    }

    CompileKey key;
    key.file = event.file;
    key.autogradId = intField(envelope, "compiled_autograd_id");
    const auto frameId = intField(envelope, "frame_id");
    const auto frameCompileId = intField(envelope, "frame_compile_id");
    if (frameId && frameCompileId) {
      key.frameId = frameId;
      key.frameCompileId = frameCompileId;
    }
    key.attempt = intField(envelope, "attempt").value_or(0);  // absent: logged outside tracing, as attempt 0
    if (key.autogradId || key.frameId) event.compile = static_cast<int32_t>(compileFor(key));

    log_.events.push_back(std::move(event));
    const TraceLogEvent& stored = log_.events.back();
    if (stored.compile >= 0) {
      log_.compiles[static_cast<size_t>(stored.compile)].events.push_back(index);
    }
    apply(index, envelope);
  }

  size_t compileFor(const CompileKey& key) {
    if (lastCompile_ && lastKey_ == key) return *lastCompile_;
    auto [it, inserted] = compileIndex_.try_emplace(key, log_.compiles.size());
    if (inserted) {
      TraceCompile compile;
      compile.id = compileIdText(key);
      compile.compiledAutogradId = key.autogradId;
      compile.frameId = key.frameId;
      compile.frameCompileId = key.frameCompileId;
      compile.attempt = key.attempt;
      log_.compiles.push_back(std::move(compile));
      compileStates_.emplace_back();
    }
    lastKey_ = key;
    lastCompile_ = it->second;
    return it->second;
  }

  // What an event contributes to its file and compile.
  void apply(size_t index, const json& envelope) {
    const TraceLogEvent& event = log_.events[index];
    static const json kNoMetadata;
    const auto found = envelope.find(event.kind);
    const json& metadata = found != envelope.end() ? *found : kNoMetadata;
    TraceCompile* compile = event.compile >= 0 ? &log_.compiles[static_cast<size_t>(event.compile)] : nullptr;
    CompileState* state = event.compile >= 0 ? &compileStates_[static_cast<size_t>(event.compile)] : nullptr;
    const std::string_view kind = event.kind;

    if (kind == "str") {
      addInternedString(event, metadata);
    } else if (isOneOf(kind, kGraphEvents)) {
      addGraph(index, event.kind, envelope, false);
    } else if (kind == "artifact") {
      const std::string* encoding = metadata.is_object() ? stringField(metadata, "encoding") : nullptr;
      const bool text = !encoding || *encoding == "string";
      if (event.name == "recompile_reasons" && compile) {
        addRecompileReasons(*compile, *state, event.payload);
      } else if (text && isOneOf(std::string_view(event.name), kGraphArtifacts)) {
        addGraph(index, event.name, envelope, false);
      } else if (text && event.name.ends_with("_graph")) {
        addGraph(index, event.name, envelope, true);
      }
    } else if (!compile) {
      return;
    } else if (kind == "dynamo_start") {
      if (metadata.is_object() && metadata.contains("stack")) {
        compile->stack = log_.resolveStack(event, metadata["stack"]);
        if (!state->frameFromMetrics && !compile->stack.empty()) {
          compile->frameName = compile->stack.back().function;
          compile->frameFile = compile->stack.back().file;
          compile->frameLine = compile->stack.back().line;
        }
      }
    } else if (kind == "compilation_metrics") {
      if (metadata.is_object()) applyMetrics(*compile, *state, metadata);
    } else if (kind == "bwd_compilation_metrics") {
      if (metadata.is_object()) compile->backwardMetrics = dumpJson(metadata);
    } else if (kind == "dynamo_cpp_guards_str") {
      compile->guardsEvent = static_cast<int64_t>(index);
      compile->guardFormat = GuardFormat::CppTree;
    } else if (kind == "dynamo_guards") {
      if (compile->guardFormat != GuardFormat::CppTree) {  // the tree text is the richer of the two
        compile->guardsEvent = static_cast<int64_t>(index);
        compile->guardFormat = GuardFormat::Json;
      }
    } else if (kind == "inductor_output_code") {
      compile->outputCodeEvents.push_back(index);
    } else if (kind == "create_symbol" || kind == "create_unbacked_symbol") {
      if (metadata.is_object()) addSymbol(*state, metadata);
    }
  }

  void addInternedString(const TraceLogEvent& event, const json& value) {
    if (value.is_array() && value.size() == 2 && value[0].is_string() && value[1].is_number_integer()) {
      log_.files.back().strings[value[1].get<int64_t>()] = value[0].get<std::string>();
      return;
    }
    log_.diagnostics.warn("bad_string_table", "`str` record is not [path, id]; ignored", at(event));
  }

  static void applyMetrics(TraceCompile& compile, CompileState& state, const json& metrics) {
    compile.metrics = dumpJson(metrics);
    // Each field the metrics give overrides what dynamo_start's stack said.
    if (const std::string* name = stringField(metrics, "co_name")) {
      compile.frameName = *name;
      state.frameFromMetrics = true;
    }
    if (const std::string* file = stringField(metrics, "co_filename")) compile.frameFile = *file;
    if (const auto line = intField(metrics, "co_firstlineno")) compile.frameLine = *line;
    if (const auto guards = intField(metrics, "guard_count")) compile.guardCount = *guards;
    const auto time = metrics.find("entire_frame_compile_time_s");
    if (time != metrics.end() && time->is_number()) compile.entireFrameCompileTimeS = time->get<double>();
    const std::string* failType = stringField(metrics, "fail_type");
    const std::string* failReason = stringField(metrics, "fail_reason");
    if (failType || failReason) {
      compile.status = CompileStatus::Failed;
      compile.failType = failType ? *failType : std::string();
      compile.failReason = failReason ? *failReason : std::string();
    } else if (compile.status != CompileStatus::Failed) {
      compile.status = CompileStatus::Ok;
    }
    const auto restarts = metrics.find("restart_reasons");
    if (restarts != metrics.end() && restarts->is_array())
      for (const auto& reason : *restarts)
        addUnique(compile.restartReasons, state.restartReasons,
                  reason.is_string() ? reason.get<std::string>() : dumpJson(reason));
    if (const std::string* reason = stringField(metrics, "recompile_reason"))
      addUnique(compile.recompileReasons, state.recompileReasons, *reason);
  }

  // torch logs one reason as the bare string and several as a JSON list.
  static void addRecompileReasons(TraceCompile& compile, CompileState& state, std::string_view payload) {
    auto& list = compile.recompileReasons;
    auto& seen = state.recompileReasons;
    if (trace::jsonDepthWithin(payload, trace::kMaxJsonDepth)) {
      const json parsed = json::parse(payload, nullptr, false);
      if (parsed.is_array()) {
        for (const auto& reason : parsed)
          addUnique(list, seen, reason.is_string() ? reason.get<std::string>() : dumpJson(reason));
        return;
      }
      if (parsed.is_string()) {
        addUnique(list, seen, parsed.get<std::string>());
        return;
      }
    }
    addUnique(list, seen, std::string(trimmed(payload)));
  }

  static void addSymbol(CompileState& state, const json& metadata) {
    const std::string* symbol = stringField(metadata, "symbol");
    const auto val = metadata.find("val");
    if (!symbol || val == metadata.end()) return;
    std::optional<int64_t> value;
    if (val->is_number_integer()) {
      value = val->get<int64_t>();
    } else if (val->is_string()) {  // torch logs hints as text: "768"
      const std::string& text = val->get_ref<const std::string&>();
      int64_t parsed = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
      if (ec == std::errc() && end == text.data() + text.size()) value = parsed;
    }
    if (value) state.symbols[*symbol] = *value;
  }

  // Parses the payload of event `index` as a graph and records it (with its nested subgraphs) under
  // `kind`. `speculative`: an artifact that may or may not be a graph; no warning when it is not.
  void addGraph(size_t index, const std::string& kind, const json& envelope, bool speculative) {
    const TraceLogEvent& event = log_.events[index];
    if (event.payload.empty() || (speculative && event.payload.find("def forward(") == std::string::npos)) {
      if (!speculative)
        log_.diagnostics.warn("graph_without_payload", kind + " record carries no graph text", at(event));
      return;
    }
    const uint64_t cacheKey = graphCacheKey(event, envelope);
    std::shared_ptr<const ir::Graph> graph = sameGraphInCompile(event, cacheKey);
    if (!graph) {
      FxParseOptions options;
      options.file = fileName_;
      options.firstLine = event.line + 1;
      if (event.compile >= 0 && !compileStates_[static_cast<size_t>(event.compile)].symbols.empty()) {
        const auto* symbols = &compileStates_[static_cast<size_t>(event.compile)].symbols;
        options.symbols = [symbols](std::string_view symbol) -> std::optional<int64_t> {
          const auto it = symbols->find(std::string(symbol));
          if (it == symbols->end()) return std::nullopt;
          return it->second;
        };
      }
      Diagnostics parseDiagnostics;
      std::shared_ptr<ir::Graph> parsed;
      std::string failure;
      try {
        parsed = parseFxText(event.payload, options, parseDiagnostics);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      if (!parsed) {
        if (!speculative)
          log_.diagnostics.warn(
              "graph_parse_failed",
              kind + " payload is not a readable FX graph" + (failure.empty() ? "" : ": " + failure) + "; kept as text",
              at(event));
        return;
      }
      log_.diagnostics.append(parseDiagnostics);
      graph = std::move(parsed);
      parsedGraphs_.emplace(cacheKey, log_.graphs.size());
    }
    addGraphEntries(index, kind, std::move(graph));
    progress_.checkCancelled();
  }

  // A verified md5 already names the payload; hashing it again would cost a pass over the text.
  static uint64_t graphCacheKey(const TraceLogEvent& event, const json& envelope) {
    const std::string* md5 = event.md5Ok ? stringField(envelope, "has_payload") : nullptr;
    const uint64_t text = md5 ? std::hash<std::string_view>{}(*md5) : std::hash<std::string_view>{}(event.payload);
    return text ^ (static_cast<uint64_t>(event.compile + 1) * 0x9e3779b97f4a7c15ULL);
  }

  // Inductor logs the same text under several names (before/after a pass that changed nothing):
  // parse it once per compile and share the graph.
  std::shared_ptr<const ir::Graph> sameGraphInCompile(const TraceLogEvent& event, uint64_t cacheKey) const {
    const auto [begin, end] = parsedGraphs_.equal_range(cacheKey);
    for (auto it = begin; it != end; ++it) {
      const GraphEntry& entry = log_.graphs[it->second];
      if (entry.compile == event.compile && log_.events[entry.event].payload == event.payload) return entry.graph;
    }
    return nullptr;
  }

  void addGraphEntries(size_t eventIndex, const std::string& kind, std::shared_ptr<const ir::Graph> graph) {
    const TraceLogEvent& event = log_.events[eventIndex];
    // Worklist instead of recursion: nesting depth comes from the input.
    std::vector<std::tuple<int64_t, std::string, std::shared_ptr<const ir::Graph>>> pending;
    pending.emplace_back(-1, std::string(), std::move(graph));
    while (!pending.empty()) {
      auto [parent, attr, g] = std::move(pending.back());
      pending.pop_back();
      GraphEntry entry;
      entry.compileId = event.compile >= 0 ? log_.compiles[static_cast<size_t>(event.compile)].id : "-";
      entry.kind = kind;
      entry.rank = event.rank;
      entry.event = eventIndex;
      entry.compile = event.compile;
      entry.graph = g;
      const auto entryIndex = static_cast<int64_t>(log_.graphs.size());
      log_.graphs.push_back(std::move(entry));
      graphSlots_.push_back({parent, std::move(attr)});
      if (event.compile >= 0)
        log_.compiles[static_cast<size_t>(event.compile)].graphs.push_back(static_cast<size_t>(entryIndex));
      const auto& subgraphs = g->subgraphs();
      for (auto it = subgraphs.rbegin(); it != subgraphs.rend(); ++it)
        pending.emplace_back(entryIndex, it->first, it->second);
    }
  }

  void assignGraphIds() {
    std::unordered_map<std::string, uint32_t> uses;
    for (size_t i = 0; i < log_.graphs.size(); ++i) {
      GraphEntry& entry = log_.graphs[i];
      const GraphSlot& slot = graphSlots_[i];
      std::string base;
      if (slot.parent >= 0) {
        entry.parent = log_.graphs[static_cast<size_t>(slot.parent)].id;
        base = entry.parent + "/" + slot.attr;
      } else {
        if (log_.multiRank) base = "rank" + std::to_string(entry.rank) + ":";
        base += entry.compileId + ":" + entry.kind;
      }
      const uint32_t n = ++uses[base];
      entry.id = n == 1 ? base : base + "#" + std::to_string(n);
    }
  }

  TraceLog log_;
  const Progress& progress_;
  uint64_t totalBytes_ = 0, doneBytes_ = 0;
  std::string fileName_;
  FileState file_;
  std::map<CompileKey, size_t> compileIndex_;
  std::optional<size_t> lastCompile_;
  CompileKey lastKey_;
  std::vector<CompileState> compileStates_;
  std::vector<GraphSlot> graphSlots_;
  std::unordered_multimap<uint64_t, size_t> parsedGraphs_;  // cache key -> first entry holding that graph
};

std::vector<FolderEntry> rankFilesIn(const std::filesystem::path& directory) {
  std::vector<FolderEntry> files;
  for (FolderEntry& entry : listFolder(directory))
    if (isRankLogName(entry.path.filename().string())) files.push_back(std::move(entry));
  if (files.empty())
    throw Error(ErrorCode::BadInput, "no dedicated_log_torch_trace_*.log files in the directory", {directory.string()});
  // By rank (files without one last), then by name.
  std::stable_sort(files.begin(), files.end(), [](const FolderEntry& a, const FolderEntry& b) {
    const auto ra = rankFromFileName(a.path.filename().string()), rb = rankFromFileName(b.path.filename().string());
    const int64_t ka = ra ? *ra : std::numeric_limits<int64_t>::max(),
                  kb = rb ? *rb : std::numeric_limits<int64_t>::max();
    return ka < kb;
  });
  return files;
}

// What an Error says after its location (the diagnostic carrying the location itself).
std::string reasonOf(const Error& error) {
  const std::string text = error.what(), location = error.where().str() + ": ";
  return text.starts_with(location) ? text.substr(location.size()) : text;
}

}  // namespace

std::string_view compileStatusName(CompileStatus status) {
  switch (status) {
    case CompileStatus::Ok: return "ok";
    case CompileStatus::Failed: return "failed";
    case CompileStatus::Unknown: return "unknown";
  }
  return "unknown";
}

const TraceCompile* TraceLog::findCompile(std::string_view id, std::optional<int32_t> rank) const {
  for (const auto& compile : compiles)
    if (compile.id == id && (!rank || compile.rank == *rank)) return &compile;
  return nullptr;
}

const GraphEntry* TraceLog::findGraph(std::string_view id) const {
  for (const auto& graph : graphs)
    if (graph.id == id) return &graph;
  return nullptr;
}

std::string_view TraceLog::guards(const TraceCompile& compile) const {
  if (compile.guardsEvent < 0 || static_cast<size_t>(compile.guardsEvent) >= events.size()) return {};
  return events[static_cast<size_t>(compile.guardsEvent)].payload;
}

std::vector<StackFrame> TraceLog::resolveStack(const TraceLogEvent& event, const nlohmann::json& frames) const {
  std::vector<StackFrame> out;
  if (!frames.is_array()) return out;
  const auto* strings = event.file < files.size() ? &files[event.file].strings : nullptr;
  for (const auto& frame : frames) {
    if (!frame.is_object()) continue;
    StackFrame resolved;
    if (const auto line = intField(frame, "line")) resolved.line = *line;
    if (const std::string* name = stringField(frame, "name")) resolved.function = *name;
    if (const std::string* code = stringField(frame, "loc")) resolved.code = *code;
    if (const std::string* file = stringField(frame, "filename")) {
      resolved.file = *file;
    } else if (const auto id = intField(frame, "filename")) {
      resolved.file = "<unknown #" + std::to_string(*id) + ">";
      if (strings) {
        const auto it = strings->find(*id);
        if (it != strings->end()) resolved.file = it->second;
      }
    }
    out.push_back(std::move(resolved));
  }
  return out;
}

TraceLog loadTraceLog(const std::filesystem::path& fileOrDirectory, const Progress& progress) {
  struct stat info {};
  if (stat(fileOrDirectory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    InputFile input(fileOrDirectory);  // refuses what is missing or not a regular file, with the reason
    TraceLoader loader(progress, input.fileSize());
    loader.loadFile(input);
    return loader.finish();
  }
  // A folder of rank files: one that cannot be opened is a diagnostic, the others load.
  const std::vector<FolderEntry> files = rankFilesIn(fileOrDirectory);
  uint64_t total = 0;
  for (const FolderEntry& file : files) {
    std::error_code ec;
    const auto size = file.problem.empty() ? std::filesystem::file_size(file.path, ec) : 0;
    if (!ec) total += size;
  }
  TraceLoader loader(progress, total);
  std::optional<std::string> firstProblem;
  size_t loaded = 0;
  for (const FolderEntry& file : files) {
    std::string problem = file.problem;
    if (problem.empty()) {
      std::optional<InputFile> input;
      try {
        input.emplace(file.path);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::BadInput) throw;
        problem = reasonOf(e);
      }
      if (input) {
        loader.loadFile(*input);
        ++loaded;
        continue;
      }
    }
    if (!firstProblem) firstProblem = file.path.string() + ": " + problem;
    loader.skipFile(file.path, problem);
  }
  if (loaded == 0)
    throw Error(ErrorCode::BadInput, "no rank log of the folder could be read (" + *firstProblem + ")",
                {fileOrDirectory.string()});
  return loader.finish();
}

TraceLog loadTraceLogFromString(std::string_view text, std::string_view name, const Progress& progress) {
  TraceLoader loader(progress, text.size());
  loader.loadString(text, name);
  return loader.finish();
}

}  // namespace lathe::io
