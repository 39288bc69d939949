// Reading our own JSON formats (plan bundles, measured profiles) value by value: every read checks
// type and range, and a failure is Error(BadInput) "<source>: <JSON path>: <what>", naming the first
// bad value ("$.timeline.peak_step"). readFormatDocument parses and checks the format first.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/diagnostics.h"
#include "util/json_limits.h"

namespace lathe::plan {

using Json = nlohmann::ordered_json;

// A value of the document and where it is. Paths are built only when something fails.
class JsonAt {
 public:
  explicit JsonAt(const Json& root) : value_(&root) {}
  JsonAt(const Json& value, const JsonAt& parent, std::string_view key) : value_(&value), parent_(&parent), key_(key) {}
  JsonAt(const Json& value, const JsonAt& parent, size_t index) : value_(&value), parent_(&parent), index_(index) {}

  const Json& json() const { return *value_; }
  std::string path() const {
    if (!parent_) return "$";
    return parent_->path() + (key_.empty() ? "[" + std::to_string(index_) + "]" : "." + std::string(key_));
  }

 private:
  const Json* value_;
  const JsonAt* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
};

class JsonReader {
 public:
  using At = JsonAt;
  explicit JsonReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const At& at, const std::string& what) const {
    throw Error(ErrorCode::BadInput, source_ + ": " + at.path() + ": " + what);
  }

  bool has(const At& object, std::string_view key) const {
    return object.json().is_object() && object.json().contains(key);
  }
  At field(const At& object, std::string_view key) const {
    if (!object.json().is_object()) fail(object, "expected an object");
    const auto it = object.json().find(key);
    if (it == object.json().end()) fail(object, "missing \"" + std::string(key) + "\"");
    return At(*it, object, key);
  }
  // The items of a list, each with its path.
  template <typename Visit>
  void forEach(const At& list, Visit visit) const {
    if (!list.json().is_array()) fail(list, "expected a list");
    for (size_t i = 0; i < list.json().size(); ++i) visit(At(list.json()[i], list, i));
  }

  template <typename T>
  T as(const At& at) const {
    const Json& v = at.json();
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v.is_string()) fail(at, "expected a string");
      return v.get<std::string>();
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean()) fail(at, "expected true or false");
      return v.get<bool>();
    } else if constexpr (std::is_floating_point_v<T>) {
      if (!v.is_number()) fail(at, "expected a number");
      const T x = v.get<T>();
      if (!std::isfinite(x)) fail(at, "expected a finite number");
      return x;
    } else {
      static_assert(std::is_integral_v<T>);
      // nlohmann converts a float to an integer type without a range check (undefined behaviour).
      if (!v.is_number_integer()) fail(at, v.is_number() ? "expected an integer" : "expected a number");
      if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) fail(at, std::to_string(u) + " is out of range");
        return static_cast<T>(u);
      }
      const int64_t i = v.get<int64_t>();
      if (i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (i > 0 && static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
        fail(at, std::to_string(i) + " is out of range");
      }
      return static_cast<T>(i);
    }
  }
  template <typename T>
  T value(const At& object, std::string_view key) const {
    return as<T>(field(object, key));
  }
  template <typename T>
  std::vector<T> list(const At& object, std::string_view key) const {
    std::vector<T> out;
    const At at = field(object, key);
    if (at.json().is_array()) out.reserve(at.json().size());
    forEach(at, [&](const At& item) { out.push_back(as<T>(item)); });
    return out;
  }
  // A name: a non-empty string.
  std::string name(const At& at) const {
    std::string s = as<std::string>(at);
    if (s.empty()) fail(at, "empty name");
    return s;
  }
  std::vector<std::pair<std::string, double>> stats(const At& object) const {
    std::vector<std::pair<std::string, double>> out;
    if (!object.json().is_object()) fail(object, "expected an object of numbers");
    for (const auto& [k, v] : object.json().items()) out.emplace_back(k, as<double>(At(v, object, k)));
    return out;
  }

 private:
  std::string source_;
};

// Parses one of our documents within `limits`: an object whose "format" is exactly `format`
// ("lathe.plan/1"). Error(BadInput) "<source>: not a JSON object (...)", or naming the format found,
// "(another version)" when only its version differs.
[[nodiscard]] inline Json readFormatDocument(std::string_view text, const std::string& source, const JsonLimits& limits,
                                             std::string_view format) {
  Json doc;
  try {
    doc = parseJsonBounded<Json>(text, source, limits);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::BadInput, source + ": not a JSON object (" + e.what() + ")");
  }
  const JsonReader r(source);
  const JsonAt j(doc);
  if (!doc.is_object()) r.fail(j, "not a JSON object");
  const std::string found = r.has(j, "format") ? r.value<std::string>(j, "format") : "";
  if (found != format) {
    const std::string_view family = format.substr(0, format.find('/') + 1);  // "lathe.plan/"
    r.fail(j, "format \"" + found + "\" is not " + std::string(format) + (found.starts_with(family) ? " (another version)" : ""));
  }
  return doc;
}

}  // namespace lathe::plan
