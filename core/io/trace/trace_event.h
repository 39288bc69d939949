// One record of a TORCH_TRACE log, and the bounds on what one record may hold: what the record
// layer (detail/trace_record.h) reads and the loader (trace_log.h) groups into compiles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace lathe::io {

// One record. Every record is kept, whatever its kind.
struct TraceLogEvent {
  std::string kind;         // first key of the envelope ("dynamo_output_graph", "artifact", or anything unknown)
  std::string name;         // metadata "name" (artifact, graph_dump, dump_file, link), else empty
  std::string envelope;     // the header's JSON object, verbatim
  std::string payload;      // payload lines without their leading TAB, joined with '\n'
  bool hasPayload = false;  // the envelope announced one (`has_payload`)
  bool md5Ok = true;        // false when the payload's md5 differs from `has_payload`
  char level = 'V';
  uint8_t month = 0, day = 0;
  uint64_t microsOfDay = 0;  // header time of day in microseconds
  uint64_t thread = 0;       // process id (thread id in logs up to mid-2024)
  uint32_t file = 0;         // index into TraceLog::files
  uint64_t line = 0;         // 1-based line of the header in that file
  int32_t rank = -1;         // envelope `rank`, else the rank of its file
  int32_t compile = -1;      // index into TraceLog::compiles; -1 = outside any compile

  // The envelope parsed again (it was valid JSON when loaded) and its event metadata (envelope[kind]).
  [[nodiscard]] nlohmann::json parseEnvelope() const;
  [[nodiscard]] nlohmann::json metadata() const;
};

// Longest line kept; longer lines are cut (and reported) so that one huge line cannot exhaust memory.
inline constexpr size_t kMaxTraceLineBytes = size_t{32} << 20;
// Largest payload kept for one record; the rest is dropped with a warning.
inline constexpr size_t kMaxTracePayloadBytes = size_t{512} << 20;

}  // namespace lathe::io
