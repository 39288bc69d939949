// Fuzzes the guard parsers (core/io/guards/guards.h) and the helpers that read their output: the same bytes
// go to the C++ tree parser, the JSON guard parser, MagiCompiler's guards.txt parser and the recompile-reason
// parser.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "io/guards/guards.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  lathe::io::GuardParseOptions options;
  options.file = "fuzz";
  options.internedString = [](int64_t id) -> std::optional<std::string> {
    if (id % 2 == 0) return "file_" + std::to_string(id) + ".py";
    return std::nullopt;
  };
  lathe::Diagnostics diagnostics;
  const lathe::io::GuardTree cpp = lathe::io::parseCppGuards(input, options, diagnostics);
  const lathe::io::GuardTree json = lathe::io::parseJsonGuards(input, options, diagnostics);
  const lathe::io::GuardTree magi = lathe::io::parseMagiGuards(input, options, diagnostics);
  const auto reasons = lathe::io::parseRecompileReasons(input, options, diagnostics);

  for (const lathe::io::GuardTree* tree : {&cpp, &json, &magi}) {
    for (uint32_t i = 0; i < tree->size(); ++i) {  // parents precede children, subtrees nest
      const lathe::io::GuardNode& node = tree->node(i);
      if (node.parent != lathe::io::kNoGuardNode && (node.parent >= i || tree->node(node.parent).subtreeEnd < i + 1))
        __builtin_trap();
    }
    (void)lathe::io::countGuardsByType(*tree);
    (void)tree->children(lathe::io::kNoGuardNode);
    for (uint32_t i = 0; i < tree->size(); ++i) {
      const lathe::io::GuardNode& node = tree->node(i);
      for (const lathe::io::GuardText& t : {node.type, node.source, node.accessor, node.pythonType, node.tagSafe,
                                            node.code, node.userSource, node.userFile, node.userFunction, node.note}) {
        if (tree->text(t).size() != t.size) __builtin_trap();  // every text lies inside the tree
      }
      if (!node.isLeaf()) continue;
      (void)lathe::io::guardPath(*tree, i);
      (void)lathe::io::parseTensorMatch(tree->text(node.code));
      (void)lathe::io::stripLocalScope(tree->text(node.code));
    }
    for (const auto& reason : reasons) (void)lathe::io::matchRecompileReason(reason, *tree);
  }
  // The input itself as one reason: its text is arbitrary, as a real reason's code is.
  (void)lathe::io::matchRecompileReason({"0/0", std::string(input), ""}, cpp);
  (void)lathe::io::diffGuards(cpp, json);
  (void)lathe::io::diffGuards(cpp, cpp);
  (void)lathe::io::diffGuards(magi, cpp);
  return 0;
}
