// The FX text parser's statements: each becomes the nodes it defines in the graph being built
// (GraphBuilder, detail/fx_parser.h), its value annotation ("bf16[1, s27][4096*s27, 1]cuda:0") read
// into the node's TensorMeta.
#include "io/fx/detail/fx_parser.h"

namespace lathe::io::fx::detail {
namespace {

// `a = b = None`: the values dead after the statement (FX's liveness tail), dropped on reading.
bool isLivenessTail(std::string_view s) {
  size_t names = 0;
  for (size_t p = 0;;) {  // name ( = name )* with a single '=' between each
    const size_t len = identLength(s, p);
    if (len == 0) return false;
    const std::string_view name = s.substr(p, len);
    p += len;
    while (p < s.size() && s[p] == ' ') ++p;
    if (p == s.size()) return names > 0 && name == "None";
    if (s[p] != '=' || (p + 1 < s.size() && s[p + 1] == '=')) return false;
    ++p;
    while (p < s.size() && s[p] == ' ') ++p;
    ++names;
  }
}

// Dynamo's placeholder names spell the source: `L_self_modules_model_modules_layers_modules_0_
// modules_q_proj_parameters_weight_` is L['self'].model.layers[0].q_proj.weight.
Role dynamoRole(std::string_view param, std::string& modulePath) {
  if (!param.starts_with("L_") && !param.starts_with("G_")) return Role::Unknown;
  Role role = Role::UserInput;
  size_t cut = param.rfind("_parameters_");
  if (cut != std::string_view::npos) {
    role = Role::Parameter;
  } else if ((cut = param.rfind("_buffers_")) != std::string_view::npos) {
    role = Role::Buffer;
  } else {
    return role;
  }
  std::string_view prefix = param.substr(0, cut);  // root, then "_modules_<name>" per level
  constexpr std::string_view kModules = "_modules_";
  size_t at = prefix.find(kModules);
  while (at != std::string_view::npos) {
    const size_t begin = at + kModules.size();
    const size_t next = prefix.find(kModules, begin);
    if (!modulePath.empty()) modulePath.push_back('.');
    modulePath.append(prefix.substr(begin, next == std::string_view::npos ? std::string_view::npos : next - begin));
    at = next;
  }
  return role;
}

// AOT input descriptors (`ParamAOTInput(target='fc1.weight')`) tell parameters and buffers apart.
Role aotRole(std::string_view name, std::string_view comment, std::string& modulePath) {
  auto moduleOf = [&](std::string_view c) {
    const size_t t = c.find("target='");
    if (t == std::string_view::npos) return;
    const std::string_view rest = c.substr(t + 8);
    const std::string_view target = rest.substr(0, rest.find('\''));
    const size_t dot = target.rfind('.');
    if (dot != std::string_view::npos) modulePath = target.substr(0, dot);
  };
  if (comment.starts_with("ParamAOTInput(")) {
    moduleOf(comment);
    return Role::Parameter;
  }
  if (comment.starts_with("BufferAOTInput(")) {
    moduleOf(comment);
    return Role::Buffer;
  }
  if (comment.starts_with("TangentAOTInput(") || name.starts_with("tangents_")) return Role::Tangent;
  if (name.starts_with("primals_")) return Role::UserInput;
  return Role::Unknown;
}

}  // namespace

GraphBuilder::GraphBuilder(const FxParseOptions& options, Diagnostics& diagnostics, std::string_view className)
    : options_(options),
      diagnostics_(diagnostics),
      graph_(std::make_shared<Graph>()),
      names_(*graph_),
      noNames_(*graph_),
      intern_(*graph_),
      hints_(options.symbols) {
  if (!className.empty()) graph_->setClassName(className);
}

void GraphBuilder::unparsed(std::string_view text, size_t line) {
  warn(line, "fx_syntax", "cannot read graph statement: " + excerpt(text));
}

// `base`, or `base_<k>` with the first free k (remembered per base: a name defined again and
// again in damaged text stays linear).
std::string GraphBuilder::uniqueName(std::string_view base) {
  std::string name(base);
  if (!names_.contains(name)) return name;
  int& next = nextSuffix_[name];
  do {
    name = std::string(base) + "_" + std::to_string(++next);
  } while (names_.contains(name));
  return name;
}

// The name a new node gets: as written, or made unique when it is taken. A name defined again
// keeps meaning its first definition, so that references written as text (inside Raw arguments)
// resolve the same way when the printed graph is read back.
StrId GraphBuilder::claimName(std::string_view name, size_t line) {
  const StrId written = graph_->intern(name);
  if (names_.at(written) == ir::kNoNode) return written;
  const std::string unique = uniqueName(name);
  warn(line, "fx_duplicate_name", "node name '" + std::string(name) + "' defined again; read as '" + unique + "'");
  return graph_->intern(unique);
}

NodeId GraphBuilder::addNode(StrId name, Node node) {
  node.name = name;
  bodyStarted_ |= node.kind != NodeKind::Placeholder;
  const NodeId id = graph_->addNode(std::move(node));
  names_.bind(name, id);
  return id;
}

// The operand of `-a`, `a[i]`, `a += b`, `a[i] = v`: a node, or a constant (`None`) or name read
// as in any argument.
Arg GraphBuilder::nameRef(std::string_view name) {
  ValueParser vp(name, intern_, names_, buffers_);
  Arg a;
  if (vp.value(a, false) && vp.atEnd()) return a;
  return Arg::ofStr(Arg::Kind::Raw, graph_->intern(name));
}

NodeId GraphBuilder::addPlaceholder(const ParamDecl& decl) {
  Node node;
  node.kind = NodeKind::Placeholder;
  std::string_view written = decl.name;
  while (written.starts_with('*')) written.remove_prefix(1);
  const StrId nameId = claimName(written, decl.line);
  const std::string_view name = graph_->str(nameId);
  if (written != decl.name) node.target = graph_->intern(decl.name);  // `*args`
  node.meta = meta(decl.annotation, decl.line);
  if (!decl.defaultValue.empty()) {
    // Defaults are constants; a name in one stays text (it could only name a later definition).
    ValueParser vp(decl.defaultValue, intern_, noNames_, buffers_);
    Arg v;
    if (vp.value(v, true) && vp.atEnd()) {
      node.args.push_back(std::move(v));
    } else {
      unparsed(decl.defaultValue, decl.line);
    }
  }
  std::string modulePath;
  if (node.meta.kind == ValueKind::SymInt) {
    node.role = Role::SymInput;
  } else {
    node.role = aotRole(name, decl.comment, modulePath);
    if (node.role == Role::Unknown) node.role = dynamoRole(name, modulePath);
  }
  if (!modulePath.empty()) node.provenance.modulePath = graph_->intern(modulePath);
  if (!decl.comment.empty()) node.comment = intern_(decl.comment);
  return addNode(nameId, std::move(node));
}

void GraphBuilder::ensureParams() {
  if (paramsDone_) return;
  paramsDone_ = true;
  for (const auto& p : pending_) addPlaceholder(p);
  pending_.clear();
}

// The first declaration or unpack line: the signature's parameters are pytree containers
// (`primals`, `tangents`) and the placeholders are declared in the body.
void GraphBuilder::enterDeclarations() {
  if (declarations_) return;
  declarations_ = true;
  std::vector<StrId> params;
  for (const auto& p : pending_) params.push_back(graph_->intern(p.name));
  graph_->setForwardParams(std::move(params));
  pending_.clear();
}

void GraphBuilder::declaration(std::string_view name, std::string_view annotation, size_t line) {
  if (name == "self") {  // the module, never an input: a signature drops it too
    unparsed(name, line);
    return;
  }
  if (paramsDone_) {
    warn(line, "fx_syntax", "placeholder declared after the body started: " + std::string(name));
    return;
  }
  enterDeclarations();
  addPlaceholder(ParamDecl{name, annotation, {}, takeLineComment(), line});
}

void GraphBuilder::unpack(std::string_view seg, size_t line) {
  if (paramsDone_) {
    unparsed(seg, line);
    return;
  }
  enterDeclarations();
  std::vector<std::string_view> names;
  splitTopLevel(seg.substr(0, seg.find('=')), ',', names);
  for (auto n : names) {
    n = trim(n);
    if (n.empty()) continue;
    if (identLength(n, 0) != n.size() || n == "self" || isKeyword(n)) {
      unparsed(seg, line);
      break;
    }
    if (!names_.contains(n)) addPlaceholder(ParamDecl{n, {}, {}, {}, line});
  }
  paramsDone_ = true;
}

void GraphBuilder::comment(std::string_view text) {
  std::string_view t = trim(text.substr(1));  // after '#'
  StrId annotation = 0;
  if (t.starts_with("Annotation: ")) {
    t.remove_prefix(12);
    size_t end = t.starts_with('{') ? matchingClose(t, 0) : std::string_view::npos;
    end = end == std::string_view::npos ? t.find(' ') : end + 1;
    annotation = graph_->intern(t.substr(0, end));
    t = end == std::string_view::npos ? std::string_view{} : trim(t.substr(end));
  }
  ir::Provenance p;
  p.annotation = annotation;
  if (t.starts_with("File: ")) {
    std::string_view rest = t.substr(6);
    size_t codeAt = rest.find(", code:");
    std::string_view head = rest;
    if (codeAt != std::string_view::npos) {
      std::string_view code = rest.substr(codeAt + 7);
      if (code.starts_with(' ')) code.remove_prefix(1);
      p.code = intern_(code);
      head = rest.substr(0, codeAt);
    }
    // "path:line in function": the first ":<line> in " (paths may hold ':' and " in "), or a
    // final ":<line>". Line numbers start at 1.
    for (size_t c = head.find(':'); c != std::string_view::npos; c = head.find(':', c + 1)) {
      size_t d = c + 1;
      uint64_t lineNo = 0;
      while (d < head.size() && isDigit(head[d]))
        lineNo = std::min<uint64_t>(lineNo * 10 + static_cast<uint64_t>(head[d++] - '0'), UINT32_MAX);
      if (lineNo == 0 || (d < head.size() && !head.substr(d).starts_with(" in "))) continue;
      p.file = intern_(head.substr(0, c));
      p.line = static_cast<uint32_t>(lineNo);
      if (d < head.size()) p.function = intern_(head.substr(d + 4));
      break;
    }
    if (p.line == 0) p.file = intern_(head);
    current_ = p;
  } else if (t.starts_with("No stacktrace found for following nodes") || annotation) {
    current_ = p;
  }
  // Other comments (`# graph id: ...`) carry nothing for the nodes.
}

void GraphBuilder::statement(const std::vector<std::string_view>& segments, std::string_view comment,
                             const std::vector<std::string_view>& itemComments, size_t line) {
  lineComment_ = comment;
  for (size_t k = 0; k < segments.size(); ++k) {
    const std::string_view seg = trim(segments[k]);
    if (seg.empty() || isLivenessTail(seg)) continue;
    const std::string_view next = k + 1 < segments.size() ? trim(segments[k + 1]) : std::string_view{};
    k += simpleStatement(seg, next, itemComments, line);
  }
  lineComment_ = {};
}

// Returns how many of the following segments it consumed.
size_t GraphBuilder::simpleStatement(std::string_view seg, std::string_view next,
                                     const std::vector<std::string_view>& itemComments, size_t line) {
  if (seg.starts_with("return") && (seg.size() == 6 || seg[6] == ' ' || seg[6] == '(' || seg[6] == '[')) {
    output(trim(seg.substr(6)), itemComments, line);
    return 0;
  }
  if (seg == "pass") return 0;
  // `a, b, = fx_pytree.tree_flatten_spec(...)` however it is spaced: the printer writes it one way,
  // so every spelling must read the same.
  if (const size_t eq = seg.find('=');
      eq != std::string_view::npos && trim(seg.substr(eq + 1)).starts_with("fx_pytree.tree_flatten_spec(")) {
    unpack(seg, line);
    return 0;
  }
  const size_t nameLen = identLength(seg, 0);
  if (nameLen == 0 || isKeyword(seg.substr(0, nameLen))) {
    unparsed(seg, line);
    return 0;
  }
  const std::string_view name = seg.substr(0, nameLen);
  size_t p = nameLen;
  while (p < seg.size() && seg[p] == ' ') ++p;
  if (p == seg.size()) {  // a bare name: a placeholder declared without metadata
    if (paramsDone_) {
      unparsed(seg, line);
    } else {
      declaration(name, {}, line);
    }
    return 0;
  }
  const char c = seg[p];
  if (c == ':') {
    ++p;
    while (p < seg.size() && seg[p] == ' ') ++p;
    std::string_view annotation;
    if (p < seg.size() && seg[p] == '"') {
      const size_t close = seg.find('"', p + 1);
      annotation = seg.substr(p, close == std::string_view::npos ? close : close + 1 - p);
      p = close == std::string_view::npos ? seg.size() : close + 1;
    } else {  // a Python type: up to " = "
      const size_t eq = seg.find(" = ", p);
      annotation = trim(seg.substr(p, eq == std::string_view::npos ? std::string_view::npos : eq - p));
      p = eq == std::string_view::npos ? seg.size() : eq;
    }
    if (!isAnnotation(annotation)) {
      unparsed(seg, line);
      return 0;
    }
    while (p < seg.size() && seg[p] == ' ') ++p;
    if (p == seg.size()) {
      declaration(name, annotation, line);
    } else if (seg[p] == '=' && (p + 1 == seg.size() || seg[p + 1] != '=')) {
      assignment(name, annotation, trim(seg.substr(p + 1)), line);
    } else {
      unparsed(seg, line);
    }
    return 0;
  }
  if (c == '=' && (p + 1 == seg.size() || seg[p + 1] != '=')) {
    assignment(name, {}, trim(seg.substr(p + 1)), line);
    return 0;
  }
  if (c == '[') return setItem(seg, next, line);
  for (const auto& op : fx::kInplaceOperators)
    if (seg.substr(p).starts_with(op.symbol)) return inplace(seg, p, op.symbol, op.target, next, line);
  unparsed(seg, line);
  return 0;
}

void GraphBuilder::output(std::string_view expr, const std::vector<std::string_view>& itemComments, size_t line) {
  ensureParams();
  if (haveOutput_) {
    warn(line, "fx_syntax", "second return statement ignored");
    return;
  }
  Arg value;
  if (!expr.empty()) {
    ValueParser vp(expr, intern_, names_, buffers_);
    constexpr std::string_view kUnflatten = "pytree.tree_unflatten(";
    bool ok = false;
    if (expr.starts_with(kUnflatten)) {  // pytree codegen: the flat outputs, then self._out_spec
      vp.pos = kUnflatten.size();
      std::vector<Arg> items;
      ok = vp.sequence(')', items, nullptr, nullptr) && vp.atEnd() && !items.empty();
      if (ok) value = std::move(items[0]);
    } else {
      ok = vp.value(value, true) && vp.atEnd();
    }
    if (!ok) {
      unparsed(expr, line);
      return;
    }
  }
  Node node;
  node.kind = NodeKind::Output;
  node.target = intern_("output");
  const size_t count = value.kind == Arg::Kind::List || value.kind == Arg::Kind::Tuple ? value.items.size() : 0;
  bool anyComment = false;
  for (auto c : itemComments) anyComment |= !c.empty();
  if (anyComment && count > 0) {
    node.itemComments.assign(count, 0);
    for (size_t k = 0; k < count && k < itemComments.size(); ++k)
      if (!itemComments[k].empty()) node.itemComments[k] = intern_(itemComments[k]);
  }
  node.args.push_back(std::move(value));
  haveOutput_ = true;
  addNode(graph_->intern(uniqueName("output")), std::move(node));
}

void GraphBuilder::assignment(std::string_view name, std::string_view annotation, std::string_view rhs, size_t line) {
  ensureParams();
  if (annotation.empty() && identLength(rhs, 0) == rhs.size()) {
    // `l_x_ = L_x_`: a placeholder read under another name, at the top of the body (where FX
    // writes it, and where printing puts it back).
    const NodeId placeholder = names_.find(rhs);
    if (!bodyStarted_ && placeholder != ir::kNoNode && graph_->node(placeholder).kind == NodeKind::Placeholder &&
        graph_->name(placeholder) == rhs && !names_.contains(name)) {
      Node& node = graph_->mutableNode(placeholder);
      if (node.target == 0) node.target = node.name;
      node.name = graph_->intern(name);
      names_.bind(node.name, placeholder);
      return;
    }
    unparsed(std::string(name) + " = " + std::string(rhs), line);
    return;
  }
  CallSpec spec;
  if (!parseRhs(rhs, spec)) {
    unparsed(rhs, line);
    return;
  }
  Node node;
  node.kind = spec.kind;
  node.target = intern_(spec.target);
  node.args = std::move(spec.args);
  node.kwargs = std::move(spec.kwargs);
  node.meta = meta(annotation, line);
  node.provenance = current_;
  node.comment = takeLineCommentId();
  addNode(claimName(name, line), std::move(node));
}

// `a /= b;  name: "annot" = a`
size_t GraphBuilder::inplace(std::string_view seg, size_t opPos, std::string_view op, std::string_view target,
                             std::string_view next, size_t line) {
  ensureParams();
  const std::string_view lhs = seg.substr(0, identLength(seg, 0));
  std::string_view name, annotation;
  if (!parseRebinding(next, lhs, name, annotation)) {
    unparsed(seg, line);
    return 0;
  }
  ValueParser vp(seg, intern_, names_, buffers_);
  vp.pos = opPos + op.size();
  Arg rhs;
  if (!vp.value(rhs, true) || !vp.atEnd()) {
    unparsed(seg, line);
    return 1;
  }
  Node node;
  node.target = intern_(target);
  node.args = {nameRef(lhs), std::move(rhs)};
  node.meta = meta(annotation, line);
  node.provenance = current_;
  node.comment = takeLineCommentId();
  addNode(claimName(name, line), std::move(node));
  return 1;
}

// `a[i] = v;  name = a`
size_t GraphBuilder::setItem(std::string_view seg, std::string_view next, size_t line) {
  ensureParams();
  const std::string_view container = seg.substr(0, identLength(seg, 0));
  std::string_view name, annotation;
  const size_t close = matchingClose(seg, container.size());
  if (close == std::string_view::npos || !parseRebinding(next, container, name, annotation)) {
    unparsed(seg, line);
    return 0;
  }
  ValueParser vp(seg, intern_, names_, buffers_);
  vp.pos = container.size() + 1;
  std::vector<Arg> index;
  bool trailing = false;
  Arg value;
  bool ok = vp.sequence(']', index, nullptr, &trailing) && vp.pos == close + 1 && !index.empty();
  vp.skipSpaces();
  ok = ok && vp.pos < seg.size() && seg[vp.pos] == '=';
  if (ok) {
    ++vp.pos;
    ok = vp.value(value, true) && vp.atEnd();
  }
  if (!ok) {
    unparsed(seg, line);
    return 1;
  }
  Node node;
  node.target = intern_(fx::kSetItemTarget);
  Arg idx;
  if (index.size() == 1 && !trailing) {
    idx = std::move(index[0]);
  } else {
    idx.kind = Arg::Kind::Tuple;
    idx.items = std::move(index);
  }
  node.args = {nameRef(container), std::move(idx), std::move(value)};
  node.meta = meta(annotation, line);
  node.provenance = current_;
  node.comment = takeLineCommentId();
  addNode(claimName(name, line), std::move(node));
  return 1;
}

// `name[: "annot"] = expectedValue`
bool GraphBuilder::parseRebinding(std::string_view seg, std::string_view expectedValue, std::string_view& name,
                                  std::string_view& annotation) {
  const size_t len = identLength(seg, 0);
  if (len == 0 || expectedValue.empty() || isKeyword(seg.substr(0, len))) return false;
  name = seg.substr(0, len);
  std::string_view rest = trim(seg.substr(len));
  annotation = {};
  if (rest.starts_with(':')) {
    rest = trim(rest.substr(1));
    if (!rest.starts_with('"')) return false;
    const size_t close = rest.find('"', 1);
    if (close == std::string_view::npos) return false;
    annotation = rest.substr(0, close + 1);
    if (!isAnnotation(annotation)) return false;
    rest = trim(rest.substr(close + 1));
  }
  return rest.starts_with('=') && trim(rest.substr(1)) == expectedValue;
}

bool GraphBuilder::parseRhs(std::string_view rhs, CallSpec& spec) {
  ValueParser vp(rhs, intern_, names_, buffers_);
  if (rhs.empty()) return false;
  if (rhs.starts_with("self.")) {  // get_attr / call_module
    int segments = 0;
    const size_t len = dottedLength(rhs, 5, &segments);
    if (len == 0) return false;
    spec.target = rhs.substr(5, len);
    vp.pos = 5 + len;
    if (vp.atEnd()) {
      spec.kind = NodeKind::GetAttr;
      return true;
    }
    if (rhs[vp.pos] != '(') return false;
    ++vp.pos;
    spec.kind = NodeKind::CallModule;
    return vp.sequence(')', spec.args, &spec.kwargs, nullptr) && vp.atEnd();
  }
  const char c = rhs[0];
  if (rhs.size() > 1 && isIdentStart(rhs[1]) && identLength(rhs, 1) == rhs.size() - 1) {
    for (const auto& op : fx::kUnaryOperators)
      if (op.symbol[0] == c) {  // `-a`
        spec.target = op.target;
        spec.args.push_back(nameRef(rhs.substr(1)));
        return true;
      }
  }
  if (isIdentStart(c)) {
    int segments = 0;
    const size_t len = dottedLength(rhs, 0, &segments);
    const size_t firstLen = identLength(rhs, 0);
    const NodeId first = names_.find(rhs.substr(0, firstLen));
    const bool firstIsNode = first != ir::kNoNode;
    if (len < rhs.size() && rhs[len] == '(') {
      vp.pos = len + 1;
      if (firstIsNode && segments == 2) {  // method call on a node
        spec.kind = NodeKind::CallMethod;
        spec.target = rhs.substr(firstLen + 1, len - firstLen - 1);
        spec.args.push_back(Arg::ofNode(first));
      } else {
        spec.target = rhs.substr(0, len);
      }
      return vp.sequence(')', spec.args, &spec.kwargs, nullptr) && vp.atEnd();
    }
    if (segments == 1 && len < rhs.size() && rhs[len] == '[') {  // getitem
      vp.pos = len + 1;
      std::vector<Arg> index;
      bool trailing = false;
      if (!vp.sequence(']', index, nullptr, &trailing) || !vp.atEnd() || index.empty()) return false;
      spec.target = fx::kGetItemTarget;
      spec.args.push_back(nameRef(rhs.substr(0, len)));
      if (index.size() == 1 && !trailing) {
        spec.args.push_back(std::move(index[0]));
      } else {
        Arg tuple;
        tuple.kind = Arg::Kind::Tuple;
        tuple.items = std::move(index);
        spec.args.push_back(std::move(tuple));
      }
      return true;
    }
    if (segments == 2 && len == rhs.size() && firstIsNode) {  // getattr: `a.attr`
      spec.target = fx::kGetAttrTarget;
      spec.args.push_back(Arg::ofNode(first));
      spec.args.push_back(Arg::ofStr(Arg::Kind::String, intern_(rhs.substr(firstLen + 1))));
      return true;
    }
  }
  // A binary operator between two values: `a * b`, `0.5 * x`, `x // 3`.
  Arg lhs, operand;
  if (!vp.value(lhs, false)) return false;
  vp.skipSpaces();
  const std::string_view rest = rhs.substr(vp.pos);
  for (const auto& op : fx::kBinaryOperators) {
    if (!rest.starts_with(op.symbol)) continue;
    vp.pos += op.symbol.size();
    if (!vp.value(operand, false) || !vp.atEnd()) return false;
    spec.target = op.target;
    spec.args.push_back(std::move(lhs));
    spec.args.push_back(std::move(operand));
    return true;
  }
  return false;
}

TensorMeta GraphBuilder::meta(std::string_view annotation, size_t line) {
  TensorMeta m;
  if (annotation.empty()) return m;
  if (annotation.front() != '"') {  // a Python type (older FX): `L_x_ : torch.Tensor`
    if (annotation == "torch.Tensor") {
      m.kind = ValueKind::Tensor;
    } else {
      m.kind = ValueKind::Opaque;
      m.symExpr = graph_->intern(annotation);
    }
    return m;
  }
  const std::string_view text = annotation.substr(1, annotation.size() - 2);
  if (text.starts_with("Sym(") && text.ends_with(')')) {
    m.kind = ValueKind::SymInt;
    m.symExpr = intern_(text.substr(4, text.size() - 5));
    return m;
  }
  if (tensorMeta(text, m)) return m;
  // A tensor subclass around the tensor: `FunctionalTensor(f32[4])`, `DTensor(<tensor>, <placements>)`.
  const size_t wrapperLen = identLength(text, 0);
  if (wrapperLen > 0 && wrapperLen < text.size() && text[wrapperLen] == '(' && text.ends_with(')')) {
    const std::string_view inner = text.substr(wrapperLen + 1, text.size() - wrapperLen - 2);
    std::vector<std::string_view> parts;
    splitTopLevel(inner, ',', parts);
    const std::string_view tensorPart = trim(parts[0]);
    m = TensorMeta{};
    if (tensorMeta(tensorPart, m)) {
      m.wrapper = graph_->intern(text.substr(0, wrapperLen));
      if (parts.size() > 1) m.extra = graph_->intern(trim(inner.substr(parts[0].size() + 1)));
      return m;
    }
  }
  warn(line, "fx_annotation", "unrecognized value annotation kept as text: " + excerpt(annotation));
  m = TensorMeta{};
  m.kind = ValueKind::Opaque;
  m.symExpr = graph_->intern(annotation);
  return m;
}

// `bf16[1, s27][4096*s27, 1]cuda:0`: dtype, sizes, optional strides, optional device.
bool GraphBuilder::tensorMeta(std::string_view text, TensorMeta& m) {
  const size_t open = text.find('[');
  if (open == std::string_view::npos) return false;
  const std::string_view abbr = text.substr(0, open);
  if (abbr.empty()) return false;
  if (abbr != lastDtypeAbbr_) {  // most annotations of a graph share a dtype or two
    const auto found = ir::dtypeFromAbbr(abbr);
    if (!found) return false;
    lastDtypeAbbr_.assign(abbr);
    lastDtype_ = *found;
  }
  const DType dtype = lastDtype_;
  size_t pos = open;
  if (!dims(text, pos, m.sizes)) return false;
  if (pos < text.size() && text[pos] == '[') {
    if (!dims(text, pos, m.strides)) return false;
    m.hasStrides = true;
  }
  const std::string_view device = text.substr(pos);
  for (const char c : device)
    if (!isIdentChar(c) && c != ':') return false;
  m.kind = ValueKind::Tensor;
  m.dtype = dtype;
  if (!device.empty()) m.device = intern_(device);
  return true;
}

bool GraphBuilder::dims(std::string_view text, size_t& pos, std::vector<SymDim>& out) {
  ++pos;                                     // '['
  const size_t close = text.find(']', pos);  // sympy expressions hold no brackets
  if (close == std::string_view::npos) return false;
  if (close == pos) {
    ++pos;
    return true;
  }
  size_t commas = 0;
  for (size_t k = pos; k < close; ++k) commas += text[k] == ',';
  out.reserve(commas + 1);
  for (;;) {
    // Fast path: a plain integer followed by ", " or "]" (nearly every dim).
    uint64_t digits = 0;
    size_t end = pos;
    while (end < close && isDigit(text[end]) && digits < (uint64_t{1} << 59))
      digits = digits * 10 + static_cast<uint64_t>(text[end++] - '0');
    if (end == pos || (end < close && text[end] != ',')) {
      // A symbolic size ("s27", "4096*s27", "Max(1, s0)"): up to the next ',' outside parentheses.
      int depth = 0;
      end = pos;
      while (end < close && (depth > 0 || text[end] != ',')) {
        if (text[end] == '(') ++depth;
        if (text[end] == ')' && --depth < 0) return false;
        ++end;
      }
      const std::string_view dim = trim(text.substr(pos, end - pos));
      if (dim.empty()) return false;
      int64_t v = 0;
      out.push_back(parseInt64(dim, v) ? SymDim{v, 0, true} : hints_.dim(intern_(dim), dim));
    } else {
      out.push_back(SymDim{static_cast<int64_t>(digits), 0, true});
    }
    pos = end + 1;
    if (end == close) return true;
    while (pos < close && text[pos] == ' ') ++pos;
  }
}

void GraphBuilder::finish() {
  ensureParams();
  graph_->finalize();
}

}  // namespace lathe::io::fx::detail
