// ExportedProgram JSON (torch/_export/serde/schema.py) -> Pt2Model with an ir::Graph in FX
// semantics, the way torch's own GraphModuleDeserializer rebuilds it: placeholders for graph.inputs,
// one call node per serialized node, `operator.getitem` nodes for multi-output nodes and `get_attr`
// nodes for nested graphs (both marked synthetic: they are not in the file), then the output node.
#include <algorithm>
#include <cctype>
#include <unordered_map>
#include <unordered_set>

#include "io/pt2/detail/pt2_json.h"
#include "io/pt2/pt2.h"
#include "util/json_limits.h"

namespace lathe::io {
namespace {

using pt2::field;
using pt2::Json;
using pt2::stringField;
using pt2::unionMember;

// Hash maps keyed by std::string that can be searched with a string_view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;
using StringSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;

constexpr int kMaxGraphDepth = 32;     // as_graph inside as_graph ...
constexpr int kMaxArgumentDepth = 32;  // as_string_to_argument inside itself ...

enum class ValueClass : uint8_t { Tensor, SymInt, SymBool, SymFloat, CustomObject };

struct NamedValue {
  std::string_view name;
  ValueClass cls = ValueClass::Tensor;
};

// The value an Argument (or a bare TensorArgument / SymIntArgument) names, if it names one.
std::optional<NamedValue> namedValue(const Json& j, ValueClass fallback, int depth = 0) {
  if (depth > 2) return std::nullopt;
  if (auto name = stringField(j, "name")) {
    if (name->empty()) return std::nullopt;
    return NamedValue{*name, field(j, "class_fqn") ? ValueClass::CustomObject : fallback};
  }
  auto m = unionMember(j);
  if (!m) return std::nullopt;
  const Json& v = *m->value;
  if (m->key == "as_name") {
    if (!v.is_string() || v.get_ref<const std::string&>().empty()) return std::nullopt;
    return NamedValue{v.get_ref<const std::string&>(), fallback};
  }
  if (m->key == "as_tensor" || m->key == "as_optional_tensor") return namedValue(v, ValueClass::Tensor, depth + 1);
  if (m->key == "as_sym_int") return namedValue(v, ValueClass::SymInt, depth + 1);
  if (m->key == "as_sym_bool") return namedValue(v, ValueClass::SymBool, depth + 1);
  if (m->key == "as_sym_float") return namedValue(v, ValueClass::SymFloat, depth + 1);
  if (m->key == "as_custom_obj") return namedValue(v, ValueClass::CustomObject, depth + 1);
  if (m->key == "as_token") return namedValue(v, ValueClass::Tensor, depth + 1);
  return std::nullopt;
}

// The list inside an output Argument that holds several values (split -> as_tensors), with the
// class of its elements.
const Json* valueList(const Json& j, ValueClass& cls) {
  auto m = unionMember(j);
  if (!m || !m->value->is_array()) return nullptr;
  if (m->key == "as_tensors" || m->key == "as_optional_tensors")
    cls = ValueClass::Tensor;
  else if (m->key == "as_sym_ints")
    cls = ValueClass::SymInt;
  else if (m->key == "as_sym_bools")
    cls = ValueClass::SymBool;
  else if (m->key == "as_sym_floats")
    cls = ValueClass::SymFloat;
  else
    return nullptr;
  return m->value;
}

std::string_view trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// torch.fx.graph._parse_stack_trace: the innermost `File "path", line N, in func` frame (searched
// from the second-to-last line up) and the code line under it.
struct Frame {
  std::string_view file, function, code;
  uint32_t line = 0;
};
std::optional<Frame> innermostFrame(std::string_view trace) {
  trace = trim(trace);
  std::string_view below;  // the line after `line`
  bool haveBelow = false;
  while (true) {
    const size_t newline = trace.rfind('\n');
    const std::string_view line = trim(newline == std::string_view::npos ? trace : trace.substr(newline + 1));
    if (haveBelow && line.starts_with("File \"")) {
      const size_t mark = line.rfind("\", line ");
      if (mark != std::string_view::npos && mark >= 6) {
        const std::string_view rest = line.substr(mark + 8);
        uint32_t number = 0;
        size_t digits = 0;
        while (digits < rest.size() && digits < 9 && rest[digits] >= '0' && rest[digits] <= '9')
          number = number * 10 + static_cast<uint32_t>(rest[digits++] - '0');
        const std::string_view function =
            digits && rest.substr(digits).starts_with(", in ") ? rest.substr(digits + 5) : std::string_view{};
        if (!function.empty()) return Frame{line.substr(6, mark - 6), function, trim(below), number};
      }
    }
    if (newline == std::string_view::npos) return std::nullopt;
    below = line;
    haveBelow = true;
    trace = trace.substr(0, newline);
  }
}

// torch's metadata_split: split at sep outside parentheses.
std::vector<std::string_view> metadataSplit(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(')
      ++depth;
    else if (s[i] == ')')
      --depth;
    else if (s[i] == sep && depth == 0) {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  parts.push_back(s.substr(start));
  return parts;
}

// Module path of the innermost nn_module_stack entry ("key,path,type;key,path,type").
std::optional<std::string_view> innermostModule(std::string_view stack) {
  if (stack.empty()) return std::nullopt;
  const auto entries = metadataSplit(stack, ';');
  const auto fields = metadataSplit(entries.back(), ',');
  if (fields.size() != 3) return std::nullopt;
  return fields[1];
}

// "model.layers.0.mlp.weight" -> "model.layers.0.mlp"; a top-level name has the root module.
std::string_view modulePart(std::string_view fqn) {
  const size_t dot = fqn.rfind('.');
  return dot == std::string_view::npos ? std::string_view{} : fqn.substr(0, dot);
}

// FX-style base name of a node that names no value: "torch.ops.aten.split.Tensor" -> "split".
std::string baseNameFromTarget(std::string_view target) {
  std::string_view base;
  if (target.starts_with("torch.ops.")) {
    std::string_view rest = target.substr(10);
    const size_t ns = rest.find('.');
    if (ns != std::string_view::npos) {
      rest = rest.substr(ns + 1);
      base = rest.substr(0, rest.find('.'));
    }
  } else {
    const size_t dot = target.rfind('.');
    base = dot == std::string_view::npos ? target : target.substr(dot + 1);
  }
  std::string out;
  for (char c : base) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  return out.empty() ? "node" : out;
}

std::string_view layoutName(int64_t v) {
  switch (v) {
    case 1: return "torch.sparse_coo";
    case 2: return "torch.sparse_csr";
    case 3: return "torch.sparse_csc";
    case 4: return "torch.sparse_bsr";
    case 5: return "torch.sparse_bsc";
    case 6: return "torch._mkldnn";
    case 7: return "torch.strided";
    default: return {};
  }
}

std::string_view memoryFormatName(int64_t v) {
  switch (v) {
    case 1: return "torch.contiguous_format";
    case 2: return "torch.channels_last";
    case 3: return "torch.channels_last_3d";
    case 4: return "torch.preserve_format";
    default: return {};
  }
}

ir::Role roleOf(Pt2InputKind kind, ValueClass cls) {
  switch (kind) {
    case Pt2InputKind::Parameter: return ir::Role::Parameter;
    case Pt2InputKind::Buffer:
    case Pt2InputKind::TensorConstant: return ir::Role::Buffer;
    case Pt2InputKind::UserInput:
    case Pt2InputKind::ConstantInput:
      return cls == ValueClass::Tensor || cls == ValueClass::CustomObject ? ir::Role::UserInput : ir::Role::SymInput;
    default: return ir::Role::Unknown;
  }
}

// Where a value sits in the document ("graph_module.graph.nodes[3].inputs[1]"), formatted only
// when a diagnostic needs it.
struct Where {
  const std::string* graph = nullptr;
  std::string_view list;  // "inputs", "nodes", "outputs"
  size_t index = 0;
  std::string_view sublist;  // "inputs" of a node
  size_t subindex = 0;

  [[nodiscard]] Where sub(std::string_view name, size_t i) const {
    Where w = *this;
    w.sublist = name;
    w.subindex = i;
    return w;
  }
  [[nodiscard]] std::string str() const {
    std::string out = *graph;
    if (!list.empty()) out += "." + std::string(list) + "[" + std::to_string(index) + "]";
    if (!sublist.empty()) out += "." + std::string(sublist) + "[" + std::to_string(subindex) + "]";
    return out;
  }
};
std::string operator+(const Where& where, std::string_view text) {
  return where.str() + std::string(text);
}

struct Context {
  std::string_view file;
  Diagnostics& diagnostics;
  const Progress& progress;
  uint64_t nodesBuilt = 0;

  void warn(std::string code, std::string message) {
    diagnostics.warn(std::move(code), std::move(message), SourceLocation{std::string(file), 0});
  }
  void tick() {
    if ((++nodesBuilt & 1023) == 0) progress.checkCancelled();
  }
};

class GraphBuilder {
 public:
  GraphBuilder(Context& ctx, const Json& graphJson, std::string path, int depth)
      : ctx_(ctx), json_(graphJson), path_(std::move(path)), depth_(depth), graph_(std::make_shared<ir::Graph>()) {}

  // specs: the signature of the top-level graph (null for nested graphs).
  std::shared_ptr<ir::Graph> build(const std::vector<Pt2InputSpec>* inputSpecs,
                                   const std::vector<Pt2OutputSpec>* outputSpecs) {
    reserveSerializedNames();
    addPlaceholders(inputSpecs);
    if (const Json* nodes = field(json_, "nodes")) {
      if (nodes->is_array()) {
        for (size_t k = 0; k < nodes->size(); ++k) addNode((*nodes)[k], Where{&path_, "nodes", k});
      } else {
        ctx_.warn("bad_graph", path_ + ".nodes is not a list");
      }
    }
    addOutput(outputSpecs);
    // ExportedProgram.graph_module prints as `class GraphModule`; nested graphs are named by their
    // attribute when they are attached.
    if (depth_ == 0) graph_->setClassName("GraphModule");
    graph_->finalize();
    return graph_;
  }

 private:
  // --- names ---
  void reserveNames(const Json& arg, int depth) {
    if (depth > 2) return;
    if (auto v = namedValue(arg, ValueClass::Tensor)) reserved_.emplace(v->name);
    ValueClass cls;
    if (const Json* list = valueList(arg, cls))
      for (const auto& item : *list) reserveNames(item, depth + 1);
  }
  void reserveSerializedNames() {
    if (const Json* inputs = field(json_, "inputs"); inputs && inputs->is_array())
      for (const auto& a : *inputs) reserveNames(a, 0);
    if (const Json* nodes = field(json_, "nodes"); nodes && nodes->is_array()) {
      for (const auto& n : *nodes) {
        if (const Json* outs = field(n, "outputs"); outs && outs->is_array())
          for (const auto& o : *outs) reserveNames(o, 0);
      }
    }
  }
  // A name the file gives: taken as is unless already used (damage: duplicate definition).
  std::string claimName(std::string_view name, const Where& where) {
    if (used_.emplace(name).second) return std::string(name);
    ctx_.warn("duplicate_name", where + ": name '" + std::string(name) + "' is defined twice; renamed");
    return freshName(name);
  }
  // A name the loader makes up, clear of every name in the file (FX style: base, base_1, ...).
  std::string freshName(std::string_view base) {
    std::string b(base);
    if (!used_.contains(b) && !reserved_.contains(b)) {
      used_.insert(b);
      return b;
    }
    for (size_t& n = nextSuffix_[b];;) {
      std::string candidate = b + "_" + std::to_string(++n);
      if (!used_.contains(candidate) && !reserved_.contains(candidate)) {
        used_.insert(candidate);
        return candidate;
      }
    }
  }

  // --- metas ---
  ir::TensorMeta tensorMeta(const pt2::TensorMetaJson& m) {
    ir::TensorMeta meta;
    meta.kind = ir::ValueKind::Tensor;
    meta.dtype = m.dtype;
    auto convert = [&](const std::vector<pt2::Dim>& dims, std::vector<ir::SymDim>& out) {
      out.reserve(dims.size());
      for (const auto& d : dims) out.push_back({d.value, d.expr.empty() ? 0 : graph_->intern(d.expr), d.hasHint});
    };
    convert(m.sizes, meta.sizes);
    convert(m.strides, meta.strides);
    meta.hasStrides = m.hasStrides;
    if (!m.device.empty()) meta.device = graph_->intern(m.device);
    return meta;
  }

  ir::TensorMeta metaFor(NamedValue v, const Where& where) {
    ir::TensorMeta meta;
    static constexpr std::string_view kTables[] = {"tensor_values", "sym_int_values", "sym_bool_values",
                                                   "sym_float_values", "custom_obj_values"};
    const std::string_view table = kTables[static_cast<int>(v.cls)];
    const Json* values = field(json_, table);
    const Json* entry = values ? field(*values, v.name) : nullptr;
    if (!entry) {
      ctx_.warn("missing_meta", where + ": no " + std::string(table) + " entry for '" + std::string(v.name) + "'");
      return meta;
    }
    switch (v.cls) {
      case ValueClass::Tensor: {
        std::string why;
        if (auto m = pt2::parseTensorMeta(*entry, &why)) return tensorMeta(*m);
        ctx_.warn("bad_meta", where + ": " + std::string(v.name) + ": " + why);
        return meta;
      }
      case ValueClass::SymInt:
      case ValueClass::SymFloat:
      case ValueClass::SymBool: {
        meta.kind = v.cls == ValueClass::SymInt     ? ir::ValueKind::SymInt
                    : v.cls == ValueClass::SymFloat ? ir::ValueKind::SymFloat
                                                    : ir::ValueKind::SymBool;
        std::optional<std::string> text;
        if (auto m = unionMember(*entry)) {
          if (m->key == "as_expr") {
            if (auto s = stringField(*m->value, "expr_str")) text = pt2::exprText(*s);
          } else if (m->value->is_boolean()) {
            text = m->value->get<bool>() ? "True" : "False";
          } else if (m->value->is_number()) {
            text = m->value->dump();
          }
        }
        if (!text) {
          ctx_.warn("bad_meta",
                    where + ": symbolic value '" + std::string(v.name) + "' is malformed: " + pt2::shortJson(*entry));
          return meta;
        }
        meta.symExpr = graph_->intern(*text);
        return meta;
      }
      case ValueClass::CustomObject:
        meta.kind = ir::ValueKind::Opaque;
        if (auto fqn = stringField(*entry, "class_fqn")) meta.symExpr = graph_->intern(*fqn);
        return meta;
    }
    return meta;
  }

  // --- placeholders ---
  void addPlaceholders(const std::vector<Pt2InputSpec>* specs) {
    const Json* inputs = field(json_, "inputs");
    if (inputs && !inputs->is_array()) {
      ctx_.warn("bad_graph", path_ + ".inputs is not a list");
      inputs = nullptr;
    }
    const size_t count = inputs ? inputs->size() : 0;
    if (specs && specs->size() != count)
      ctx_.warn("signature_mismatch", path_ + ": " + std::to_string(count) + " graph inputs but " +
                                          std::to_string(specs->size()) + " input specs");
    for (size_t i = 0; i < count; ++i) {
      const Where where{&path_, "inputs", i};
      const Pt2InputSpec* spec = specs && i < specs->size() ? &(*specs)[i] : nullptr;
      auto value = namedValue((*inputs)[i], ValueClass::Tensor);
      std::string name;
      if (value) {
        name = value->name;
      } else if (spec && !spec->arg.empty()) {
        name = spec->arg;  // constant inputs carry their name in the spec only
      } else {
        ctx_.warn("bad_input", where + ": graph input names no value: " + pt2::shortJson((*inputs)[i]));
      }
      if (spec && !spec->arg.empty() && !name.empty() && spec->arg != name)
        ctx_.warn("signature_mismatch", where + ": input spec names '" + spec->arg + "', the graph '" + name + "'");
      ir::Node node;
      node.kind = ir::NodeKind::Placeholder;
      node.name = graph_->intern(name.empty() ? freshName("arg" + std::to_string(i)) : claimName(name, where));
      if (value) node.meta = metaFor(*value, where);
      const ValueClass cls = value ? value->cls : ValueClass::Tensor;
      if (spec) {
        node.role = roleOf(spec->kind, cls);
        if (spec->kind != Pt2InputKind::UserInput && !spec->target.empty())
          node.provenance.modulePath = graph_->intern(modulePart(spec->target));
      }
      const ir::NodeId id = graph_->addNode(std::move(node));
      if (!name.empty()) values_[name] = id;
    }
  }

  // --- arguments ---
  ir::Arg ref(std::string_view name, const Where& where) {
    auto it = values_.find(name);
    if (it != values_.end()) return ir::Arg::ofNode(it->second);
    ctx_.warn("unknown_value", where + ": '" + std::string(name) + "' is not defined before its use");
    return ir::Arg::ofStr(ir::Arg::Kind::Raw, graph_->intern(name));
  }
  ir::Arg raw(std::string_view text) { return ir::Arg::ofStr(ir::Arg::Kind::Raw, graph_->intern(text)); }
  ir::Arg bad(const Where& where, const Json& arg) {
    ctx_.warn("bad_argument", where + ": malformed argument " + pt2::shortJson(arg));
    return raw("<malformed argument>");
  }

  // SymIntArgument / SymBoolArgument / SymFloatArgument: a named value or a constant.
  ir::Arg symArg(const Json& j, const Where& where) {
    auto m = unionMember(j);
    if (!m) return bad(where, j);
    const Json& v = *m->value;
    if (m->key == "as_name" && v.is_string()) return ref(v.get_ref<const std::string&>(), where);
    if (m->key == "as_int") {
      if (auto i = pt2::asInt(v)) return ir::Arg::ofInt(*i);
    } else if (m->key == "as_bool" && v.is_boolean()) {
      return ir::Arg::ofBool(v.get<bool>());
    } else if (m->key == "as_float") {
      if (auto f = pt2::asFloat(v)) return ir::Arg::ofFloat(*f);
    }
    return bad(where, j);
  }

  template <typename F>
  ir::Arg listOf(const Json& v, const Where& where, F&& element) {
    if (!v.is_array()) return bad(where, v);
    ir::Arg list;
    list.kind = ir::Arg::Kind::List;
    list.items.reserve(v.size());
    for (const auto& item : v) list.items.push_back(element(item));
    return list;
  }

  ir::Arg scalar(const Json& v, std::string_view key, const Where& where) {
    if (key == "as_int" || key == "as_ints") {
      if (auto i = pt2::asInt(v)) return ir::Arg::ofInt(*i);
    } else if (key == "as_float" || key == "as_floats") {
      if (auto f = pt2::asFloat(v)) return ir::Arg::ofFloat(*f);
    } else if (key == "as_bool" || key == "as_bools") {
      if (v.is_boolean()) return ir::Arg::ofBool(v.get<bool>());
    } else if (key == "as_string" || key == "as_strings") {
      if (v.is_string()) return ir::Arg::ofStr(ir::Arg::Kind::String, graph_->intern(v.get_ref<const std::string&>()));
    }
    return bad(where, v);
  }

  ir::Arg tensorRef(const Json& v, const Where& where) {
    if (auto name = stringField(v, "name")) return ref(*name, where);
    return bad(where, v);
  }

  ir::Arg optionalTensor(const Json& v, const Where& where) {
    auto m = unionMember(v);
    if (m && m->key == "as_none") return ir::Arg::none();
    if (m && m->key == "as_tensor") return tensorRef(*m->value, where);
    return bad(where, v);
  }

  ir::Arg argument(const Json& arg, const Where& where, int depth) {
    if (depth > kMaxArgumentDepth) {
      ctx_.warn("bad_argument", where + ": arguments nest too deeply");
      return raw("<too deep>");
    }
    auto m = unionMember(arg);
    if (!m) return bad(where, arg);
    const std::string_view key = m->key;
    const Json& v = *m->value;
    if (key == "as_none") return ir::Arg::none();
    if (key == "as_tensor") return tensorRef(v, where);
    if (key == "as_tensors") return listOf(v, where, [&](const Json& t) { return tensorRef(t, where); });
    if (key == "as_optional_tensor") return optionalTensor(v, where);
    if (key == "as_optional_tensors") return listOf(v, where, [&](const Json& t) { return optionalTensor(t, where); });
    if (key == "as_int" || key == "as_float" || key == "as_bool" || key == "as_string") return scalar(v, key, where);
    if (key == "as_ints" || key == "as_floats" || key == "as_bools" || key == "as_strings")
      return listOf(v, where, [&](const Json& s) { return scalar(s, key, where); });
    if (key == "as_sym_int" || key == "as_sym_bool" || key == "as_sym_float") return symArg(v, where);
    if (key == "as_sym_ints" || key == "as_sym_bools" || key == "as_sym_floats")
      return listOf(v, where, [&](const Json& s) { return symArg(s, where); });
    if (key == "as_int_lists") {
      return listOf(v, where, [&](const Json& row) {
        return listOf(row, where, [&](const Json& s) { return scalar(s, "as_int", where); });
      });
    }
    if (key == "as_scalar_type") {
      if (auto i = pt2::asInt(v)) return ir::Arg::ofDType(ir::dtypeFromScalarType(*i));
      return bad(where, arg);
    }
    if (key == "as_layout" || key == "as_memory_format") {
      auto i = pt2::asInt(v);
      if (!i) return bad(where, arg);
      const std::string_view text = key == "as_layout" ? layoutName(*i) : memoryFormatName(*i);
      if (text.empty()) return raw(std::string(key.substr(3)) + "(" + std::to_string(*i) + ")");
      return ir::Arg::ofStr(key == "as_layout" ? ir::Arg::Kind::Layout : ir::Arg::Kind::MemoryFormat,
                            graph_->intern(text));
    }
    if (key == "as_device") {
      auto type = stringField(v, "type");
      if (!type) return bad(where, arg);
      std::string text = "device(type='" + std::string(*type) + "'";
      if (auto index = pt2::intField(v, "index")) text += ", index=" + std::to_string(*index);
      return ir::Arg::ofStr(ir::Arg::Kind::Device, graph_->intern(text + ")"));
    }
    if (key == "as_custom_obj") {
      auto name = stringField(v, "name");
      if (!name) return bad(where, arg);
      return values_.contains(*name) ? ref(*name, where) : raw(*name);
    }
    if (key == "as_operator") {
      if (v.is_string()) return raw(v.get_ref<const std::string&>());
      return bad(where, arg);
    }
    if (key == "as_complex") {
      auto re = field(v, "real"), im = field(v, "imag");
      auto r = re ? pt2::asFloat(*re) : std::nullopt;
      auto i = im ? pt2::asFloat(*im) : std::nullopt;
      if (!r || !i) return bad(where, arg);
      return raw("complex(" + re->dump() + ", " + im->dump() + ")");
    }
    if (key == "as_string_to_argument") {
      if (!v.is_object()) return bad(where, arg);
      ir::Arg dict;
      dict.kind = ir::Arg::Kind::Dict;
      for (auto it = v.begin(); it != v.end(); ++it) {
        dict.keys.push_back(ir::Arg::ofStr(ir::Arg::Kind::String, graph_->intern(it.key())));
        dict.items.push_back(argument(*it, where, depth + 1));
      }
      return dict;
    }
    if (key == "as_graph") return subgraph(v, where);
    ctx_.warn("unknown_argument", where + ": unknown argument kind '" + std::string(key) + "'");
    return raw(std::string(key) + ": " + pt2::shortJson(v));
  }

  // A nested graph (as_graph): kept as a subgraph, referenced through a get_attr node as FX does.
  ir::Arg subgraph(const Json& v, const Where& where) {
    auto name = stringField(v, "name");
    const Json* g = field(v, "graph");
    if (!name || name->empty() || !g || !g->is_object()) return bad(where, v);
    const std::string attr(*name);
    if (auto it = getAttrs_.find(attr); it != getAttrs_.end()) return ir::Arg::ofNode(it->second);
    if (depth_ + 1 > kMaxGraphDepth) {
      ctx_.warn("bad_graph", where + ": graphs nest too deeply; '" + attr + "' skipped");
      return raw(attr);
    }
    GraphBuilder nested(ctx_, *g, where + ".as_graph(" + attr + ")", depth_ + 1);
    std::shared_ptr<ir::Graph> body = nested.build(nullptr, nullptr);
    body->setClassName(attr);  // FX prints a nested graph as a class named after its attribute
    graph_->addSubgraph(attr, std::move(body));
    ir::Node node;
    node.kind = ir::NodeKind::GetAttr;
    node.synthetic = true;
    node.name = graph_->intern(freshName(attr));
    node.target = graph_->intern(attr);
    node.provenance = callProvenance_;  // the file has none for it; torch reuses the call's
    const ir::NodeId id = graph_->addNode(std::move(node));
    getAttrs_[attr] = id;
    return ir::Arg::ofNode(id);
  }

  // --- nodes ---
  void setProvenance(ir::Node& node, const Json& serialized, const Where& where) {
    const Json* metadata = field(serialized, "metadata");
    if (!metadata) return;
    if (!metadata->is_object()) {
      ctx_.warn("bad_node", where + ".metadata is not an object");
      return;
    }
    if (auto trace = stringField(*metadata, "stack_trace")) {
      if (auto frame = innermostFrame(*trace)) {
        node.provenance.file = graph_->intern(frame->file);
        node.provenance.line = frame->line;
        node.provenance.function = graph_->intern(frame->function);
        node.provenance.code = graph_->intern(frame->code);
      }
    }
    if (auto stack = stringField(*metadata, "nn_module_stack")) {
      if (auto path = innermostModule(*stack)) node.provenance.modulePath = graph_->intern(*path);
    }
  }

  void addNode(const Json& serialized, const Where& where) {
    ctx_.tick();
    ir::Node node;
    node.kind = ir::NodeKind::CallFunction;
    if (!serialized.is_object()) {
      ctx_.warn("bad_node", where + " is not an object; kept as an unknown node");
      node.target = graph_->intern("<invalid node>");
      node.name = graph_->intern(freshName("node"));
      graph_->addNode(std::move(node));
      return;
    }
    std::string target;
    if (auto t = stringField(serialized, "target"); t && !t->empty()) {
      target = *t;
    } else {
      ctx_.warn("bad_node", where + " has no target; kept as an unknown node");
      target = "<invalid node>";
    }
    node.target = graph_->intern(target);
    setProvenance(node, serialized, where);
    callProvenance_ = node.provenance;

    if (const Json* inputs = field(serialized, "inputs")) {
      if (!inputs->is_array()) {
        ctx_.warn("bad_node", where + ".inputs is not a list");
      } else {
        for (size_t i = 0; i < inputs->size(); ++i) {
          const Json& input = (*inputs)[i];
          const Where at = where.sub("inputs", i);
          const Json* arg = field(input, "arg");
          if (!arg) {
            node.args.push_back(bad(at, input));
            continue;
          }
          ir::Arg value = argument(*arg, at, 0);
          auto kind = pt2::intField(input, "kind");
          auto name = stringField(input, "name");
          if (kind && *kind == 2 && name && !name->empty()) {
            node.kwargs.emplace_back(graph_->intern(*name), std::move(value));
          } else {
            node.args.push_back(std::move(value));
          }
        }
      }
    }

    const Json* outputs = field(serialized, "outputs");
    if (outputs && !outputs->is_array()) {
      ctx_.warn("bad_node", where + ".outputs is not a list");
      outputs = nullptr;
    }
    const size_t outputCount = outputs ? outputs->size() : 0;
    std::optional<NamedValue> single;
    if (outputCount == 1) single = namedValue((*outputs)[0], ValueClass::Tensor);
    // A higher-order op returns a tuple even for one value (torch.cond -> cond[0]) unless the file
    // says it returns the bare tensor: torch's deserialize_outputs then reads it with a getitem.
    const Json* bareReturn = field(serialized, "is_hop_single_tensor_return");
    const bool hopTuple = single && target.find("torch.ops.higher_order.") != std::string::npos &&
                          !(bareReturn && bareReturn->is_boolean() && bareReturn->get<bool>());
    if (single && !hopTuple) {
      // One value: the node is that value (torch names the FX node after it).
      node.name = graph_->intern(claimName(single->name, where));
      node.meta = metaFor(*single, where);
      const ir::NodeId id = graph_->addNode(std::move(node));
      values_[std::string(single->name)] = id;
      return;
    }
    node.name = graph_->intern(nodeName(serialized, outputs, target, where));
    const ir::Provenance provenance = node.provenance;
    const ir::NodeId id = graph_->addNode(std::move(node));
    if (outputCount == 0) return;
    ValueClass cls = ValueClass::Tensor;
    const Json* list = outputCount == 1 && !hopTuple ? valueList((*outputs)[0], cls) : nullptr;
    if (outputCount == 1 && !list && !hopTuple) return;  // a constant or None result: nothing to read back
    addGetitems(id, list ? *list : *outputs, cls, provenance, where, 0);
  }

  std::string nodeName(const Json& serialized, const Json* outputs, const std::string& target, const Where& where) {
    if (auto name = stringField(serialized, "name"); name && !name->empty()) return claimName(*name, where);
    // Older files have no node name; unused outputs are named "<node>_unused_<i>".
    if (outputs) {
      for (const auto& o : *outputs) {
        auto v = namedValue(o, ValueClass::Tensor);
        if (!v) continue;
        const size_t mark = v->name.rfind("_unused_");
        if (mark != std::string_view::npos && mark > 0) return freshName(v->name.substr(0, mark));
      }
    }
    return freshName(baseNameFromTarget(target));
  }

  void addGetitems(ir::NodeId parent, const Json& items, ValueClass cls, const ir::Provenance& provenance,
                   const Where& where, int depth) {
    const ir::StrId getitem = graph_->intern("operator.getitem");
    for (size_t i = 0; i < items.size(); ++i) {
      const Json& item = items[i];
      ir::Node node;
      node.kind = ir::NodeKind::CallFunction;
      node.synthetic = true;
      node.target = getitem;
      node.args = {ir::Arg::ofNode(parent), ir::Arg::ofInt(static_cast<int64_t>(i))};
      node.provenance = provenance;
      if (auto v = namedValue(item, cls)) {
        node.name = graph_->intern(claimName(v->name, where));
        node.meta = metaFor(*v, where);
        values_[std::string(v->name)] = graph_->addNode(std::move(node));
        continue;
      }
      ValueClass inner = cls;
      if (const Json* list = valueList(item, inner); list && depth < 2) {
        node.name = graph_->intern(freshName("getitem"));
        const ir::NodeId id = graph_->addNode(std::move(node));
        addGetitems(id, *list, inner, provenance, where, depth + 1);
      }
      // None and constant results need no getitem.
    }
  }

  void addOutput(const std::vector<Pt2OutputSpec>* specs) {
    ir::Node node;
    node.kind = ir::NodeKind::Output;
    node.role = ir::Role::Output;
    node.name = graph_->intern(freshName("output"));
    node.target = graph_->intern("output");
    const Json* outputs = field(json_, "outputs");
    if (outputs && !outputs->is_array()) {
      ctx_.warn("bad_graph", path_ + ".outputs is not a list");
      outputs = nullptr;
    }
    ir::Arg values;
    values.kind = ir::Arg::Kind::Tuple;
    const size_t count = outputs ? outputs->size() : 0;
    for (size_t i = 0; i < count; ++i) values.items.push_back(argument((*outputs)[i], Where{&path_, "outputs", i}, 0));
    if (specs && specs->size() != count)
      ctx_.warn("signature_mismatch", path_ + ": " + std::to_string(count) + " graph outputs but " +
                                          std::to_string(specs->size()) + " output specs");
    if (specs) {
      for (const auto& spec : *specs) {
        if (spec.kind != Pt2OutputKind::GradientToParameter && spec.kind != Pt2OutputKind::GradientToUserInput)
          continue;
        if (auto it = values_.find(spec.arg); it != values_.end())
          graph_->mutableNode(it->second).role = ir::Role::Gradient;
      }
    }
    const Json* single = field(json_, "is_single_tensor_return");
    if (single && single->is_boolean() && single->get<bool>() && values.items.size() == 1) {
      node.args.push_back(std::move(values.items[0]));
    } else {
      node.args.push_back(std::move(values));
    }
    graph_->addNode(std::move(node));
  }

  Context& ctx_;
  const Json& json_;
  std::string path_;
  int depth_;
  std::shared_ptr<ir::Graph> graph_;
  StringMap<ir::NodeId> values_;  // serialized value name -> node
  StringMap<ir::NodeId> getAttrs_;
  StringSet used_, reserved_;
  StringMap<size_t> nextSuffix_;
  ir::Provenance callProvenance_;  // of the node whose arguments are being read
};

std::string specArgName(const Json& spec) {
  if (const Json* arg = field(spec, "arg")) {
    if (auto v = namedValue(*arg, ValueClass::Tensor)) return std::string(v->name);
  }
  if (auto name = stringField(spec, "name")) return std::string(*name);  // constant_input
  return {};
}

std::string specTarget(const Json& spec) {
  for (std::string_view key :
       {"parameter_name", "buffer_name", "tensor_constant_name", "custom_obj_name", "user_input_name"}) {
    if (auto t = stringField(spec, key)) return std::string(*t);
  }
  return {};
}

// Input/output spec kinds from their serialized union key.
Pt2InputKind inputKindFromKey(std::string_view key) {
  if (key == "user_input") return Pt2InputKind::UserInput;
  if (key == "parameter") return Pt2InputKind::Parameter;
  if (key == "buffer") return Pt2InputKind::Buffer;
  if (key == "tensor_constant") return Pt2InputKind::TensorConstant;
  if (key == "custom_obj") return Pt2InputKind::CustomObject;
  if (key == "token") return Pt2InputKind::Token;
  if (key == "constant_input") return Pt2InputKind::ConstantInput;
  return Pt2InputKind::Unknown;
}

Pt2OutputKind outputKindFromKey(std::string_view key) {
  if (key == "user_output") return Pt2OutputKind::UserOutput;
  if (key == "loss_output") return Pt2OutputKind::LossOutput;
  if (key == "buffer_mutation") return Pt2OutputKind::BufferMutation;
  if (key == "gradient_to_parameter") return Pt2OutputKind::GradientToParameter;
  if (key == "gradient_to_user_input") return Pt2OutputKind::GradientToUserInput;
  if (key == "user_input_mutation") return Pt2OutputKind::UserInputMutation;
  if (key == "token") return Pt2OutputKind::Token;
  if (key == "parameter_mutation") return Pt2OutputKind::ParameterMutation;
  return Pt2OutputKind::Unknown;
}

// Returns false when the signature is missing or malformed (the graph is then built without it).
bool parseSignature(const Json& signature, Pt2Model& model, Context& ctx) {
  const Json* inputs = field(signature, "input_specs");
  const Json* outputs = field(signature, "output_specs");
  if (!inputs || !inputs->is_array() || !outputs || !outputs->is_array()) {
    ctx.warn("bad_signature", "graph_module.signature has no input_specs/output_specs lists");
    return false;
  }
  for (size_t i = 0; i < inputs->size(); ++i) {
    Pt2InputSpec spec;
    auto m = unionMember((*inputs)[i]);
    if (m) {
      spec.kind = inputKindFromKey(m->key);
      spec.arg = specArgName(*m->value);
      spec.target = specTarget(*m->value);
      if (const Json* p = field(*m->value, "persistent"); p && p->is_boolean()) spec.persistent = p->get<bool>();
    }
    if (!m || spec.kind == Pt2InputKind::Unknown)
      ctx.warn("bad_signature",
               "input_specs[" + std::to_string(i) + "] is not a known spec: " + pt2::shortJson((*inputs)[i]));
    model.inputs.push_back(std::move(spec));
  }
  for (size_t i = 0; i < outputs->size(); ++i) {
    Pt2OutputSpec spec;
    auto m = unionMember((*outputs)[i]);
    if (m) {
      spec.kind = outputKindFromKey(m->key);
      spec.arg = specArgName(*m->value);
      spec.target = specTarget(*m->value);
    }
    if (!m || spec.kind == Pt2OutputKind::Unknown)
      ctx.warn("bad_signature",
               "output_specs[" + std::to_string(i) + "] is not a known spec: " + pt2::shortJson((*outputs)[i]));
    model.outputs.push_back(std::move(spec));
  }
  return true;
}

void parseHeader(const Json& doc, Pt2Model& model, Context& ctx) {
  if (const Json* v = field(doc, "schema_version")) {
    if (auto legacy = pt2::asInt(*v)) {
      model.schemaMajor = *legacy;
      model.schemaVersion = std::to_string(*legacy);
    } else if (auto major = pt2::intField(*v, "major")) {
      model.schemaMajor = *major;
      model.schemaMinor = pt2::intField(*v, "minor").value_or(0);
      model.schemaVersion = std::to_string(model.schemaMajor) + "." + std::to_string(model.schemaMinor);
    } else {
      ctx.warn("bad_header", "schema_version is malformed: " + pt2::shortJson(*v));
    }
  }
  if (auto t = stringField(doc, "torch_version")) model.torchVersion = *t;
  if (const Json* opset = field(doc, "opset_version"); opset && opset->is_object()) {
    for (auto it = opset->begin(); it != opset->end(); ++it)
      if (auto v = pt2::asInt(*it)) model.opset.emplace_back(it.key(), *v);
  }
  if (const Json* verifiers = field(doc, "verifiers"); verifiers && verifiers->is_array()) {
    for (const auto& v : *verifiers)
      if (v.is_string()) model.verifiers.push_back(v.get<std::string>());
  } else if (auto dialect = stringField(doc, "dialect")) {
    model.verifiers.emplace_back(*dialect);
  }
  if (const Json* ranges = field(doc, "range_constraints")) {
    if (!ranges->is_object()) {
      ctx.warn("bad_header", "range_constraints is not an object");
    } else {
      for (auto it = ranges->begin(); it != ranges->end(); ++it) {
        Pt2RangeConstraint r;
        r.symbol = it.key();
        r.min = pt2::intField(*it, "min_val");
        r.max = pt2::intField(*it, "max_val");
        model.rangeConstraints.push_back(std::move(r));
      }
    }
  }
}

uint64_t lineOfOffset(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  uint64_t line = 1;
  for (size_t i = 0; i < offset; ++i) line += text[i] == '\n';
  return line;
}

}  // namespace

Pt2Model parseExportedProgram(std::string_view json, std::string_view modelName, std::string_view file,
                              Diagnostics& diagnostics, const Progress& progress) {
  Pt2Model model;
  model.name = modelName;
  Context ctx{file, diagnostics, progress};
  Json doc;
  try {
    doc = parseJsonBounded<Json>(json, file);
  } catch (const Error& e) {  // nested or sized beyond the bounds
    ctx.warn("bad_json", std::string("ExportedProgram refused: ") + e.what());
    return model;
  } catch (const Json::parse_error& e) {
    diagnostics.warn("bad_json", std::string("ExportedProgram is not valid JSON: ") + e.what(),
                     SourceLocation{std::string(file), lineOfOffset(json, e.byte ? e.byte - 1 : 0)});
    return model;
  } catch (const Json::exception& e) {  // out_of_range: a number beyond double (1e999)
    ctx.warn("bad_json", std::string("ExportedProgram is not valid JSON: ") + e.what());
    return model;
  }
  if (!doc.is_object()) {
    ctx.warn("bad_json", "ExportedProgram is not a JSON object");
    return model;
  }
  parseHeader(doc, model, ctx);
  const Json* gm = field(doc, "graph_module");
  const Json* graph = gm ? field(*gm, "graph") : nullptr;
  if (!graph || !graph->is_object()) {
    ctx.warn("bad_json", "ExportedProgram has no graph_module.graph object");
    return model;
  }
  bool haveSignature = false;
  if (const Json* signature = field(*gm, "signature")) {
    haveSignature = parseSignature(*signature, model, ctx);
  } else {
    ctx.warn("bad_signature", "graph_module has no signature");
  }
  if (const Json* calls = field(*gm, "module_call_graph"); calls && calls->is_array()) {
    for (const auto& entry : *calls)
      if (auto fqn = stringField(entry, "fqn")) model.moduleFqns.emplace_back(*fqn);
  }
  if (const Json* nodes = field(*graph, "nodes"); nodes && nodes->is_array()) model.serializedNodes = nodes->size();
  GraphBuilder builder(ctx, *graph, "graph_module.graph", 0);
  model.graph = builder.build(haveSignature ? &model.inputs : nullptr, haveSignature ? &model.outputs : nullptr);
  return model;
}

}  // namespace lathe::io
