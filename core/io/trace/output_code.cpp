#include "io/trace/output_code.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>

namespace lathe::io {
namespace {

struct SourceComment {
  std::vector<std::string> sourceNodes, atenOps;
};

struct TritonDefinition {
  std::string name;
  std::optional<SourceComment> comment;
};

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

size_t indentation(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && (line[n] == ' ' || line[n] == '\t')) ++n;
  return n;
}

bool isIdentifierChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool isIdentifier(std::string_view s) {
  return !s.empty() && !(s.front() >= '0' && s.front() <= '9') && std::all_of(s.begin(), s.end(), isIdentifierChar);
}

// The items of the bracketed list after `label` ("[a, b]"), or nullopt when the label is absent.
std::optional<std::vector<std::string>> bracketList(std::string_view text, std::string_view label) {
  const size_t at = text.find(label);
  if (at == std::string_view::npos) return std::nullopt;
  text.remove_prefix(at + label.size());
  const size_t end = text.find(']');
  if (end == std::string_view::npos) return std::nullopt;
  std::vector<std::string> items;
  std::string_view rest = text.substr(0, end);
  while (!rest.empty()) {
    const size_t comma = std::min(rest.find(','), rest.size());
    if (const std::string_view item = trimmed(rest.substr(0, comma)); !item.empty()) items.emplace_back(item);
    rest.remove_prefix(std::min(comma + 1, rest.size()));
  }
  return items;
}

// "# Topologically Sorted Source Nodes: [...], Original ATen: [...]" (also "# Unsorted Source
// Nodes" and the older "# Source Nodes").
std::optional<SourceComment> sourceComment(std::string_view comment) {
  auto nodes = bracketList(comment, "Source Nodes: [");
  if (!nodes) return std::nullopt;
  SourceComment parsed;
  parsed.sourceNodes = std::move(*nodes);
  if (auto aten = bracketList(comment, "Original ATen: [")) parsed.atenOps = std::move(*aten);
  return parsed;
}

// Python triple-quoted strings (the Triton sources) span lines; nothing inside them is code of the
// module. Returns the delimiter still open at the end of `line` ("" when none).
std::string_view openStringAfter(std::string_view line, std::string_view open) {
  size_t at = 0;
  while (at < line.size()) {
    if (open.empty()) {
      const size_t single = line.find("'''", at), dbl = line.find("\"\"\"", at);
      const size_t first = std::min(single, dbl);
      if (first == std::string_view::npos) break;
      open = first == single ? "'''" : "\"\"\"";
      at = first + 3;
    } else {
      const size_t close = line.find(open, at);
      if (close == std::string_view::npos) break;
      open = {};
      at = close + 3;
    }
  }
  return open;
}

// `name = async_compile.triton('kernel_name', '''`: the variable and the kernel's own name.
std::optional<std::pair<std::string, std::string>> tritonDefinition(std::string_view statement) {
  constexpr std::string_view kCompile = " = async_compile.triton(";
  const size_t at = statement.find(kCompile);
  if (at == std::string_view::npos || !isIdentifier(statement.substr(0, at))) return std::nullopt;
  std::string_view rest = statement.substr(at + kCompile.size());
  if (rest.empty() || (rest.front() != '\'' && rest.front() != '"')) return std::nullopt;
  const char quote = rest.front();
  rest.remove_prefix(1);
  const size_t end = rest.find(quote);
  if (end == std::string_view::npos || !isIdentifier(rest.substr(0, end))) return std::nullopt;
  return std::pair(std::string(statement.substr(0, at)), std::string(rest.substr(0, end)));
}

// The dotted callee of a call statement, past an assignment target (`buf3 = f(...)`,
// `buf4, buf5 = f(...)`): "extern_kernels.mm", "triton_poi_fused_0.run". Empty when the statement
// is not a call.
std::string_view callee(std::string_view statement) {
  const size_t paren = statement.find('(');
  if (paren == std::string_view::npos) return {};
  std::string_view head = statement.substr(0, paren);
  if (const size_t assign = head.find(" = "); assign != std::string_view::npos) {
    const std::string_view targets = head.substr(0, assign);
    if (!std::all_of(targets.begin(), targets.end(), [](char c) { return isIdentifierChar(c) || c == ',' || c == ' '; }))
      return {};
    head = head.substr(assign + 3);
  }
  if (head.empty() || head.front() == '.' || head.back() == '.' ||
      !std::all_of(head.begin(), head.end(), [](char c) { return isIdentifierChar(c) || c == '.'; }))
    return {};
  return head;
}

// An extern call's name with the module's aliases spelled out (`aten = torch.ops.aten`,
// `_quantized = torch.ops._quantized`); nullopt for calls that are no extern kernel.
std::optional<std::string> externName(std::string_view call) {
  std::string name;
  if (call.starts_with("extern_kernels.")) return std::string(call);
  if (call.starts_with("torch.ops.")) name = std::string(call);
  else if (call.starts_with("aten.") || call.starts_with("_quantized.")) name = "torch.ops." + std::string(call);
  else return std::nullopt;
  // Buffer bookkeeping and waiting on a collective run no kernel of their own.
  if (name.starts_with("torch.ops.inductor.") || name.starts_with("torch.ops._c10d_functional.wait_tensor"))
    return std::nullopt;
  return name;
}

class OutputCodeParser {
 public:
  std::vector<OutputCodeKernel> parse(std::string_view code) {
    uint64_t lineNumber = 0;
    std::string_view openString;
    while (!code.empty()) {
      const size_t end = std::min(code.find('\n'), code.size());
      const std::string_view line = code.substr(0, end);
      code.remove_prefix(std::min(end + 1, code.size()));
      ++lineNumber;
      const bool inString = !openString.empty();
      openString = openStringAfter(line, openString);
      if (!inString) readLine(line, lineNumber);
    }
    return std::move(launches_);
  }

 private:
  void readLine(std::string_view line, uint64_t lineNumber) {
    const std::string_view statement = trimmed(line);
    if (statement.empty()) return;
    if (statement.front() == '#') {
      if (auto comment = sourceComment(statement)) (callIndent_ ? callComment_ : definitionComment_) = std::move(comment);
      return;
    }
    if (callIndent_ && indentation(line) <= *callIndent_) callIndent_.reset();  // the end of `call`
    if (statement.starts_with("def call(")) {
      callIndent_ = indentation(line);
      callComment_.reset();
      return;
    }
    if (!callIndent_) {
      if (auto definition = tritonDefinition(statement))
        triton_[definition->first] = {std::move(definition->second), std::move(definitionComment_)};
      definitionComment_.reset();  // a comment block belongs to the statement right below it
      return;
    }
    readCallStatement(statement, lineNumber);
  }

  void readCallStatement(std::string_view statement, uint64_t lineNumber) {
    const std::string_view call = callee(statement);
    if (call.empty()) return;
    OutputCodeKernel launch;
    launch.line = lineNumber;
    std::optional<SourceComment> comment = std::move(callComment_);
    callComment_.reset();
    constexpr std::string_view kRun = ".run";
    if (call.ends_with(kRun) && isIdentifier(call.substr(0, call.size() - kRun.size()))) {
      const std::string variable(call.substr(0, call.size() - kRun.size()));
      launch.kind = OutputCodeKernel::Kind::Triton;
      const auto definition = triton_.find(variable);
      // A `.run` of a kernel not defined in this module (loaded another way) runs under its variable's name.
      launch.name = definition == triton_.end() ? variable : definition->second.name;
      if (!comment && definition != triton_.end()) comment = definition->second.comment;
    } else if (auto name = externName(call)) {
      launch.kind = OutputCodeKernel::Kind::Extern;
      launch.name = std::move(*name);
    } else {
      callComment_ = std::move(comment);  // a helper call (empty_strided_cuda, get_raw_stream): keep waiting
      return;
    }
    if (comment) {
      launch.sourceNodes = std::move(comment->sourceNodes);
      launch.atenOps = std::move(comment->atenOps);
    }
    launches_.push_back(std::move(launch));
  }

  std::vector<OutputCodeKernel> launches_;
  std::unordered_map<std::string, TritonDefinition> triton_;  // by variable name
  std::optional<SourceComment> definitionComment_, callComment_;
  std::optional<size_t> callIndent_;  // set while in the body of `call`
};

class KernelMatcher {
 public:
  KernelMatcher(const std::vector<OutputCodeKernel>& launches, bool oneCall) : launches_(launches), oneCall_(oneCall) {
    result_.launches.resize(launches.size());
    for (size_t i = 0; i < launches.size(); ++i)
      if (launches[i].kind == OutputCodeKernel::Kind::Triton) tritonAt_[launches[i].name].push_back(i);
  }

  KernelMatch match(const std::vector<ChromeKernelEvent>& events) {
    for (const ChromeKernelEvent& event : events) {
      if (event.kind != DeviceActivity::Kernel) continue;
      const auto anchor = tritonAt_.find(event.name);
      if (anchor == tritonAt_.end()) {
        if (event.name.starts_with("triton_")) ++result_.unmatchedEvents;
        else gap_.push_back(&event);
        continue;
      }
      anchorAt(anchor->second, event);
    }
    assignGap(externsBetween(position_, launches_.size()), /*withinPass=*/oneCall_ && result_.passes <= 1);
    for (const MatchedKernel& launch : result_.launches)
      if (launch.deviceKernels == 0 && !launch.shared) ++result_.unmatchedLaunches;
    if (result_.passes == 0 && result_.unmatchedLaunches < launches_.size()) result_.passes = 1;
    return std::move(result_);
  }

 private:
  void anchorAt(const std::vector<size_t>& sameName, const ChromeKernelEvent& event) {
    const auto next = std::lower_bound(sameName.begin(), sameName.end(), position_);
    size_t launch = 0;
    if (result_.passes > 0 && next != sameName.end()) {
      launch = *next;
      assignGap(externsBetween(position_, launch), /*withinPass=*/true);
    } else {
      // The first anchor, or none of this name left after the position: a pass begins. The gap is
      // the previous pass's tail and this one's head.
      launch = sameName.front();
      std::vector<size_t> externs;
      if (result_.passes > 0) externs = externsBetween(position_, launches_.size());
      const std::vector<size_t> head = externsBetween(0, launch);
      externs.insert(externs.end(), head.begin(), head.end());
      assignGap(externs, /*withinPass=*/oneCall_ && result_.passes == 0);
      ++result_.passes;
    }
    add(launch, event);
    position_ = launch + 1;
  }

  std::vector<size_t> externsBetween(size_t from, size_t to) const {
    std::vector<size_t> externs;
    for (size_t i = from; i < to; ++i)
      if (launches_[i].kind == OutputCodeKernel::Kind::Extern) externs.push_back(i);
    return externs;
  }

  void add(size_t launch, const ChromeKernelEvent& event) {
    result_.launches[launch].seconds += event.seconds;
    ++result_.launches[launch].deviceKernels;
  }

  void assignGap(const std::vector<size_t>& externs, bool withinPass) {
    if (gap_.empty()) return;
    if (externs.size() == gap_.size()) {
      for (size_t i = 0; i < externs.size(); ++i) add(externs[i], *gap_[i]);
    } else if (withinPass && externs.size() == 1) {
      for (const ChromeKernelEvent* event : gap_) add(externs.front(), *event);
    } else if (withinPass && !externs.empty()) {
      double total = 0;
      for (const ChromeKernelEvent* event : gap_) total += event->seconds;
      for (size_t launch : externs) {
        result_.launches[launch].seconds += total / static_cast<double>(externs.size());
        result_.launches[launch].shared = true;
      }
    } else {
      result_.unmatchedEvents += gap_.size();
    }
    gap_.clear();
  }

  const std::vector<OutputCodeKernel>& launches_;
  const bool oneCall_;  // the events are one call's: nothing outside the sequence ran among them
  std::unordered_map<std::string_view, std::vector<size_t>> tritonAt_;  // Triton name -> its launches, in order
  KernelMatch result_;
  size_t position_ = 0;  // the launch the next anchor is looked for from
  std::vector<const ChromeKernelEvent*> gap_;  // non-Triton events since the last anchor
};

}  // namespace

std::vector<OutputCodeKernel> parseOutputCode(std::string_view code) { return OutputCodeParser().parse(code); }

KernelMatch matchKernels(const std::vector<OutputCodeKernel>& launches, const std::vector<ChromeKernelEvent>& events,
                         bool oneCall) {
  return KernelMatcher(launches, oneCall).match(events);
}

}  // namespace lathe::io
