#include "ir/string_pool.h"

namespace lathe::ir {

StringPool::StringPool() { intern(""); }

StrId StringPool::intern(std::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  storage_.emplace_back(s);
  const std::string_view stored = storage_.back();
  const auto id = static_cast<StrId>(views_.size());
  views_.push_back(stored);
  ids_.emplace(stored, id);
  return id;
}

StrId StringPool::find(std::string_view s) const {
  auto it = ids_.find(s);
  return it == ids_.end() ? 0 : it->second;
}

}  // namespace lathe::ir
