// A JSON structure-aware mutator for libFuzzer targets whose input is JSON (plan bundles): parses
// the input with nlohmann, changes one to three values — wraps one in many levels of arrays or
// objects, sets a number to an integer limit (±1), changes an array's length, empties a name or
// swaps it with another of the document, changes a value's type, drops or renames a key — and
// serializes it again. Input that does not parse (or is nested too deep to walk safely) goes to
// libFuzzer's own byte mutator, as does every eighth call, so byte-level damage is still tried.
//
// Use: `LATHE_FUZZ_JSON_CUSTOM_MUTATOR()` once in the fuzzer's source.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t maxSize);

namespace lathe::fuzz {

using MutJson = nlohmann::ordered_json;

// Bracket depth outside strings; nlohmann's dump and destructor recurse, so deep inputs are left
// to the byte mutator.
inline size_t jsonDepth(const uint8_t* data, size_t size) {
  size_t depth = 0, deepest = 0;
  bool inString = false, escaped = false;
  for (size_t i = 0; i < size; ++i) {
    const char c = static_cast<char>(data[i]);
    if (inString) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        inString = false;
      }
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

class JsonMutator {
 public:
  explicit JsonMutator(unsigned seed) : rng_(seed) {}

  void mutate(MutJson& root) {
    collectStrings(root);
    const int ops = 1 + static_cast<int>(below(3));
    for (int k = 0; k < ops; ++k) mutateOne(root);
  }

 private:
  size_t below(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  bool chance(int percent) { return static_cast<int>(below(100)) < percent; }

  void collectStrings(const MutJson& root) {
    std::vector<const MutJson*> stack{&root};
    while (!stack.empty() && strings_.size() < 4096) {
      const MutJson* v = stack.back();
      stack.pop_back();
      if (v->is_string()) {
        strings_.push_back(v->get<std::string>());
      } else if (v->is_structured()) {
        for (const auto& item : *v) stack.push_back(&item);
      }
    }
  }

  // A random value, by a walk from the root that stops early a third of the time.
  MutJson* pick(MutJson& root, MutJson** parent) {
    MutJson* node = &root;
    *parent = nullptr;
    for (int step = 0; step < 64; ++step) {
      if (!node->is_structured() || node->empty() || (*parent && chance(30))) break;
      MutJson* child = nullptr;
      if (node->is_array()) {
        child = &(*node)[below(node->size())];
      } else {
        auto it = node->begin();
        std::advance(it, static_cast<std::ptrdiff_t>(below(node->size())));
        child = &it.value();
      }
      *parent = node;
      node = child;
    }
    return node;
  }

  MutJson number() {
    static const int64_t kSigned[] = {0, 1, -1, 2, 7, 64, 127, 128, 255, 256, 1000, 65535, 65536,
                                      INT32_MAX, int64_t{INT32_MAX} + 1, INT32_MIN, int64_t{INT32_MIN} - 1,
                                      int64_t{UINT32_MAX}, int64_t{UINT32_MAX} + 1, 1000000, int64_t{1} << 53,
                                      INT64_MAX, INT64_MIN};
    static const uint64_t kUnsigned[] = {uint64_t{1} << 63, (uint64_t{1} << 63) + 1, UINT64_MAX};
    static const double kFloats[] = {0.5, -0.0, 1e-320, 1e308, -1e308, 1.8446744073709552e19, 1e300 * 1e10};
    const size_t r = below(100);
    if (r < 60) {
      int64_t v = kSigned[below(std::size(kSigned))];
      const int delta = static_cast<int>(below(3)) - 1;  // the limit, one below or one above
      if (!(delta > 0 && v == INT64_MAX) && !(delta < 0 && v == INT64_MIN)) v += delta;
      return v;
    }
    if (r < 75) return kUnsigned[below(std::size(kUnsigned))];
    if (r < 90) return kFloats[below(std::size(kFloats))];
    static const char* kNanLike[] = {"NaN", "nan", "inf", "-Infinity", "1e999", "-0", "0x10", " 1", ""};
    return kNanLike[below(std::size(kNanLike))];
  }

  MutJson wrapped(MutJson value) {
    static const size_t kDepths[] = {1, 2, 8, 63, 64, 65, 200};
    const size_t depth = kDepths[below(std::size(kDepths))];
    for (size_t i = 0; i < depth; ++i) {
      if (chance(50)) {
        value = MutJson::array({std::move(value)});
      } else {
        MutJson object = MutJson::object();
        object["x"] = std::move(value);
        value = std::move(object);
      }
    }
    return value;
  }

  MutJson otherType() {
    switch (below(7)) {
      case 0: return nullptr;
      case 1: return true;
      case 2: return "";
      case 3: return MutJson::array();
      case 4: return MutJson::object();
      case 5: return number();
      default: return strings_.empty() ? MutJson("") : MutJson(strings_[below(strings_.size())]);
    }
  }

  void mutateOne(MutJson& root) {
    MutJson* parent = nullptr;
    MutJson* v = pick(root, &parent);
    const size_t r = below(100);
    if (r < 8) {
      *v = wrapped(std::move(*v));
    } else if (r < 14 && parent && parent->size() > 1) {
      // Swap with a sibling: two groups' anchors, two nodes' names, two series.
      MutJson* other = parent->is_array() ? &(*parent)[below(parent->size())] : nullptr;
      if (!other) {
        auto it = parent->begin();
        std::advance(it, static_cast<std::ptrdiff_t>(below(parent->size())));
        other = &it.value();
      }
      std::swap(*v, *other);
    } else if (v->is_number()) {
      *v = chance(85) ? number() : otherType();
    } else if (v->is_string()) {
      const size_t s = below(10);
      if (s < 3) {
        *v = "";
      } else if (s < 6 && !strings_.empty()) {
        *v = strings_[below(strings_.size())];  // a name from elsewhere in the document
      } else if (s < 7) {
        const std::string text = v->get<std::string>();
        std::string longer;
        for (int i = 0; i < 64 && longer.size() < 65536; ++i) longer += text.empty() ? "x" : text;
        *v = longer;
      } else if (s < 8) {
        *v = v->get<std::string>() + std::string(1, '\0');
      } else {
        *v = chance(50) ? number() : otherType();
      }
    } else if (v->is_array()) {
      const size_t s = below(10);
      const size_t n = v->size();
      if (s < 2 && n > 0) {
        v->erase(v->begin() + static_cast<std::ptrdiff_t>(below(n)), v->end());  // cut short
      } else if (s < 3 && n > 0) {
        v->erase(v->begin() + static_cast<std::ptrdiff_t>(below(n)));
      } else if (s < 5 && n > 0) {
        // One entry more, or many; copies of a large entry stop at kAddedValues values in all (a
        // thousand copies of a trace's event list held gigabytes before the size check refused them).
        const size_t extra = chance(80) ? 1 + below(3) : 1000;
        size_t added = 0;
        for (size_t i = 0; i < extra && v->size() < 100000 && added < kAddedValues; ++i) {
          const MutJson& entry = (*v)[below(n)];
          added += valueCount(entry);
          v->push_back(entry);
        }
      } else if (s < 6) {
        *v = MutJson::array();
      } else if (s < 7 && n > 1) {
        std::shuffle(v->begin(), v->end(), rng_);
      } else if (s < 8 && n > 1) {
        std::reverse(v->begin(), v->end());
      } else {
        *v = otherType();
      }
    } else if (v->is_object()) {
      const size_t s = below(10);
      if (s < 4 && !v->empty()) {
        auto it = v->begin();
        std::advance(it, static_cast<std::ptrdiff_t>(below(v->size())));
        const std::string key = it.key();
        v->erase(key);
      } else if (s < 6) {
        (*v)[strings_.empty() || chance(50) ? std::string("extra") : strings_[below(strings_.size())]] = number();
      } else if (s < 8 && !v->empty()) {
        // A key renamed: one character more or less.
        auto it = v->begin();
        std::advance(it, static_cast<std::ptrdiff_t>(below(v->size())));
        const std::string key = it.key();
        MutJson moved = std::move(it.value());
        v->erase(key);
        (*v)[chance(50) || key.empty() ? key + "_" : key.substr(0, key.size() - 1)] = std::move(moved);
      } else {
        *v = otherType();
      }
    } else {
      *v = chance(50) ? number() : otherType();
    }
  }

  // Values in a value, itself included, counted up to kAddedValues.
  static size_t valueCount(const MutJson& value) {
    size_t count = 0;
    std::vector<const MutJson*> stack{&value};
    while (!stack.empty() && count < kAddedValues) {
      const MutJson* v = stack.back();
      stack.pop_back();
      ++count;
      if (v->is_structured()) {
        for (const auto& item : *v) stack.push_back(&item);
      }
    }
    return count;
  }

  static constexpr size_t kAddedValues = 1 << 16;
  std::mt19937 rng_;
  std::vector<std::string> strings_;
};

// The body of LLVMFuzzerCustomMutator.
inline size_t mutateJsonInput(uint8_t* data, size_t size, size_t maxSize, unsigned seed) {
  if (seed % 8 == 0 || jsonDepth(data, size) > 256) return LLVMFuzzerMutate(data, size, maxSize);
  MutJson doc = MutJson::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return LLVMFuzzerMutate(data, size, maxSize);
  JsonMutator(seed).mutate(doc);
  std::string out;
  try {
    out = doc.dump((seed >> 3) % 3 == 0 ? 1 : -1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const nlohmann::json::exception&) {
    return LLVMFuzzerMutate(data, size, maxSize);
  }
  if (out.size() > maxSize) return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace lathe::fuzz

#define LATHE_FUZZ_JSON_CUSTOM_MUTATOR()                                                                  \
  extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t maxSize, unsigned int seed) { \
    return lathe::fuzz::mutateJsonInput(data, size, maxSize, seed);                                      \
  }
