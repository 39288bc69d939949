// Typed lookups of one field of a JSON object that users hand us: absent and wrongly typed read
// the same, as nothing, so that loaders say what they miss instead of throwing nlohmann's errors.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace lathe {

// The field's string, nullptr when it is absent or not a string (valid while `object` lives).
[[nodiscard]] inline const std::string* stringField(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return nullptr;
  return it->get_ptr<const std::string*>();
}

[[nodiscard]] inline std::optional<int64_t> intField(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int64_t>();
}

// Any number (integer or floating) as a double.
[[nodiscard]] inline std::optional<double> numberField(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

}  // namespace lathe
