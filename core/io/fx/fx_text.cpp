// The FX text parser's reading of the text's structure: one pass over the lines finds the classes
// (nested ones are subgraphs), each forward's signature and body, and the statements (joined into a
// scratch buffer when brackets span several lines), which fx_statement.cpp turns into nodes.
#include "io/fx/fx_text.h"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "io/fx/detail/fx_parser.h"

namespace lathe::io::fx::detail {
namespace {

constexpr int kMaxClassDepth = 32;  // nesting of subgraph classes

// Index of the first character from i on that scanCode acts on (quotes, '#', brackets, ';'), or
// n. Sixteen bytes at a time where SSE2 is there: statement lines are long runs of plain text.
size_t nextSpecial(const char* s, size_t i, size_t n) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), apostrophe = _mm_set1_epi8('\''), hash = _mm_set1_epi8('#');
  const __m128i semicolon = _mm_set1_epi8(';'), paren = _mm_set1_epi8(')'), one = _mm_set1_epi8(1);
  const __m128i squareOpen = _mm_set1_epi8('['), squareClose = _mm_set1_epi8(']');
  const __m128i foldCase = _mm_set1_epi8(static_cast<char>(0xDF));  // '{' -> '[', '}' -> ']'
  for (; i + 16 <= n; i += 16) {
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i folded = _mm_and_si128(c, foldCase);
    __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(c, quote), _mm_cmpeq_epi8(c, apostrophe));
    hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(c, hash), _mm_cmpeq_epi8(c, semicolon)));
    hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_or_si128(c, one), paren));  // '(' or ')'
    hit = _mm_or_si128(hit, _mm_or_si128(_mm_cmpeq_epi8(folded, squareOpen), _mm_cmpeq_epi8(folded, squareClose)));
    if (const int mask = _mm_movemask_epi8(hit))
      return i + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  while (i < n) {
    const uint8_t c = kCharClass[static_cast<unsigned char>(s[i])];
    if (c != kPlain && c != kComma) break;
    ++i;
  }
  return i;
}

// Where a line's code ends and its comment starts ('#' outside string literals), and the bracket
// depth after it, starting from `depth`. semicolons (optional): the code split at ';' outside
// brackets, when the line starts at depth 0.
struct CodeScan {
  size_t commentPos = std::string_view::npos;
  int depth = 0;
};

CodeScan scanCode(std::string_view s, int depth, std::vector<std::string_view>* semicolons = nullptr) {
  CodeScan r{std::string_view::npos, depth};
  if (semicolons) semicolons->clear();
  size_t start = 0;
  const size_t n = s.size();
  for (size_t i = 0; i < n; ++i) {
    i = nextSpecial(s.data(), i, n);
    if (i == n) break;
    switch (kCharClass[static_cast<unsigned char>(s[i])]) {
      case kQuote: {
        const size_t end = fx::skipStringLiteral(s, i);
        if (end == std::string_view::npos)
          i = n;  // unterminated: the rest is its text
        else
          i = end - 1;
        break;
      }
      case kHash:
        r.commentPos = i;
        i = n;
        break;
      case kOpen: ++r.depth; break;
      case kClose: --r.depth; break;
      case kSemicolon:
        if (semicolons && r.depth == 0) {
          semicolons->push_back(s.substr(start, i - start));
          start = i + 1;
        }
        break;
      default: break;
    }
  }
  if (semicolons) semicolons->push_back(s.substr(start, std::min(r.commentPos, n) - start));
  return r;
}

class FxTextParser {
 public:
  FxTextParser(std::string_view text, const FxParseOptions& options, Diagnostics& diagnostics)
      : text_(text), options_(options), diagnostics_(diagnostics) {}

  std::shared_ptr<Graph> run();

 private:
  struct Line {
    std::string_view code;  // without indentation and trailing blanks
    int indent = 0;
  };

  void warn(size_t line, std::string code, std::string message) {
    warnAt(options_, diagnostics_, line, std::move(code), std::move(message));
  }
  void splitLines();
  std::shared_ptr<Graph> parseClass(size_t& i, int classIndent, int depth);
  bool signature(size_t& i, int defIndent, GraphBuilder& builder);
  void body(size_t& i, int defIndent, GraphBuilder& builder);
  void skipBlock(size_t& i, int indent);
  void checkCancelled(size_t i) const {
    if (options_.progress && (i & 1023) == 0) options_.progress->checkCancelled();
  }

  std::string_view text_;
  const FxParseOptions& options_;
  Diagnostics& diagnostics_;
  std::vector<Line> lines_;
  size_t codeLines_ = 0;  // lines that are neither blank nor comments: a bound on the node count
  std::string joined_;    // a statement spanning several lines
  std::vector<std::string_view> itemComments_;
  std::vector<std::string_view> pieces_;
  std::vector<std::string_view> segments_;
};

void FxTextParser::splitLines() {
  const char* p = text_.data();
  const char* end = p + text_.size();
  lines_.reserve(text_.size() / 64 + 1);
  while (p < end) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const char* lineEnd = nl ? nl : end;
    const char* b = p;
    while (b < lineEnd && *b == ' ') ++b;
    const char* e = lineEnd;
    while (e > b && (e[-1] == ' ' || e[-1] == '\r' || e[-1] == '\t')) --e;
    lines_.push_back(Line{std::string_view(b, static_cast<size_t>(e - b)), static_cast<int>(b - p)});
    if (e > b && *b != '#') ++codeLines_;
    p = nl ? nl + 1 : end;
  }
}

std::shared_ptr<Graph> FxTextParser::run() {
  splitLines();
  size_t i = 0;
  while (i < lines_.size() && lines_[i].code.empty()) ++i;
  const bool exported = i < lines_.size() && lines_[i].code == "ExportedProgram:";
  for (; i < lines_.size(); ++i) {
    const std::string_view code = lines_[i].code;
    if (code.starts_with("class ") || code.starts_with("def forward(")) break;
  }
  if (i == lines_.size()) return nullptr;
  const bool hasClass = lines_[i].code.starts_with("class ");
  std::shared_ptr<Graph> root = parseClass(i, hasClass ? lines_[i].indent : -1, 0);
  if (!root || exported) return root;  // an ExportedProgram's signature and ranges follow the graph
  for (; i < lines_.size(); ++i) {
    if (!lines_[i].code.empty() && lines_[i].code[0] != '#') {
      warn(i, "fx_syntax", "text after the graph ignored: " + excerpt(lines_[i].code));
      break;
    }
  }
  return root;
}

// `class inner_f(torch.nn.Module):` -> "inner_f"
std::string_view classNameOf(std::string_view header) {
  header.remove_prefix(6);  // "class "
  return trim(header.substr(0, header.find_first_of("(:")));
}

bool isClassName(std::string_view name) {
  return name == "<lambda>" || (!name.empty() && identLength(name, 0) == name.size());
}

void FxTextParser::skipBlock(size_t& i, int indent) {
  ++i;
  while (i < lines_.size() && (lines_[i].code.empty() || lines_[i].indent > indent)) ++i;
}

// Reads a class (or a bare `def forward` when classIndent < 0) starting at line i; leaves i at
// the first line after it. nullptr when there is no forward.
std::shared_ptr<Graph> FxTextParser::parseClass(size_t& i, int classIndent, int depth) {
  std::string_view className;
  if (classIndent >= 0) {
    className = classNameOf(lines_[i].code);
    if (!isClassName(className)) {
      if (depth > 0) {  // a subgraph is named by the attribute that holds it
        warn(i, "fx_syntax", "class without a usable name: " + excerpt(lines_[i].code));
        skipBlock(i, classIndent);
        return nullptr;
      }
      className = {};
    }
    ++i;
    while (i < lines_.size() && (lines_[i].code.empty() || lines_[i].code[0] == '#')) ++i;
    if (i == lines_.size() || lines_[i].indent <= classIndent || !lines_[i].code.starts_with("def forward(")) {
      warn(i == lines_.size() ? i - 1 : i, "fx_syntax", "class " + std::string(className) + " has no forward");
      while (i < lines_.size() && (lines_[i].code.empty() || lines_[i].indent > classIndent)) ++i;
      return nullptr;
    }
  }
  GraphBuilder builder(options_, diagnostics_, className);
  if (depth == 0) builder.graph()->reserve(codeLines_);
  const int defIndent = lines_[i].indent;
  if (!signature(i, defIndent, builder)) return nullptr;
  body(i, defIndent, builder);
  // Subgraphs of higher-order ops: nested classes after the body.
  while (i < lines_.size()) {
    const Line& line = lines_[i];
    if (line.code.empty() || line.code[0] == '#') {
      if (!line.code.empty() && line.indent <= classIndent) break;
      ++i;
      continue;
    }
    if (line.indent <= classIndent) break;
    if (line.code.starts_with("class ") && depth + 1 < kMaxClassDepth) {
      const std::string name(classNameOf(line.code));
      if (auto sub = parseClass(i, line.indent, depth + 1)) builder.graph()->addSubgraph(name, std::move(sub));
      continue;
    }
    warn(i, "fx_syntax", "unexpected line in class body: " + excerpt(line.code));
    skipBlock(i, line.indent);
  }
  builder.finish();
  return builder.graph();
}

// `def forward(self, a: "f32[4]", b):` on one line, or one parameter per line up to `):` (AOT,
// 2025), possibly with a trailing `# descriptor` comment per parameter.
bool FxTextParser::signature(size_t& i, int defIndent, GraphBuilder& builder) {
  std::string_view rest = lines_[i].code.substr(std::strlen("def forward("));
  for (;;) {
    const CodeScan scan = scanCode(rest, 0);
    std::string_view code = rest.substr(0, scan.commentPos);
    const std::string_view comment =
        scan.commentPos == std::string_view::npos ? std::string_view{} : trim(rest.substr(scan.commentPos + 1));
    // The parameter list ends at the ')' that closes forward's '(' .
    size_t close = std::string_view::npos;
    int depth = 0;
    for (size_t k = 0; k < code.size(); ++k) {
      const char c = code[k];
      if (c == '\'' || c == '"') {
        const size_t end = fx::skipStringLiteral(code, k);
        if (end == std::string_view::npos) break;
        k = end - 1;
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if ((c == ')' || c == ']' || c == '}') && --depth < 0) {
        close = k;
        break;
      }
    }
    splitTopLevel(trim(code.substr(0, close)), ',', pieces_);
    for (auto piece : pieces_) {
      piece = trim(piece);
      if (piece.empty() || piece == "self") continue;
      ParamDecl decl;
      decl.line = i;
      size_t p = 0;
      while (p < piece.size() && piece[p] == '*') ++p;
      const size_t len = identLength(piece, p);
      if (len == 0) {
        warn(i, "fx_syntax", "cannot read forward parameter: " + excerpt(piece));
        continue;
      }
      decl.name = piece.substr(0, p + len);
      if (decl.name == "self") continue;  // the module itself, never a graph input
      if (isKeyword(piece.substr(p, len))) {
        warn(i, "fx_syntax", "cannot read forward parameter: " + excerpt(piece));
        continue;
      }
      std::string_view after = trim(piece.substr(p + len));
      const bool annotated = after.starts_with(':');
      if (annotated) {
        after = trim(after.substr(1));
        size_t annEnd = after.starts_with('"') ? after.find('"', 1) : std::string_view::npos;
        if (after.starts_with('"')) {
          if (annEnd == std::string_view::npos) {
            warn(i, "fx_syntax", "cannot read forward parameter: " + excerpt(piece));
            continue;
          }
          decl.annotation = after.substr(0, annEnd + 1);
          after = trim(after.substr(annEnd + 1));
        } else {
          annEnd = after.find('=');
          decl.annotation = trim(after.substr(0, annEnd));
          after = annEnd == std::string_view::npos ? std::string_view{} : after.substr(annEnd);
        }
      }
      if (after.starts_with('=')) decl.defaultValue = trim(after.substr(1));
      if ((!after.empty() && decl.defaultValue.empty()) || (annotated && !isAnnotation(decl.annotation))) {
        warn(i, "fx_syntax", "cannot read forward parameter: " + excerpt(piece));
        continue;
      }
      decl.comment = comment;
      builder.addParam(decl);
    }
    ++i;
    if (close != std::string_view::npos) return true;
    while (i < lines_.size() && lines_[i].code.empty()) ++i;
    if (i == lines_.size() || lines_[i].indent < defIndent) {
      warn(i - 1, "fx_syntax", "unterminated forward signature");
      return false;
    }
    rest = lines_[i].code;
  }
}

void FxTextParser::body(size_t& i, int defIndent, GraphBuilder& builder) {
  static const std::vector<std::string_view> kNoItemComments;
  while (i < lines_.size()) {
    checkCancelled(i);
    const Line& line = lines_[i];
    if (line.code.empty()) {
      ++i;
      continue;
    }
    if (line.indent <= defIndent) return;
    if (line.code[0] == '#') {
      builder.comment(line.code);
      ++i;
      continue;
    }
    const CodeScan scan = scanCode(line.code, 0, &segments_);
    const std::string_view code = trim(line.code.substr(0, scan.commentPos));
    const std::string_view comment =
        scan.commentPos == std::string_view::npos ? std::string_view{} : trim(line.code.substr(scan.commentPos + 1));
    if (scan.depth <= 0) {
      builder.statement(segments_, comment, kNoItemComments, i);
      ++i;
      continue;
    }
    // Brackets left open: the statement goes on over the next lines, one item per line, each
    // possibly with a comment (`view_45,  # PlainAOTOutput(idx=1)`), indented deeper up to the
    // closing line. A line at the statement's indent that does not close it starts a new one.
    const size_t first = i;
    const int statementIndent = line.indent;
    int depth = scan.depth;
    joined_.assign(code);
    itemComments_.clear();
    for (++i; depth > 0 && i < lines_.size(); ++i) {
      const Line& next = lines_[i];
      if (next.code.empty()) continue;
      if (next.indent < statementIndent ||
          (next.indent == statementIndent && kCharClass[static_cast<unsigned char>(next.code[0])] != kClose))
        break;
      const CodeScan s = scanCode(next.code, depth);
      depth = s.depth;
      const std::string_view part = trim(next.code.substr(0, s.commentPos));
      joined_ += ' ';
      joined_ += part;
      if (part.ends_with(','))
        itemComments_.push_back(s.commentPos == std::string_view::npos ? std::string_view{}
                                                                       : trim(next.code.substr(s.commentPos + 1)));
    }
    if (depth > 0) {
      warn(first, "fx_syntax", "unterminated statement: " + excerpt(code));
      continue;
    }
    splitTopLevel(joined_, ';', segments_);
    builder.statement(segments_, comment, itemComments_, first);
  }
}

}  // namespace
}  // namespace lathe::io::fx::detail

namespace lathe::io {

std::shared_ptr<ir::Graph> parseFxText(std::string_view text, const FxParseOptions& options, Diagnostics& diagnostics) {
  return fx::detail::FxTextParser(text, options, diagnostics).run();
}

}  // namespace lathe::io
