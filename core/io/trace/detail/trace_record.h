// Record layer of the TORCH_TRACE loader: splits a line stream into records (glog-style header +
// TAB-led payload lines), parses the header's JSON envelope and checks the payload's md5.
// Grouping into compiles and graph parsing live in trace_log.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "io/trace/trace_event.h"
#include "util/diagnostics.h"
#include "util/input.h"

namespace lathe::io::trace {

// `V1206 15:18:21.230000 1500233 torch/_dynamo/utils.py:1796] {...}`
struct TraceHeader {
  char level = 'V';
  uint8_t month = 0, day = 0;
  uint64_t microsOfDay = 0;
  uint64_t thread = 0;
  std::string_view json;  // from the first '{' to the end of the line, trailing blanks removed
};

// nullopt when the line is not a header (hand-written scan; no regex on the hot path).
[[nodiscard]] std::optional<TraceHeader> parseTraceHeader(std::string_view line);

// True when `json` nests no deeper than maxDepth (strings skipped). Checked before handing text to
// nlohmann, whose printer recurses.
[[nodiscard]] bool jsonDepthWithin(std::string_view json, int maxDepth);
inline constexpr int kMaxJsonDepth = 64;

// A stream of lines with the position reached in the underlying input (for progress).
class LineSource {
 public:
  virtual ~LineSource() = default;
  virtual bool next(std::string_view& line) = 0;          // false at the end
  [[nodiscard]] virtual uint64_t lineNumber() const = 0;  // 1-based number of the last line returned
  [[nodiscard]] virtual bool lastLineTruncated() const = 0;
  [[nodiscard]] virtual uint64_t position() const = 0;  // bytes of the input consumed (compressed for gzip)
};

class FileLineSource final : public LineSource {
 public:
  FileLineSource(InputFile& input, size_t maxLine) : input_(input), reader_(input, maxLine) {}
  bool next(std::string_view& line) override { return reader_.next(line); }
  [[nodiscard]] uint64_t lineNumber() const override { return reader_.lineNumber(); }
  [[nodiscard]] bool lastLineTruncated() const override { return reader_.lastLineTruncated(); }
  [[nodiscard]] uint64_t position() const override { return input_.fileOffset(); }

 private:
  InputFile& input_;
  LineReader reader_;
};

// Lines of text in memory, with the same cut of overlong lines as LineReader.
class StringLineSource final : public LineSource {
 public:
  StringLineSource(std::string_view text, size_t maxLine) : text_(text), maxLine_(maxLine) {}
  bool next(std::string_view& line) override;
  [[nodiscard]] uint64_t lineNumber() const override { return lineNumber_; }
  [[nodiscard]] bool lastLineTruncated() const override { return truncated_; }
  [[nodiscard]] uint64_t position() const override { return pos_; }

 private:
  std::string_view text_;
  size_t maxLine_;
  size_t pos_ = 0;
  uint64_t lineNumber_ = 0;
  bool truncated_ = false;
};

// Called once per record in log order, with the event (kind, name, envelope text, payload, md5
// verdict, header fields, file and line filled in; rank and compile left to the caller) and the
// parsed envelope.
using RecordSink = std::function<void(TraceLogEvent&& event, nlohmann::json&& envelope)>;

// Reads every record of one input. Damage becomes warnings located at `fileName`:line; reading
// goes on. `onTick` runs every few thousand lines or MiB (progress and cancellation).
void readRecords(LineSource& lines, const std::string& fileName, uint32_t fileIndex, Diagnostics& diagnostics,
                 const RecordSink& onRecord, const std::function<void()>& onTick);

}  // namespace lathe::io::trace
