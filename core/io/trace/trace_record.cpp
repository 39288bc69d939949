#include "io/trace/detail/trace_record.h"

#include <openssl/evp.h>

#include <algorithm>
#include <array>

namespace lathe::io::trace {
namespace {

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

// Reads exactly n digits at s[pos..pos+n).
bool fixedDigits(std::string_view s, size_t pos, size_t n, uint64_t& out) {
  if (pos + n > s.size()) return false;
  uint64_t v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!isDigit(s[i])) return false;
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
  }
  out = v;
  return true;
}

// The first key of a JSON object text, decoded. False when the text does not start like an object
// with a string key.
bool firstObjectKey(std::string_view json, std::string& key) {
  size_t i = 0;
  auto skipBlanks = [&] {
    while (i < json.size() && (json[i] == ' ' || json[i] == '\t' || json[i] == '\n' || json[i] == '\r')) ++i;
  };
  skipBlanks();
  if (i >= json.size() || json[i] != '{') return false;
  ++i;
  skipBlanks();
  if (i >= json.size() || json[i] != '"') return false;
  const size_t start = i;
  bool escaped = false;
  for (++i; i < json.size(); ++i) {
    if (json[i] == '\\') {
      escaped = true;
      ++i;
    } else if (json[i] == '"') {
      break;
    }
  }
  if (i >= json.size()) return false;
  if (!escaped) {
    key.assign(json.substr(start + 1, i - start - 1));
    return true;
  }
  // Rare: let the JSON library decode the escapes of this one token.
  const auto token = nlohmann::json::parse(json.substr(start, i - start + 1), nullptr, false);
  if (!token.is_string()) return false;
  key = token.get<std::string>();
  return true;
}

// MD5 through OpenSSL's EVP interface, one context reused for every record of a load.
class Md5 {
 public:
  Md5() : ctx_(EVP_MD_CTX_new()), md_(EVP_MD_fetch(nullptr, "MD5", nullptr)) {}
  ~Md5() {
    EVP_MD_free(md_);
    EVP_MD_CTX_free(ctx_);
  }
  Md5(const Md5&) = delete;
  Md5& operator=(const Md5&) = delete;

  [[nodiscard]] bool available() const { return ctx_ && md_; }

  // Lowercase hex digest of data (32 characters); empty when MD5 is unavailable.
  std::string hex(std::string_view data) {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int size = 0;
    if (!available() || EVP_DigestInit_ex(ctx_, md_, nullptr) != 1 ||
        EVP_DigestUpdate(ctx_, data.data(), data.size()) != 1 || EVP_DigestFinal_ex(ctx_, digest.data(), &size) != 1)
      return {};
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(size_t{size} * 2, '0');
    for (unsigned int i = 0; i < size; ++i) {
      out[2 * i] = kHex[digest[i] >> 4];
      out[2 * i + 1] = kHex[digest[i] & 15];
    }
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
  EVP_MD* md_;
};

bool equalsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// A value from the input shown in a message: bounded and printable.
std::string excerpt(std::string_view s, size_t maxChars = 40) {
  std::string out;
  for (char c : s.substr(0, maxChars)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  if (s.size() > maxChars) out += "...";
  return out;
}

// Turns lines into records. One instance per input file.
class RecordAssembler {
 public:
  RecordAssembler(const std::string& fileName, uint32_t fileIndex, Diagnostics& diagnostics, const RecordSink& sink)
      : fileName_(fileName), fileIndex_(fileIndex), diagnostics_(diagnostics), sink_(sink) {}

  void line(std::string_view text, uint64_t lineNumber) {
    if (!text.empty() && text[0] == '\t') {
      if (state_ == State::Record) {
        appendPayloadLine(text.substr(1), lineNumber);
      } else if (state_ == State::Idle) {
        noteUnusable(lineNumber);
      }
      return;
    }
    if (text.empty()) {
      // Bare empty lines inside a payload (editors strip the lone TAB): kept as empty payload
      // lines if more payload follows, dropped at the end of the record.
      if (state_ == State::Record) ++pendingBlankLines_;
      return;
    }
    finishRecord();
    const auto header = parseTraceHeader(text);
    if (!header) {
      state_ = State::Idle;
      noteUnusable(lineNumber);
      return;
    }
    flushUnusable();
    startRecord(*header, lineNumber);
  }

  void end() {
    finishRecord();
    flushUnusable();
  }

 private:
  enum class State { Idle, Record, SkipRecord };

  SourceLocation at(uint64_t line) const { return {fileName_, line}; }

  // Runs of lines that are neither headers nor payload of a record are reported once per run.
  void noteUnusable(uint64_t lineNumber) {
    if (unusableCount_ == 0) unusableStart_ = lineNumber;
    ++unusableCount_;
  }
  void flushUnusable() {
    if (unusableCount_ == 0) return;
    diagnostics_.warn("not_a_record",
                      unusableCount_ == 1 ? "line is neither a record header nor payload; skipped"
                                          : std::to_string(unusableCount_) +
                                                " lines from here are neither record headers nor payload; skipped",
                      at(unusableStart_));
    unusableCount_ = 0;
  }

  void startRecord(const TraceHeader& header, uint64_t lineNumber) {
    std::string kind;
    nlohmann::json envelope;
    if (firstObjectKey(header.json, kind) && jsonDepthWithin(header.json, kMaxJsonDepth))
      envelope = nlohmann::json::parse(header.json, nullptr, /*allow_exceptions=*/false);
    if (kind.empty() || !envelope.is_object() || !envelope.contains(kind)) {
      diagnostics_.warn("bad_json", "record header does not hold a JSON object with an event key; record skipped",
                        at(lineNumber));
      state_ = State::SkipRecord;
      return;
    }
    state_ = State::Record;
    event_ = TraceLogEvent{};
    event_.kind = std::move(kind);
    event_.envelope.assign(header.json);
    event_.level = header.level;
    event_.month = header.month;
    event_.day = header.day;
    event_.microsOfDay = header.microsOfDay;
    event_.thread = header.thread;
    event_.file = fileIndex_;
    event_.line = lineNumber;
    const auto& metadata = envelope[event_.kind];
    if (metadata.is_object()) {
      const auto name = metadata.find("name");
      if (name != metadata.end() && name->is_string()) event_.name = name->get<std::string>();
    }
    expectedMd5_.clear();
    const auto md5 = envelope.find("has_payload");
    if (md5 != envelope.end()) {
      event_.hasPayload = true;
      if (md5->is_string()) expectedMd5_ = md5->get<std::string>();
    }
    envelope_ = std::move(envelope);
    payloadLines_ = 0;
    pendingBlankLines_ = 0;
    payloadTooLarge_ = false;
  }

  void appendPayloadLine(std::string_view text, uint64_t lineNumber) {
    if (payloadTooLarge_) return;
    std::string& payload = event_.payload;
    if (payload.size() + pendingBlankLines_ + text.size() + 1 > kMaxTracePayloadBytes) {
      payloadTooLarge_ = true;
      diagnostics_.warn("payload_too_large",
                        "payload exceeds " + std::to_string(kMaxTracePayloadBytes >> 20) + " MiB; the rest is dropped",
                        at(lineNumber));
      return;
    }
    for (; pendingBlankLines_ > 0; --pendingBlankLines_) {
      if (payloadLines_++ > 0) payload += '\n';
    }
    if (payloadLines_++ > 0) payload += '\n';
    payload.append(text);
  }

  void finishRecord() {
    if (state_ != State::Record) {
      state_ = State::Idle;
      return;
    }
    state_ = State::Idle;
    if (event_.hasPayload) {
      if (payloadTooLarge_) {
        event_.md5Ok = false;  // reported as too large; the kept prefix cannot match
      } else if (md5_.available()) {
        const std::string actual = md5_.hex(event_.payload);
        event_.md5Ok = equalsIgnoringCase(actual, expectedMd5_);
        if (!event_.md5Ok)
          diagnostics_.warn("md5_mismatch",
                            "payload of " + excerpt(event_.kind) + " does not match its md5 (has_payload " +
                                excerpt(expectedMd5_) + ", payload " + actual + "); kept as read",
                            at(event_.line));
      } else if (!md5UnavailableNoted_) {
        md5UnavailableNoted_ = true;
        diagnostics_.note("md5_unavailable", "MD5 is not available in this OpenSSL; payloads are not verified",
                          at(event_.line));
      }
    } else if (payloadLines_ > 0) {
      diagnostics_.warn("unexpected_payload", "record without has_payload is followed by payload lines; kept",
                        at(event_.line));
    }
    sink_(std::move(event_), std::move(envelope_));
  }

  const std::string& fileName_;
  uint32_t fileIndex_;
  Diagnostics& diagnostics_;
  const RecordSink& sink_;
  Md5 md5_;
  bool md5UnavailableNoted_ = false;

  State state_ = State::Idle;
  TraceLogEvent event_;
  nlohmann::json envelope_;
  std::string expectedMd5_;
  uint64_t payloadLines_ = 0;
  uint64_t pendingBlankLines_ = 0;
  bool payloadTooLarge_ = false;
  uint64_t unusableStart_ = 0, unusableCount_ = 0;
};

}  // namespace

std::optional<TraceHeader> parseTraceHeader(std::string_view s) {
  // LEVEL MMDD ' ' hh:mm:ss '.' 6DIGITS ' ' ID ' ' PATH ':' LINENO '] ' JSON
  if (s.empty() || std::string_view("VIWEC").find(s[0]) == std::string_view::npos) return std::nullopt;
  TraceHeader h;
  h.level = s[0];
  uint64_t mmdd = 0, hh = 0, mm = 0, ss = 0, frac = 0;
  if (!fixedDigits(s, 1, 4, mmdd) || s.size() < 22 || s[5] != ' ' || !fixedDigits(s, 6, 2, hh) || s[8] != ':' ||
      !fixedDigits(s, 9, 2, mm) || s[11] != ':' || !fixedDigits(s, 12, 2, ss) || s[14] != '.' ||
      !fixedDigits(s, 15, 6, frac) || s[21] != ' ')
    return std::nullopt;
  h.month = static_cast<uint8_t>(mmdd / 100);
  h.day = static_cast<uint8_t>(mmdd % 100);
  h.microsOfDay = ((hh * 60 + mm) * 60 + ss) * 1000000 + frac;
  size_t i = 22;
  const size_t idStart = i;
  uint64_t thread = 0;
  while (i < s.size() && isDigit(s[i]) && i - idStart < 19) thread = thread * 10 + static_cast<uint64_t>(s[i++] - '0');
  if (i == idStart || i >= s.size() || s[i] != ' ') return std::nullopt;
  h.thread = thread;
  const size_t pathStart = i + 1;
  const size_t close = s.find("] ", pathStart);
  if (close == std::string_view::npos) return std::nullopt;
  // PATH ':' LINENO right before "] " (the logging call site); the path itself may hold ':'
  // (Windows drives), so scan back from the bracket.
  size_t j = close;
  while (j > pathStart && isDigit(s[j - 1])) --j;
  if (j == close || j <= pathStart + 1 || s[j - 1] != ':') return std::nullopt;
  std::string_view json = s.substr(close + 2);
  while (!json.empty() && (json.back() == ' ' || json.back() == '\t')) json.remove_suffix(1);
  if (json.empty() || json.front() != '{') return std::nullopt;
  h.json = json;
  return h;
}

bool jsonDepthWithin(std::string_view json, int maxDepth) {
  int depth = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (c == '"') {
      // Skip the string: its brackets do not nest.
      for (++i; i < json.size() && json[i] != '"'; ++i)
        if (json[i] == '\\') ++i;
    } else if (c == '{' || c == '[') {
      if (++depth > maxDepth) return false;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return true;
}

bool StringLineSource::next(std::string_view& line) {
  truncated_ = false;
  if (pos_ >= text_.size()) return false;
  const size_t newline = text_.find('\n', pos_);
  const size_t end = newline == std::string_view::npos ? text_.size() : newline;
  const size_t length = end - pos_;
  truncated_ = length > maxLine_;
  line = text_.substr(pos_, std::min(length, maxLine_));
  pos_ = newline == std::string_view::npos ? text_.size() : newline + 1;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ++lineNumber_;
  return true;
}

void readRecords(LineSource& lines, const std::string& fileName, uint32_t fileIndex, Diagnostics& diagnostics,
                 const RecordSink& onRecord, const std::function<void()>& onTick) {
  RecordAssembler assembler(fileName, fileIndex, diagnostics, onRecord);
  std::string_view text;
  // Tick every few thousand lines or few MiB, whichever comes first (payload lines can be long).
  uint32_t linesSinceTick = 0;
  size_t bytesSinceTick = 0;
  while (lines.next(text)) {
    if (lines.lastLineTruncated())
      diagnostics.warn("line_too_long",
                       "line longer than " + std::to_string(kMaxTraceLineBytes >> 20) + " MiB; cut to that length",
                       {fileName, lines.lineNumber()});
    assembler.line(text, lines.lineNumber());
    bytesSinceTick += text.size() + 1;
    if (++linesSinceTick >= 4096 || bytesSinceTick >= (size_t{4} << 20)) {
      linesSinceTick = 0;
      bytesSinceTick = 0;
      onTick();
    }
  }
  assembler.end();
}

}  // namespace lathe::io::trace
