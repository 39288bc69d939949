#include "io/pt2/detail/pt2_json.h"

#include <limits>

#include "io/pt2/detail/pt2_sympy.h"

namespace lathe::io::pt2 {

const Json* field(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<int64_t> asInt(const Json& j) {
  if (j.is_number_unsigned()) {
    const auto v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  return std::nullopt;
}

std::optional<double> asFloat(const Json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  return std::nullopt;
}

std::optional<int64_t> intField(const Json& obj, std::string_view key) {
  const Json* f = field(obj, key);
  return f ? asInt(*f) : std::nullopt;
}

std::optional<std::string_view> stringField(const Json& obj, std::string_view key) {
  const Json* f = field(obj, key);
  if (!f || !f->is_string()) return std::nullopt;
  return std::string_view(f->get_ref<const std::string&>());
}

std::optional<UnionMember> unionMember(const Json& j) {
  if (!j.is_object() || j.empty()) return std::nullopt;
  std::optional<UnionMember> found;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it->is_null()) continue;
    if (found) return std::nullopt;  // two members set: not a union value
    found = UnionMember{it.key(), &*it};
  }
  if (found) return found;
  if (j.size() == 1) return UnionMember{j.begin().key(), &*j.begin()};
  // Schema <= 2 with every member null: only as_none carries no value.
  if (auto it = j.find("as_none"); it != j.end()) return UnionMember{it.key(), &*it};
  return std::nullopt;
}

std::optional<std::string> exprText(std::string_view exprStr) {
  if (looksLikeSrepr(exprStr)) return sympyStrFromSrepr(exprStr);
  while (!exprStr.empty() && exprStr.front() == ' ') exprStr.remove_prefix(1);
  while (!exprStr.empty() && exprStr.back() == ' ') exprStr.remove_suffix(1);
  if (exprStr.empty()) return std::nullopt;
  return std::string(exprStr);
}

namespace {

std::optional<int64_t> integerLiteral(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v)) return std::nullopt;
  }
  return s[0] == '-' ? -v : v;
}

}  // namespace

std::optional<Dim> parseDim(const Json& j) {
  if (auto v = asInt(j)) return Dim{*v, true, {}};
  auto member = unionMember(j);
  if (!member) return std::nullopt;
  if (member->key == "as_int") {
    auto v = asInt(*member->value);
    if (!v) return std::nullopt;
    return Dim{*v, true, {}};
  }
  if (member->key != "as_expr") return std::nullopt;
  const Json& e = *member->value;
  auto text = stringField(e, "expr_str");
  if (!text) return std::nullopt;
  auto expr = exprText(*text);
  if (!expr) return std::nullopt;
  if (auto literal = integerLiteral(*expr)) return Dim{*literal, true, {}};
  Dim d{0, false, std::move(*expr)};
  if (const Json* hint = field(e, "hint")) {
    std::optional<int64_t> h = asInt(*hint);
    if (!h) {
      if (auto hm = unionMember(*hint); hm && hm->key == "as_int") h = asInt(*hm->value);
    }
    if (h) {
      d.value = *h;
      d.hasHint = true;
    }
  }
  return d;
}

std::string deviceText(const Json& device) {
  auto type = stringField(device, "type");
  if (!type) return {};
  std::string out(*type);
  if (auto index = intField(device, "index")) out += ":" + std::to_string(*index);
  return out;
}

std::optional<TensorMetaJson> parseTensorMeta(const Json& j, std::string* why) {
  auto fail = [&](std::string reason) -> std::optional<TensorMetaJson> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (!j.is_object()) return fail("tensor meta is not an object");
  TensorMetaJson m;
  auto dtype = intField(j, "dtype");
  if (!dtype) return fail("tensor meta has no integer dtype");
  m.dtype = ir::dtypeFromScalarType(*dtype);
  auto dims = [&](std::string_view key, std::vector<Dim>& out) -> bool {
    const Json* list = field(j, key);
    if (!list || !list->is_array()) return false;
    out.reserve(list->size());
    for (const auto& item : *list) {
      auto d = parseDim(item);
      if (!d) return false;
      out.push_back(std::move(*d));
    }
    return true;
  };
  if (!dims("sizes", m.sizes)) return fail("tensor meta sizes are missing or malformed");
  if (field(j, "strides")) {
    if (!dims("strides", m.strides)) return fail("tensor meta strides are malformed");
    m.hasStrides = true;
  }
  if (const Json* offset = field(j, "storage_offset")) {
    auto d = parseDim(*offset);
    if (!d) return fail("tensor meta storage_offset is malformed");
    m.storageOffset = std::move(*d);
  }
  if (const Json* device = field(j, "device")) m.device = deviceText(*device);
  if (const Json* rg = field(j, "requires_grad"); rg && rg->is_boolean()) m.requiresGrad = rg->get<bool>();
  return m;
}

namespace {

void appendShort(const Json& j, std::string& out, size_t maxChars, int depth) {
  if (out.size() >= maxChars) return;
  if (j.is_object() || j.is_array()) {
    if (depth >= 4 || j.empty()) {
      out += j.is_object() ? (j.empty() ? "{}" : "{...}") : (j.empty() ? "[]" : "[...]");
      return;
    }
    out += j.is_object() ? '{' : '[';
    bool first = true;
    for (auto it = j.begin(); it != j.end() && out.size() < maxChars; ++it) {
      if (!first) out += ", ";
      first = false;
      if (j.is_object()) out += "\"" + it.key().substr(0, maxChars) + "\": ";
      appendShort(*it, out, maxChars, depth + 1);
    }
    out += j.is_object() ? '}' : ']';
    return;
  }
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    out += '"';
    out += s.substr(0, maxChars);
    out += '"';
    return;
  }
  out += j.dump();  // scalars only: bounded
}

}  // namespace

std::string shortJson(const Json& j, size_t maxChars) {
  std::string out;
  appendShort(j, out, maxChars, 0);
  if (out.size() > maxChars) {
    out.resize(maxChars);
    out += "...";
  }
  return out;
}

}  // namespace lathe::io::pt2
