// Interned strings: names, op targets, source lines. Id 0 is always the empty string.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lathe::ir {

using StrId = uint32_t;

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  StrId intern(std::string_view s);
  [[nodiscard]] std::string_view view(StrId id) const { return views_[id]; }
  // Id of s if already interned, else 0 (which is also the id of "").
  [[nodiscard]] StrId find(std::string_view s) const;
  [[nodiscard]] size_t size() const { return views_.size(); }

 private:
  std::deque<std::string> storage_;  // deque: views into it stay valid as it grows
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StrId> ids_;
};

}  // namespace lathe::ir
