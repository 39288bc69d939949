#include "io/guards/guards.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>

#include "util/json_limits.h"

namespace lathe::io {

namespace {

using json = nlohmann::json;

// GuardText offsets are 32-bit; a guard payload is at most a few MB in practice.
constexpr size_t kMaxPayloadBytes = size_t{1} << 31;
constexpr uint64_t kProgressEveryLines = 4096;
// A leaf whose text leaves a bracket or quote open continues on following non-tree lines (a repr
// printed over several lines), up to this many.
constexpr int kMaxContinuationLines = 64;
constexpr int kMaxCommentParts = 8;
// Most "; "-joined parts of one recompile reason that are matched to guards.
constexpr int kMaxReasonParts = 16;

constexpr std::string_view kCommentMarker = "  # ";
constexpr std::string_view kTreeHeader = "TREE_GUARD_MANAGER:";
constexpr std::string_view kLatencyPrefix = "Guard latency = ";
// MagiCompiler's guards.txt keeps this many characters of each guard.
constexpr size_t kMagiGuardWidth = 120;
constexpr std::string_view kUserStackMarker = "\nUser stack trace:";

bool isIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

std::string_view trimRight(std::string_view s) {
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return s;
}
std::string_view trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  return trimRight(s);
}

std::string_view leadingIdent(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && isIdentChar(s[n])) ++n;
  return s.substr(0, n);
}

template <typename Int>
std::optional<Int> parseInt(std::string_view s) {
  Int value{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// Python quoting and bracket nesting, fed character by character or in runs, so that separators
// inside strings and calls (`L['a, b']`, `f(x, y)`) are not taken for top-level ones.
class ExprScanner {
 public:
  void feed(char c) {
    if (quote_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == quote_) {
        quote_ = 0;
      }
      return;
    }
    switch (c) {
      case '\'':
      case '"': quote_ = c; break;
      case '(':
      case '[':
      case '{': ++depth_; break;
      case ')':
      case ']':
      case '}':
        if (depth_ > 0) --depth_;
        break;
      default: break;
    }
  }
  // Feeds a run of text. Only quotes, backslashes and brackets change the state, and the character
  // after a backslash (which it escapes, whatever it is).
  void feed(std::string_view text) {
    for (size_t i = 0; i < text.size(); ++i) {
      if (!kStateChars[static_cast<unsigned char>(text[i])] && !escaped_) continue;
      feed(text[i]);
    }
  }
  [[nodiscard]] bool topLevel() const { return quote_ == 0 && depth_ == 0; }

 private:
  static constexpr std::array<bool, 256> kStateChars = [] {
    std::array<bool, 256> table{};
    for (unsigned char c : std::string_view("'\"\\()[]{}")) table[c] = true;
    return table;
  }();

  char quote_ = 0;
  bool escaped_ = false;
  size_t depth_ = 0;
};

// Pieces of s separated by top-level `sep`, trimmed. s is the inside of brackets.
std::vector<std::string_view> splitTopLevel(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  ExprScanner scanner;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == sep && scanner.topLevel()) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
      continue;
    }
    scanner.feed(s[i]);
  }
  if (!trim(s).empty()) parts.push_back(trim(s.substr(start)));
  return parts;
}

// The arguments of the call that opens at s[open] == '('; nullopt when it never closes.
std::optional<std::string_view> callArguments(std::string_view s, size_t open) {
  ExprScanner scanner;
  for (size_t i = open + 1; i < s.size(); ++i) {
    if (s[i] == ')' && scanner.topLevel()) return s.substr(open + 1, i - open - 1);
    scanner.feed(s[i]);
  }
  return std::nullopt;
}

// `f(arg, ...)` -> arg when code starts with a (dotted) name and a call.
std::string_view firstCallArgument(std::string_view code) {
  size_t i = 0;
  while (i < code.size() && (isIdentChar(code[i]) || code[i] == '.')) ++i;
  if (i == 0 || i >= code.size() || code[i] != '(') return {};
  ExprScanner scanner;
  for (size_t j = i + 1; j < code.size(); ++j) {
    if ((code[j] == ',' || code[j] == ')') && scanner.topLevel()) return trim(code.substr(i + 1, j - i - 1));
    scanner.feed(code[j]);
  }
  return {};
}

// The first occurrence of needle (which must not start with a quote or bracket) at or after from
// that lies outside strings and brackets, scanner carrying the state of text[0, from). On npos the
// scanner has consumed all of text.
size_t findTopLevel(std::string_view text, std::string_view needle, ExprScanner& scanner, size_t from = 0) {
  while (true) {
    const size_t at = text.find(needle, from);
    scanner.feed(text.substr(from, (at == std::string_view::npos ? text.size() : at) - from));
    if (at == std::string_view::npos || scanner.topLevel()) return at;
    from = at + 1;
    scanner.feed(text[at]);
  }
}

// Where the code of a guard line ends and torch's `  # ...` comment begins: the first comment
// marker outside strings and brackets, or, when the text leaves a bracket open (a clipped repr),
// the first marker at all. npos when there is no comment.
size_t findCommentStart(std::string_view text) {
  ExprScanner scanner;
  const size_t at = findTopLevel(text, kCommentMarker, scanner);
  return at != std::string_view::npos || scanner.topLevel() ? at : text.find(kCommentMarker);
}

// `path:123 in fn` with an optional ` (note)` after it, or the whole thing in parentheses.
struct UserLocation {
  std::string_view file, function, note;
  uint32_t line = 0;
};

std::optional<UserLocation> parsePlainUserLocation(std::string_view s) {
  for (size_t colon = s.find(':'); colon != std::string_view::npos; colon = s.find(':', colon + 1)) {
    if (colon == 0) continue;
    size_t digitsEnd = colon + 1;
    while (digitsEnd < s.size() && isDigit(s[digitsEnd])) ++digitsEnd;
    if (digitsEnd == colon + 1 || s.compare(digitsEnd, 4, " in ") != 0) continue;
    const size_t fnStart = digitsEnd + 4;
    const size_t fnEnd = std::min(s.find(' ', fnStart), s.size());
    if (fnEnd == fnStart) continue;
    const std::string_view rest = s.substr(fnEnd);
    UserLocation loc;
    if (!rest.empty()) {
      if (rest.size() < 3 || rest.substr(0, 2) != " (" || rest.back() != ')') continue;
      loc.note = rest.substr(2, rest.size() - 3);
    }
    const auto line = parseInt<uint32_t>(s.substr(colon + 1, digitsEnd - colon - 1));
    if (!line) continue;
    loc.file = s.substr(0, colon);
    loc.function = s.substr(fnStart, fnEnd - fnStart);
    loc.line = *line;
    return loc;
  }
  return std::nullopt;
}

std::optional<UserLocation> parseUserLocation(std::string_view s) {
  s = trimRight(s);
  if (s.size() >= 2 && s.front() == '(' && s.back() == ')') {
    if (auto inner = parsePlainUserLocation(s.substr(1, s.size() - 2)); inner && inner->note.empty()) return inner;
  }
  return parsePlainUserLocation(s);
}

// `RootGuardManager`, `| | +- TYPE_MATCH: ...`: depth and the text after "+- ".
struct TreeLine {
  uint32_t depth = 0;
  size_t bodyOffset = 0;  // within the line
};

std::optional<TreeLine> splitTreeLine(std::string_view line) {
  TreeLine t;
  size_t pos = 0;
  while (line.compare(pos, 2, "| ") == 0) {
    pos += 2;
    ++t.depth;
  }
  if (line.compare(pos, 3, "+- ") != 0) return std::nullopt;
  t.bodyOffset = pos + 3;
  return t;
}

bool isStructuralLine(std::string_view line) {
  const std::string_view t = trim(line);
  return t.empty() || t == kTreeHeader || line.starts_with(kLatencyPrefix) || splitTreeLine(line).has_value();
}

// Lines of a payload ('\n'-separated, a trailing '\r' dropped) with their 0-based index.
class LineCursor {
 public:
  explicit LineCursor(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) {
    if (pos_ > text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    index_ = next_++;
    pos_ = end + 1;
    return true;
  }
  [[nodiscard]] uint64_t index() const { return index_; }
  [[nodiscard]] size_t offset() const { return std::min(pos_, text_.size()); }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  uint64_t index_ = 0;
  uint64_t next_ = 0;
};

// Code-shape -> type for `dynamo_guards` JSON entries, which carry no guard type.
struct CodeShape {
  std::string_view prefix;
  std::string_view type;
};
constexpr CodeShape kCodeShapes[] = {
    {"check_tensor(", "TENSOR_MATCH"},
    {"___check_type_id(", "TYPE_MATCH"},
    {"___check_obj_id(", "ID_MATCH"},
    {"hasattr(", "NO_HASATTR"},
    {"utils_device.CURRENT_DEVICE ==", "DEFAULT_DEVICE"},
    {"___check_global_state(", "GLOBAL_STATE"},
    {"___check_torch_function_mode_stack(", "TORCH_FUNCTION_MODE_STACK"},
    {"___dict_contains(", "DICT_CONTAINS"},
    {"not ___dict_contains(", "DICT_CONTAINS"},
    {"___dict_version(", "DICT_VERSION"},
    {"check_no_aliasing(", "NO_TENSOR_ALIASING"},
};

std::string_view inferGuardType(std::string_view code) {
  for (const CodeShape& shape : kCodeShapes) {
    if (code.starts_with(shape.prefix)) return shape.type;
  }
  return "LAMBDA_GUARD";
}

uint64_t lineOfByte(std::string_view text, size_t byte) {
  byte = std::min(byte, text.size());
  return static_cast<uint64_t>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(byte), '\n'));
}

// Parses JSON; on failure returns nullopt and sets errorLine to the 0-based line of the damage.
std::optional<json> parseJsonText(std::string_view text, uint64_t& errorLine) {
  try {
    return parseJsonBounded<json>(text, "guards");
  } catch (const Error&) {  // nested or sized beyond the bounds
    errorLine = 0;
  } catch (const json::parse_error& e) {
    errorLine = e.byte > 0 ? lineOfByte(text, e.byte - 1) : 0;
  } catch (const json::exception&) {  // e.g. a number out of range
    errorLine = 0;
  }
  return std::nullopt;
}

}  // namespace

// Fills a GuardTree: the cpp form keeps the payload as the tree's text and refers into it; the JSON
// form appends decoded strings.
class GuardTreeBuilder {
 public:
  GuardTreeBuilder(const GuardParseOptions& options, Diagnostics& diagnostics)
      : options_(options), diagnostics_(diagnostics) {}

  GuardTree parseCpp(std::string_view payload);
  GuardTree parseJson(std::string_view payload);
  GuardTree parseMagi(std::string_view payload);

 private:
  void warn(std::string code, std::string message, uint64_t payloadLine) {
    diagnostics_.warn(std::move(code), std::move(message), {options_.file, options_.firstLine + payloadLine});
  }
  void reportProgress(size_t done, size_t total) const {
    if (!options_.progress) return;
    options_.progress->update(done, total);
    options_.progress->checkCancelled();
  }
  // A view into tree_.text_ -> its GuardText. Empty views may come from anywhere (a default one).
  GuardText ref(std::string_view within) const {
    if (within.empty()) return {};
    return {static_cast<uint32_t>(within.data() - tree_.text_.data()), static_cast<uint32_t>(within.size())};
  }
  GuardText append(std::string_view s);
  GuardText appendCached(std::string_view s);

  bool parseManager(std::string_view body, GuardNode& node);
  void parseManagerFields(std::string_view fields, GuardNode& node);
  // text: the leaf after "TYPE: "; commentStart: where torch's comment begins in it, or npos.
  void parseLeafText(std::string_view text, size_t commentStart, GuardNode& node);
  void parseComment(std::string_view comment, GuardNode& node);
  void addJsonLeaf(const json& item, uint64_t payloadLine);
  void finalize();

  const GuardParseOptions& options_;
  Diagnostics& diagnostics_;
  GuardTree tree_;
  std::unordered_map<std::string, GuardText> cached_;  // repeated strings of the JSON form
};

GuardText GuardTreeBuilder::append(std::string_view s) {
  if (tree_.text_.size() + s.size() > std::numeric_limits<uint32_t>::max()) return {};
  const GuardText t{static_cast<uint32_t>(tree_.text_.size()), static_cast<uint32_t>(s.size())};
  tree_.text_.append(s);
  return t;
}

GuardText GuardTreeBuilder::appendCached(std::string_view s) {
  auto it = cached_.find(std::string(s));
  if (it != cached_.end()) return it->second;
  const GuardText t = append(s);
  cached_.emplace(std::string(s), t);
  return t;
}

void GuardTreeBuilder::finalize() {
  auto& nodes = tree_.nodes_;
  for (size_t i = 0; i < nodes.size(); ++i) {
    nodes[i].subtreeEnd = static_cast<uint32_t>(i + 1);
    nodes[i].childCount = 0;
  }
  // Parents precede their children, so walking backwards finishes every subtree before its parent.
  for (size_t i = nodes.size(); i-- > 0;) {
    const uint32_t p = nodes[i].parent;
    if (p == kNoGuardNode) continue;
    nodes[p].subtreeEnd = std::max(nodes[p].subtreeEnd, nodes[i].subtreeEnd);
    ++nodes[p].childCount;
  }
}

GuardTree GuardTreeBuilder::parseCpp(std::string_view payload) {
  if (payload.size() >= kMaxPayloadBytes) {
    warn("guard_payload_too_large", "guard payload of " + std::to_string(payload.size()) + " bytes not read", 0);
    return {};
  }
  tree_.text_.assign(payload);
  const std::string_view all(tree_.text_);
  tree_.nodes_.reserve(static_cast<size_t>(std::count(all.begin(), all.end(), '\n')) + 1);
  // openManagers[d] is the manager at depth d whose children are being read.
  std::vector<uint32_t> openManagers;
  LineCursor cursor(all);
  std::string_view line;
  while (cursor.next(line)) {
    const uint64_t lineIndex = cursor.index();
    if (lineIndex % kProgressEveryLines == 0) reportProgress(cursor.offset(), all.size());
    const std::string_view trimmed = trim(line);
    if (trimmed.empty() || trimmed == kTreeHeader) continue;
    if (line.starts_with(kLatencyPrefix)) {
      std::string_view number = trim(line.substr(kLatencyPrefix.size()));
      if (number.ends_with("us")) number = trimRight(number.substr(0, number.size() - 2));
      double micros = 0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), micros);
      if (ec == std::errc() && end == number.data() + number.size()) {
        tree_.latencyMicros_ = micros;
      } else {
        warn("guard_latency_unparsed", "unreadable guard latency line", lineIndex);
      }
      continue;
    }
    const auto treeLine = splitTreeLine(line);
    if (!treeLine) {
      warn("guard_line_unparsed", "not a guard tree line: " + std::string(trimmed.substr(0, 80)), lineIndex);
      continue;
    }
    if (treeLine->depth > openManagers.size()) {
      warn("guard_line_depth", "guard line at depth " + std::to_string(treeLine->depth) + " has no manager above it",
           lineIndex);
      continue;
    }
    GuardNode node;
    node.depth = treeLine->depth;
    node.parent = node.depth > 0 ? openManagers[node.depth - 1] : kNoGuardNode;
    node.line = options_.firstLine + lineIndex;
    const std::string_view body = line.substr(treeLine->bodyOffset);
    const std::string_view typeName = leadingIdent(body);
    const bool isManager = !typeName.empty() && typeName.ends_with("Manager");
    if (isManager) {
      node.kind = GuardNodeKind::Manager;
      if (!parseManager(body, node)) {
        warn("guard_line_unparsed", "unreadable guard manager: " + std::string(body.substr(0, 80)), lineIndex);
        continue;
      }
    } else {
      // Relational guards (NO_TENSOR_ALIASING, OBJECT_ALIASING) shared by several managers print
      // their type alone under all but one of them.
      const std::string_view afterType = trimRight(body.substr(typeName.size()));
      if (typeName.empty() || (!afterType.empty() && afterType.front() != ':')) {
        warn("guard_line_unparsed", "unreadable guard: " + std::string(body.substr(0, 80)), lineIndex);
        continue;
      }
      node.kind = GuardNodeKind::Leaf;
      node.type = ref(typeName);
      std::string_view text = afterType.empty() ? afterType : body.substr(typeName.size() + 1);
      if (text.starts_with(' ')) text.remove_prefix(1);
      ExprScanner scanner;
      size_t commentStart = findTopLevel(text, kCommentMarker, scanner);
      // A leaf that leaves a bracket or quote open and has no comment goes on over the following
      // lines that are not tree lines (a repr printed over several lines).
      for (int extra = 0; extra < kMaxContinuationLines && commentStart == std::string_view::npos &&
                          !scanner.topLevel() && text.find(kCommentMarker) == std::string_view::npos;
           ++extra) {
        LineCursor peek = cursor;
        std::string_view nextLine;
        if (!peek.next(nextLine) || isStructuralLine(nextLine)) break;
        cursor = peek;
        const size_t nextStart = static_cast<size_t>(nextLine.data() - text.data());
        text = all.substr(static_cast<size_t>(text.data() - all.data()), nextStart + nextLine.size());
        scanner.feed('\n');
        commentStart = findTopLevel(text, kCommentMarker, scanner, nextStart);
      }
      // A clipped repr leaves a bracket open for good: its comment starts at the first marker.
      if (commentStart == std::string_view::npos && !scanner.topLevel()) commentStart = text.find(kCommentMarker);
      parseLeafText(text, commentStart, node);
    }
    openManagers.resize(node.depth);
    if (node.kind == GuardNodeKind::Manager) openManagers.push_back(static_cast<uint32_t>(tree_.nodes_.size()));
    tree_.nodes_.push_back(node);
  }
  reportProgress(all.size(), all.size());
  finalize();
  return std::move(tree_);
}

bool GuardTreeBuilder::parseManager(std::string_view body, GuardNode& node) {
  if (body.starts_with("KeyManager: ")) {
    node.dictRole = DictEntryRole::Key;
    body.remove_prefix(12);
  } else if (body.starts_with("ValueManager: ")) {
    node.dictRole = DictEntryRole::Value;
    body.remove_prefix(14);
  }
  const std::string_view className = leadingIdent(body);
  if (className.empty()) return false;
  node.type = ref(className);
  std::string_view rest = body.substr(className.size());
  if (className == "KeyValueManager") {
    constexpr std::string_view kPair = " pair at index=";
    if (rest.starts_with(kPair)) node.pairIndex = parseInt<int64_t>(trim(rest.substr(kPair.size()))).value_or(-1);
    return true;
  }
  if (rest.starts_with(": ")) parseManagerFields(rest.substr(2), node);
  return true;
}

// `source=..., accessed_by=..., type=..., tag_safe=...`: split at top-level ", " before `name=`.
void GuardTreeBuilder::parseManagerFields(std::string_view fields, GuardNode& node) {
  auto startsField = [&](size_t at) {
    size_t i = at;
    while (i < fields.size() && isIdentChar(fields[i])) ++i;
    return i > at && i < fields.size() && fields[i] == '=';
  };
  auto assign = [&](std::string_view field) {
    const size_t eq = field.find('=');
    if (eq == std::string_view::npos) return;
    const std::string_view key = field.substr(0, eq);
    const GuardText value = ref(trim(field.substr(eq + 1)));
    if (key == "source") {
      node.source = value;
    } else if (key == "accessed_by") {
      node.accessor = value;
    } else if (key == "type") {
      node.pythonType = value;
    } else if (key == "tag_safe") {
      node.tagSafe = value;
    }
  };
  ExprScanner scanner;
  size_t start = 0;
  for (size_t at = findTopLevel(fields, ", ", scanner); at != std::string_view::npos;
       at = findTopLevel(fields, ", ", scanner, at + 1)) {
    if (!startsField(at + 2)) continue;
    assign(fields.substr(start, at - start));
    start = at + 2;
  }
  assign(fields.substr(start));
}

void GuardTreeBuilder::parseLeafText(std::string_view text, size_t commentStart, GuardNode& node) {
  node.code = ref(trim(text.substr(0, commentStart)));
  if (commentStart != std::string_view::npos) parseComment(text.substr(commentStart + kCommentMarker.size()), node);
}

// `<user source>  # <file>:<line> in <fn> (<note>)`; either part may be missing.
void GuardTreeBuilder::parseComment(std::string_view comment, GuardNode& node) {
  comment = trimRight(comment);
  if (comment.empty()) return;
  // The location is the last part that reads as one; the user source line before it may itself
  // contain "  # ". Real comments have two or three parts; the bound keeps a line of markers linear.
  std::optional<UserLocation> location;
  size_t locationStart = 0;
  size_t marker = comment.rfind(kCommentMarker);
  for (int tries = 0; tries < kMaxCommentParts; ++tries) {
    locationStart = marker == std::string_view::npos ? 0 : marker + kCommentMarker.size();
    location = parseUserLocation(comment.substr(locationStart));
    if (location || marker == std::string_view::npos || marker == 0) break;
    marker = comment.rfind(kCommentMarker, marker - 1);
  }
  if (!location) {
    node.note = ref(trim(comment));
    return;
  }
  if (locationStart >= kCommentMarker.size()) {
    node.userSource = ref(trim(comment.substr(0, locationStart - kCommentMarker.size())));
  }
  node.userFile = ref(location->file);
  node.userLine = location->line;
  node.userFunction = ref(location->function);
  node.note = ref(trim(location->note));
}

GuardTree GuardTreeBuilder::parseJson(std::string_view payload) {
  if (payload.size() >= kMaxPayloadBytes) {
    warn("guard_payload_too_large", "guard payload of " + std::to_string(payload.size()) + " bytes not read", 0);
    return {};
  }
  GuardNode root;
  root.kind = GuardNodeKind::Manager;
  root.type = appendCached("RootGuardManager");
  root.line = options_.firstLine;
  tree_.nodes_.push_back(root);

  uint64_t errorLine = 0;
  if (const std::optional<json> doc = parseJsonText(payload, errorLine)) {
    if (!doc->is_array()) {
      warn("guard_json_not_list", "guard payload is not a JSON list", 0);
    } else {
      // torch writes one entry per line between "[" and "]".
      const bool onePerLine = lineOfByte(payload, payload.size()) == doc->size() + 1;
      for (size_t i = 0; i < doc->size(); ++i) {
        if (i % kProgressEveryLines == 0) reportProgress(i, doc->size());
        addJsonLeaf((*doc)[i], onePerLine ? i + 1 : 0);
      }
    }
  } else {
    warn("guard_json_damaged", "guard list is not valid JSON; reading it entry by entry", errorLine);
    LineCursor cursor(payload);
    std::string_view line;
    while (cursor.next(line)) {
      if (cursor.index() % kProgressEveryLines == 0) reportProgress(cursor.offset(), payload.size());
      std::string_view entry = trim(line);
      if (entry.empty() || entry == "[" || entry == "]") continue;
      if (entry.back() == ',') entry.remove_suffix(1);
      // Without exceptions: a damaged list may have many damaged lines.
      const json item = entry.starts_with('{') ? json::parse(entry, nullptr, /*allow_exceptions=*/false)
                                               : json(json::value_t::discarded);
      if (item.is_discarded()) {
        warn("guard_json_entry_unreadable", "unreadable guard entry", cursor.index());
        continue;
      }
      addJsonLeaf(item, cursor.index());
    }
  }
  reportProgress(payload.size(), payload.size());
  finalize();
  return std::move(tree_);
}

void GuardTreeBuilder::addJsonLeaf(const json& item, uint64_t payloadLine) {
  const auto code = item.is_object() ? item.find("code") : item.end();
  if (!item.is_object() || code == item.end() || !code->is_string()) {
    warn("guard_json_entry_unreadable", "guard entry without a code string", payloadLine);
    return;
  }
  GuardNode leaf;
  leaf.kind = GuardNodeKind::Leaf;
  leaf.depth = 1;
  leaf.parent = 0;
  leaf.line = options_.firstLine + payloadLine;
  const auto& codeText = code->get_ref<const std::string&>();
  leaf.code = append(trim(codeText));
  leaf.type = appendCached(inferGuardType(trim(codeText)));
  // Stacks are outermost-first; the innermost frame is where the guard was made.
  const json* frame = nullptr;
  for (const char* key : {"user_stack", "stack"}) {
    const auto stack = item.find(key);
    if (stack != item.end() && stack->is_array() && !stack->empty()) {
      frame = &stack->back();
      break;
    }
  }
  if (frame && frame->is_object()) {
    if (auto it = frame->find("line"); it != frame->end() && it->is_number_unsigned()) {
      leaf.userLine = static_cast<uint32_t>(std::min<uint64_t>(it->get<uint64_t>(), UINT32_MAX));
    }
    if (auto it = frame->find("name"); it != frame->end() && it->is_string()) {
      leaf.userFunction = appendCached(it->get_ref<const std::string&>());
    }
    if (auto it = frame->find("loc"); it != frame->end() && it->is_string()) {
      leaf.userSource = append(trim(it->get_ref<const std::string&>()));
    }
    if (auto it = frame->find("filename"); it != frame->end()) {
      if (it->is_string()) {
        leaf.userFile = appendCached(it->get_ref<const std::string&>());
      } else if (it->is_number_integer() && options_.internedString) {
        if (auto name = options_.internedString(it->get<int64_t>())) leaf.userFile = appendCached(*name);
      }
    }
  }
  tree_.nodes_.push_back(leaf);
}

GuardTree GuardTreeBuilder::parseMagi(std::string_view payload) {
  if (payload.size() >= kMaxPayloadBytes) {
    warn("guard_payload_too_large", "guard payload of " + std::to_string(payload.size()) + " bytes not read", 0);
    return {};
  }
  // The form has no guard types: they are inferred from the code, from a table appended after the
  // payload before any view into the text is taken (appending later could move the text).
  tree_.text_.assign(payload);
  for (const CodeShape& shape : kCodeShapes) appendCached(shape.type);
  appendCached(inferGuardType(""));
  const std::string_view all = std::string_view(tree_.text_).substr(0, payload.size());
  const auto typeOf = [&](std::string_view code) { return cached_.at(std::string(inferGuardType(code))); };

  // A manager line `[Type] (n leaf guards, m children)` is indented 4 spaces per level, its leaves
  // `LEAF: code  # comment` and `child[i]:` lines 2 more. openManagers[d] is the manager at depth d.
  std::vector<uint32_t> openManagers;
  size_t leaves = 0, clipped = 0;
  LineCursor cursor(all);
  std::string_view line;
  while (cursor.next(line)) {
    const uint64_t lineIndex = cursor.index();
    if (lineIndex % kProgressEveryLines == 0) reportProgress(cursor.offset(), all.size());
    const size_t indent = std::min(line.find_first_not_of(' '), line.size());
    const std::string_view body = trimRight(line.substr(indent));
    if (body.empty() || (body.starts_with("child[") && body.ends_with("]:"))) continue;
    if (body == "closure_vars:") break;  // the guard functions' closure (8 at most), not guards
    if (body.starts_with("... (") && body.ends_with("children omitted)")) {
      warn("guard_tree_clipped", "MagiCompiler printed the guard tree only to depth 32: " +
                                     std::string(body.substr(5, body.size() - 6)), lineIndex);
      continue;
    }
    GuardNode node;
    node.line = options_.firstLine + lineIndex;
    if (body.starts_with('[')) {
      const size_t close = body.find(']');
      if (close == std::string_view::npos || close == 1 || indent % 4 != 0 || indent / 4 > openManagers.size()) {
        warn("guard_line_unparsed", "unreadable guard manager: " + std::string(body.substr(0, 80)), lineIndex);
        continue;
      }
      node.kind = GuardNodeKind::Manager;
      node.depth = static_cast<uint32_t>(indent / 4);
      node.type = ref(body.substr(1, close - 1));
    } else if (body.starts_with("LEAF: ") && indent % 4 == 2 && indent / 4 < openManagers.size()) {
      node.kind = GuardNodeKind::Leaf;
      node.depth = static_cast<uint32_t>(indent / 4 + 1);
      const std::string_view text = body.substr(6);
      parseLeafText(text, findCommentStart(text), node);
      node.type = typeOf(tree_.text(node.code));
      ++leaves;
      // MagiCompiler keeps the first 120 characters of each guard (its writer's limit).
      if (text.size() == kMagiGuardWidth) ++clipped;
    } else {
      warn("guard_line_unparsed", "not a guard tree line: " + std::string(body.substr(0, 80)), lineIndex);
      continue;
    }
    node.parent = node.depth > 0 ? openManagers[node.depth - 1] : kNoGuardNode;
    if (node.kind == GuardNodeKind::Manager) {
      openManagers.resize(node.depth);
      openManagers.push_back(static_cast<uint32_t>(tree_.nodes_.size()));
    }
    tree_.nodes_.push_back(node);
  }
  if (clipped > 0) {
    diagnostics_.note("guards_clipped",
                      std::to_string(clipped) + " of " + std::to_string(leaves) +
                          " guards end at MagiCompiler's 120-character cut: their code and source are incomplete",
                      {options_.file, options_.firstLine});
  }
  reportProgress(all.size(), all.size());
  finalize();
  return std::move(tree_);
}

std::vector<uint32_t> GuardTree::children(uint32_t index) const {
  std::vector<uint32_t> result;
  uint32_t end = static_cast<uint32_t>(nodes_.size());
  uint32_t child = 0;
  if (index != kNoGuardNode) {
    if (index >= nodes_.size()) return result;
    end = nodes_[index].subtreeEnd;
    child = index + 1;
  }
  while (child < end) {
    result.push_back(child);
    child = nodes_[child].subtreeEnd;
  }
  return result;
}

size_t GuardTree::leafCount() const {
  return static_cast<size_t>(
      std::count_if(nodes_.begin(), nodes_.end(), [](const GuardNode& n) { return n.isLeaf(); }));
}

GuardTree parseCppGuards(std::string_view payload, const GuardParseOptions& options, Diagnostics& diagnostics) {
  return GuardTreeBuilder(options, diagnostics).parseCpp(payload);
}

GuardTree parseJsonGuards(std::string_view payload, const GuardParseOptions& options, Diagnostics& diagnostics) {
  return GuardTreeBuilder(options, diagnostics).parseJson(payload);
}

GuardTree parseMagiGuards(std::string_view payload, const GuardParseOptions& options, Diagnostics& diagnostics) {
  return GuardTreeBuilder(options, diagnostics).parseMagi(payload);
}

std::vector<GuardTypeCount> countGuardsByType(const GuardTree& tree) {
  std::unordered_map<std::string_view, size_t> counts;
  for (const GuardNode& n : tree.nodes()) {
    if (n.isLeaf()) ++counts[tree.text(n.type)];
  }
  std::vector<GuardTypeCount> result;
  result.reserve(counts.size());
  for (const auto& [type, count] : counts) result.push_back({std::string(type), count});
  std::sort(result.begin(), result.end(), [](const GuardTypeCount& a, const GuardTypeCount& b) {
    return a.count != b.count ? a.count > b.count : a.type < b.type;
  });
  return result;
}

std::string_view guardPath(const GuardTree& tree, uint32_t leaf) {
  if (leaf >= tree.size()) return {};
  for (uint32_t p = tree.node(leaf).parent; p != kNoGuardNode; p = tree.node(p).parent) {
    if (!tree.node(p).source.empty()) return tree.text(tree.node(p).source);
  }
  return firstCallArgument(tree.text(tree.node(leaf).code));
}

namespace {

// guardPath for every node at once: the nearest manager above it with a source (kNoGuardNode when
// none). Leaves under one manager share it, so work per distinct path is done once, not per leaf.
std::vector<uint32_t> pathManagers(const GuardTree& tree) {
  std::vector<uint32_t> manager(tree.size(), kNoGuardNode);
  for (uint32_t i = 0; i < tree.size(); ++i) {
    const GuardNode& n = tree.node(i);
    const uint32_t inherited = n.parent == kNoGuardNode ? kNoGuardNode : manager[n.parent];
    manager[i] = !n.isLeaf() && !n.source.empty() ? i : inherited;
  }
  return manager;
}

std::string_view pathOf(const GuardTree& tree, const std::vector<uint32_t>& managers, uint32_t leaf) {
  const uint32_t m = managers[leaf];
  return m != kNoGuardNode ? tree.text(tree.node(m).source) : firstCallArgument(tree.text(tree.node(leaf).code));
}

}  // namespace

namespace {

// `[1, None, 3]` -> {1, nullopt, 3}.
std::optional<std::vector<std::optional<int64_t>>> parseDimList(std::string_view s) {
  s = trim(s);
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return std::nullopt;
  std::vector<std::optional<int64_t>> dims;
  for (std::string_view item : splitTopLevel(s.substr(1, s.size() - 2), ',')) {
    if (item == "None") {
      dims.emplace_back(std::nullopt);
    } else if (auto v = parseInt<int64_t>(item)) {
      dims.emplace_back(*v);
    } else {
      return std::nullopt;
    }
  }
  return dims;
}

}  // namespace

std::optional<TensorMatch> parseTensorMatch(std::string_view code) {
  code = trim(code);
  constexpr std::string_view kCall = "check_tensor(";
  if (!code.starts_with(kCall)) return std::nullopt;
  const auto args = callArguments(code, kCall.size() - 1);
  if (!args) return std::nullopt;
  TensorMatch m;
  std::vector<std::string_view> positional;
  bool haveSizes = false;
  for (std::string_view arg : splitTopLevel(*args, ',')) {
    const std::string_view key = leadingIdent(arg);
    if (key.empty() || key.size() == arg.size() || arg[key.size()] != '=') {
      positional.push_back(arg);
      continue;
    }
    const std::string_view value = trim(arg.substr(key.size() + 1));
    if (key == "device") {
      if (value != "None") {
        const auto index = parseInt<int64_t>(value);
        if (!index) return std::nullopt;
        m.deviceIndex = index;
      }
    } else if (key == "requires_grad") {
      if (value != "True" && value != "False") return std::nullopt;
      m.requiresGrad = value == "True";
    } else if (key == "size" || key == "stride") {
      auto dims = parseDimList(value);
      if (!dims) return std::nullopt;
      (key == "size" ? m.sizes : m.strides) = std::move(*dims);
      haveSizes |= key == "size";
    }
  }
  if (positional.size() < 4 || positional[0].empty() || !haveSizes) return std::nullopt;
  m.source = positional[0];
  m.tensorType = positional[1];
  constexpr std::string_view kKeySet = "DispatchKeySet(";
  if (positional[2].starts_with(kKeySet) && positional[2].ends_with(")")) {
    const std::string_view keys = positional[2].substr(kKeySet.size(), positional[2].size() - kKeySet.size() - 1);
    for (std::string_view k : splitTopLevel(keys, ',')) m.dispatchKeys.emplace_back(k);
  }
  m.dtypeName = positional[3];
  m.dtype = ir::dtypeFromTorchName(positional[3]).value_or(ir::DType::Unknown);
  return m;
}

std::string stripLocalScope(std::string_view text) {
  // torch: re.sub(r"L\[\s*['\"](.*?)['\"]\s*\]", r"\1", s). closeAt[k] is the first k' >= k where a
  // quote, optional whitespace and "]" follow, without crossing a newline ('.' does not match one).
  if (text.find("L[") == std::string_view::npos) return std::string(text);
  const size_t n = text.size();
  auto isQuote = [](char c) { return c == '\'' || c == '"'; };
  std::vector<size_t> closeAt(n + 1, std::string_view::npos);
  for (size_t k = n; k-- > 0;) {
    if (text[k] == '\n') continue;
    if (isQuote(text[k])) {
      size_t m = k + 1;
      while (m < n && isSpace(text[m])) ++m;
      if (m < n && text[m] == ']') {
        closeAt[k] = k;
        continue;
      }
    }
    closeAt[k] = closeAt[k + 1];
  }
  std::string out;
  out.reserve(n);
  size_t i = 0;
  while (i < n) {
    if (text[i] == 'L' && i + 1 < n && text[i + 1] == '[') {
      size_t j = i + 2;
      while (j < n && isSpace(text[j])) ++j;
      if (j + 1 < n && isQuote(text[j]) && closeAt[j + 1] != std::string_view::npos) {
        const size_t close = closeAt[j + 1];
        out.append(text.substr(j + 1, close - j - 1));
        i = text.find(']', close) + 1;
        continue;
      }
    }
    out.push_back(text[i++]);
  }
  return out;
}

namespace {

// "0/1", "!3/0/1", "0/1_1" followed by ": ".
size_t compileIdPrefixLength(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && s[i] == '!') ++i;
  int numbers = 0;
  while (true) {
    const size_t start = i;
    while (i < s.size() && isDigit(s[i])) ++i;
    if (i == start) return 0;
    ++numbers;
    if (i < s.size() && s[i] == '/') {
      ++i;
      continue;
    }
    break;
  }
  if (numbers < 2) return 0;
  if (i < s.size() && s[i] == '_') {
    const size_t start = ++i;
    while (i < s.size() && isDigit(s[i])) ++i;
    if (i == start) return 0;
  }
  return s.compare(i, 2, ": ") == 0 ? i : 0;
}

RecompileReason splitReason(std::string_view text) {
  RecompileReason r;
  if (const size_t idLength = compileIdPrefixLength(text); idLength > 0) {
    r.compileId = text.substr(0, idLength);
    text.remove_prefix(idLength + 2);
  }
  if (const size_t stack = text.find(kUserStackMarker); stack != std::string_view::npos) {
    r.userStack = trim(text.substr(stack + kUserStackMarker.size()));
    text = text.substr(0, stack);
  }
  r.reason = trim(text);
  return r;
}

// The tensor a TENSOR_MATCH failure names: `tensor 'x' size mismatch ...`, `expected type of 'x' ...`.
std::optional<std::string_view> tensorReasonName(std::string_view reason) {
  for (const std::string_view prefix : {std::string_view("tensor '"), std::string_view("expected type of '")}) {
    if (!reason.starts_with(prefix)) continue;
    const std::string_view rest = reason.substr(prefix.size());
    const std::string_view ending = prefix.front() == 't' ? std::string_view(" mismatch") : "' to be";
    const size_t end = rest.find(ending);
    if (end == std::string_view::npos) return std::nullopt;
    const size_t quote = rest.rfind('\'', end);
    if (quote == std::string_view::npos || quote == 0) return std::nullopt;
    return rest.substr(0, quote);
  }
  return std::nullopt;
}

std::vector<uint32_t> matchReasonPart(std::string_view part, const GuardTree& tree) {
  std::vector<uint32_t> matches;
  const auto& nodes = tree.nodes();
  if (const auto name = tensorReasonName(part)) {
    const std::vector<uint32_t> managers = pathManagers(tree);
    std::unordered_map<uint32_t, bool> managerMatches;  // each manager's path is compared once
    auto pathMatches = [&](std::string_view path) { return path == *name || stripLocalScope(path) == *name; };
    for (uint32_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i].isLeaf() || tree.text(nodes[i].type) != "TENSOR_MATCH") continue;
      const uint32_t m = managers[i];
      bool match = false;
      if (m == kNoGuardNode) {
        match = pathMatches(pathOf(tree, managers, i));
      } else {
        const auto [it, added] = managerMatches.try_emplace(m, false);
        if (added) it->second = pathMatches(pathOf(tree, managers, i));
        match = it->second;
      }
      if (match) matches.push_back(i);
    }
    return matches;
  }
  // Any other reason is the failed guard's code, padded and commented as torch prints it.
  const std::string_view code = trim(part.substr(0, findCommentStart(part)));
  if (code.empty()) return matches;
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (!nodes[i].isLeaf()) continue;
    const std::string_view leafCode = tree.text(nodes[i].code);
    if (leafCode.size() < code.size()) continue;  // stripping only shortens
    if (leafCode == code || stripLocalScope(leafCode) == code) matches.push_back(i);
  }
  return matches;
}

}  // namespace

std::vector<RecompileReason> parseRecompileReasons(std::string_view payload, const GuardParseOptions& options,
                                                   Diagnostics& diagnostics) {
  std::vector<RecompileReason> reasons;
  auto warnAt = [&](std::string code, std::string message, uint64_t payloadLine) {
    diagnostics.warn(std::move(code), std::move(message), {options.file, options.firstLine + payloadLine});
  };
  // torch logs a single reason as its plain text (which may span lines) and several as a JSON list.
  if (compileIdPrefixLength(trim(payload)) > 0) {
    reasons.push_back(splitReason(payload));
    return reasons;
  }
  uint64_t errorLine = 0;
  const std::optional<json> parsed = parseJsonText(payload, errorLine);
  if (!parsed) {
    warnAt("recompile_reasons_unreadable", "recompile reasons are not valid JSON", errorLine);
    return reasons;
  }
  const json& doc = *parsed;
  if (doc.is_string()) {
    reasons.push_back(splitReason(doc.get_ref<const std::string&>()));
  } else if (doc.is_array()) {
    // torch writes one reason per line between "[" and "]".
    const bool onePerLine = lineOfByte(payload, payload.size()) == doc.size() + 1;
    for (size_t i = 0; i < doc.size(); ++i) {
      const uint64_t line = onePerLine ? i + 1 : 0;
      if (!doc[i].is_string()) {
        warnAt("recompile_reason_unreadable", "recompile reason is not a string", line);
        continue;
      }
      reasons.push_back(splitReason(doc[i].get_ref<const std::string&>()));
      if (reasons.back().compileId.empty()) {
        warnAt("recompile_reason_without_id", "recompile reason names no compile id", line);
      }
    }
  } else {
    warnAt("recompile_reasons_unreadable", "recompile reasons are not a JSON list", 0);
  }
  return reasons;
}

std::vector<uint32_t> matchRecompileReason(const RecompileReason& reason, const GuardTree& failed) {
  std::vector<uint32_t> matches = matchReasonPart(reason.reason, failed);
  if (!matches.empty() || reason.reason.find("; ") == std::string::npos) return matches;
  // Verbose recompile logging joins the failed guards of one compile with "; ".
  std::string_view rest = reason.reason;
  for (int part = 0; part < kMaxReasonParts && !rest.empty(); ++part) {
    const size_t sep = rest.find("; ");
    for (uint32_t leaf : matchReasonPart(rest.substr(0, sep), failed)) {
      if (std::find(matches.begin(), matches.end(), leaf) == matches.end()) matches.push_back(leaf);
    }
    rest = sep == std::string_view::npos ? std::string_view() : rest.substr(sep + 2);
  }
  std::sort(matches.begin(), matches.end());
  return matches;
}

GuardDiff diffGuards(const GuardTree& before, const GuardTree& after) {
  struct KeyedLeaves {
    std::vector<uint32_t> before, after;
  };
  // Key = (path id, type id); ids are given per distinct text, and a manager's path is hashed once
  // for all the leaves under it.
  std::unordered_map<std::string_view, uint32_t> pathIds, typeIds;
  auto idOf = [](std::unordered_map<std::string_view, uint32_t>& ids, std::string_view text) {
    return ids.try_emplace(text, static_cast<uint32_t>(ids.size())).first->second;
  };
  std::unordered_map<uint64_t, KeyedLeaves> groups;
  const std::vector<uint32_t> managersBefore = pathManagers(before), managersAfter = pathManagers(after);
  auto addLeaves = [&](const GuardTree& tree, const std::vector<uint32_t>& managers,
                       std::vector<uint32_t> KeyedLeaves::*side) {
    std::vector<uint32_t> managerPathId(tree.size(), kNoGuardNode);
    for (uint32_t i = 0; i < tree.size(); ++i) {
      if (!tree.node(i).isLeaf()) continue;
      const uint32_t m = managers[i];
      uint32_t pathId = 0;
      if (m == kNoGuardNode) {
        pathId = idOf(pathIds, pathOf(tree, managers, i));
      } else {
        if (managerPathId[m] == kNoGuardNode) managerPathId[m] = idOf(pathIds, pathOf(tree, managers, i));
        pathId = managerPathId[m];
      }
      const uint64_t key = (uint64_t{pathId} << 32) | idOf(typeIds, tree.text(tree.node(i).type));
      (groups[key].*side).push_back(i);
    }
  };
  addLeaves(before, managersBefore, &KeyedLeaves::before);
  addLeaves(after, managersAfter, &KeyedLeaves::after);

  GuardDiff diff;
  constexpr uint32_t kUnpaired = kNoGuardNode;
  constexpr uint32_t kSameCode = kNoGuardNode - 1;
  std::vector<uint32_t> partnerOfAfter(after.size(), kUnpaired);  // leaf of `before`, or kSameCode
  std::vector<bool> beforeUsed(before.size(), false);
  for (auto& [key, group] : groups) {
    std::unordered_map<std::string_view, std::pair<std::vector<uint32_t>, size_t>> beforeByCode;
    for (uint32_t b : group.before) beforeByCode[before.text(before.node(b).code)].first.push_back(b);
    std::vector<uint32_t> afterLeft;
    for (uint32_t a : group.after) {
      auto it = beforeByCode.find(after.text(after.node(a).code));
      if (it != beforeByCode.end() && it->second.second < it->second.first.size()) {
        beforeUsed[it->second.first[it->second.second++]] = true;
        partnerOfAfter[a] = kSameCode;
        ++diff.unchanged;
      } else {
        afterLeft.push_back(a);
      }
    }
    size_t next = 0;
    for (uint32_t a : afterLeft) {
      while (next < group.before.size() && beforeUsed[group.before[next]]) ++next;
      if (next == group.before.size()) break;
      beforeUsed[group.before[next]] = true;
      partnerOfAfter[a] = group.before[next];
    }
  }
  for (uint32_t a = 0; a < after.size(); ++a) {
    if (!after.node(a).isLeaf() || partnerOfAfter[a] == kSameCode) continue;
    GuardDiffEntry e;
    e.change = partnerOfAfter[a] == kUnpaired ? GuardChange::Added : GuardChange::Changed;
    e.path = pathOf(after, managersAfter, a);
    e.type = after.text(after.node(a).type);
    e.before = partnerOfAfter[a] == kUnpaired ? kNoGuardNode : partnerOfAfter[a];
    e.after = a;
    diff.entries.push_back(e);
  }
  for (uint32_t b = 0; b < before.size(); ++b) {
    if (!before.node(b).isLeaf() || beforeUsed[b]) continue;
    GuardDiffEntry e;
    e.change = GuardChange::Removed;
    e.path = pathOf(before, managersBefore, b);
    e.type = before.text(before.node(b).type);
    e.before = b;
    diff.entries.push_back(e);
  }
  return diff;
}

std::string_view guardChangeName(GuardChange change) {
  switch (change) {
    case GuardChange::Added: return "added";
    case GuardChange::Removed: return "removed";
    case GuardChange::Changed: return "changed";
  }
  return "?";
}

}  // namespace lathe::io
