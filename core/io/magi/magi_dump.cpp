#include "io/magi/magi_dump.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "io/fx/fx_text.h"
#include "util/diagnostics.h"
#include "util/input.h"
#include "util/json_fields.h"
#include "util/json_limits.h"

namespace lathe::io {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// One dump file is source text or a graph: a few MB at most; more is not a dump's file.
constexpr uint64_t kMaxDumpFileBytes = uint64_t{256} << 20;
// Folders looked into below the given path when looking for models (run folders sit 2-3 down).
constexpr int kMaxSearchDepth = 4;
constexpr size_t kMaxSearchFolders = 4096;
constexpr std::string_view kTimelineFolder = "timeline_events";
constexpr std::string_view kFunctionsFolder = "compiled_functions";

bool isFolder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

bool isModelFolder(const fs::path& folder) {
  return isFolder(folder / kTimelineFolder) || isFolder(folder / kFunctionsFolder);
}

std::vector<fs::path> subfolders(const fs::path& folder) {
  std::vector<fs::path> out;
  for (const FolderEntry& entry : listFolder(folder))
    if (entry.directory) out.push_back(entry.path);
  return out;
}

std::vector<fs::path> filesOf(const fs::path& folder) {
  std::vector<fs::path> out;
  for (const FolderEntry& entry : listFolder(folder))
    if (!entry.directory && entry.problem.empty()) out.push_back(entry.path);
  return out;
}

// Model folders at or below `root`, breadth first, in name order at each level.
std::vector<fs::path> findModelFolders(const fs::path& root) {
  std::vector<fs::path> models;
  std::deque<std::pair<fs::path, int>> queue{{root, 0}};
  size_t visited = 0;
  while (!queue.empty() && visited < kMaxSearchFolders) {
    auto [folder, depth] = queue.front();
    queue.pop_front();
    ++visited;
    if (isModelFolder(folder)) {
      models.push_back(folder);
      continue;
    }
    if (depth >= kMaxSearchDepth) continue;
    std::vector<fs::path> children;
    try {
      children = subfolders(folder);
    } catch (const Error&) {
      continue;  // an unlistable folder below the root holds no dump we can read
    }
    for (fs::path& child : children) queue.emplace_back(std::move(child), depth + 1);
  }
  return models;
}

// "entry_12" -> 12.
std::optional<int64_t> numberAfter(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  int64_t value = 0;
  const char* begin = name.data() + prefix.size();
  const auto [end, ec] = std::from_chars(begin, name.data() + name.size(), value);
  if (ec != std::errc() || end != name.data() + name.size()) return std::nullopt;
  return value;
}

// "12.3ms" | "1.23s" | "1m5s" -> seconds.
std::optional<double> parseRelativeTime(std::string_view text) {
  double total = 0;
  bool any = false;
  while (!text.empty()) {
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc()) return std::nullopt;
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    if (text.starts_with("ms")) {
      total += value / 1e3;
      text.remove_prefix(2);
    } else if (text.starts_with("m")) {
      total += value * 60;
      text.remove_prefix(1);
    } else if (text.starts_with("s")) {
      total += value;
      text.remove_prefix(1);
    } else {
      return std::nullopt;
    }
    any = true;
  }
  return any ? std::optional<double>(total) : std::nullopt;
}

// One timeline line: a JSON object, bounded as every document users hand us; nullopt when it is
// not one.
std::optional<json> parseTimelineLine(std::string_view line, const std::string& source) {
  try {
    json object = parseJsonBounded<json>(line, source);
    if (object.is_object()) return object;
  } catch (const json::exception&) {
  } catch (const Error& e) {
    if (e.code() != ErrorCode::BadInput) throw;
  }
  return std::nullopt;
}

// `<scope>_<phase>_<lifecycle>`: scope "fullgraph" or "subgraph_<k>".
void splitEventName(MagiTimelineEvent& event) {
  static constexpr std::pair<std::string_view, MagiPhase> kPhases[] = {
      {"_before_", MagiPhase::Before}, {"_after_", MagiPhase::After}, {"_failed_", MagiPhase::Failed},
      {"_skip_", MagiPhase::Skipped}};
  for (const auto& [marker, phase] : kPhases) {
    const size_t at = event.name.find(marker);
    if (at == std::string::npos) continue;
    event.phase = phase;
    if (event.scope.empty()) event.scope = event.name.substr(0, at);
    if (event.lifecycle.empty()) event.lifecycle = event.name.substr(at + marker.size());
    return;
  }
  if (event.lifecycle.empty()) event.lifecycle = event.name;
}

class DumpLoader {
 public:
  DumpLoader(const fs::path& root, const Progress& progress) : progress_(progress) { result_.dump.root = root; }

  MagiDumpLoad load() {
    const fs::path& root = result_.dump.root;
    const std::vector<fs::path> folders = findModelFolders(root);
    if (folders.empty()) {
      throw Error(ErrorCode::BadInput,
                  "not a MagiCompiler dump: no folder with timeline_events/ or compiled_functions/ below it",
                  {root.string()});
    }
    std::vector<MagiModel>& models = result_.dump.models;
    for (const fs::path& folder : folders) models.push_back(modelOf(folder));
    std::vector<int32_t> ranks;  // of the models whose folder names one
    for (const MagiModel& m : models)
      if (m.rank >= 0) ranks.push_back(m.rank);
    std::sort(ranks.begin(), ranks.end());
    result_.log.multiRank = std::unique(ranks.begin(), ranks.end()) - ranks.begin() > 1;
    // Compile ids name the model when several models of one rank share the dump.
    std::map<int32_t, size_t> modelsOfRank;
    for (const MagiModel& m : models) ++modelsOfRank[m.rank];
    for (MagiModel& model : models) {
      progress_.checkCancelled();
      if (!model.timelineFile.empty()) readTimeline(model);
      const fs::path functions = model.folder / kFunctionsFolder;
      if (isFolder(functions)) {
        const std::string prefix = modelsOfRank[model.rank] > 1 ? model.name + ":" : "";
        for (const fs::path& fn : sortedByName(subfolders(functions))) readFunction(model, fn, prefix);
      }
    }
    return std::move(result_);
  }

 private:
  MagiModel modelOf(const fs::path& folder) {
    MagiModel model;
    model.folder = folder;
    model.name = folder.filename().string();
    static const std::regex kModelName(R"(model_\d+_(.+)_rank_(\d+))");
    std::smatch match;
    if (std::regex_match(model.name, match, kModelName)) {
      model.name = match[1].str();
      model.rank = static_cast<int32_t>(std::min<int64_t>(std::stoll(match[2].str().substr(0, 9)), INT32_MAX));
    }
    const fs::path timeline = folder / kTimelineFolder / "timeline.jsonl";
    std::error_code ec;
    if (fs::is_regular_file(timeline, ec)) model.timelineFile = timeline;
    return model;
  }

  static std::vector<fs::path> sortedByName(std::vector<fs::path> paths) {
    std::sort(paths.begin(), paths.end());
    return paths;
  }

  std::optional<std::string> readText(const fs::path& path) {
    try {
      std::string text = readFile(path, kMaxDumpFileBytes);
      ++filesRead_;
      progress_.update(filesRead_, 0);
      progress_.checkCancelled();
      return text;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::BadInput) throw;
      result_.log.diagnostics.warn("magi_file_unreadable", e.what(), {path.string()});
      return std::nullopt;
    }
  }

  void readTimeline(MagiModel& model) {
    const std::optional<std::string> text = readText(model.timelineFile);
    if (!text) return;
    const fs::path filesFolder = model.timelineFile.parent_path() / "files";
    std::optional<double> firstTimestamp;
    uint64_t lineNumber = 0;
    size_t begin = 0;
    while (begin < text->size()) {
      size_t end = text->find('\n', begin);
      if (end == std::string::npos) end = text->size();
      const std::string_view line(text->data() + begin, end - begin);
      begin = end + 1;
      ++lineNumber;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      const std::optional<json> parsed = parseTimelineLine(line, model.timelineFile.string());
      if (!parsed || !stringField(*parsed, "name")) {
        result_.log.diagnostics.warn("magi_timeline_line_unreadable", "not a timeline event (a JSON object with a name)",
                                     {model.timelineFile.string(), lineNumber});
        continue;
      }
      const json& object = *parsed;
      MagiTimelineEvent event;
      event.line = lineNumber;
      event.name = *stringField(object, "name");
      event.index = intField(object, "index").value_or(0);
      if (auto it = object.find("attributes"); it != object.end() && it->is_object()) {
        event.attributes = it->dump();
        if (const std::string* scope = stringField(*it, "scope")) event.scope = *scope;
        // A pass of one piece: its scope reads "subgraph", the piece is named apart.
        if (const std::string* piece = stringField(*it, "subgraph")) event.scope = *piece;
        if (const std::string* lifecycle = stringField(*it, "lifecycle_name")) event.lifecycle = *lifecycle;
        if (auto ms = numberField(*it, "duration_ms")) event.durationS = *ms / 1e3;
        if (const std::string* error = stringField(*it, "exception_type")) event.error = *error;
      } else {
        event.attributes = "{}";
      }
      splitEventName(event);
      // Seconds from the epoch timestamps (exact); the rounded relative_time text when there are none.
      if (auto timestamp = numberField(object, "timestamp")) {
        if (!firstTimestamp) firstTimestamp = *timestamp;
        event.seconds = *timestamp - *firstTimestamp;
      } else if (const std::string* relative = stringField(object, "relative_time")) {
        event.seconds = parseRelativeTime(*relative).value_or(0);
      }
      if (auto it = object.find("files"); it != object.end() && it->is_array() && !it->empty()) {
        char prefix[32];
        std::snprintf(prefix, sizeof prefix, "%04lld_", static_cast<long long>(event.index));
        const fs::path folder = filesFolder / (prefix + event.name);
        for (const json& name : *it) {
          if (!name.is_string()) continue;
          if (auto found = findEventFile(folder, name.get<std::string>())) event.files.push_back(*found);
        }
        if (event.files.empty()) {
          result_.log.diagnostics.note("magi_event_files_missing",
                                       "event " + event.name + " lists files that are not in " + folder.string(),
                                       {model.timelineFile.string(), lineNumber});
        }
      }
      model.timeline.push_back(std::move(event));
    }
    pairWithBeforeEvents(model.timeline);
  }

  // MagiCompiler records no duration on failed events: the time since the lifecycle's before event
  // (the latest one of the same scope not yet closed) stands in for it.
  static void pairWithBeforeEvents(std::vector<MagiTimelineEvent>& timeline) {
    std::map<std::pair<std::string, std::string>, std::vector<size_t>> open;
    for (size_t i = 0; i < timeline.size(); ++i) {
      MagiTimelineEvent& e = timeline[i];
      auto& stack = open[{e.scope, e.lifecycle}];
      if (e.phase == MagiPhase::Before) {
        stack.push_back(i);
      } else if (e.phase != MagiPhase::Mark && !stack.empty()) {
        if (!e.durationS) e.durationS = e.seconds - timeline[stack.back()].seconds;
        stack.pop_back();
      }
    }
  }

  // An event's file sits in its folder, or one level down for pass events (`submod_<k>/`).
  static std::optional<fs::path> findEventFile(const fs::path& folder, const std::string& name) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") return std::nullopt;
    std::error_code ec;
    if (fs::is_regular_file(folder / name, ec)) return folder / name;
    if (!isFolder(folder)) return std::nullopt;
    for (const fs::path& sub : sortedByName(subfolders(folder)))
      if (fs::is_regular_file(sub / name, ec)) return sub / name;
    return std::nullopt;
  }

  // Adds a file's text as an event of the log (the payload views and the guard parser read).
  size_t addFileEvent(const fs::path& path, std::string text, std::string kind, int32_t rank, int32_t compile) {
    TraceLog& log = result_.log;
    TraceFile file;
    file.path = path;
    file.rank = rank;
    file.bytes = text.size();
    log.files.push_back(std::move(file));
    TraceLogEvent event;
    event.kind = kind;
    event.name = path.filename().string();
    event.envelope = json{{kind, json::object()}, {"path", path.string()}}.dump();
    event.payload = std::move(text);
    event.hasPayload = true;
    event.file = static_cast<uint32_t>(log.files.size() - 1);
    event.line = 0;  // the payload starts at the file's first line (GuardParseOptions: line + 1)
    event.rank = rank;
    event.compile = compile;
    log.events.push_back(std::move(event));
    const size_t index = log.events.size() - 1;
    if (compile >= 0) log.compiles[static_cast<size_t>(compile)].events.push_back(index);
    return index;
  }

  // A graph file of a compile: parsed and listed under `id` with `kind`; text that holds no graph
  // (MagiCompiler writes a one-line header for graphs it did not capture) stays a file event.
  void addGraph(const fs::path& path, const std::string& id, const std::string& kind, int32_t compile) {
    std::optional<std::string> text = readText(path);
    if (!text) return;
    TraceCompile& c = result_.log.compiles[static_cast<size_t>(compile)];
    const size_t event = addFileEvent(path, std::move(*text), kind, c.rank, compile);
    FxParseOptions options;
    options.file = path.string();
    options.progress = &progress_;
    Diagnostics parseDiagnostics;
    std::shared_ptr<ir::Graph> graph;
    try {
      graph = parseFxText(result_.log.events[event].payload, options, parseDiagnostics);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::Cancelled) throw;
      parseDiagnostics.warn("graph_parse_failed", e.what(), {path.string()});
    }
    result_.log.diagnostics.append(parseDiagnostics);
    if (!graph) {
      const std::string& payload = result_.log.events[event].payload;
      result_.log.diagnostics.note("magi_graph_not_captured",
                                   "no graph in " + path.filename().string() + ": " +
                                       payload.substr(0, std::min<size_t>(payload.find('\n'), 120)),
                                   {path.string(), 1});
      return;
    }
    GraphEntry entry;
    entry.id = id;
    entry.compileId = c.id;
    entry.kind = kind;
    entry.rank = c.rank;
    entry.event = event;
    entry.compile = compile;
    entry.graph = std::move(graph);
    result_.log.graphs.push_back(std::move(entry));
    c.graphs.push_back(result_.log.graphs.size() - 1);
  }

  void readFunction(MagiModel& model, const fs::path& folder, const std::string& prefix) {
    const std::string name = folder.filename().string();
    std::vector<std::pair<int64_t, fs::path>> entries;
    for (const fs::path& sub : subfolders(folder))
      if (auto k = numberAfter(sub.filename().string(), "entry_")) entries.emplace_back(*k, sub);
    std::sort(entries.begin(), entries.end());
    if (entries.empty()) {
      result_.log.diagnostics.note("magi_function_without_entries",
                                   "compiled function " + name + " has no cache entry (entry_<k>/)", {folder.string()});
    }
    for (const auto& [k, entryFolder] : entries) readEntry(model, name, k, entryFolder, prefix);
  }

  void readEntry(MagiModel& model, const std::string& function, int64_t k, const fs::path& folder,
                 const std::string& prefix) {
    TraceLog& log = result_.log;
    TraceCompile compile;
    compile.id = prefix + function + "/" + std::to_string(k);
    compile.rank = model.rank;
    compile.frameName = function;
    compile.status = CompileStatus::Ok;
    log.compiles.push_back(std::move(compile));
    const auto index = static_cast<int32_t>(log.compiles.size() - 1);
    model.compiles.push_back(log.compiles.back().id);
    const std::string& id = log.compiles.back().id;
    std::error_code ec;

    // Dynamo's transformed bytecode, decompiled: how the frame calls its graphs and resume functions.
    if (fs::is_regular_file(folder / "decompiled_code.py", ec)) {
      if (auto text = readText(folder / "decompiled_code.py")) {
        log.compiles[static_cast<size_t>(index)].decompiledCodeEvent = static_cast<int64_t>(
            addFileEvent(folder / "decompiled_code.py", std::move(*text), "magi_decompiled_code", model.rank, index));
      }
    }
    if (fs::is_regular_file(folder / "guards.txt", ec)) {
      if (auto text = readText(folder / "guards.txt")) {
        TraceCompile& c = log.compiles[static_cast<size_t>(index)];
        c.guardsEvent = static_cast<int64_t>(addFileEvent(folder / "guards.txt", std::move(*text), "magi_guards",
                                                          model.rank, index));
        c.guardFormat = GuardFormat::MagiTree;
      }
    }
    const fs::path compiledFns = folder / "compiled_fns";
    if (isFolder(compiledFns)) {
      for (const fs::path& file : sortedByName(filesOf(compiledFns))) {
        const std::string stem = file.stem().string();
        if (file.extension() != ".py") continue;
        if (stem.ends_with("_split_graph")) {
          addGraph(file, id + ":magi_split_graph", "magi_split_graph", index);
        } else if (stem.ends_with("_post_grad")) {
          addGraph(file, id + ":inductor_post_grad_graph", "inductor_post_grad_graph", index);
        } else if (!stem.ends_with("_runnable")) {
          addGraph(file, id + ":dynamo_output_graph", "dynamo_output_graph", index);
          if (isFolder(compiledFns / stem)) readPieces(compiledFns / stem, id, index);
        }
      }
    }
    const fs::path resume = folder / "resume_fns";
    if (isFolder(resume)) {
      for (const fs::path& fn : sortedByName(subfolders(resume))) readFunction(model, fn, "");
    }
  }

  // The pieces of a piecewise compile: submod_<k>/ in index order.
  void readPieces(const fs::path& folder, const std::string& id, int32_t compile) {
    std::vector<std::pair<int64_t, fs::path>> pieces;
    for (const fs::path& sub : subfolders(folder))
      if (auto k = numberAfter(sub.filename().string(), "submod_")) pieces.emplace_back(*k, sub);
    std::sort(pieces.begin(), pieces.end());
    std::error_code ec;
    for (const auto& [k, piece] : pieces) {
      const std::string name = piece.filename().string();
      // README.txt's first line: "# submod_1 (splitting_op)" or "# submod_0 (compiled)".
      bool splittingOp = false;
      if (fs::is_regular_file(piece / "README.txt", ec)) {
        if (auto readme = readText(piece / "README.txt")) splittingOp = readme->find("(splitting_op)") != std::string::npos;
      }
      const std::string kind = splittingOp ? "magi_splitting_op" : "magi_piece";
      if (fs::is_regular_file(piece / "graph_module.py", ec)) addGraph(piece / "graph_module.py", id + ":" + name, kind, compile);
      if (fs::is_regular_file(piece / "inductor_output.py", ec)) {
        if (auto text = readText(piece / "inductor_output.py")) {
          TraceLog& log = result_.log;
          const size_t event = addFileEvent(piece / "inductor_output.py", std::move(*text), "inductor_output_code",
                                            log.compiles[static_cast<size_t>(compile)].rank, compile);
          log.events[event].name = name + "/inductor_output.py";
          log.compiles[static_cast<size_t>(compile)].outputCodeEvents.push_back(event);
        }
      }
    }
  }

  const Progress& progress_;
  MagiDumpLoad result_;
  uint64_t filesRead_ = 0;
};

}  // namespace

std::vector<MagiLifecycleTotal> magiLifecycleTotals(const MagiModel& model) {
  std::vector<MagiLifecycleTotal> totals;
  std::map<std::string, size_t> byName;
  for (const MagiTimelineEvent& e : model.timeline) {
    if (e.phase != MagiPhase::After && e.phase != MagiPhase::Failed) continue;
    auto [it, inserted] = byName.try_emplace(e.lifecycle, totals.size());
    if (inserted) totals.push_back({e.lifecycle});
    MagiLifecycleTotal& t = totals[it->second];
    ++t.runs;
    t.timed += e.durationS.has_value();
    t.seconds += e.durationS.value_or(0);
    if (e.phase == MagiPhase::Failed) {
      ++t.failed;
      if (!e.error.empty()) t.lastError = e.error;
    }
  }
  std::stable_sort(totals.begin(), totals.end(), [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  return totals;
}

bool isMagiDump(const fs::path& path) {
  return isFolder(path) && !findModelFolders(path).empty();  // unlistable folders are skipped, not thrown
}

MagiDumpLoad loadMagiDump(const fs::path& path, const Progress& progress) {
  if (!isFolder(path)) throw Error(ErrorCode::BadInput, "a MagiCompiler dump is a folder", {path.string()});
  return DumpLoader(path, progress).load();
}

}  // namespace lathe::io
