// TORCH_TRACE loader on the real samples (captures/ and tlparse/) and on damaged inputs built here.
// Expected counts are taken from the raw text with plain string search, never from the loader.
#include "io/trace/trace_log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "io/trace/detail/trace_record.h"
#include "temp_dir.h"
#include "util/diagnostics.h"
#include "util/input.h"
#include "resident_size.h"

namespace fs = std::filesystem;
using namespace lathe;
using namespace lathe::io;

namespace {

const fs::path kSamples = LATHE_SAMPLES_DIR;

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

// Lines that look like record headers: a level letter, and `] {` somewhere.
size_t countHeaderLines(std::string_view text) {
  size_t n = 0;
  for (auto line : splitLines(text))
    if (!line.empty() && std::string_view("VIWEC").find(line[0]) != std::string_view::npos &&
        line.find("] {") != std::string_view::npos)
      ++n;
  return n;
}

// Header lines whose JSON starts with `{"<kind>": `.
size_t countEventHeaders(std::string_view text, std::string_view kind) {
  const std::string needle = "] {\"" + std::string(kind) + "\": ";
  size_t n = 0;
  for (auto line : splitLines(text))
    if (!line.empty() && line[0] != '\t' && line.find(needle) != std::string_view::npos) ++n;
  return n;
}

size_t countStringArtifacts(std::string_view text, std::string_view name) {
  const std::string needle = "] {\"artifact\": {\"name\": \"" + std::string(name) + "\", \"encoding\": \"string\"}";
  size_t n = 0;
  for (auto line : splitLines(text))
    if (!line.empty() && line[0] != '\t' && line.find(needle) != std::string_view::npos) ++n;
  return n;
}

size_t countTopLevelGraphs(const TraceLog& log, std::string_view kind) {
  size_t n = 0;
  for (const auto& g : log.graphs)
    if (g.kind == kind && g.parent.empty()) ++n;
  return n;
}

const std::vector<std::string_view> kGraphEventKinds = {
    "dynamo_output_graph",      "aot_joint_graph",          "aot_forward_graph",        "aot_backward_graph",
    "aot_inference_graph",      "inductor_pre_grad_graph",  "inductor_post_grad_graph", "compiled_autograd_graph",
    "optimize_ddp_split_graph", "optimize_ddp_split_child", "exported_program",
};
const std::vector<std::string_view> kGraphArtifactNames = {
    "before_pre_grad_graph",    "after_pre_grad_graph",       "before_joint_graph",        "after_joint_graph",
    "before_post_grad_graph",   "after_post_grad_graph",      "inductor_post_grad_graph",  "before_recompile_pre_grad",
    "after_recompile_pre_grad", "before_recompile_post_grad", "after_recompile_post_grad",
};

// Every graph-bearing record in the raw text must have become a graph entry of that kind (torch logs
// inductor_post_grad_graph as an event or as an artifact of that name: both count).
void expectGraphCountsMatchText(const TraceLog& log, std::string_view text, const std::string& label) {
  std::set<std::string_view> kinds(kGraphEventKinds.begin(), kGraphEventKinds.end());
  kinds.insert(kGraphArtifactNames.begin(), kGraphArtifactNames.end());
  size_t total = 0;
  for (auto kind : kinds) {
    const size_t expected = countEventHeaders(text, kind) + countStringArtifacts(text, kind);
    EXPECT_EQ(countTopLevelGraphs(log, kind), expected) << label << " kind " << kind;
    total += expected;
  }
  size_t topLevel = 0;
  for (const auto& g : log.graphs) topLevel += g.parent.empty();
  EXPECT_EQ(topLevel, total) << label;
}

std::string textOf(const fs::path& path) {
  return readFile(path);
}

std::vector<fs::path> sampleFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(kSamples / "captures"))
    if (e.is_regular_file()) files.push_back(e.path());
  for (const auto& e : fs::directory_iterator(kSamples / "tlparse")) {
    const auto ext = e.path().extension();
    if (e.is_regular_file() && (ext == ".log" || ext == ".txt")) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

const std::vector<fs::path> kRankFolders = {
    kSamples / "captures/llama_4l_fsdp_ranks",   kSamples / "tlparse/multi_rank_logs",
    kSamples / "tlparse/multi_rank_runtime",     kSamples / "tlparse/multi_rank_schedule",
    kSamples / "tlparse/graph_exec_order_tests",
};

// md5 mismatches really present in the samples (checked with Python's hashlib, payload lines joined
// with '\n' after dropping one TAB and any CR): edited or whitespace-stripped files.
const std::map<std::string, size_t> kKnownMd5Mismatches = {
    {"export.log", 1},
    {"export_guard_added.log", 1},
    {"simple_corrupted_json.log", 1},
    {"dedicated_log_torch_trace_rank_0_a74od7a1.log", 2},
    {"multi_rank_runtime/dedicated_log_torch_trace_rank_0.log", 4},
    {"dedicated_log_torch_trace_rank_1_n8zycf07.log", 1},
};

size_t knownMismatches(const fs::path& file) {
  const std::string parentAndName = file.parent_path().filename().string() + "/" + file.filename().string();
  if (auto it = kKnownMd5Mismatches.find(parentAndName); it != kKnownMd5Mismatches.end()) return it->second;
  if (auto it = kKnownMd5Mismatches.find(file.filename().string()); it != kKnownMd5Mismatches.end()) return it->second;
  return 0;
}

// Codes this loader emits for damage; the samples must produce none except known md5 mismatches.
const std::vector<std::string> kLoaderDamageCodes = {
    "not_a_record",    "bad_json",         "line_too_long",         "payload_too_large",  "unexpected_payload",
    "truncated_input", "bad_string_table", "graph_without_payload", "graph_parse_failed",
};

std::string describe(const Diagnostics& d) {
  std::string out;
  for (const auto& item : d.items()) out += item.where.str() + ": " + item.code + ": " + item.message + "\n";
  return out.substr(0, 4000);
}

using lathe::testing::kResidentSizeMeaningful;
using lathe::testing::peakResidentKb;

const char* kHeaderPrefix = "V1129 16:08:01.371000 3231 torch/_dynamo/utils.py:1796] ";
std::string record(const std::string& json) {
  return kHeaderPrefix + json + "\n";
}

using lathe::testing::TempDir;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Real samples

TEST(TraceLogSamples, EverySampleFileLoadsWithAllRecordsAndGraphs) {
  const auto files = sampleFiles();
  ASSERT_GE(files.size(), 25u);
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    const TraceLog log = loadTraceLog(file);
    const std::string text = textOf(file);
    EXPECT_EQ(log.diagnostics.count(Severity::Error), 0u) << describe(log.diagnostics);
    EXPECT_EQ(log.diagnostics.countCode("md5_mismatch"), knownMismatches(file)) << describe(log.diagnostics);
    for (const auto& code : kLoaderDamageCodes) EXPECT_EQ(log.diagnostics.countCode(code), 0u) << code;
    EXPECT_EQ(log.events.size(), countHeaderLines(text));
    expectGraphCountsMatchText(log, text, file.filename().string());
    ASSERT_EQ(log.files.size(), 1u);
    EXPECT_FALSE(log.multiRank);
  }
}

TEST(TraceLogSamples, RankFoldersLoadEveryFileWithRankPrefixedIds) {
  for (const auto& dir : kRankFolders) {
    SCOPED_TRACE(dir.string());
    const TraceLog log = loadTraceLog(dir);
    EXPECT_EQ(log.diagnostics.count(Severity::Error), 0u);
    size_t headers = 0, mismatches = 0, files = 0;
    std::string allText;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string text = textOf(e.path());
      headers += countHeaderLines(text);
      mismatches += knownMismatches(e.path());
      allText += text;
      if (!allText.empty() && allText.back() != '\n') allText += '\n';
      ++files;
    }
    EXPECT_EQ(log.files.size(), files);
    EXPECT_EQ(log.events.size(), headers);
    EXPECT_EQ(log.diagnostics.countCode("md5_mismatch"), mismatches) << describe(log.diagnostics);
    for (const auto& code : kLoaderDamageCodes) EXPECT_EQ(log.diagnostics.countCode(code), 0u) << code;
    expectGraphCountsMatchText(log, allText, dir.filename().string());
    EXPECT_TRUE(log.multiRank);
    ASSERT_FALSE(log.graphs.empty());
    for (const auto& g : log.graphs) {
      if (!g.parent.empty()) continue;
      EXPECT_TRUE(g.id.starts_with("rank" + std::to_string(g.rank) + ":" + g.compileId + ":")) << g.id;
    }
  }
}

TEST(TraceLogSamples, RankComesFromTheEnvelopeElseFromTheFileName) {
  // multi_rank_logs: no `rank` key in the records, ranks from the names.
  const TraceLog byName = loadTraceLog(kSamples / "tlparse/multi_rank_logs");
  ASSERT_EQ(byName.files.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(byName.files[static_cast<size_t>(r)].rank, r);
    EXPECT_TRUE(byName.findGraph("rank" + std::to_string(r) + ":0/0:dynamo_output_graph")) << r;
  }
  // One rank file on its own: rank from the name, ids without a prefix.
  const TraceLog single = loadTraceLog(kSamples / "tlparse/multi_rank_logs/dedicated_log_torch_trace_rank_3.log");
  EXPECT_EQ(single.files[0].rank, 3);
  EXPECT_FALSE(single.multiRank);
  EXPECT_TRUE(single.findGraph("0/0:dynamo_output_graph"));
  // multi_rank_runtime: `…rank_5.log` holds records of rank 1.
  const TraceLog runtime = loadTraceLog(kSamples / "tlparse/multi_rank_runtime");
  ASSERT_EQ(runtime.files.size(), 2u);
  EXPECT_EQ(runtime.files[0].rank, 0);
  EXPECT_TRUE(runtime.files[1].path.filename().string().ends_with("rank_5.log"));
  EXPECT_EQ(runtime.files[1].rank, 1);
  std::set<int32_t> ranks;
  for (const auto& e : runtime.events) ranks.insert(e.rank);
  EXPECT_EQ(ranks, (std::set<int32_t>{0, 1}));
  EXPECT_TRUE(runtime.findCompile("0/0", 1));
  // multi_rank_schedule: three runs that all say rank 0; the later files keep the rank in their name.
  const TraceLog copies = loadTraceLog(kSamples / "tlparse/multi_rank_schedule");
  ASSERT_EQ(copies.files.size(), 3u);
  for (int r = 0; r < 3; ++r) EXPECT_EQ(copies.files[static_cast<size_t>(r)].rank, r);
  EXPECT_EQ(copies.diagnostics.countCode("rank_conflict"), 2u);
  EXPECT_EQ(copies.compiles.size(), 6u);  // two per process, not merged
  EXPECT_TRUE(copies.findGraph("rank2:1/0:aot_inference_graph"));
  // Our gzip rank files.
  const TraceLog fsdp = loadTraceLog(kSamples / "captures/llama_4l_fsdp_ranks");
  EXPECT_TRUE(fsdp.findGraph("rank0:0/0:aot_joint_graph"));
  EXPECT_TRUE(fsdp.findGraph("rank1:0/0:aot_joint_graph"));
}

TEST(TraceLogSamples, CorruptedJsonSampleGivesOneMd5WarningAndAllGraphs) {
  const TraceLog clean = loadTraceLog(kSamples / "tlparse/simple.log");
  const TraceLog damaged = loadTraceLog(kSamples / "tlparse/simple_corrupted_json.log");
  EXPECT_EQ(clean.diagnostics.size(), 0u) << describe(clean.diagnostics);
  ASSERT_EQ(damaged.diagnostics.size(), 1u) << describe(damaged.diagnostics);
  const Diagnostic& d = damaged.diagnostics.items()[0];
  EXPECT_EQ(d.code, "md5_mismatch");
  EXPECT_EQ(d.severity, Severity::Warning);
  EXPECT_TRUE(d.where.file.ends_with("simple_corrupted_json.log"));
  EXPECT_EQ(d.where.line, 13u);  // the damaged chromium_event record
  EXPECT_EQ(damaged.events.size(), clean.events.size());
  for (const auto& e : damaged.events) EXPECT_EQ(e.md5Ok, e.line != 13) << e.line;
  ASSERT_FALSE(clean.graphs.empty());
  ASSERT_EQ(damaged.graphs.size(), clean.graphs.size());
  for (size_t i = 0; i < clean.graphs.size(); ++i) EXPECT_EQ(damaged.graphs[i].id, clean.graphs[i].id);
}

TEST(TraceLogSamples, DynamicTrainingRecompileHasReasonAndSymbolicGraphs) {
  // Training at seq 512, 768, 1024: 768 recompiles with a symbolic sequence length and 1024 reuses
  // that graph, so the log holds two compiles.
  const fs::path file = kSamples / "captures/llama3_8b_2l_dyntrain.log.gz";
  const TraceLog log = loadTraceLog(file);
  const std::string text = textOf(file);
  ASSERT_EQ(log.compiles.size(), countEventHeaders(text, "compilation_metrics"));
  ASSERT_EQ(log.compiles.size(), 2u);
  EXPECT_EQ(log.compiles[0].id, "0/0");
  EXPECT_EQ(log.compiles[1].id, "0/1");
  EXPECT_TRUE(log.compiles[0].recompileReasons.empty());
  ASSERT_EQ(log.compiles[1].recompileReasons.size(), 1u);
  EXPECT_EQ(log.compiles[1].recompileReasons[0],
            "0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 512, actual 768");
  for (const auto& c : log.compiles) {
    EXPECT_EQ(c.status, CompileStatus::Ok);
    EXPECT_EQ(c.frameName, "wrapper");
    EXPECT_TRUE(c.frameFile.ends_with("transformers/utils/generic.py"));
    EXPECT_EQ(c.frameLine, 933);
    EXPECT_GT(c.guardCount.value_or(0), 0);
    EXPECT_GT(c.entireFrameCompileTimeS.value_or(0), 0.0);
    EXPECT_EQ(c.guardFormat, GuardFormat::CppTree);
    EXPECT_TRUE(log.guards(c).find("TREE_GUARD_MANAGER") != std::string_view::npos);
    EXPECT_EQ(c.outputCodeEvents.size(), 2u);  // forward and (lazily compiled) backward
  }
  // The compile at seq 768 has one symbolic size, hinted 768 by its create_symbol record.
  const GraphEntry* dynamo = log.findGraph("0/1:dynamo_output_graph");
  ASSERT_TRUE(dynamo);
  bool sawHintedSymbol = false;
  for (const auto& node : dynamo->graph->nodes())
    for (const auto& dim : node.meta.sizes)
      if (dim.symbolic() && dim.hasHint && dim.value == 768) sawHintedSymbol = true;
  EXPECT_TRUE(sawHintedSymbol);
}

TEST(TraceLogSamples, GraphBreaksSplitGpt2TrainingIntoTwoGraphCompiles) {
  const fs::path file = kSamples / "captures/gpt2_train.log.gz";
  const TraceLog log = loadTraceLog(file);
  std::vector<std::string> withGraphs;
  for (const auto& c : log.compiles)
    for (size_t g : c.graphs)
      if (log.graphs[g].kind == "dynamo_output_graph") withGraphs.push_back(c.id);
  EXPECT_EQ(withGraphs, (std::vector<std::string>{"1/0_1", "3/0"}));

  // Frame 1 restarted after a graph break: attempt 0 logged the break, attempt 1 compiled.
  const TraceCompile* first = log.findCompile("1/0");
  const TraceCompile* restarted = log.findCompile("1/0_1");
  ASSERT_TRUE(first && restarted);
  EXPECT_EQ(first->attempt, 0);
  EXPECT_EQ(restarted->attempt, 1);
  EXPECT_EQ(first->status, CompileStatus::Unknown);  // no compilation_metrics for the abandoned attempt
  EXPECT_EQ(first->frameName, "forward");            // from the dynamo_start stack
  EXPECT_TRUE(first->frameFile.ends_with("models/gpt2/modeling_gpt2.py"));
  EXPECT_EQ(restarted->status, CompileStatus::Ok);
  EXPECT_EQ(restarted->guardCount, 2489);
  EXPECT_FALSE(restarted->restartReasons.empty());
  EXPECT_TRUE(log.findGraph("1/0_1:aot_joint_graph"));
  EXPECT_TRUE(log.findGraph("3/0:aot_backward_graph"));

  const TraceCompile* loggingBreak = log.findCompile("0/0_1");
  ASSERT_TRUE(loggingBreak);
  ASSERT_EQ(loggingBreak->restartReasons.size(), 1u);
  EXPECT_TRUE(loggingBreak->restartReasons[0].starts_with("logging.Logger method not supported"));

  // Each compile's events are its own, and every compile event is listed exactly once.
  size_t inCompiles = 0;
  for (size_t c = 0; c < log.compiles.size(); ++c) {
    for (size_t e : log.compiles[c].events) EXPECT_EQ(log.events[e].compile, static_cast<int32_t>(c));
    inCompiles += log.compiles[c].events.size();
  }
  size_t withCompile = 0;
  for (const auto& e : log.events) withCompile += e.compile >= 0;
  EXPECT_EQ(inCompiles, withCompile);
  size_t outputCode = 0;
  for (const auto& c : log.compiles) outputCode += c.outputCodeEvents.size();
  EXPECT_EQ(outputCode, countEventHeaders(textOf(file), "inductor_output_code"));
}

TEST(TraceLogSamples, CompileFailureCarriesTypeAndReason) {
  const TraceLog log = loadTraceLog(kSamples / "tlparse/comp_failure.log");
  ASSERT_EQ(log.compiles.size(), 1u);
  const TraceCompile& c = log.compiles[0];
  EXPECT_EQ(c.id, "0/0");
  EXPECT_EQ(c.status, CompileStatus::Failed);
  EXPECT_EQ(compileStatusName(c.status), "failed");
  EXPECT_EQ(c.failType, "BackendCompilerFailed");
  EXPECT_EQ(c.failReason, "backend='broken_backend' raised:\nRuntimeError: broken backend");
  EXPECT_EQ(c.frameName, "fn");
  EXPECT_EQ(c.frameLine, 10755);
  EXPECT_FALSE(c.metrics.empty());
  EXPECT_EQ(nlohmann::json::parse(c.metrics).at("fail_type"), "BackendCompilerFailed");
  ASSERT_EQ(c.graphs.size(), 1u);
  EXPECT_EQ(log.graphs[c.graphs[0]].id, "0/0:dynamo_output_graph");
}

TEST(TraceLogSamples, RepeatedKindsAreNumberedAndIdenticalDumpsShareOneGraph) {
  // Inductor logs inductor_post_grad_graph for the forward, then for the backward.
  const TraceLog log = loadTraceLog(kSamples / "captures/llama3_8b_2l_train.log.gz");
  const GraphEntry* forward = log.findGraph("0/0:inductor_post_grad_graph");
  const GraphEntry* backward = log.findGraph("0/0:inductor_post_grad_graph#2");
  ASSERT_TRUE(forward && backward);
  EXPECT_LT(forward->event, backward->event);
  EXPECT_FALSE(log.findGraph("0/0:inductor_post_grad_graph#3"));
  // before_pre_grad_graph and after_pre_grad_graph hold the same text here: one parse, one graph.
  const GraphEntry* before = log.findGraph("0/0:before_pre_grad_graph");
  const GraphEntry* after = log.findGraph("0/0:after_pre_grad_graph");
  ASSERT_TRUE(before && after);
  ASSERT_EQ(log.events[before->event].payload, log.events[after->event].payload);
  EXPECT_EQ(before->graph, after->graph);
  EXPECT_NE(forward->graph, backward->graph);
  std::set<std::string> ids;
  for (const auto& g : log.graphs) EXPECT_TRUE(ids.insert(g.id).second) << "duplicate id " << g.id;
}

TEST(TraceLogSamples, NestedSubgraphsAreEntriesUnderTheirParent) {
  // cache_hit_miss.log holds higher-order-op graphs with nested subgraph classes.
  const TraceLog log = loadTraceLog(kSamples / "tlparse/cache_hit_miss.log");
  size_t nested = 0;
  for (const auto& g : log.graphs) {
    if (g.parent.empty()) continue;
    ++nested;
    const GraphEntry* parent = log.findGraph(g.parent);
    ASSERT_TRUE(parent) << g.id;
    EXPECT_EQ(parent->event, g.event);
    EXPECT_EQ(parent->compileId, g.compileId);
    bool listed = false;
    for (const auto& [attr, sub] : parent->graph->subgraphs())
      if (sub == g.graph && g.id == g.parent + "/" + attr) listed = true;
    EXPECT_TRUE(listed) << g.id;
  }
  EXPECT_GT(nested, 0u);
}

TEST(TraceLogSamples, GuardsStackAndStringTable) {
  const TraceLog json = loadTraceLog(kSamples / "tlparse/comp_metrics.log");
  ASSERT_FALSE(json.compiles.empty());
  const TraceCompile* withJsonGuards = nullptr;
  for (const auto& c : json.compiles)
    if (c.guardFormat == GuardFormat::Json) withJsonGuards = &c;
  ASSERT_TRUE(withJsonGuards);
  EXPECT_TRUE(nlohmann::json::parse(json.guards(*withJsonGuards)).is_array());

  const TraceLog log = loadTraceLog(kSamples / "captures/gpt2_train.log.gz");
  const TraceCompile* c = log.findCompile("0/0");
  ASSERT_TRUE(c);
  ASSERT_GE(c->stack.size(), 2u);
  EXPECT_EQ(c->stack.front().function, "<module>");
  EXPECT_TRUE(c->stack.front().file.ends_with("capture_one.py"));
  EXPECT_EQ(c->stack.front().line, 63);
  EXPECT_EQ(c->stack.front().code, "m.train(); l = loss_of(cm, x, V); l.backward()");
  EXPECT_EQ(log.files[0].strings.at(0).substr(log.files[0].strings.at(0).rfind('/') + 1), "convert_frame.py");
}

TEST(TraceLogSamples, ExportLogKeepsGraphsOutsideCompiles) {
  const TraceLog log = loadTraceLog(kSamples / "tlparse/export.log");
  EXPECT_TRUE(log.compiles.empty());
  const GraphEntry* program = log.findGraph("-:exported_program");
  ASSERT_TRUE(program);
  EXPECT_EQ(program->compile, -1);
  EXPECT_EQ(program->compileId, "-");
  // Bare empty lines inside the payload stay empty payload lines.
  EXPECT_NE(log.events[program->event].payload.find("x = None\n\n"), std::string::npos);
}

TEST(TraceLogSamples, ProgressCountsCompressedBytesAndCancels) {
  const fs::path file = kSamples / "captures/gpt2_infer.log.gz";
  std::vector<std::pair<uint64_t, uint64_t>> reports;
  Progress progress;
  progress.report = [&](uint64_t done, uint64_t total) { reports.emplace_back(done, total); };
  const TraceLog log = loadTraceLog(file, progress);
  ASSERT_GE(reports.size(), 2u);
  for (size_t i = 1; i < reports.size(); ++i) EXPECT_GE(reports[i].first, reports[i - 1].first);
  EXPECT_EQ(reports.back().first, fs::file_size(file));
  EXPECT_EQ(reports.back().second, fs::file_size(file));
  EXPECT_EQ(log.files[0].bytes, fs::file_size(file));

  std::atomic<bool> cancel{false};
  Progress cancelling;
  cancelling.cancel = &cancel;
  cancelling.report = [&](uint64_t, uint64_t) { cancel = true; };
  try {
    (void)loadTraceLog(file, cancelling);
    FAIL() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Cancelled);
  }
}

TEST(TraceLogSamples, StringAndFileEntryPointsAgree) {
  const fs::path file = kSamples / "tlparse/cache_hit_miss.log";
  const TraceLog fromFile = loadTraceLog(file);
  const TraceLog fromText = loadTraceLogFromString(textOf(file), file.string());
  ASSERT_EQ(fromText.events.size(), fromFile.events.size());
  ASSERT_EQ(fromText.graphs.size(), fromFile.graphs.size());
  for (size_t i = 0; i < fromFile.graphs.size(); ++i) EXPECT_EQ(fromText.graphs[i].id, fromFile.graphs[i].id);
  for (size_t i = 0; i < fromFile.events.size(); ++i) EXPECT_EQ(fromText.events[i].payload, fromFile.events[i].payload);
}

// ---------------------------------------------------------------------------------------------
// Envelopes, grouping and damage on inputs built here

TEST(TraceLogRecords, HeaderLinesAreRecognisedByTheirGlogPrefix) {
  const auto header =
      trace::parseTraceHeader("W0102 03:04:05.000006 77 C:\\torch\\_dynamo\\utils.py:12] {\"str\": [\"a\", 0]}  ");
  ASSERT_TRUE(header);
  EXPECT_EQ(header->level, 'W');
  EXPECT_EQ(header->month, 1);
  EXPECT_EQ(header->day, 2);
  EXPECT_EQ(header->microsOfDay, ((3 * 60 + 4) * 60 + 5) * 1000000ull + 6);
  EXPECT_EQ(header->thread, 77u);
  EXPECT_EQ(header->json, "{\"str\": [\"a\", 0]}");
  for (const char* notHeader : {
           "X1129 16:08:01.371000 3231 a.py:1] {}",  // level letter
           "V1129 16:08:01.37100 3231 a.py:1] {}",   // five fraction digits
           "V1129 16:08:01.371000 a.py:1] {}",       // no process id
           "V1129 16:08:01.371000 3231 a.py] {}",    // no line number
           "V1129 16:08:01.371000 3231 a.py:1] []",  // not an object
           "V1129 16:08:01.371000 3231 a.py:1]{}",   // no space after the bracket
           "V1129 16:08:01.371000 3231 :1] {}",      // no path
       })
    EXPECT_FALSE(trace::parseTraceHeader(notHeader)) << notHeader;
}

TEST(TraceLogRecords, OnlyAnUnreadableInputThrows) {
  const auto expectBadInput = [](const fs::path& path) {
    try {
      (void)loadTraceLog(path);
      ADD_FAILURE() << "no error for " << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::BadInput) << e.what();
    }
  };
  TempDir dir;
  expectBadInput(dir.path() / "missing.log");
  expectBadInput(dir.path());  // a directory without dedicated_log_torch_trace_* files
  const TraceLog empty = loadTraceLog(dir.write("empty.log", ""));
  EXPECT_TRUE(empty.events.empty());
  EXPECT_TRUE(empty.diagnostics.empty());
}

TEST(TraceLogRecords, CompileIdsFollowTorchText) {
  const std::string text =
      record(R"({"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 1, "attempt": 0})") +
      record(R"({"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 1, "attempt": 2})") +
      record(R"({"describe_source": {}, "compiled_autograd_id": 3, "frame_id": 0, "frame_compile_id": 1})") +
      record(R"({"compiled_autograd_graph": {}, "compiled_autograd_id": 3})") +
      record(R"({"describe_source": {}, "compiled_autograd_id": null, "frame_id": 2, "frame_compile_id": 0})") +
      record(R"({"link": {"name": "x", "url": "y"}, "stack": []})");
  const TraceLog log = loadTraceLogFromString(text);
  std::vector<std::string> ids;
  for (const auto& c : log.compiles) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"0/1", "0/1_2", "!3/0/1", "!3", "2/0"}));
  EXPECT_EQ(log.events.back().compile, -1);
  EXPECT_EQ(log.events.back().name, "x");
  // compiled_autograd_graph without payload: a warning, the record is kept.
  EXPECT_EQ(log.diagnostics.countCode("graph_without_payload"), 1u);
  EXPECT_EQ(log.events.size(), 6u);
}

TEST(TraceLogRecords, RecordsWithoutRankTakeTheRankOfTheirFile) {
  // torch adds `rank` once torch.distributed is up: earlier records of the same process lack it.
  const std::string text =
      record(R"({"str": ["/a.py", 0]})") +
      record(R"({"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0})") +
      record(R"({"dynamo_start": {"stack": []}, "rank": 2, "frame_id": 1, "frame_compile_id": 0, "attempt": 0})") +
      record(R"({"chromium_event": {}, "rank": 7})");  // a stray rank does not make another process
  const TraceLog log = loadTraceLogFromString(text);
  EXPECT_FALSE(log.multiRank);
  EXPECT_EQ(log.files[0].rank, 2);
  ASSERT_EQ(log.compiles.size(), 2u);
  for (const auto& c : log.compiles) EXPECT_EQ(c.rank, 2);
  std::vector<int32_t> ranks;
  for (const auto& e : log.events) ranks.push_back(e.rank);
  EXPECT_EQ(ranks, (std::vector<int32_t>{2, 2, 2, 7}));
}

TEST(TraceLogRecords, UnknownKindsAreKeptRawInTheirCompile) {
  const std::string text =
      record(R"({"my_future_event": {"detail": [1, 2]}, "frame_id": 4, "frame_compile_id": 0, "attempt": 0, )"
             R"("has_payload": "5d41402abc4b2a76b9719d911017c592"})") +
      "\thello\n";
  const TraceLog log = loadTraceLogFromString(text, "unknown.log");
  EXPECT_TRUE(log.diagnostics.empty()) << describe(log.diagnostics);
  ASSERT_EQ(log.events.size(), 1u);
  const TraceLogEvent& e = log.events[0];
  EXPECT_EQ(e.kind, "my_future_event");
  EXPECT_EQ(e.payload, "hello");
  EXPECT_TRUE(e.md5Ok);
  EXPECT_EQ(e.metadata().at("detail"), nlohmann::json::array({1, 2}));
  EXPECT_EQ(e.level, 'V');
  EXPECT_EQ(e.month, 11);
  EXPECT_EQ(e.day, 29);
  EXPECT_EQ(e.microsOfDay, ((16 * 60 + 8) * 60 + 1) * 1000000ull + 371000);
  EXPECT_EQ(e.thread, 3231u);
  ASSERT_EQ(log.compiles.size(), 1u);
  EXPECT_EQ(log.compiles[0].id, "4/0");
  EXPECT_EQ(log.compiles[0].events, (std::vector<size_t>{0}));
  EXPECT_EQ(log.compiles[0].status, CompileStatus::Unknown);
}

TEST(TraceLogRecords, WrongMd5IsOneWarningAndThePayloadIsKept) {
  const std::string text = record(R"({"str": ["/a.py", 0]})") +
                           record(R"({"artifact": {"name": "notes", "encoding": "string"}, )"
                                  R"("has_payload": "00000000000000000000000000000000"})") +
                           "\thello\n" +
                           record(R"({"artifact": {"name": "empty", "encoding": "string"}, )"
                                  R"("has_payload": "d41d8cd98f00b204e9800998ecf8427e"})") +
                           "\t\n";
  const TraceLog log = loadTraceLogFromString(text, "md5.log");
  ASSERT_EQ(log.diagnostics.size(), 1u) << describe(log.diagnostics);
  EXPECT_EQ(log.diagnostics.items()[0].code, "md5_mismatch");
  EXPECT_EQ(log.diagnostics.items()[0].where.str(), "md5.log:2");
  ASSERT_EQ(log.events.size(), 3u);
  EXPECT_FALSE(log.events[1].md5Ok);
  EXPECT_EQ(log.events[1].payload, "hello");
  EXPECT_TRUE(log.events[2].md5Ok);  // a lone TAB is an empty payload line
  EXPECT_EQ(log.events[2].payload, "");
}

TEST(TraceLogRecords, BareEmptyLinesInsideAPayloadAreEmptyPayloadLines) {
  const std::string text = record(R"({"artifact": {"name": "a", "encoding": "string"}, )"
                                  R"("has_payload": "3ccbdb3a6fc0c44f85888b79f4d62520"})") +
                           "\tline one\n\n\tline three\n\n\n" + record(R"({"str": ["/b.py", 0]})");
  const TraceLog log = loadTraceLogFromString(text);
  EXPECT_TRUE(log.diagnostics.empty()) << describe(log.diagnostics);
  ASSERT_EQ(log.events.size(), 2u);
  EXPECT_EQ(log.events[0].payload, "line one\n\nline three");
  EXPECT_TRUE(log.events[0].md5Ok);
}

TEST(TraceLogRecords, StackFramesResolveThroughTheStringTable) {
  const std::string text =
      record(R"({"str": ["/home/u/train.py", 0]})") + record(R"({"str": ["/lib/model.py", 1]})") +
      record(R"json({"dynamo_start": {"stack": [{"line": 3, "name": "<module>", "filename": 0, "loc": "run()"}, )json"
             R"({"line": 10, "name": "forward", "filename": 1}, {"line": 2, "name": "g", "filename": 9}]}, )"
             R"("frame_id": 0, "frame_compile_id": 0, "attempt": 0})");
  const TraceLog log = loadTraceLogFromString(text);
  ASSERT_EQ(log.compiles.size(), 1u);
  const auto& stack = log.compiles[0].stack;
  ASSERT_EQ(stack.size(), 3u);
  EXPECT_EQ(stack[0].file, "/home/u/train.py");
  EXPECT_EQ(stack[0].code, "run()");
  EXPECT_EQ(stack[1].file, "/lib/model.py");
  EXPECT_EQ(stack[2].file, "<unknown #9>");
  EXPECT_EQ(log.compiles[0].frameName, "g");  // innermost frame, no metrics
  EXPECT_EQ(log.compiles[0].frameLine, 2);
}

TEST(TraceLogRecords, DamagedLinesAreWarningsWithLocationAndLoadingGoesOn) {
  std::string text = record(R"({"str": ["/a.py", 0]})");                  // line 1
  text += "random words\n\tand an orphan payload line\nmore\n";           // lines 2-4: one run
  text += record(R"({"chromium_event": {}, "frame_id": 0, "broken": )");  // line 5: bad JSON
  text += "\tits payload\n";                                              // line 6: skipped with it
  text += kHeaderPrefix + std::string("{\"bad\": \"\xff\xfe\"}\n");       // line 7: invalid UTF-8
  text += record(R"({"str": ["/b.py", 1]})");                             // line 8
  text += "V1129 not a header\n";                                         // line 9
  text += record(R"({"dynamo_start": {"stack": []}, "frame_id": 0, "frame_compile_id": 0})");  // 10
  text += "\tunexpected\n";                                                                    // 11
  text += record(R"({"str": "not a pair"})");                                                  // 12
  const TraceLog log = loadTraceLogFromString(text, "damaged.log");
  EXPECT_EQ(log.events.size(), 4u);
  std::vector<std::string> seen;
  for (const auto& d : log.diagnostics.items()) seen.push_back(d.code + "@" + d.where.str());
  EXPECT_EQ(seen, (std::vector<std::string>{"not_a_record@damaged.log:2", "bad_json@damaged.log:5",
                                            "bad_json@damaged.log:7", "not_a_record@damaged.log:9",
                                            "unexpected_payload@damaged.log:10", "bad_string_table@damaged.log:12"}));
  EXPECT_EQ(log.files[0].strings.at(1), "/b.py");
}

TEST(TraceLogRecords, InvalidUtf8PayloadIsKeptByteForByte) {
  const std::string payload = "\xff\xfe\x80 not utf-8";
  const std::string text = record(R"({"artifact": {"name": "blob", "encoding": "string"}, )"
                                  R"("has_payload": "79f3f1403e36f741860f038a381ed5c4"})") +
                           "\t" + payload + "\n";
  const TraceLog log = loadTraceLogFromString(text);
  EXPECT_TRUE(log.diagnostics.empty()) << describe(log.diagnostics);
  ASSERT_EQ(log.events.size(), 1u);
  EXPECT_EQ(log.events[0].payload, payload);
  EXPECT_TRUE(log.events[0].md5Ok);
}

TEST(TraceLogRecords, GarbageBytesNeverCrash) {
  std::mt19937 rng(7);
  std::string garbage(size_t{1} << 20, '\0');
  for (auto& c : garbage) c = static_cast<char>(rng());
  // Sprinkle header-like prefixes so some lines get past the first checks.
  for (size_t at = 1000; at + 80 < garbage.size(); at += 9973) garbage.replace(at, 57, kHeaderPrefix);
  const TraceLog log = loadTraceLogFromString(garbage, "garbage.bin");
  EXPECT_TRUE(log.events.empty());
  EXPECT_FALSE(log.diagnostics.empty());
  for (const auto& d : log.diagnostics.items()) EXPECT_TRUE(d.code == "not_a_record" || d.code == "bad_json") << d.code;
  TempDir dir;
  const TraceLog fromFile = loadTraceLog(dir.write("garbage.log", garbage));
  EXPECT_EQ(fromFile.diagnostics.size(), log.diagnostics.size());
}

TEST(TraceLogRecords, TruncatedFileKeepsEveryRecordBeforeTheCut) {
  const std::string full = textOf(kSamples / "tlparse/simple.log");
  // Cut a few bytes into a payload line past the middle.
  const size_t cut = full.find("\n\t", full.size() / 2) + 6;
  const std::string truncated = full.substr(0, cut);
  TempDir dir;
  const TraceLog log = loadTraceLog(dir.write("cut.log", truncated));
  EXPECT_EQ(log.events.size(), countHeaderLines(truncated));
  EXPECT_EQ(log.diagnostics.countCode("md5_mismatch"), 1u) << describe(log.diagnostics);
  EXPECT_FALSE(log.events.back().md5Ok);
}

TEST(TraceLogRecords, TruncatedGzipIsAWarningAndKeepsWhatWasRead) {
  const fs::path file = kSamples / "captures/llama3_8b_2l_train.log.gz";
  std::string bytes(fs::file_size(file), '\0');
  std::ifstream(file, std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  TempDir dir;
  const fs::path cut = dir.write("cut.log.gz", std::string_view(bytes).substr(0, bytes.size() / 2));
  const TraceLog log = loadTraceLog(cut);
  EXPECT_EQ(log.diagnostics.countCode("truncated_input"), 1u) << describe(log.diagnostics);
  const TraceLog whole = loadTraceLog(file);
  EXPECT_GT(log.events.size(), 10u);
  EXPECT_LT(log.events.size(), whole.events.size());
  for (const auto& d : log.diagnostics.items()) EXPECT_TRUE(d.where.file.ends_with("cut.log.gz"));
}

TEST(TraceLogRecords, HundredMegabyteLinesAreCutAndMemoryStaysBounded) {
  // Runs in a fresh process (threadsafe death-test style re-executes the binary) so that the peak
  // resident size measures this load only.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto scenario = [] {
    TempDir dir;
    const fs::path path = dir.path() / "huge.log";
    {
      // Written in 1 MiB pieces: the test itself must not hold 100 MB.
      std::ofstream out(path, std::ios::binary);
      const auto hundredMegabytesOf = [&out](char c) {
        const std::string piece(size_t{1} << 20, c);
        for (int i = 0; i < 100; ++i) out << piece;
      };
      // line 1: a record; line 2: 100 MB of text; line 3: a header; line 4: its 100 MB payload line;
      // line 5: a record.
      out << record(R"({"str": ["/a.py", 0]})");
      hundredMegabytesOf('x');
      out << "\n" << record(R"({"artifact": {"name": "big", "encoding": "string"}, "has_payload": "0"})");
      out << "\t";
      hundredMegabytesOf('y');
      out << "\n" << record(R"({"str": ["/b.py", 1]})");
    }
    const TraceLog log = loadTraceLog(path);
    const long peakMb = peakResidentKb() / 1024;
    std::vector<std::string> seen;
    for (const auto& d : log.diagnostics.items()) seen.push_back(d.code + "@" + std::to_string(d.where.line));
    const bool ok =
        log.events.size() == 3 && log.events[1].payload.size() < kMaxTraceLineBytes && log.events[2].kind == "str" &&
        seen == std::vector<std::string>{"line_too_long@2", "not_a_record@2", "line_too_long@4", "md5_mismatch@3"} &&
        (peakMb < 180 || !kResidentSizeMeaningful);  // about 106 MiB measured; without the line limit over 200
    if (!ok) fprintf(stderr, "events %zu peak %ld MiB\n", log.events.size(), peakMb);
    std::exit(ok ? 0 : 1);
  };
  EXPECT_EXIT(scenario(), ::testing::ExitedWithCode(0), "");
}
